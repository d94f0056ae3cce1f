/**
 * A real, small NIP-01 relay for tests, on `ws` at 127.0.0.1 with a free
 * port. It stores events in memory, answers EVENT with OK, REQ with the
 * matching stored events and EOSE, forwards new events to open
 * subscriptions, and honours CLOSE. Tag filters work for any tag name,
 * single- or multi-letter (`#address` included), as relays that index them do.
 *
 * Misbehaviour, to test the client against the relays it will meet:
 * - `silent`: accepts connections and messages, never answers (no EVENT,
 *   EOSE or OK);
 * - `noEose`: sends the matching events but never EOSE;
 * - `ignoreTagFilters`: answers as if the REQ had no `#…` conditions;
 * - `flood`: answers every REQ with every stored event, ignoring all
 *   conditions and `limit`;
 * - `refuse`: answers every REQ with CLOSED;
 * - `down`: not listening at all (connections are refused);
 * and `publishRaw` stores an event without any check, to serve forgeries.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { verifyEvent, type NostrEvent } from 'nostr-tools/pure';

export type RelayMode = 'normal' | 'silent' | 'noEose' | 'ignoreTagFilters' | 'flood' | 'refuse' | 'down';

export interface NostrRelayOptions {
  readonly mode?: RelayMode;
}

export interface NostrRelay {
  /** `ws://127.0.0.1:<port>`; stays the same across `down` and back. */
  readonly url: string;
  /** Stores an event as given, without verification or replacement. */
  publishRaw(event: unknown): void;
  /** The stored events, oldest stored first. */
  events(): unknown[];
  setMode(mode: RelayMode): Promise<void>;
  /** REQ messages received since start. */
  readonly requestCount: number;
  close(): Promise<void>;
}

type Filter = Record<string, unknown>;
type StoredEvent = Record<string, unknown>;

function isParameterizedReplaceable(kind: unknown): boolean {
  return typeof kind === 'number' && kind >= 30000 && kind < 40000;
}

function dTag(event: StoredEvent): string {
  const tags = Array.isArray(event.tags) ? event.tags : [];
  for (const tag of tags) if (Array.isArray(tag) && tag[0] === 'd') return String(tag[1] ?? '');
  return '';
}

function matches(event: StoredEvent, filter: Filter, ignoreTags: boolean): boolean {
  const list = (key: string): unknown[] | undefined => (Array.isArray(filter[key]) ? (filter[key] as unknown[]) : undefined);
  const ids = list('ids');
  if (ids && !ids.includes(event.id)) return false;
  const authors = list('authors');
  if (authors && !authors.includes(event.pubkey)) return false;
  const kinds = list('kinds');
  if (kinds && !kinds.includes(event.kind)) return false;
  const createdAt = typeof event.created_at === 'number' ? event.created_at : 0;
  if (typeof filter.since === 'number' && createdAt < filter.since) return false;
  if (typeof filter.until === 'number' && createdAt > filter.until) return false;
  if (ignoreTags) return true;
  const tags = Array.isArray(event.tags) ? (event.tags as unknown[]) : [];
  for (const key of Object.keys(filter)) {
    if (!key.startsWith('#')) continue;
    const wanted = list(key) ?? [];
    const name = key.slice(1);
    // NIP-01: the event and the filter must have at least one value in common.
    const hit = tags.some((tag) => Array.isArray(tag) && tag[0] === name && wanted.includes(tag[1]));
    if (!hit) return false;
  }
  return true;
}

function newestFirst(a: StoredEvent, b: StoredEvent): number {
  return Number(b.created_at ?? 0) - Number(a.created_at ?? 0);
}

export async function startNostrRelay(options: NostrRelayOptions = {}): Promise<NostrRelay> {
  let mode: RelayMode = 'normal';
  let requestCount = 0;
  const stored: StoredEvent[] = [];
  const subscriptions = new Map<WebSocket, Map<string, Filter[]>>();

  const http: Server = createServer((_request, response) => {
    response.writeHead(426).end('websocket only');
  });
  const wss = new WebSocketServer({ server: http, maxPayload: 4 * 1024 * 1024 });

  const send = (socket: WebSocket, message: unknown[]) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };

  const accept = (event: StoredEvent): [boolean, string] => {
    if (stored.some((existing) => existing.id === event.id)) return [true, 'duplicate: already have this event'];
    if (isParameterizedReplaceable(event.kind)) {
      // NIP-01: one event per (kind, pubkey, d); newest wins, ties to the lowest id.
      const index = stored.findIndex(
        (existing) => existing.kind === event.kind && existing.pubkey === event.pubkey && dTag(existing) === dTag(event),
      );
      if (index >= 0) {
        const existing = stored[index] as StoredEvent;
        const older =
          Number(event.created_at) < Number(existing.created_at) ||
          (event.created_at === existing.created_at && String(event.id) > String(existing.id));
        if (older) return [false, 'duplicate: have a newer version of this event'];
        stored.splice(index, 1);
      }
    }
    stored.push(event);
    for (const [socket, subs] of subscriptions) {
      for (const [subscriptionId, filters] of subs) {
        if (filters.some((filter) => matches(event, filter, mode === 'ignoreTagFilters'))) {
          send(socket, ['EVENT', subscriptionId, event]);
        }
      }
    }
    return [true, ''];
  };

  const onRequest = (socket: WebSocket, subscriptionId: string, filters: Filter[]) => {
    requestCount += 1;
    if (mode === 'silent') return;
    if (mode === 'refuse') {
      send(socket, ['CLOSED', subscriptionId, 'unsupported: this relay answers nothing']);
      return;
    }
    const ignoreTags = mode === 'ignoreTagFilters';
    const chosen = new Map<unknown, StoredEvent>();
    if (mode === 'flood') for (const event of stored) chosen.set(event.id, event);
    else
      for (const filter of filters) {
        let hits = stored.filter((event) => matches(event, filter, ignoreTags)).sort(newestFirst);
        if (typeof filter.limit === 'number') hits = hits.slice(0, Math.max(0, filter.limit));
        for (const event of hits) chosen.set(event.id, event);
      }
    for (const event of [...chosen.values()].sort(newestFirst)) send(socket, ['EVENT', subscriptionId, event]);
    if (mode !== 'noEose') send(socket, ['EOSE', subscriptionId]);
    subscriptions.get(socket)?.set(subscriptionId, filters);
  };

  wss.on('connection', (socket) => {
    subscriptions.set(socket, new Map());
    socket.on('close', () => subscriptions.delete(socket));
    socket.on('error', () => socket.terminate());
    socket.on('message', (data, isBinary) => {
      if (isBinary) return send(socket, ['NOTICE', 'error: binary frames are not supported']);
      let message: unknown;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return send(socket, ['NOTICE', 'error: not JSON']);
      }
      if (!Array.isArray(message)) return send(socket, ['NOTICE', 'error: not an array']);
      const [type, ...rest] = message as unknown[];
      if (mode === 'silent' && type !== 'REQ') return undefined;
      if (type === 'EVENT') {
        const event = rest[0];
        const id = typeof event === 'object' && event !== null ? (event as StoredEvent).id : undefined;
        let valid = false;
        try {
          valid = verifyEvent({ ...(event as NostrEvent) });
        } catch {
          valid = false;
        }
        if (!valid) return send(socket, ['OK', id ?? '', false, 'invalid: bad id or signature']);
        const [ok, reason] = accept({ ...(event as StoredEvent) });
        return send(socket, ['OK', id, ok, reason]);
      }
      if (type === 'REQ') {
        const [subscriptionId, ...filters] = rest;
        if (typeof subscriptionId !== 'string' || subscriptionId === '' || subscriptionId.length > 64) {
          return send(socket, ['NOTICE', 'invalid: subscription id']);
        }
        if (!filters.every((filter) => typeof filter === 'object' && filter !== null && !Array.isArray(filter))) {
          return send(socket, ['CLOSED', subscriptionId, 'invalid: filters must be objects']);
        }
        return onRequest(socket, subscriptionId, filters as Filter[]);
      }
      if (type === 'CLOSE') {
        if (typeof rest[0] === 'string') subscriptions.get(socket)?.delete(rest[0]);
        return undefined;
      }
      return send(socket, ['NOTICE', `error: unknown message type ${String(type)}`]);
    });
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });

  const stopListening = () =>
    new Promise<void>((resolve) => {
      for (const client of wss.clients) client.terminate();
      subscriptions.clear();
      http.close(() => resolve());
      http.closeAllConnections();
    });

  await listen(0);
  const port = (http.address() as AddressInfo).port;

  const setMode = async (next: RelayMode) => {
    if (next === mode) return;
    if (next === 'down') await stopListening();
    else if (mode === 'down') await listen(port);
    mode = next;
  };
  await setMode(options.mode ?? 'normal');

  return {
    url: `ws://127.0.0.1:${port}`,
    publishRaw: (event) => {
      stored.push(event as StoredEvent);
    },
    events: () => [...stored],
    setMode,
    get requestCount() {
      return requestCount;
    },
    close: async () => {
      if (mode !== 'down') await stopListening();
      mode = 'down';
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
