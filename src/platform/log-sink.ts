/**
 * Where the service's log lines go: standard output, written by the main
 * thread without ever waiting for whoever reads it (docs/operations.md
 * "Stopping").
 *
 * Why not pino's own standard output stream: it keeps what a full pipe does
 * not take in memory, without bound, and when the process exits it writes
 * that out synchronously, retrying for as long as the pipe stays full. A
 * supervisor that signals the service and then stops reading its output
 * (npm already gone, a harness that only waits for the exit) thereby kept
 * the service blocked in its exit for good, force-exit timer and all; as
 * PID 1 of a container nothing inside can end it then, not even SIGKILL.
 * Here the backlog is bounded (lines past it are dropped and counted), and
 * the flush at exit gives up after a deadline.
 */
import { writeSync } from 'node:fs';

/** Lines past this much unwritten output are dropped (and counted), not kept. */
const LOG_BACKLOG_BYTES = 4 * 1024 * 1024;
/** How often a backlog is offered to the reader again while it does not read. */
const RETRY_MS = 50;

export interface LogSink {
  /** Takes one log line; never blocks and never throws. */
  write(line: string): void;
  /**
   * Writes the backlog out, waiting at most `timeoutMs` for the reader;
   * answers whether everything was written.
   */
  flushSync(timeoutMs: number): boolean;
}

export interface LogSinkOptions {
  /** File descriptor; default 1 (standard output). */
  readonly fd?: number;
  readonly backlogBytes?: number;
}

export function createLogSink(options: LogSinkOptions = {}): LogSink {
  const fd = options.fd ?? 1;
  const limit = options.backlogBytes ?? LOG_BACKLOG_BYTES;
  if (fd === 1) {
    // Node opens a pipe or socket on standard output in non-blocking mode,
    // so a write to a full pipe fails with EAGAIN instead of stopping the
    // thread. (A file never fills up that way; a terminal is left as it is.)
    void process.stdout.fd;
  }
  const backlog: Buffer[] = [];
  let backlogBytes = 0;
  let dropped = 0;
  let broken = false;
  let retry: NodeJS.Timeout | undefined;

  /** Writes what the reader takes: 'done', 'full' (try again later) or 'broken'. */
  const drain = (): 'done' | 'full' | 'broken' => {
    if (broken) return 'broken';
    for (;;) {
      const chunk = backlog[0];
      if (chunk === undefined) {
        if (dropped === 0) return 'done';
        const note = { level: 40, time: Date.now(), pid: process.pid, msg: `log: ${dropped} lines dropped while the output was not read` };
        dropped = 0;
        enqueue(`${JSON.stringify(note)}\n`);
        continue;
      }
      let written: number;
      try {
        written = writeSync(fd, chunk);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return 'full';
        // EPIPE and the like: nobody will read this output again.
        broken = true;
        backlog.length = 0;
        backlogBytes = 0;
        return 'broken';
      }
      backlogBytes -= written;
      if (written < chunk.length) backlog[0] = chunk.subarray(written);
      else backlog.shift();
    }
  };
  const enqueue = (line: string): void => {
    const chunk = Buffer.from(line, 'utf8');
    backlog.push(chunk);
    backlogBytes += chunk.length;
  };
  const retryLater = (): void => {
    if (retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (drain() === 'full') retryLater();
    }, RETRY_MS);
    // Unwritten log lines never keep the process alive.
    retry.unref();
  };

  return {
    write(line) {
      if (broken) return;
      if (backlogBytes + line.length > limit) {
        dropped += 1;
        return;
      }
      enqueue(line);
      // While a retry is pending the reader is known to be behind: keep the order.
      if (retry === undefined && drain() === 'full') retryLater();
    },
    flushSync(timeoutMs) {
      if (retry !== undefined) {
        clearTimeout(retry);
        retry = undefined;
      }
      const deadline = Date.now() + timeoutMs;
      const pause = new Int32Array(new SharedArrayBuffer(4));
      for (;;) {
        const state = drain();
        if (state !== 'full') return state === 'done';
        if (Date.now() >= deadline) return false;
        Atomics.wait(pause, 0, 0, 10);
      }
    },
  };
}
