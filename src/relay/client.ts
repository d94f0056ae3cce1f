/**
 * A small NIP-01 client for reading and publishing attestations
 * (docs/protocol.md §7 "Relay envelopes").
 *
 * Every relay is an untrusted, possibly slow or hostile peer, so:
 *
 * - each query opens one short-lived socket per relay (open, REQ, wait for
 *   EOSE, CLOSE, close) and all relays are asked in parallel, each under its
 *   own deadline; nothing stays connected between queries;
 * - a relay counts as having answered only when it finished its stored
 *   events (EOSE) before its deadline. Events that arrived from a relay that
 *   then timed out, hung up or overflowed are still used: each one is checked
 *   on its own merits (Nostr signature, SHA-256 binding, and later the Bitcoin
 *   signature), so where it came from adds nothing. But such a relay's answer
 *   may be incomplete, so it does not count towards `relaysAnswered`, which
 *   is what "no relay answered" (`relays_unavailable`) is decided on. A relay
 *   that refuses the subscription (CLOSED, e.g. because it does not serve
 *   multi-letter tag filters) told us nothing and does not count either;
 * - frames, bytes and events per relay are capped, so a relay cannot exhaust
 *   memory or CPU; every answer is filtered again on our side
 *   (see lookup.ts), so a relay can withhold attestations but never inject a
 *   wrong one;
 * - relay trouble never throws: it shows up in `outcomes` and in the counts.
 *
 * We write the client on `ws` ourselves rather than use nostr-tools'
 * SimplePool because the pool keeps connections open, retries, and hides
 * per-relay outcomes; here each of those needs to be explicit.
 */
import { isJsonObject } from '../platform/json.js';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import type { ClientOptions, RawData } from 'ws';
import type { NostrEvent } from 'nostr-tools/pure';
import { parseEnvelopeEvent, type AttestationEnvelope } from './envelope.js';
import { envelopeMatches, lookupFilters, normalizeLookup, tagsMayMatch, type AttestationLookup, type NormalizedLookup } from './lookup.js';

/** The constructor of a `ws`-compatible client socket (tests may pass their own). */
type WebSocketConstructor = new (address: string, options?: ClientOptions) => WebSocket;

export interface RelayPoolOptions {
  /** `ws://` or `wss://` relay URLs (docs/protocol.md §1 `NOSTR_RELAYS`). */
  readonly relays: readonly string[];
  /** Deadline per relay, connecting included, in ms. Default 4000. */
  readonly timeoutMs?: number;
  readonly WebSocketImpl?: WebSocketConstructor;
  /** Most EVENT frames accepted from one relay in one query. Default 500. */
  readonly maxEventsPerRelay?: number;
  /** Largest frame accepted from a relay, in bytes. Default 256 KiB. */
  readonly maxMessageBytes?: number;
  /** Most bytes read from one relay in one query. Default 4 MiB. */
  readonly maxBytesPerRelay?: number;
}

/**
 * How one relay's part of a query ended. Only `answered` counts as an
 * answer; see the module comment.
 * - `answered`: sent EOSE before the deadline;
 * - `refused`: sent CLOSED for our subscription;
 * - `timeout`: no EOSE (or, for publish, no OK) before the deadline;
 * - `unreachable`: the connection could not be opened;
 * - `disconnected`: the connection dropped or failed before the answer;
 * - `overflow`: the relay sent more events, bytes or a larger frame than allowed.
 */
type RelayStatus = 'answered' | 'refused' | 'timeout' | 'unreachable' | 'disconnected' | 'overflow';

interface RelayOutcome {
  readonly relay: string;
  readonly status: RelayStatus;
  /** EVENT frames received for our subscription (before any filtering). */
  readonly events: number;
  readonly elapsedMs: number;
}

/** An envelope that passed every relay-level check, with where it was found. */
export interface VerifiedEnvelope extends AttestationEnvelope {
  /** The Nostr event kept for this attestation (the newest one). */
  readonly event_id: string;
  /** The event's publisher key: transport only, not trusted for anything (docs/protocol.md §7). */
  readonly pubkey: string;
  /** The kept event's `created_at` (unix seconds). */
  readonly created_at: number;
  /** Relays that served this attestation, in configured order. */
  readonly relays: readonly string[];
}

interface AttestationQueryOptions {
  /**
   * Events asked of each relay (the REQ `limit`, split over the look-up's
   * filters), at most `maxEventsPerRelay`, which is also the default. The
   * merged result is not truncated, so callers can report a total.
   */
  readonly limit?: number;
}

export interface AttestationQueryResult {
  /** Deduplicated, newest `issued_at` first (ties: newer event, then attestation id). */
  readonly envelopes: readonly VerifiedEnvelope[];
  readonly relaysAnswered: number;
  readonly relaysQueried: number;
  /** Per relay, in configured order. */
  readonly outcomes: readonly RelayOutcome[];
}

interface PublishResult {
  /** Relays that acknowledged the event with `["OK", id, true, …]`. */
  readonly published: readonly string[];
  /** Relays that refused it, timed out or could not be reached. */
  readonly failed: readonly string[];
}

export interface RelayPool {
  readonly relays: readonly string[];
  queryAttestations(lookup: AttestationLookup, options?: AttestationQueryOptions): Promise<AttestationQueryResult>;
  publish(event: NostrEvent): Promise<PublishResult>;
  /** Drops every open socket; queries in flight finish with what they have. */
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 4000;
const DEFAULT_MAX_EVENTS = 500;
const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024;
const DEFAULT_MAX_BYTES_PER_RELAY = 4 * 1024 * 1024;
// A relay that does not finish the close handshake is cut off after this.
const CLOSE_GRACE_MS = 1000;

interface Limits {
  readonly timeoutMs: number;
  readonly maxEventsPerRelay: number;
  readonly maxMessageBytes: number;
  readonly maxBytesPerRelay: number;
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`relay: ${name} must be a positive integer`);
  return value;
}

function checkRelayUrls(relays: readonly string[]): string[] {
  if (!Array.isArray(relays)) throw new TypeError('relay: relays must be an array of URLs');
  const unique: string[] = [];
  for (const relay of relays) {
    let url: URL;
    try {
      url = new URL(relay);
    } catch {
      throw new TypeError(`relay: not a URL: ${String(relay)}`);
    }
    if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new TypeError(`relay: not a ws(s) URL: ${relay}`);
    if (!unique.includes(relay)) unique.push(relay);
  }
  return unique;
}

export function createRelayPool(options: RelayPoolOptions): RelayPool {
  const relays = Object.freeze(checkRelayUrls(options.relays));
  const WebSocketImpl: WebSocketConstructor = options.WebSocketImpl ?? WebSocket;
  const limits: Limits = {
    timeoutMs: positiveInteger('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS),
    maxEventsPerRelay: positiveInteger('maxEventsPerRelay', options.maxEventsPerRelay, DEFAULT_MAX_EVENTS),
    maxMessageBytes: positiveInteger('maxMessageBytes', options.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES),
    maxBytesPerRelay: positiveInteger('maxBytesPerRelay', options.maxBytesPerRelay, DEFAULT_MAX_BYTES_PER_RELAY),
  };
  const sockets = new Set<WebSocket>();
  let closed = false;

  const connect = (relay: string, handlers: ConversationHandlers) => converse(relay, { WebSocketImpl, limits, sockets }, handlers);

  async function queryAttestations(lookup: AttestationLookup, queryOptions: AttestationQueryOptions = {}): Promise<AttestationQueryResult> {
    if (closed) throw new Error('relay: pool is closed');
    const normalized = normalizeLookup(lookup);
    const limit = Math.min(positiveInteger('limit', queryOptions.limit, limits.maxEventsPerRelay), limits.maxEventsPerRelay);
    const filters = lookupFilters(normalized, limit);
    const found = new FoundEnvelopes(normalized);

    const outcomes = await Promise.all(
      relays.map(async (relay): Promise<RelayOutcome> => {
        const started = Date.now();
        const subscriptionId = `oc-${randomBytes(8).toString('hex')}`;
        let events = 0;
        const status = await connect(relay, {
          open: (send) => send(['REQ', subscriptionId, ...filters]),
          message: (message, send) => {
            const [type, subscription] = message;
            if (subscription !== subscriptionId) return undefined; // NOTICE, AUTH, stray frames
            if (type === 'EVENT') {
              events += 1;
              if (events > limits.maxEventsPerRelay) return 'overflow';
              found.consider(message[2], relay);
              return undefined;
            }
            if (type === 'EOSE') {
              send(['CLOSE', subscriptionId]);
              return 'answered';
            }
            if (type === 'CLOSED') return 'refused';
            return undefined;
          },
        });
        return { relay, status, events, elapsedMs: Date.now() - started };
      }),
    );

    return {
      envelopes: found.merged(relays),
      relaysAnswered: outcomes.filter((outcome) => outcome.status === 'answered').length,
      relaysQueried: relays.length,
      outcomes,
    };
  }

  async function publish(event: NostrEvent): Promise<PublishResult> {
    if (closed) throw new Error('relay: pool is closed');
    if (typeof event !== 'object' || event === null || typeof event.id !== 'string' || typeof event.sig !== 'string') {
      throw new TypeError('relay: publish needs a signed event');
    }
    const statuses = await Promise.all(
      relays.map((relay) =>
        connect(relay, {
          open: (send) => send(['EVENT', event]),
          // NIP-01: ["OK", <event_id>, <true|false>, <message>] answers an EVENT.
          message: ([type, id, accepted]) => (type === 'OK' && id === event.id ? (accepted === true ? 'answered' : 'refused') : undefined),
        }),
      ),
    );
    return {
      published: relays.filter((_, index) => statuses[index] === 'answered'),
      failed: relays.filter((_, index) => statuses[index] !== 'answered'),
    };
  }

  async function close(): Promise<void> {
    closed = true;
    for (const socket of [...sockets]) socket.terminate();
    sockets.clear();
  }

  return { relays, queryAttestations, publish, close };
}

/** A candidate found on one or more relays, before merging by attestation id. */
interface Candidate {
  readonly envelope: AttestationEnvelope;
  readonly eventId: string;
  readonly pubkey: string;
  readonly createdAt: number;
  readonly relays: Set<string>;
}

/**
 * Collects verified envelopes of one query across relays. Identical events
 * (the same event served by several relays) are verified once.
 */
class FoundEnvelopes {
  readonly #lookup: NormalizedLookup;
  // Keyed by the whole event, not its id: a relay may send a forged event
  // under a genuine id, and it must not shadow the genuine one.
  readonly #seen = new Map<string, Candidate | null>();

  constructor(lookup: NormalizedLookup) {
    this.#lookup = lookup;
  }

  consider(raw: unknown, relay: string): void {
    if (!isJsonObject(raw)) return;
    const event = raw as NostrEvent;
    if (!tagsMayMatch(event, this.#lookup)) return;
    const key = JSON.stringify([event.id, event.pubkey, event.created_at, event.kind, event.tags, event.content, event.sig]);
    let candidate = this.#seen.get(key);
    if (candidate === undefined) {
      const envelope = parseEnvelopeEvent(event);
      candidate =
        envelope !== null && envelopeMatches(envelope, this.#lookup)
          ? { envelope, eventId: event.id, pubkey: event.pubkey, createdAt: event.created_at, relays: new Set() }
          : null;
      this.#seen.set(key, candidate);
    }
    candidate?.relays.add(relay);
  }

  /**
   * One envelope per attestation id (docs/protocol.md §7 "drop duplicates by
   * event id and by attestation id"): the newest event wins, ties go to the
   * lowest event id as NIP-01 does for replaceable events. The relays of
   * every copy are kept, since each of them serves the same signed message.
   */
  merged(relayOrder: readonly string[]): VerifiedEnvelope[] {
    const byAttestation = new Map<string, { best: Candidate; relays: Set<string> }>();
    for (const candidate of this.#seen.values()) {
      if (candidate === null) continue;
      const id = candidate.envelope.attestation_id;
      const entry = byAttestation.get(id);
      if (entry === undefined) {
        byAttestation.set(id, { best: candidate, relays: new Set(candidate.relays) });
        continue;
      }
      for (const relay of candidate.relays) entry.relays.add(relay);
      const newer =
        candidate.createdAt > entry.best.createdAt ||
        (candidate.createdAt === entry.best.createdAt && candidate.eventId < entry.best.eventId);
      if (newer) entry.best = candidate;
    }

    const envelopes = [...byAttestation.values()].map(
      ({ best, relays }): VerifiedEnvelope => ({
        ...best.envelope,
        event_id: best.eventId,
        pubkey: best.pubkey,
        created_at: best.createdAt,
        relays: relayOrder.filter((relay) => relays.has(relay)),
      }),
    );
    return envelopes.sort(newestFirst);
  }
}

function newestFirst(a: VerifiedEnvelope, b: VerifiedEnvelope): number {
  const issued = Date.parse(b.issued_at) - Date.parse(a.issued_at);
  if (issued !== 0) return issued;
  if (a.created_at !== b.created_at) return b.created_at - a.created_at;
  return a.attestation_id < b.attestation_id ? -1 : a.attestation_id > b.attestation_id ? 1 : 0;
}

type Send = (message: readonly unknown[]) => void;

interface ConversationHandlers {
  /** Called once the socket is open. */
  open(send: Send): void;
  /** Called for each JSON-array frame; a status ends the conversation. */
  message(message: readonly unknown[], send: Send): RelayStatus | undefined;
}

interface ConversationContext {
  readonly WebSocketImpl: WebSocketConstructor;
  readonly limits: Limits;
  readonly sockets: Set<WebSocket>;
}

function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function frameSize(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, chunk) => sum + chunk.length, 0);
  return data.byteLength;
}

/**
 * One short-lived conversation with one relay. Resolves (never rejects) with
 * the status the handlers chose or with what went wrong, at the latest when
 * the deadline passes.
 */
function converse(relay: string, context: ConversationContext, handlers: ConversationHandlers): Promise<RelayStatus> {
  const { WebSocketImpl, limits, sockets } = context;
  return new Promise<RelayStatus>((resolve) => {
    let socket: WebSocket;
    try {
      socket = new WebSocketImpl(relay, {
        handshakeTimeout: limits.timeoutMs,
        maxPayload: limits.maxMessageBytes,
        // No compression: a small compressed frame must not inflate past our caps.
        perMessageDeflate: false,
        followRedirects: false,
      });
    } catch {
      resolve('unreachable');
      return;
    }
    sockets.add(socket);

    let settled = false;
    let opened = false;
    let bytes = 0;

    const finish = (status: RelayStatus, graceful: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      sockets.delete(socket);
      endSocket(socket, graceful);
      resolve(status);
    };

    const send: Send = (message) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      socket.send(JSON.stringify(message), () => {
        // A failed send surfaces as an error or close event; nothing to do here.
      });
    };

    const deadline = setTimeout(() => finish('timeout', false), limits.timeoutMs);

    socket.on('open', () => {
      opened = true;
      try {
        handlers.open(send);
      } catch {
        finish('disconnected', false);
      }
    });

    socket.on('message', (data: RawData, isBinary: boolean) => {
      if (settled) return;
      bytes += frameSize(data);
      if (bytes > limits.maxBytesPerRelay) return finish('overflow', false);
      if (isBinary) return; // NIP-01 speaks JSON text frames only.
      let message: unknown;
      try {
        message = JSON.parse(frameText(data));
      } catch {
        return; // Not JSON: ignore the frame, as for an unknown message type.
      }
      if (!Array.isArray(message) || typeof message[0] !== 'string') return;
      try {
        const status = handlers.message(message, send);
        if (status !== undefined) finish(status, status === 'answered' || status === 'refused');
      } catch {
        finish('disconnected', false);
      }
    });

    socket.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') finish('overflow', false);
      else finish(opened ? 'disconnected' : 'unreachable', false);
    });
    socket.on('close', () => finish(opened ? 'disconnected' : 'unreachable', false));
  });
}

/** Ends a socket politely when the relay behaved, at once otherwise. */
function endSocket(socket: WebSocket, graceful: boolean): void {
  try {
    if (graceful && socket.readyState === WebSocket.OPEN) {
      socket.close(1000);
      setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
    } else if (socket.readyState !== WebSocket.CLOSED) {
      socket.terminate();
    }
  } catch {
    // The socket is already gone; nothing left to release.
  }
}
