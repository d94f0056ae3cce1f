/**
 * Esplora HTTP client for the chain metrics (docs/protocol.md §7 "Chain metrics"):
 * `GET <base>/address/<addr>/utxo`, `GET <base>/blocks/tip/height` and
 * `GET <base>/blocks/tip/hash`.
 *
 * Bases are tried in order, each with its own timeout; a base that does not
 * answer, answers with an HTTP error, or answers anything malformed counts as
 * a failure and the next base is tried. Only when every base failed does
 * the client throw {@link ChainUnavailableError}, which the verifier turns
 * into the `chain_unavailable` code (never a crash or a 500).
 *
 * Each base has its own kept-alive pool of connections (a `node:http` or
 * `node:https` agent: a verify through it costs the service less than half
 * the CPU it cost through Node's fetch) and at most `maxConnections`
 * requests in flight: a burst of distinct addresses queues here instead of
 * opening a connection per request (docs/performance.md "The chain"). The
 * wait for a free connection counts against the base's timeout, so a queue
 * can never hold a request longer than an unanswering base would. Redirects
 * are not followed: a base that answers 3xx has failed (configure its final
 * address). A caller may pass a `fetch` to use instead of the agents.
 */
import http from 'node:http';
import https from 'node:https';
import { isJsonObject } from '../platform/json.js';

/** One unspent output as Esplora reports it; fields Esplora adds (e.g. `block_hash`) are dropped. */
export interface Utxo {
  readonly txid: string;
  readonly vout: number;
  readonly value: number;
  readonly status: {
    readonly confirmed: boolean;
    readonly block_height?: number;
    readonly block_time?: number;
  };
}

export interface AddressUtxos {
  readonly utxos: readonly Utxo[];
  readonly tipHeight: number;
  /** Origin of the base that answered (no credentials, path or query), for logs. */
  readonly source: string;
}

/** Where the verifier reads UTXOs from; tests and other back ends implement it too. */
export interface ChainSource {
  addressUtxos(address: string): Promise<AddressUtxos>;
}

/** The best block: its height and hash (a hash that changes at one height is a reorganisation). */
export interface ChainTip {
  readonly height: number;
  readonly hash: string;
}

/** The two questions the block cache (src/chain/block-cache.ts) asks separately: the tip, and one address's UTXOs. */
export interface ChainReader extends ChainSource {
  tip(): Promise<ChainTip & { readonly source: string }>;
  utxos(address: string): Promise<{ readonly utxos: readonly Utxo[]; readonly source: string }>;
}

export interface EsploraClientOptions {
  /** Esplora HTTP bases (e.g. `https://mempool.space/api`), tried in order. */
  readonly bases: readonly string[];
  /** Asks through this fetch instead of the client's own kept-alive agents. */
  readonly fetch?: typeof fetch;
  /** Per base, covering the wait for a connection, the requests and their bodies. docs/protocol.md §7: 5 s. */
  readonly timeoutMs?: number;
  /** Requests in flight per base at most; the others wait for one to finish. Default {@link DEFAULT_ESPLORA_MAX_CONNECTIONS}. */
  readonly maxConnections?: number;
}

export interface BaseFailure {
  /** Origin of the base only: base URLs may carry API keys in their path or query. */
  readonly base: string;
  readonly reason: string;
}

/** Every Esplora base failed. The message names origins and reasons, never full URLs. */
export class ChainUnavailableError extends Error {
  readonly code = 'chain_unavailable';
  readonly failures: readonly BaseFailure[];

  constructor(failures: readonly BaseFailure[]) {
    const summary = failures.map((failure, index) => `#${index + 1} ${failure.base}: ${failure.reason}`).join('; ');
    super(`chain: no Esplora base answered (${summary})`);
    this.name = 'ChainUnavailableError';
    this.failures = failures;
  }
}

const DEFAULT_ESPLORA_TIMEOUT_MS = 5_000;
/** `ESPLORA_MAX_CONNECTIONS`' default: enough for loopback or a nearby base, few enough not to look like a flood. */
const DEFAULT_ESPLORA_MAX_CONNECTIONS = 16;

/**
 * Upper bound of one answer's body. Esplora servers refuse addresses with very
 * many UTXOs themselves (mempool.space stops at 500); a larger body is a
 * broken or hostile base, and reading it unbounded would let it exhaust memory.
 */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** 21 million BTC in sats: no single output can hold more. */
const MAX_MONEY_SATS = 2_100_000_000_000_000;

const TXID_PATTERN = /^[0-9a-fA-F]{64}$/;
const BLOCK_HASH_PATTERN = /^[0-9a-fA-F]{64}$/;

/** A failure of one base, with a reason safe to show in logs. */
class BaseError extends Error {
  readonly code = 'base_failed';
}

/**
 * Requests in flight to one base, at most `max`; the others wait in order.
 * A waiter whose deadline passes leaves the queue with the base's timeout.
 */
class ConnectionSlots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  acquire(signal: AbortSignal): Promise<void> {
    if (this.active < this.max) {
      this.active += 1;
      return Promise.resolve();
    }
    // The other request of the same attempt already failed: do not queue.
    if (signal.aborted) return Promise.reject(new BaseError('no connection free'));
    return new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.active += 1;
        resolve();
      };
      const onAbort = (): void => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(new BaseError('no connection free'));
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(): void {
    this.active -= 1;
    this.waiting.shift()?.();
  }
}

interface Base {
  readonly url: string;
  readonly origin: string;
  readonly slots: ConnectionSlots;
  /** One GET of `url`: the body as text, read up to {@link MAX_BODY_BYTES}; BaseError on any failure. */
  readonly get: (url: string, signal: AbortSignal, what: string) => Promise<string>;
}

export function createEsploraClient(options: EsploraClientOptions): ChainReader {
  if (options.bases.length === 0) throw new TypeError('chain: at least one Esplora base is required');
  const timeoutMs = options.timeoutMs ?? DEFAULT_ESPLORA_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new TypeError('chain: timeoutMs must be a positive number');
  const maxConnections = options.maxConnections ?? DEFAULT_ESPLORA_MAX_CONNECTIONS;
  if (!Number.isSafeInteger(maxConnections) || maxConnections <= 0) throw new TypeError('chain: maxConnections must be a positive integer');
  const bases: Base[] = options.bases.map((base) => {
    let parsed: URL;
    try {
      parsed = new URL(base);
    } catch {
      throw new TypeError('chain: every Esplora base must be an absolute URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new TypeError('chain: every Esplora base must be an http or https URL');
    const get = options.fetch === undefined ? agentGetter(parsed.protocol, maxConnections, timeoutMs) : fetchGetter(options.fetch);
    return { url: base.replace(/\/+$/, ''), origin: parsed.origin, slots: new ConnectionSlots(maxConnections), get };
  });

  /** Asks each base in turn, each within its own timeout, until one answers. */
  async function firstAnswer<T>(
    ask: (get: (path: string, what: string) => Promise<string>) => Promise<T>,
  ): Promise<T & { source: string }> {
    const failures: BaseFailure[] = [];
    for (const base of bases) {
      try {
        const answer = await withinTimeout(timeoutMs, (signal) => ask((path, what) => getText(base, path, signal, what)));
        return { ...answer, source: base.origin };
      } catch (error) {
        failures.push({ base: base.origin, reason: error instanceof BaseError ? error.message : 'request failed' });
      }
    }
    throw new ChainUnavailableError(failures);
  }

  const utxoPath = (address: string) => `/address/${encodeURIComponent(address)}/utxo`;

  return {
    addressUtxos(address) {
      return firstAnswer(async (get) => {
        // Both requests of one base run in parallel; the first failure aborts the other.
        const [utxoBody, tipBody] = await Promise.all([get(utxoPath(address), 'utxo'), get('/blocks/tip/height', 'tip height')]);
        const utxos = parseUtxos(utxoBody);
        return { utxos, tipHeight: atLeastTheirBlocks(parseTipHeight(tipBody), utxos) };
      });
    },
    tip() {
      return firstAnswer(async (get) => {
        const [heightBody, hashBody] = await Promise.all([get('/blocks/tip/height', 'tip height'), get('/blocks/tip/hash', 'tip hash')]);
        return { height: parseTipHeight(heightBody), hash: parseBlockHash(hashBody) };
      });
    },
    utxos(address) {
      return firstAnswer(async (get) => ({ utxos: parseUtxos(await get(utxoPath(address), 'utxo')) }));
    },
  };
}

/**
 * The tip height an answer reports: two answers may straddle a new block, so
 * a UTXO can report a height above the tip read a moment earlier. The tip is
 * at least that block.
 */
export function atLeastTheirBlocks(tipHeight: number, utxos: readonly Utxo[]): number {
  let height = tipHeight;
  for (const utxo of utxos) {
    if (utxo.status.block_height !== undefined && utxo.status.block_height > height) height = utxo.status.block_height;
  }
  return height;
}

/** Runs `task` with a signal that aborts after `timeoutMs`; a timeout becomes the base's failure reason. */
async function withinTimeout<T>(timeoutMs: number, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    return await task(controller.signal);
  } catch (error) {
    if (timedOut) throw new BaseError(`timed out after ${timeoutMs} ms`);
    throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** One GET on one base, holding one of its connection slots until the body is read. */
async function getText(base: Base, path: string, signal: AbortSignal, what: string): Promise<string> {
  await base.slots.acquire(signal);
  try {
    const text = await base.get(base.url + path, signal, what);
    // The connection goes back to its pool one turn of the event loop after
    // the body ended. Waiting for that turn before giving the slot back lets
    // the next request reuse this connection, so a base has at most
    // `maxConnections` of them.
    await new Promise<void>((resolve) => setImmediate(resolve));
    return text;
  } finally {
    base.slots.release();
  }
}

/**
 * GETs through a kept-alive agent of the base's own. A request that fails
 * before any answer on a reused connection is sent once more on another: the
 * server may have closed that idle connection just as the request left.
 */
function agentGetter(protocol: string, maxConnections: number, timeoutMs: number): Base['get'] {
  // An idle connection closes a second after the longest a request may take
  // (the request's own timeout ends it first), or sooner when the server's
  // Keep-Alive header says it closes sooner (Node honours that hint).
  const options = {
    keepAlive: true,
    maxSockets: maxConnections,
    maxFreeSockets: maxConnections,
    timeout: timeoutMs + 1000,
    scheduling: 'lifo' as const,
  };
  const agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  const request = protocol === 'https:' ? https.request : http.request;
  const once = (url: string, signal: AbortSignal, what: string) =>
    new Promise<string>((resolve, reject) => {
      let answered = false;
      const sent = request(url, { agent, signal, headers: { accept: 'application/json, text/plain' } }, (response) => {
        answered = true;
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 299) {
          response.resume();
          reject(new BaseError(`${what} answered HTTP ${status}`));
          return;
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
          response.destroy();
          reject(new BaseError(`${what} answer too large`));
          return;
        }
        const chunks: Buffer[] = [];
        let total = 0;
        response.on('data', (chunk: Buffer) => {
          total += chunk.byteLength;
          if (total > MAX_BODY_BYTES) {
            response.destroy();
            reject(new BaseError(`${what} answer too large`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        response.on('error', () => reject(new BaseError(`${what} answer interrupted`)));
        response.on('close', () => {
          if (!response.complete) reject(new BaseError(`${what} answer interrupted`));
        });
      });
      sent.on('error', (error: NodeJS.ErrnoException) => {
        if (answered) return;
        reject(
          Object.assign(new BaseError(`${what} request failed`), {
            retry: sent.reusedSocket && !signal.aborted && error.code === 'ECONNRESET',
          }),
        );
      });
      sent.end();
    });
  return async (url, signal, what) => {
    try {
      return await once(url, signal, what);
    } catch (error) {
      if ((error as { retry?: boolean }).retry === true) return once(url, signal, what);
      throw error;
    }
  };
}

/** GETs through the caller's fetch. */
function fetchGetter(doFetch: typeof fetch): Base['get'] {
  return async (url, signal, what) => {
    let response: Response;
    try {
      response = await doFetch(url, { signal, headers: { accept: 'application/json, text/plain' } });
    } catch {
      throw new BaseError(`${what} request failed`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new BaseError(`${what} answered HTTP ${response.status}`);
    }
    return readBounded(response, what);
  };
}

/** Reads a body as UTF-8 text, failing past {@link MAX_BODY_BYTES}. */
async function readBounded(response: Response, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw new BaseError(`${what} answer too large`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > MAX_BODY_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw new BaseError(`${what} answer too large`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof BaseError) throw error;
    throw new BaseError(`${what} answer interrupted`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isSafeCount(value: unknown, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;
}

/** Validates Esplora's UTXO list; any deviation makes the base count as failed (docs/protocol.md §7). */
function parseUtxos(body: string): Utxo[] {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    throw new BaseError('utxo answer is not JSON');
  }
  if (!Array.isArray(data)) throw new BaseError('utxo answer is not a list');
  return data.map((entry: unknown): Utxo => {
    if (!isJsonObject(entry)) throw new BaseError('utxo entry is not an object');
    const { txid, vout, value, status } = entry;
    if (typeof txid !== 'string' || !TXID_PATTERN.test(txid)) throw new BaseError('utxo txid is not 64 hex characters');
    if (!isSafeCount(vout)) throw new BaseError('utxo vout is not a non-negative integer');
    if (!isSafeCount(value, MAX_MONEY_SATS)) throw new BaseError('utxo value is not a valid amount of sats');
    if (!isJsonObject(status)) throw new BaseError('utxo status is not an object');
    const { confirmed, block_height: height, block_time: time } = status;
    if (typeof confirmed !== 'boolean') throw new BaseError('utxo status.confirmed is not a boolean');
    if (!confirmed) return { txid: txid.toLowerCase(), vout, value, status: { confirmed: false } };
    if (!isSafeCount(height) || !isSafeCount(time)) {
      throw new BaseError('confirmed utxo lacks a valid block_height and block_time');
    }
    return { txid: txid.toLowerCase(), vout, value, status: { confirmed: true, block_height: height, block_time: time } };
  });
}

function parseBlockHash(body: string): string {
  const text = body.trim();
  if (!BLOCK_HASH_PATTERN.test(text)) throw new BaseError('tip hash is not 64 hex characters');
  return text.toLowerCase();
}

function parseTipHeight(body: string): number {
  const text = body.trim();
  if (!/^\d+$/.test(text)) throw new BaseError('tip height is not a number');
  const height = Number(text);
  if (!Number.isSafeInteger(height)) throw new BaseError('tip height is out of range');
  return height;
}
