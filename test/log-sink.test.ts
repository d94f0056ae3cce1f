/**
 * The log sink (src/platform/log-sink.ts, docs/operations.md "Stopping") on a real
 * pipe: lines arrive whole and in order while the reader reads; when it
 * stops reading, the backlog stays bounded, what is dropped is counted in
 * the output, and the final flush gives up at its deadline instead of
 * waiting for the reader for good.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogSink } from '../src/platform/log-sink.js';

let dir: string;
let writeEnd: number;
let readEnd: number;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oc-log-sink-'));
  const fifo = join(dir, 'log');
  execFileSync('mkfifo', [fifo]);
  // Read end first, non-blocking, so opening the write end does not wait.
  readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  writeEnd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
});
afterEach(() => {
  closeSync(writeEnd);
  closeSync(readEnd);
  rmSync(dir, { recursive: true, force: true });
});

/** Reads what the pipe holds right now. */
function readAvailable(): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(1 << 16);
  for (;;) {
    let read: number;
    try {
      read = readSync(readEnd, buffer, 0, buffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
      throw error;
    }
    if (read === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, read)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

const line = (n: number): string => `${JSON.stringify({ level: 30, n, msg: 'x'.repeat(200) })}\n`;

describe('log sink', () => {
  it('passes every line on, whole and in order, while the reader keeps up', () => {
    const sink = createLogSink({ fd: writeEnd });
    let received = '';
    for (let n = 0; n < 2_000; n += 1) {
      sink.write(line(n));
      if (n % 100 === 99) received += readAvailable();
    }
    expect(sink.flushSync(1_000)).toBe(true);
    received += readAvailable();
    const numbers = received
      .trim()
      .split('\n')
      .map((text) => (JSON.parse(text) as { n: number }).n);
    expect(numbers).toEqual(Array.from({ length: 2_000 }, (_, n) => n));
  });

  it('with a reader that stopped: keeps at most its backlog, counts what it drops, and catches up in order once read again', () => {
    const backlogBytes = 64 * 1024;
    const sink = createLogSink({ fd: writeEnd, backlogBytes });
    // About 5 MB, far past the pipe (64 KiB here) and the backlog.
    for (let n = 0; n < 20_000; n += 1) sink.write(line(n));
    expect(sink.flushSync(50)).toBe(false);

    let received = '';
    for (let round = 0; round < 100; round += 1) {
      received += readAvailable();
      if (sink.flushSync(10)) break;
    }
    received += readAvailable();
    const lines = received
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text) as { n?: number; msg: string });
    const kept = lines.filter((entry) => entry.n !== undefined).map((entry) => entry.n!);
    // What the pipe took plus the backlog, never the whole 5 MB.
    expect(received.length).toBeLessThan(1024 * 1024 + backlogBytes + 1_000);
    expect(kept.length).toBeLessThan(20_000);
    // The oldest lines are kept (dropping starts once the backlog is full), in order.
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, n) => n));
    const note = lines.find((entry) => entry.n === undefined);
    expect(note?.msg).toBe(`log: ${20_000 - kept.length} lines dropped while the output was not read`);
  });

  it('gives up the final flush at its deadline when nobody reads', () => {
    const sink = createLogSink({ fd: writeEnd });
    for (let n = 0; n < 2_000; n += 1) sink.write(line(n));
    const started = Date.now();
    expect(sink.flushSync(200)).toBe(false);
    const took = Date.now() - started;
    // The deadline, not forever; the upper bound only leaves room for a busy machine.
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(5_000);
  });

  it('stops writing, without throwing, once the reader is gone', () => {
    const sink = createLogSink({ fd: writeEnd });
    sink.write(line(0));
    closeSync(readEnd);
    readEnd = openSync('/dev/null', constants.O_RDONLY);
    // EPIPE (SIGPIPE is ignored by Node): the sink marks the output broken.
    expect(() => {
      for (let n = 1; n < 1_000; n += 1) sink.write(line(n));
    }).not.toThrow();
    expect(sink.flushSync(1_000)).toBe(false);
  });
});
