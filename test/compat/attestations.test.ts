/**
 * The attestation routes in the shapes the OrangeCheck SDKs read them:
 *
 * - identities echo the protocol that was signed (oc-packages
 *   `sdk/src/__tests__/conformance.test.ts` keeps `twitter:@alice` as
 *   `twitter`); only `identity=` look-ups treat `x` and `twitter` as one;
 * - `/api/discover` envelopes keep what the publisher's content carries, and
 *   always have the `verification_url` that `sdk/src/types.ts`
 *   `AttestationEnvelope` requires; sdk-py `AttestationSummary.from_json`
 *   reads `verification_url` and `relay_hints`;
 * - `POST /api/publish-attestation` takes an envelope (oc-docs
 *   `api-reference/attest.mdx`, "publish").
 */
import type { FastifyInstance } from 'fastify';
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAttestationMessage } from '../../src/features/attestations/index.js';
import { addressFromPrivateKey } from '../support/bitcoin-signer.js';
import { buildAttestationEvent, buildEnvelope, type AttestationEnvelope } from '../../src/relay/index.js';
import { githubAliceEnvelope, signAttestation, type SignedAttestation } from '../support/attestations.js';
import { agedUtxo, startEsploraFake, type EsploraFake } from '../support/esplora-fake.js';
import { useRelayHarness } from '../support/relay-harness.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const key = new Uint8Array(32).fill(77);
const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
const publisherKey = generateSecretKey();

let esplora: EsploraFake;
beforeAll(async () => {
  esplora = await startEsploraFake({ tipHeight: 1000 });
  esplora.setUtxos(address, [agedUtxo(NOW, 'ab'.repeat(32), 250_000, 40)]);
});
afterAll(async () => {
  await esplora.close();
});
const { relays, appOver } = useRelayHarness({ env: () => ({ ESPLORA_URLS: esplora.url }), deps: () => ({ now: () => NOW }) });

/** A publisher's event whose content carries more than the envelope fields oc-host checks. */
function richEvent(attestation: SignedAttestation, extra: Record<string, unknown>) {
  const parsed = parseAttestationMessage(attestation.msg);
  if (!parsed.ok) throw new Error('test: message does not parse');
  const envelope = buildEnvelope({
    message: attestation.msg,
    signature: attestation.sig,
    scheme: 'bip322',
    attestationId: attestation.id,
    address,
    identities: parsed.value.identities,
    issuedAt: parsed.value.issuedAt,
  });
  return finalizeEvent(buildAttestationEvent({ ...envelope, ...extra } as AttestationEnvelope, NOW), publisherKey);
}

async function get(app: FastifyInstance, url: string) {
  const response = await app.inject({ method: 'GET', url });
  return { status: response.statusCode, body: response.json() };
}

describe('identities keep the protocol that was signed', () => {
  it('verify, check and discover all answer twitter:@alice as twitter; identity=x:@alice finds it', async () => {
    const [relay] = await relays('normal');
    const attestation = signAttestation(key, address, '2026-05-01T00:00:00Z', { identities: ['github:alice', 'twitter:@alice'] });
    relay!.publishRaw(richEvent(attestation, {}));
    const app = await appOver([relay!]);
    const signedIdentities = [
      { protocol: 'github', identifier: 'alice' },
      { protocol: 'twitter', identifier: '@alice' },
    ];

    const verify = await app.inject({
      method: 'POST',
      url: '/api/verify',
      payload: { addr: address, msg: attestation.msg, sig: attestation.sig, scheme: 'bip322' },
    });
    expect(verify.json()).toMatchObject({ ok: true, identities: signedIdentities });

    const byX = await get(app, `/api/check?identity=${encodeURIComponent('x:@alice')}`);
    expect(byX.status).toBe(200);
    expect(byX.body).toMatchObject({ ok: true, attestation_id: attestation.id, identities: signedIdentities });
    const byTwitter = await get(app, `/api/check?identity=${encodeURIComponent('twitter:@alice')}`);
    expect(byTwitter.body.attestation_id).toBe(attestation.id);

    const discovered = await get(app, `/api/discover?identity=${encodeURIComponent('x:@alice')}`);
    expect(discovered.body.attestations[0].identities).toEqual(signedIdentities);
  });
});

describe('/api/discover keeps the envelope the publisher wrote', () => {
  it('passes on verification_url, publish_targets and unknown fields, and the signed values win', async () => {
    const [relay] = await relays('normal');
    const attestation = signAttestation(key, address, '2026-05-02T00:00:00Z', { identities: ['github:alice'] });
    relay!.publishRaw(
      richEvent(attestation, {
        verification_url: 'https://ochk.io/verify/abc',
        publish_targets: ['nostr', 'ipfs'],
        app_note: { colour: 'orange' },
      }),
    );
    const app = await appOver([relay!]);
    const { body } = await get(app, `/api/discover?addr=${address}`);
    expect(body.attestations).toHaveLength(1);
    expect(body.attestations[0]).toMatchObject({
      attestation_id: attestation.id,
      verification_url: 'https://ochk.io/verify/abc',
      publish_targets: ['nostr', 'ipfs'],
      app_note: { colour: 'orange' },
      identities: [{ protocol: 'github', identifier: 'alice' }],
    });
  });

  it("gives an envelope without one this service's own verification_url, as the SDK type requires", async () => {
    const [relay] = await relays('normal');
    const attestation = signAttestation(key, address, '2026-05-03T00:00:00Z');
    relay!.publishRaw(richEvent(attestation, {}));
    const app = await appOver([relay!]);
    const { body } = await get(app, `/api/discover?id=${attestation.id}`);
    expect(body.attestations[0].verification_url).toBe(`http://localhost:8787/api/check?id=${attestation.id}`);
  });
});

describe('POST /api/publish-attestation', () => {
  it('publishes an envelope, like POST /api/attestations, and discover then finds it', async () => {
    const [relay] = await relays('normal');
    const app = await appOver([relay!]);
    const attestation = signAttestation(key, address, '2026-05-04T00:00:00Z', { identities: ['github:alice'] });
    const envelope = {
      ...githubAliceEnvelope(attestation),
      issued_at: '2026-05-04T00:00:00Z',
      publish_targets: ['nostr'],
    };
    const published = await app.inject({ method: 'POST', url: '/api/publish-attestation', payload: envelope });
    expect(published.statusCode).toBe(200);
    expect(published.json()).toMatchObject({ ok: true, attestation_id: attestation.id, published: [relay!.url] });
    const { body } = await get(app, `/api/discover?id=${attestation.id}`);
    expect(body.attestations[0]).toMatchObject({
      attestation_id: attestation.id,
      verification_url: `http://localhost:8787/api/check?id=${attestation.id}`,
    });

    const wrongId = await app.inject({
      method: 'POST',
      url: '/api/publish-attestation',
      payload: { ...envelope, attestation_id: 'ff'.repeat(32) },
    });
    expect(wrongId.json()).toMatchObject({ ok: false, codes: ['invalid_attestation_id'] });
    const missing = await app.inject({ method: 'POST', url: '/api/publish-attestation', payload: { address, signature: attestation.sig } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'bad_request', reasons: ['bad_request'] });
  });
});
