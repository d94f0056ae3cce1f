/**
 * HTTP load through wrk (Debian package), a separate process, so the load
 * generator does not share the server's event loop. Every HTTP figure is
 * printed next to a bare Fastify JSON route measured in the same run.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';

export interface WrkResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Requests completed. */
  requests: number;
}

export function wrkAvailable(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version exits 1 but prints its banner; only a spawn error means missing.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

export interface WrkOptions {
  durationSeconds?: number;
  connections?: number;
  threads?: number;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  /** Extra Lua appended to the script (e.g. a `request` function). */
  lua?: string;
}

export function luaString(value: string): string {
  return JSON.stringify(value); // a JSON string literal is a valid Lua string literal for our ASCII bodies
}

export async function runWrk(url: string, options: WrkOptions = {}): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'oc-wrk-'));
  const script = join(dir, 'script.lua');
  const lines = [`wrk.method = ${luaString(options.method ?? 'GET')}`];
  if (options.body !== undefined) lines.push(`wrk.body = ${luaString(options.body)}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  lines.push(
    'done = function(summary, latency, requests)',
    '  io.write(string.format("OC_RESULT %f %d %d %f\\n", latency:percentile(99) / 1000, summary.requests, summary.errors.status, latency:percentile(50) / 1000))',
    'end',
  );
  if (options.lua) lines.push(options.lua);
  writeFileSync(script, lines.join('\n'));
  const args = [
    `-t${options.threads ?? 1}`,
    `-c${options.connections ?? 50}`,
    `-d${options.durationSeconds ?? 5}s`,
    '--latency',
    '-s',
    script,
    url,
  ];
  const output = await new Promise<string>((resolve, reject) => {
    execFile('wrk', args, { maxBuffer: 1 << 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
  const result = /OC_RESULT ([\d.]+) (\d+) (\d+) ([\d.]+)/.exec(output);
  if (!rps || !result) throw new Error(`bench: could not read wrk output:\n${output}`);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output);
  return {
    requestsPerSec: Number(rps[1]),
    p50Ms: Number(result[4]),
    p99Ms: Number(result[1]),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    requests: Number(result[2]),
  };
}

/** A Lua table literal of strings (JSON bodies, paths): the request scripts pick from it. */
export function luaList(name: string, values: readonly string[]): string {
  return `local ${name} = {\n${values.map((value) => `  ${luaString(value)},`).join('\n')}\n}`;
}

/** The peak resident memory of a process (Linux `VmHWM`), in MiB; undefined where /proc is missing. */
export function peakRssMb(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The floor for every route figure: a bare Fastify 5 JSON route. */
export async function startBareFastify(): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify({ logger: false });
  app.get('/bare', async () => ({ ok: true, hello: 'world' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('bench: no port');
  return { app, url: `http://127.0.0.1:${address.port}/bare` };
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The CPU time a process has used (user and system, all its threads), in ms; NaN where /proc is missing. */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}
