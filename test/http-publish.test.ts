/**
 * POST /api/attestations and the publish CLI command (src/features/attestations/publish.ts,
 * src/cli/publish.ts; docs/protocol.md §7 "Relay envelopes"): a wallet-signed
 * attestation goes to real relays on loopback, signed with the service's
 * Nostr key, and is then found through /api/check and /api/discover.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { generateSecretKey, getPublicKey, verifyEvent, type NostrEvent } from 'nostr-tools/pure';
import { attestationId, buildAttestationMessage } from '../src/features/attestations/index.js';
import { addressFromPrivateKey, signBip322, signLegacy } from './support/bitcoin-signer.js';
import { publishFromFile } from '../src/cli/publish.js';
import { testConfig } from './support/app.js';
import { agedUtxo, startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { useRelayHarness } from './support/relay-harness.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const nowSeconds = Math.floor(NOW.getTime() / 1000);
const walletKey = new Uint8Array(32).fill(51);
const address = addressFromPrivateKey(walletKey, 'p2wpkh', 'mainnet');
const legacyAddress = addressFromPrivateKey(walletKey, 'p2pkh', 'mainnet');
const serviceKey = generateSecretKey();

function attestation(forAddress: string, extensions: Record<string, string> = {}, identities = ['github:carol', 'nostr:npub1carol']) {
  return buildAttestationMessage({
    address: forAddress,
    identities,
    nonce: randomBytes(16).toString('hex'),
    issuedAt: '2026-05-20T10:00:00Z',
    extensions,
  });
}

let esplora: EsploraFake;
const { relays, appOver } = useRelayHarness({
  env: () => ({ ESPLORA_URLS: esplora.url }),
  deps: () => ({ now: () => NOW, nostrSecretKey: serviceKey }),
});

async function publish(app: FastifyInstance, payload: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: '/api/attestations', payload });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

beforeAll(async () => {
  esplora = await startEsploraFake({ tipHeight: 1000 });
  esplora.setUtxos(address, [agedUtxo(NOW, 'aa'.repeat(32), 123_456, 20)]);
});
afterEach(async () => {
  esplora.resetRequests();
});
afterAll(async () => {
  await esplora.close();
});

describe('POST /api/attestations', () => {
  it('publishes a wallet-signed attestation (one relay down → failed), then /api/check and /api/discover find it', async () => {
    const [good, down] = await relays('normal', 'down');
    const app = await appOver([good!, down!]);
    const msg = attestation(address);
    const sig = signBip322({ privateKey: walletKey, address, message: msg });

    const { status, body, headers } = await publish(app, { addr: address, msg, sig, scheme: 'bip322' });
    expect(status).toBe(200);
    expect(headers['cache-control']).toBe('no-store');
    expect(body).toEqual({
      ok: true,
      attestation_id: attestationId(msg),
      codes: ['sig_ok_bip322'],
      event_id: expect.stringMatching(/^[0-9a-f]{64}$/),
      published: [good!.url],
      failed: [down!.url],
    });
    // Publishing never asks the chain (bonds are measured when read).
    expect(esplora.requests.utxo).toBe(0);

    // The stored event: kind 30078, signed by the service's key, §7 tags.
    const [event] = good!.events() as NostrEvent[];
    expect(event!.id).toBe(body.event_id);
    expect(verifyEvent({ ...event! })).toBe(true);
    expect(event!.pubkey).toBe(getPublicKey(serviceKey));
    expect(event!.kind).toBe(30078);
    expect(event!.created_at).toBe(nowSeconds);
    expect(event!.tags).toEqual([
      ['d', attestationId(msg)],
      ['address', address],
      ['scheme', 'bip322'],
      ['issued_at', '2026-05-20T10:00:00Z'],
      ['i', 'github:carol'],
      ['i', 'nostr:npub1carol'],
    ]);

    const checked = await app.inject({ method: 'GET', url: `/api/check?addr=${address}&min_sats=100000&min_days=20` });
    expect(checked.statusCode).toBe(200);
    expect(checked.json()).toMatchObject({ ok: true, attestation_id: attestationId(msg), address, sats: 123_456, days: 20 });

    const discovered = await app.inject({ method: 'GET', url: '/api/discover?identity=github:carol' });
    expect(discovered.json()).toMatchObject({
      count: 1,
      total: 1,
      attestations: [
        {
          attestation_id: attestationId(msg),
          message: msg,
          signature: sig,
          scheme: 'bip322',
          event_id: body.event_id,
          relays: [good!.url],
        },
      ],
    });
  });

  it('a signature that does not verify: 200 {ok: false, codes}, nothing sent', async () => {
    const [relay] = await relays('normal');
    const app = await appOver([relay!]);
    const msg = attestation(address);
    const otherSig = signBip322({ privateKey: walletKey, address, message: attestation(address) });
    const { status, body } = await publish(app, { addr: address, msg, sig: otherSig, scheme: 'bip322' });
    expect(status).toBe(200);
    expect(body).toEqual({ ok: false, attestation_id: attestationId(msg), codes: ['sig_invalid'], published: [], failed: [] });
    expect(relay!.events()).toEqual([]);
  });

  it.each([
    ['expired', () => attestation(address, { expires: '2026-05-21T00:00:00Z' }), 'bip322', 'expired'],
    ['decode_error', () => attestation(address).replace('orangecheck\n', 'orangecheck2\n'), 'bip322', 'decode_error'],
    ['invalid_scheme', () => attestation(address), 'schnorr', 'invalid_scheme'],
    ['bad_request (message binds another address)', () => attestation(legacyAddress), 'bip322', 'bad_request'],
  ])('%s blocks publishing', async (_name, makeMessage, scheme, code) => {
    const [relay] = await relays('normal');
    const app = await appOver([relay!]);
    const msg = makeMessage();
    let sig = 'AAAA';
    try {
      sig = signBip322({ privateKey: walletKey, address, message: msg });
    } catch {
      // keep the placeholder for messages the signer refuses
    }
    const { status, body } = await publish(app, { addr: address, msg, sig, scheme });
    expect(status).toBe(200);
    expect(body.ok).toBe(false);
    expect(body.codes).toContain(code);
    expect(relay!.events()).toEqual([]);
  });

  it('an Esplora outage and an empty address do not block publishing', async () => {
    const [relay] = await relays('normal');
    const app = await appOver([relay!], { ESPLORA_URLS: 'http://127.0.0.1:9' });
    const empty = addressFromPrivateKey(walletKey, 'p2tr', 'mainnet');
    const msg = attestation(empty);
    const { body } = await publish(app, { addr: empty, msg, sig: signBip322({ privateKey: walletKey, address: empty, message: msg }) });
    expect(body).toMatchObject({ ok: true, codes: ['sig_ok_bip322'], published: [relay!.url], failed: [] });
  });

  it('records the scheme that verified: a legacy signature on P2PKH is published as legacy and checks', async () => {
    const [relay] = await relays('normal');
    const app = await appOver([relay!]);
    const msg = attestation(legacyAddress);
    const { body } = await publish(app, { addr: legacyAddress, msg, sig: signLegacy(walletKey, msg) });
    expect(body).toMatchObject({ ok: true, codes: ['sig_ok_legacy'] });
    const found = await app.inject({ method: 'GET', url: `/api/discover?addr=${legacyAddress}` });
    expect(found.json().attestations[0].scheme).toBe('legacy');
    const checked = await app.inject({ method: 'GET', url: `/api/check?addr=${legacyAddress}` });
    expect(checked.json()).toMatchObject({ ok: true, codes: ['sig_ok_legacy', 'bond_zero'] });
  });

  it('503 relays_unavailable when no relay accepts the event', async () => {
    const [down, refusing] = await relays('down', 'silent');
    const app = await appOver([down!, refusing!]);
    const msg = attestation(address);
    const { status, body } = await publish(app, { addr: address, msg, sig: signBip322({ privateKey: walletKey, address, message: msg }) });
    expect(status).toBe(503);
    expect(body).toMatchObject({ ok: false, error: 'relays_unavailable', reason: 'relays_unavailable', reasons: ['relays_unavailable'] });
  });

  it('a publication forgets the cached check results of its address, id and identities, so it shows at once', async () => {
    const [relay] = await relays('normal');
    const app = await appOver([relay!]);
    const signedAt = (issuedAt: string) => {
      const msg = buildAttestationMessage({
        address,
        identities: ['github:dave', 'twitter:@dave'],
        nonce: randomBytes(16).toString('hex'),
        issuedAt,
      });
      return { addr: address, msg, sig: signBip322({ privateKey: walletKey, address, message: msg }) };
    };
    const older = signedAt('2026-05-10T10:00:00Z');
    expect((await publish(app, older)).body.ok).toBe(true);

    const subjects = [`addr=${address}`, 'identity=github:dave', 'identity=x:@dave'];
    const check = async (query: string) => {
      const response = await app.inject({ method: 'GET', url: `/api/check?${query}` });
      return { cache: response.headers['x-cache'], id: response.json().attestation_id as string };
    };
    const olderId = `id=${attestationId(older.msg)}`;
    for (const query of [...subjects, olderId]) await check(query);
    for (const query of [...subjects, olderId]) expect(await check(query)).toEqual({ cache: 'hit', id: attestationId(older.msg) });

    const newer = signedAt('2026-05-20T10:00:00Z');
    const published = await app.inject({
      method: 'POST',
      url: '/api/publish-attestation',
      payload: { address, message: newer.msg, signature: newer.sig },
    });
    expect(published.json().ok).toBe(true);
    for (const query of subjects) expect(await check(query)).toEqual({ cache: 'miss', id: attestationId(newer.msg) });
    // The older attestation's own id is no subject of the new one: its result stands.
    expect(await check(olderId)).toEqual({ cache: 'hit', id: attestationId(older.msg) });
  });

  it('a wrong body shape is 400 bad_request naming the field', async () => {
    const [relay] = await relays('normal');
    const app = await appOver([relay!]);
    const { status, body } = await publish(app, { addr: address, msg: 'x' });
    expect(status).toBe(400);
    expect(body).toMatchObject({ ok: false, error: 'bad_request', reasons: ['bad_request'] });
    expect(body.detail).toMatch(/sig/);
  });
});

describe('publishFromFile (CLI)', () => {
  it('publishes the attestation in a JSON file to the configured relays', async () => {
    const [relay] = await relays('normal');
    const msg = attestation(address);
    const sig = signBip322({ privateKey: walletKey, address, message: msg });
    const dir = mkdtempSync(join(tmpdir(), 'oc-publish-'));
    const file = join(dir, 'attestation.json');
    writeFileSync(file, JSON.stringify({ addr: address, msg, sig }));
    const lines: string[] = [];
    const outcome = await publishFromFile(file, {
      config: testConfig({ NOSTR_RELAYS: relay!.url }),
      log: (line) => lines.push(line),
      nostrSecretKey: serviceKey,
    });
    expect(outcome).toMatchObject({ status: 'published', attestation_id: attestationId(msg), published: [relay!.url], failed: [] });
    expect((relay!.events()[0] as NostrEvent).pubkey).toBe(getPublicKey(serviceKey));
    expect(lines.join('\n')).toContain(attestationId(msg));
  });

  it('reports a bad file with a message naming the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oc-publish-'));
    const config = testConfig();
    const log = () => undefined;
    await expect(publishFromFile(join(dir, 'missing.json'), { config, log })).rejects.toThrow(/^cli: cannot read/);
    writeFileSync(join(dir, 'bad.json'), '{not json');
    await expect(publishFromFile(join(dir, 'bad.json'), { config, log })).rejects.toThrow(/is not JSON/);
    writeFileSync(join(dir, 'shape.json'), JSON.stringify({ addr: address, msg: 'x' }));
    await expect(publishFromFile(join(dir, 'shape.json'), { config, log })).rejects.toThrow(/sig must be a non-empty string/);
  });

  it('returns the rejection of an attestation that does not verify', async () => {
    const [relay] = await relays('normal');
    const dir = mkdtempSync(join(tmpdir(), 'oc-publish-'));
    const file = join(dir, 'attestation.json');
    const msg = attestation(address);
    writeFileSync(file, JSON.stringify({ addr: address, msg, sig: 'AAAA', scheme: 'bip322' }));
    const outcome = await publishFromFile(file, { config: testConfig({ NOSTR_RELAYS: relay!.url }), log: () => undefined });
    expect(outcome).toMatchObject({ status: 'rejected', codes: ['sig_invalid'] });
    expect(relay!.events()).toEqual([]);
  });
});
