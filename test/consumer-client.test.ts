/**
 * The typed client of @oc-host/verify against a running oc-host (docs/api.md
 * "Attestation routes", "Signed challenge"), with a real Nostr relay and a
 * real Esplora fake on loopback so check and discover have something to find;
 * and its 429 handling (docs/protocol.md §4: Retry-After) against a small local
 * HTTP server that answers 429 before it answers 200.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateSecretKey, type NostrEvent } from 'nostr-tools/pure';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOcClient, isNotFound, isOcClientError, OcClientError, retryAfterMs, type OcClient } from '../packages/verify/src/client.js';
import { addressFromPrivateKey, signBip322 } from './support/bitcoin-signer.js';
import { startHost, type RunningHost } from './support/consumer-host.js';
import { closedPortUrl, startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { startNostrRelay, type NostrRelay } from './support/nostr-relay.js';
import { aliceCheckResult, attestationEvent, signAttestation } from './support/attestations.js';

const DAY = 86_400;
const aliceKey = new Uint8Array(32).fill(41);
const alice = addressFromPrivateKey(aliceKey, 'p2wpkh', 'mainnet');
const nobody = addressFromPrivateKey(new Uint8Array(32).fill(42), 'p2tr', 'mainnet');

interface Signed {
  readonly msg: string;
  readonly sig: string;
  readonly id: string;
}

function signedAttestation(identities: string[]): Signed {
  const issuedAt = new Date(Date.now() - 10 * DAY * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return signAttestation(aliceKey, alice, issuedAt, { identities });
}

function eventOf(attestation: Signed): NostrEvent {
  return attestationEvent(attestation, { publisherKey: generateSecretKey(), createdAt: new Date() });
}

describe('against a running oc-host', () => {
  let esplora: EsploraFake;
  let relay: NostrRelay;
  let host: RunningHost;
  let client: OcClient;
  let attestation: Signed;

  beforeAll(async () => {
    esplora = await startEsploraFake({ tipHeight: 1000 });
    const blockTime = Math.floor(Date.now() / 1000) - 45 * DAY - 3600;
    esplora.setUtxos(alice, [
      {
        txid: 'aa'.repeat(32),
        vout: 0,
        value: 250_000,
        status: { confirmed: true, block_height: 900, block_hash: '00'.repeat(32), block_time: blockTime },
      },
    ]);
    relay = await startNostrRelay();
    attestation = signedAttestation(['github:alice', 'nostr:npub1alice']);
    relay.publishRaw(eventOf(attestation));
    host = await startHost({ ESPLORA_URLS: esplora.url, NOSTR_RELAYS: relay.url }, { relayTimeoutMs: 1000 });
    client = createOcClient({ baseUrl: host.url });
  });
  afterAll(async () => {
    await host?.close();
    await Promise.all([relay?.close(), esplora?.close()]);
  });

  it('check by address: the docs/api.md check result', async () => {
    const result = await client.check({ addr: alice });
    expect(isNotFound(result)).toBe(false);
    expect(result).toMatchObject(aliceCheckResult(attestation.id, alice));
    expect(result.reasons).toBeUndefined();
  });

  it('check with thresholds, by id and by identity', async () => {
    expect(await client.check({ addr: alice, minSats: 250_001 })).toMatchObject({ ok: false, reasons: ['below_min_sats'] });
    expect(await client.check({ addr: alice, minSats: 300_000, minDays: 100 })).toMatchObject({
      ok: false,
      reasons: ['below_min_sats', 'below_min_days'],
    });
    expect(await client.check({ addr: alice, minSats: 250_000, minDays: 45 })).toMatchObject({ ok: true });
    expect(await client.check({ id: attestation.id })).toMatchObject({ ok: true, address: alice });
    expect(await client.check({ identity: 'github:alice' })).toMatchObject({ ok: true, attestation_id: attestation.id });
  });

  it('check of a subject with no attestation: the 404 body as a result, not an error', async () => {
    const result = await client.check({ addr: nobody });
    expect(result).toEqual({ ok: false, reasons: ['not_found'] });
    expect(isNotFound(result)).toBe(true);
  });

  it('a bad request: OcClientError with status 400, code bad_request and the detail', async () => {
    const error = await client.check({ addr: 'not-an-address' }).catch((caught: unknown) => caught);
    expect(isOcClientError(error)).toBe(true);
    expect(error).toMatchObject({ status: 400, code: 'bad_request', detail: expect.any(String) });
    expect((error as OcClientError).message).toMatch(/^@oc-host\/verify client: bad_request \(HTTP 400\)/);
  });

  it('misuse of the subject is a TypeError before any request', async () => {
    await expect(client.check({} as never)).rejects.toThrow(TypeError);
    await expect(client.check({ addr: alice, id: attestation.id } as never)).rejects.toThrow(/exactly one of addr, id, identity/);
    await expect(client.check({ addr: alice, minSats: -1 })).rejects.toThrow(/min_sats/);
    await expect(client.discover({ identity: '' })).rejects.toThrow(/non-empty/);
  });

  it('verify: raw verification, status codes and metrics; an unknown scheme is a code, not an error', async () => {
    const result = await client.verify({ addr: alice, msg: attestation.msg, sig: attestation.sig });
    expect(result).toMatchObject({ ok: true, address: alice, attestation_id: attestation.id, sats: 250_000, days: 45, network: 'mainnet' });
    expect(result.codes).toEqual(expect.arrayContaining(['sig_ok_bip322', 'bond_confirmed']));
    const unknown = await client.verify({ addr: alice, msg: attestation.msg, sig: attestation.sig, scheme: 'carrier-pigeon' });
    expect(unknown.ok).toBe(false);
    expect(unknown.codes).toContain('invalid_scheme');
  });

  it('discover: the stored envelopes of a subject', async () => {
    const found = await client.discover({ addr: alice });
    expect(found).toMatchObject({ count: 1, total: 1 });
    expect(found.attestations[0]).toMatchObject({
      attestation_id: attestation.id,
      address: alice,
      scheme: 'bip322',
      message: attestation.msg,
      signature: attestation.sig,
    });
    expect(await client.discover({ identity: 'nostr:npub1alice', limit: 1 })).toMatchObject({ count: 1 });
    expect(await client.discover({ addr: nobody })).toMatchObject({ count: 0, total: 0, attestations: [] });
    await expect(client.discover({ addr: alice, limit: 0 })).rejects.toMatchObject({ status: 400, code: 'bad_request' });
  });

  it('challenge, then verifyChallenge of the signed message; a wrong nonce or purpose is invalid_challenge with its code', async () => {
    const audience = 'https://app.example.com';
    const challenge = await client.challenge({ addr: alice, audience, purpose: 'vote', ttlSeconds: 60 });
    expect(challenge.message).toContain(`address: ${alice}\n`);
    expect(challenge.message).toContain(`nonce: ${challenge.nonce}\n`);
    expect(challenge.message).toContain('purpose: vote\n');
    expect(Date.parse(challenge.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    const signature = signBip322({ privateKey: aliceKey, address: alice, message: challenge.message });

    const proof = {
      message: challenge.message,
      signature,
      expectedNonce: challenge.nonce,
      expectedAudience: audience,
      expectedPurpose: 'vote',
    };
    expect(await client.verifyChallenge(proof)).toMatchObject({
      ok: true,
      address: alice,
      nonce: challenge.nonce,
      audience,
      purpose: 'vote',
      expiresAt: Date.parse(challenge.expiresAt),
    });
    expect(await client.verifyChallenge({ ...proof, expectedNonce: '0'.repeat(32) })).toEqual({
      ok: false,
      reason: 'invalid_challenge',
      codes: ['nonce_mismatch'],
    });
    expect(await client.verifyChallenge({ ...proof, expectedPurpose: 'login' })).toEqual({
      ok: false,
      reason: 'invalid_challenge',
      codes: ['purpose_mismatch'],
    });
  });

  it('a base URL with a trailing slash, a path prefix in front of the routes', async () => {
    expect(await createOcClient({ baseUrl: `${host.url}/` }).check({ addr: alice })).toMatchObject({ ok: true });
    const prefixed = createOcClient({
      baseUrl: `${host.url}/oc`,
      fetch: (input, init) => fetch(String(input).replace('/oc/api/', '/api/'), init),
    });
    expect(await prefixed.check({ addr: alice })).toMatchObject({ ok: true });
  });
});

// ---- 429 and other answers, from a scripted local server ----

interface Scripted {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Never answer. */
  readonly hang?: boolean;
}

interface Received {
  readonly method: string;
  readonly url: string;
  readonly body: string;
  readonly at: number;
}

describe('429, errors and timeouts (a scripted server)', () => {
  let server: Server;
  let baseUrl: string;
  let script: Scripted[] = [];
  let fallback: Scripted = { status: 200, body: '{"ok":true}' };
  let received: Received[] = [];

  const ok = (body: unknown = { count: 0, total: 0, attestations: [] }): Scripted => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const tooMany = (retryAfter?: string, body: unknown = { ok: false, error: 'rate_limited', reason: 'rate_limited' }): Scripted => ({
    status: 429,
    headers: { 'content-type': 'application/json', ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) },
    body: JSON.stringify(body),
  });

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          method: request.method ?? '',
          url: request.url ?? '',
          body: Buffer.concat(chunks).toString('utf8'),
          at: performance.now(),
        });
        const next = script.shift() ?? fallback;
        if (next.hang) return;
        response.writeHead(next.status, next.headers ?? {}).end(next.body ?? '');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    script = [];
    fallback = ok();
    received = [];
  });

  it('Retry-After in seconds: waits, retries, returns the 200', async () => {
    script = [tooMany('1'), ok({ count: 1, total: 1, attestations: [] })];
    const started = performance.now();
    const result = await createOcClient({ baseUrl }).discover({ addr: alice });
    expect(result).toEqual({ count: 1, total: 1, attestations: [] });
    expect(received).toHaveLength(2);
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(950);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(received[1]!.url).toBe(received[0]!.url);
  });

  it('Retry-After as an HTTP date; a POST is retried with the same body', async () => {
    const at = new Date(Date.now() + 3000);
    script = [tooMany(at.toUTCString()), ok({ ok: true, address: alice })];
    const proof = { message: 'm', signature: 's', expectedNonce: 'n' };
    expect(await createOcClient({ baseUrl }).verifyChallenge(proof)).toEqual({ ok: true, address: alice });
    expect(received).toHaveLength(2);
    // The date has whole seconds: the wait is between 2 and 3 s, less the time the 429 took.
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(900);
    expect(received.map((request) => [request.method, JSON.parse(request.body)])).toEqual([
      ['POST', proof],
      ['POST', proof],
    ]);
  });

  it("without Retry-After, the body's retry_after_seconds (docs/protocol.md §4) is used", async () => {
    script = [tooMany(undefined, { ok: false, error: 'rate_limited', reason: 'rate_limited', retry_after_seconds: 0 }), ok()];
    await createOcClient({ baseUrl }).discover({ addr: alice });
    expect(received).toHaveLength(2);
  });

  it('a wait beyond maxRetryDelayMs is not shortened: rate_limited at once, with retryAfterSeconds', async () => {
    script = [tooMany('3600')];
    const started = performance.now();
    const error = await createOcClient({ baseUrl, maxRetryDelayMs: 2000 })
      .check({ addr: alice })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OcClientError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 3600 });
    expect(received).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('at most maxRetries retries, then rate_limited', async () => {
    fallback = tooMany('0');
    await expect(createOcClient({ baseUrl, maxRetries: 2 }).check({ addr: alice })).rejects.toMatchObject({
      status: 429,
      code: 'rate_limited',
      retryAfterSeconds: 0,
    });
    expect(received).toHaveLength(3);
    received = [];
    await expect(createOcClient({ baseUrl, maxRetries: 0 }).check({ addr: alice })).rejects.toMatchObject({ code: 'rate_limited' });
    expect(received).toHaveLength(1);
  });

  it('an abort during the wait ends the call', async () => {
    script = [tooMany('5')];
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user gave up')), 100);
    const started = performance.now();
    await expect(createOcClient({ baseUrl }).discover({ addr: alice }, { signal: controller.signal })).rejects.toThrow('user gave up');
    expect(performance.now() - started).toBeLessThan(2000);
    expect(received).toHaveLength(1);
  });

  it('error bodies: the code from error, else reason, else reasons[0], else http_<status>', async () => {
    script = [
      {
        status: 503,
        body: JSON.stringify({ ok: false, error: 'relays_unavailable', reason: 'relays_unavailable', reasons: ['relays_unavailable'] }),
      },
      { status: 400, body: JSON.stringify({ ok: false, reason: 'bad_request', detail: 'query.addr: required' }) },
      { status: 500, body: JSON.stringify({ ok: false, reasons: ['internal_error'] }) },
      { status: 502, body: '<html>bad gateway</html>' },
    ];
    const client = createOcClient({ baseUrl });
    const codes: unknown[] = [];
    for (let index = 0; index < 4; index += 1) {
      codes.push(await client.discover({ addr: alice }).catch((error: OcClientError) => [error.status, error.code, error.detail]));
    }
    expect(codes).toEqual([
      [503, 'relays_unavailable', undefined],
      [400, 'bad_request', 'query.addr: required'],
      [500, 'internal_error', undefined],
      [502, 'http_502', undefined],
    ]);
  });

  it('check: a 404 without reasons (a wrong baseUrl, a proxy page) is an error, not a not-found result', async () => {
    script = [
      { status: 404, body: '<html>Not Found</html>' },
      { status: 404, body: JSON.stringify({ message: 'Route GET:/api/check not found', error: 'Not Found', statusCode: 404 }) },
      { status: 404, body: JSON.stringify({ ok: false, reasons: ['not_found'] }) },
    ];
    const client = createOcClient({ baseUrl });
    await expect(client.check({ addr: alice })).rejects.toMatchObject({ status: 404, code: 'http_404' });
    await expect(client.check({ addr: alice })).rejects.toMatchObject({ status: 404, code: 'Not Found' });
    expect(isNotFound(await client.check({ addr: alice }))).toBe(true);
  });

  it('a 200 that is not JSON: invalid_response; no answer in time: timeout; nothing listening: network_error', async () => {
    script = [{ status: 200, body: 'hello' }];
    await expect(createOcClient({ baseUrl }).discover({ addr: alice })).rejects.toMatchObject({ status: 200, code: 'invalid_response' });
    script = [{ status: 200, hang: true }];
    await expect(createOcClient({ baseUrl, timeoutMs: 200 }).discover({ addr: alice })).rejects.toMatchObject({
      status: 0,
      code: 'timeout',
    });
    await expect(createOcClient({ baseUrl: await closedPortUrl() }).discover({ addr: alice })).rejects.toMatchObject({
      status: 0,
      code: 'network_error',
    });
  });

  it('bad options throw when the client is made', () => {
    expect(() => createOcClient({ baseUrl: 'not a url' })).toThrow(/baseUrl/);
    expect(() => createOcClient({ baseUrl: 'ftp://example.com' })).toThrow(/http/);
    expect(() => createOcClient({ baseUrl, maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => createOcClient({ baseUrl, maxRetries: 1.5 })).toThrow(/maxRetries/);
    expect(() => createOcClient({ baseUrl, maxRetries: 11 })).toThrow(/maxRetries/);
    expect(() => createOcClient({ baseUrl, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates; ignores what it cannot read', () => {
    const now = Date.parse('2026-06-01T00:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Mon, 01 Jun 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Sun, 31 May 2026 23:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs('-5', now)).toBeUndefined();
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('2027', now)).toBe(2_027_000);
    expect(retryAfterMs('Sunday, 31-May-26 23:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});
