/**
 * A real Esplora HTTP server on loopback for tests and benches (docs/architecture.md
 * "Tests": real parts over mocks). It serves the two routes the chain client
 * uses (docs/protocol.md §7 "Chain metrics"), under any path prefix, so a base
 * may be `${fake.url}` or `${fake.url}/api`:
 *
 *   GET …/address/<addr>/utxo   → JSON list, as mempool.space answers
 *   GET …/blocks/tip/height     → the height as plain text
 *   GET …/blocks/tip/hash       → the hash as plain text (derived from the
 *                                 height unless set: a reorganisation sets it)
 *
 * Modes make it misbehave the ways real bases do: `broken` drops the
 * connection, `malformed` answers bodies that are not what Esplora sends,
 * `slow` holds the answer (`slowMs`, default 30 s), `http500` answers errors.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { VerifyAttestationDeps } from '../../src/features/attestations/index.js';
import { createEsploraClient } from '../../src/chain/index.js';

type EsploraFakeMode = 'ok' | 'broken' | 'malformed' | 'slow' | 'http500';

/** A UTXO as Esplora serialises it. Tests may also serve deliberately wrong shapes. */
export interface EsploraUtxoJson {
  txid: string;
  vout: number;
  status: { confirmed: boolean; block_height?: number; block_hash?: string; block_time?: number };
  value: number;
}

export interface EsploraFakeOptions {
  tipHeight: number;
  /** Addresses not listed answer `[]`, as Esplora does for an address without UTXOs. */
  utxosByAddress?: Record<string, readonly unknown[]>;
  /** Latency added to every answer, in every mode. */
  delayMs?: number;
  mode?: EsploraFakeMode;
  /** How long `slow` holds an answer. */
  slowMs?: number;
}

interface EsploraFakeRequests {
  utxo: number;
  tipHeight: number;
  tipHash: number;
  other: number;
}

export interface EsploraFake {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  setUtxos(address: string, utxos: readonly unknown[]): void;
  /** A string is served as is, to test malformed tips. The hash follows the height unless set. */
  setTip(height: number | string): void;
  /** Another block at the same height (a reorganisation); `undefined` goes back to the hash of the height. */
  setTipHash(hash: string | undefined): void;
  setMode(mode: EsploraFakeMode): void;
  setDelay(delayMs: number): void;
  /** Requests served per route since the start or the last reset. */
  readonly requests: Readonly<EsploraFakeRequests>;
  /** Addresses asked for, decoded from the path, in order. */
  readonly queriedAddresses: readonly string[];
  /** Most requests in flight at one moment. */
  readonly peakConcurrency: number;
  /** TCP connections accepted since the start or the last reset: kept-alive clients reuse them. */
  readonly connections: number;
  resetRequests(): void;
  close(): Promise<void>;
}

export interface EsploraFixture {
  tipHeight: number;
  utxoSets: Record<string, EsploraUtxoJson[]>;
  addresses: Record<string, string>;
}

/** The fixture of mempool.space-shaped answers (test/support/fixtures/esplora-utxos.json). */
export function loadEsploraFixture(): EsploraFixture {
  const text = readFileSync(new URL('./fixtures/esplora-utxos.json', import.meta.url), 'utf8');
  return JSON.parse(text) as EsploraFixture;
}

const UTXO_ROUTE = /\/address\/([^/]+)\/utxo$/;
const TIP_ROUTE = /\/blocks\/tip\/height$/;
const TIP_HASH_ROUTE = /\/blocks\/tip\/hash$/;

/** The hash the fake gives a height: 64 hex characters, different for every height. */
export function fakeBlockHash(height: number | string): string {
  return String(height)
    .replace(/[^0-9]/g, '')
    .padStart(64, '0')
    .slice(-64);
}

export async function startEsploraFake(options: EsploraFakeOptions): Promise<EsploraFake> {
  let tip: number | string = options.tipHeight;
  let tipHash: string | undefined;
  let connections = 0;
  let mode: EsploraFakeMode = options.mode ?? 'ok';
  let delayMs = options.delayMs ?? 0;
  const slowMs = options.slowMs ?? 30_000;
  const utxos = new Map<string, readonly unknown[]>(Object.entries(options.utxosByAddress ?? {}));
  const requests: EsploraFakeRequests = { utxo: 0, tipHeight: 0, tipHash: 0, other: 0 };
  const queriedAddresses: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let peakConcurrency = 0;

  const wait = (ms: number): Promise<void> =>
    ms <= 0
      ? Promise.resolve()
      : new Promise((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, ms);
          timers.add(timer);
        });

  const send = (response: ServerResponse, status: number, type: string, body: string): void => {
    if (response.destroyed || response.writableEnded) return;
    response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    response.end(body);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const utxoMatch = UTXO_ROUTE.exec(path);
    if (request.method === 'GET' && utxoMatch !== null) {
      requests.utxo++;
      queriedAddresses.push(decodeURIComponent(utxoMatch[1]!));
    } else if (request.method === 'GET' && TIP_ROUTE.test(path)) {
      requests.tipHeight++;
    } else if (request.method === 'GET' && TIP_HASH_ROUTE.test(path)) {
      requests.tipHash++;
    } else {
      requests.other++;
      send(response, 404, 'text/plain', 'Not Found');
      return;
    }

    await wait(delayMs);
    switch (mode) {
      case 'broken':
        request.socket.destroy();
        return;
      case 'http500':
        send(response, 500, 'text/plain', 'Internal Server Error');
        return;
      case 'malformed':
        if (utxoMatch !== null) send(response, 200, 'application/json', '[{"txid":"');
        else send(response, 200, 'text/plain', 'not a height');
        return;
      case 'slow':
        await wait(slowMs);
        break;
      case 'ok':
        break;
    }
    if (utxoMatch !== null) {
      const address = decodeURIComponent(utxoMatch[1]!);
      send(response, 200, 'application/json', JSON.stringify(utxos.get(address) ?? []));
    } else if (TIP_HASH_ROUTE.test(path)) {
      send(response, 200, 'text/plain', tipHash ?? fakeBlockHash(tip));
    } else {
      send(response, 200, 'text/plain', String(tip));
    }
  };

  const server = createServer((request, response) => {
    inFlight++;
    peakConcurrency = Math.max(peakConcurrency, inFlight);
    response.on('close', () => {
      inFlight--;
    });
    handle(request, response).catch(() => {
      if (!response.headersSent) send(response, 500, 'text/plain', 'fake failed');
    });
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setUtxos(address, list) {
      utxos.set(address, list);
    },
    setTip(height) {
      tip = height;
    },
    setTipHash(hash) {
      tipHash = hash;
    },
    setMode(next) {
      mode = next;
    },
    setDelay(ms) {
      delayMs = ms;
    },
    get requests() {
      return requests;
    },
    get queriedAddresses() {
      return queriedAddresses;
    },
    get peakConcurrency() {
      return peakConcurrency;
    },
    get connections() {
      return connections;
    },
    resetRequests() {
      requests.utxo = 0;
      requests.tipHeight = 0;
      requests.tipHash = 0;
      requests.other = 0;
      connections = 0;
      queriedAddresses.length = 0;
      peakConcurrency = 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback URL where nothing listens: a port that was bound and released. */
/** A confirmed UTXO of `value` sats whose block is `ageDays` days older than `now`. */
export function agedUtxo(now: Date, txid: string, value: number, ageDays: number): EsploraUtxoJson {
  return {
    txid,
    vout: 0,
    value,
    status: {
      confirmed: true,
      block_height: 900,
      block_hash: '00'.repeat(32),
      block_time: Math.floor(now.getTime() / 1000) - ageDays * 86_400,
    },
  };
}

/** What verifyAttestation needs to read `esplora`: mainnet, one confirmation, the clock stopped at `now`. */
export function verifyDepsOver(esplora: EsploraFake, now: Date): VerifyAttestationDeps {
  return {
    chain: createEsploraClient({ bases: [esplora.url], timeoutMs: 2_000 }),
    network: 'mainnet',
    minConfirmations: 1,
    now: () => new Date(now),
  };
}

const CLOSED_PORT = 4;

/** Whether a TCP connection to the port is refused at once (nothing listens there). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * A base URL whose port refuses connections. Port 4 (privileged and
 * unassigned, so no test server is handed it, and not on the ports fetch
 * refuses to try) stays refused; a port freed after listening on it could be
 * handed to the next server a test starts, which would then answer for both,
 * so that is only the fallback.
 */
export async function closedPortUrl(): Promise<string> {
  if (await refused(CLOSED_PORT)) return `http://127.0.0.1:${CLOSED_PORT}`;
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
