/**
 * Slow clients on a real port (docs/operations.md "Slow clients"): partial
 * headers, half a body and idle keep-alive connections are dropped within
 * their configured time while normal requests keep being answered, and
 * connections past the cap are closed at once. Every wait here is bounded.
 */
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../src/platform/config.js';
import { testApp } from './support/app.js';

/** What happened to a raw connection: when it closed and what the server wrote. */
interface Outcome {
  readonly closedAfterMs: number | undefined;
  readonly received: string;
}

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Watches a socket until it closes or `limitMs` passes (then it is destroyed and closedAfterMs is undefined). */
function watch(socket: Socket, limitMs: number): Promise<Outcome> {
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ closedAfterMs: undefined, received });
    }, limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ closedAfterMs: Date.now() - started, received });
    });
  });
}

/** Sends one byte every `intervalMs` for as long as the socket is writable, up to `limitMs`. */
function drip(socket: Socket, text: string, intervalMs: number): () => void {
  let index = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || index >= text.length) return;
    socket.write(text[index]!);
    index += 1;
  }, intervalMs);
  return () => clearInterval(timer);
}

async function healthz(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) });
  await response.arrayBuffer();
  return response.status;
}

/** How many connections the app's server holds open now. */
function openConnections(app: FastifyInstance): Promise<number> {
  return new Promise((resolve, reject) => app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

/** Starts an app with `env` on a loopback port before the block's tests, hands `assign` its port (and the app), and closes it after. */
function useListeningApp(env: Record<string, string>, assign: (port: number, app: FastifyInstance) => void): void {
  let app: FastifyInstance | undefined;
  beforeAll(async () => {
    app = await testApp(env);
    await app.listen({ host: '127.0.0.1', port: 0 });
    assign((app.server.address() as AddressInfo).port, app);
  });
  afterAll(async () => {
    await app?.close();
  });
}

describe('slow clients', () => {
  let port: number;
  useListeningApp(
    {
      HTTP_HEADERS_TIMEOUT_SECONDS: '1',
      HTTP_REQUEST_TIMEOUT_SECONDS: '2',
      HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1',
    },
    (listening) => {
      port = listening;
    },
  );

  it('drops a client that drips its headers, while normal requests are answered', async () => {
    const slow = await openSocket(port);
    const outcome = watch(slow, 8000);
    const stop = drip(slow, `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'a'.repeat(200)}`, 200);
    try {
      // Normal traffic meanwhile, on fresh connections.
      const statuses = [];
      for (let round = 0; round < 5; round += 1) {
        statuses.push(await healthz(port));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const { closedAfterMs, received } = await outcome;
      expect(closedAfterMs, 'the slow connection was closed').toBeDefined();
      // 1 s headers timeout, checked every 0.5 s: well before the 8 s bound.
      expect(closedAfterMs!).toBeLessThan(4000);
      expect(received === '' || received.startsWith('HTTP/1.1 408')).toBe(true);
    } finally {
      stop();
    }
  });

  it('drops a client that sends half a body and stops', async () => {
    const slow = await openSocket(port);
    const outcome = watch(slow, 8000);
    slow.write(
      'POST /api/verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"addr":"bc1q',
    );
    expect(await healthz(port)).toBe(200);
    const { closedAfterMs, received } = await outcome;
    expect(closedAfterMs, 'the half-body connection was closed').toBeDefined();
    expect(closedAfterMs!).toBeLessThan(5000);
    expect(received === '' || received.startsWith('HTTP/1.1 408')).toBe(true);
  });

  it('closes an idle keep-alive connection after its timeout', async () => {
    const socket = await openSocket(port);
    const outcome = watch(socket, 6000);
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n');
    const { closedAfterMs, received } = await outcome;
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(closedAfterMs, 'the idle connection was closed').toBeDefined();
    expect(closedAfterMs!).toBeLessThan(4000);
  });
});

describe('the connection cap', () => {
  let port: number;
  let app: FastifyInstance;
  useListeningApp(
    {
      HTTP_MAX_CONNECTIONS: '3',
      HTTP_HEADERS_TIMEOUT_SECONDS: '20',
      HTTP_REQUEST_TIMEOUT_SECONDS: '20',
      HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '20',
    },
    (listening, listeningApp) => {
      port = listening;
      app = listeningApp;
    },
  );

  it('closes connections past the cap at once, and serves again when one frees up', async () => {
    const held = [await openSocket(port), await openSocket(port), await openSocket(port)];
    // The server has accepted the three before the fourth arrives.
    await vi.waitFor(async () => expect(await openConnections(app)).toBe(3), { timeout: 3000, interval: 10 });
    const extra = await openSocket(port);
    const refused = await watch(extra, 3000);
    expect(refused.closedAfterMs, 'the fourth connection was closed').toBeDefined();
    expect(refused.received).toBe('');

    const first = held.shift()!;
    const firstClosed = watch(first, 3000);
    first.destroy();
    await firstClosed;
    // Once the server has let the first go, there is room again.
    await vi.waitFor(async () => expect(await openConnections(app)).toBe(2), { timeout: 3000, interval: 10 });
    expect(await healthz(port)).toBe(200);
    for (const socket of held) socket.destroy();
  });
});

describe('configuration', () => {
  it('has documented defaults and refuses a headers timeout above the request timeout', () => {
    expect(loadConfig({}).http).toEqual({
      headersTimeoutSeconds: 10,
      requestTimeoutSeconds: 30,
      keepAliveTimeoutSeconds: 72,
      maxConnections: 4096,
    });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_SECONDS: '40' })).toThrow(ConfigError);
    expect(() => loadConfig({ HTTP_MAX_CONNECTIONS: '0' })).toThrow(/HTTP_MAX_CONNECTIONS/);
  });
});
