import { sign, verify } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_KEY_OVERLAP_SECONDS,
  KEY_PUBLISH_LEAD_MS,
  KeyRing,
  SESSION_LIFETIME_SECONDS,
  generateSigningKey,
  jwkThumbprint,
  publicJwkForConsumers,
  signingKeyFromJwk,
  verificationKeyFromJwk,
} from '../src/identity/session/index.js';

/** RFC 8037 Appendix A.1 (private key), A.2 (public key) and A.3 (thumbprint). */
const RFC8037 = {
  d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A',
  x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
  thumbprint: 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
  /** A.4: JWS of "Example of Ed25519 signing" with header {"alg":"EdDSA"}. */
  signingInput: 'eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc',
  signature: 'hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg',
};

const DAY = 24 * 60 * 60 * 1000;

describe('RFC 8037 Appendix A vector', () => {
  const key = signingKeyFromJwk({ kty: 'OKP', crv: 'Ed25519', d: RFC8037.d, x: RFC8037.x });

  it('loads the key and derives the kid as its RFC 7638 thumbprint', () => {
    expect(key.publicJwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x: RFC8037.x, kid: RFC8037.thumbprint, alg: 'EdDSA', use: 'sig' });
    expect(jwkThumbprint(RFC8037.x)).toBe(RFC8037.thumbprint);
  });

  it('signs the example exactly as A.4 shows', () => {
    expect(sign(null, Buffer.from(RFC8037.signingInput), key.privateKey).toString('base64url')).toBe(RFC8037.signature);
  });
});

describe('generateSigningKey', () => {
  const key = generateSigningKey();

  it('publishes {kty, crv, x, kid, alg, use} and nothing private', () => {
    expect(Object.keys(key.publicJwk)).toEqual(['kty', 'crv', 'x', 'kid', 'alg', 'use']);
    expect(key.publicJwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: key.kid });
    expect(key.publicJwk.x).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key.publicJwk).not.toHaveProperty('d');
  });

  it('uses the RFC 7638 thumbprint that jose computes as kid', async () => {
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x }, 'sha256'));
  });

  it('makes a different key each time', () => {
    expect(generateSigningKey().kid).not.toBe(key.kid);
  });
});

describe('signingKeyFromJwk', () => {
  const key = generateSigningKey();

  it('round-trips through the stored private JWK', () => {
    const loaded = signingKeyFromJwk(JSON.parse(JSON.stringify(key.privateJwk)));
    expect(loaded.kid).toBe(key.kid);
    expect(loaded.publicJwk).toEqual(key.publicJwk);
    expect(loaded.privateJwk).toEqual(key.privateJwk);
    const data = Buffer.from('round trip');
    expect(verify(null, data, key.publicKey, sign(null, data, loaded.privateKey))).toBe(true);
  });

  it('loads a private JWK made by another tool, and recomputes its kid', async () => {
    const { privateKey } = await generateKeyPair('Ed25519', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: 'operator-chosen', alg: 'Ed25519' };
    const loaded = signingKeyFromJwk(jwk);
    expect(loaded.kid).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
    expect(loaded.publicJwk.x).toBe(jwk.x);
  });

  it('rejects an x that is not the public key of d', () => {
    const other = generateSigningKey();
    expect(() => signingKeyFromJwk({ ...key.privateJwk, x: other.publicJwk.x })).toThrow(/"d" and "x" do not belong/);
  });

  it('rejects anything but an Ed25519 private JWK with canonical members', () => {
    const good = key.privateJwk;
    const cases: unknown[] = [
      null,
      'a string',
      [good],
      { ...good, kty: 'EC' },
      { ...good, crv: 'X25519' },
      { ...good, crv: 'Ed448' },
      { ...good, alg: 'ES256' },
      { ...good, use: 'enc' },
      { kty: 'OKP', crv: 'Ed25519', x: good.x },
      { ...good, d: undefined },
      { ...good, x: undefined },
      { ...good, d: `${good.d}=` },
      { ...good, d: good.d.slice(1) },
      { ...good, d: good.d.replace(/^./, '+') },
    ];
    for (const jwk of cases) expect(() => signingKeyFromJwk(jwk), JSON.stringify(jwk)).toThrow(/^session keys: /);
  });

  it('rejects a second spelling of the same key bytes (unused trailing bits set)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respell = (text: string) => text.slice(0, -1) + alphabet[alphabet.indexOf(text.at(-1)!) | 1];
    const good = key.privateJwk;
    expect(Buffer.from(respell(good.x), 'base64url')).toEqual(Buffer.from(good.x, 'base64url'));
    expect(() => signingKeyFromJwk({ ...good, x: respell(good.x) })).toThrow(/"x" must be unpadded, canonical base64url/);
    expect(() => signingKeyFromJwk({ ...good, d: respell(good.d) })).toThrow(/"d" must be unpadded, canonical base64url/);
  });
});

describe('verificationKeyFromJwk and publicJwkForConsumers', () => {
  const key = generateSigningKey();

  it('loads a public-only key with the same kid', () => {
    const publicOnly = verificationKeyFromJwk({ kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x });
    expect(publicOnly.kid).toBe(key.kid);
    expect(publicOnly.publicJwk).toEqual(key.publicJwk);
    expect(publicOnly).not.toHaveProperty('privateKey');
  });

  it('refuses a JWK that carries the private member', () => {
    expect(() => verificationKeyFromJwk(key.privateJwk)).toThrow(/must not carry member "d"/);
  });

  it('gives the JSON text for OC_AUTH_PUBLIC_JWK, importable by jose', async () => {
    const text = publicJwkForConsumers(key);
    expect(text).toBe(`{"kty":"OKP","crv":"Ed25519","x":"${key.publicJwk.x}","kid":"${key.kid}","alg":"EdDSA","use":"sig"}`);
    await expect(importJWK(JSON.parse(text), 'EdDSA')).resolves.toBeDefined();
  });
});

describe('KeyRing', () => {
  const now = new Date('2026-11-21T12:00:00.000Z');
  const newest = generateSigningKey();
  const middle = generateSigningKey();
  const oldest = generateSigningKey();

  it('signs with the newest key that is not retired, and publishes the others', () => {
    const ring = new KeyRing(
      [
        { key: oldest, createdAt: new Date(now.getTime() - 300 * DAY), retiredAt: null },
        { key: newest, createdAt: new Date(now.getTime() - 1 * DAY) },
        { key: middle, createdAt: new Date(now.getTime() - 100 * DAY), retiredAt: new Date(now.getTime() - 1 * DAY) },
      ],
      { now },
    );
    expect(ring.active).toBe(newest);
    expect(ring.verificationKeys.map((key) => key.kid)).toEqual([newest.kid, middle.kid, oldest.kid]);
    expect(ring.jwks()).toEqual({ keys: [newest.publicJwk, middle.publicJwk, oldest.publicJwk] });
    expect(ring.findByKid(middle.kid)).toBe(middle);
    expect(ring.findByKid('no-such-kid')).toBeUndefined();
  });

  it('skips a newer retired key when choosing the active one', () => {
    const ring = new KeyRing(
      [
        { key: newest, createdAt: new Date(now.getTime() - 1 * DAY), retiredAt: new Date(now.getTime() - 1000) },
        { key: middle, createdAt: new Date(now.getTime() - 100 * DAY) },
      ],
      { now },
    );
    expect(ring.active).toBe(middle);
    expect(ring.jwks().keys.map((jwk) => jwk.kid)).toEqual([middle.kid, newest.kid]);
  });

  it('publishes a key before its activation and signs with it from then on; a lone waiting key signs at once', () => {
    const stored = [
      { key: middle, createdAt: new Date(now.getTime() - 100 * DAY) },
      { key: newest, createdAt: now, activatesAt: new Date(now.getTime() + KEY_PUBLISH_LEAD_MS) },
    ];
    const waiting = new KeyRing(stored, { now: new Date(now.getTime() + KEY_PUBLISH_LEAD_MS - 1) });
    expect(waiting.active).toBe(middle);
    expect(waiting.jwks().keys.map((jwk) => jwk.kid)).toEqual([middle.kid, newest.kid]);
    const due = new KeyRing(stored, { now: new Date(now.getTime() + KEY_PUBLISH_LEAD_MS) });
    expect(due.active).toBe(newest);
    expect(due.jwks().keys.map((jwk) => jwk.kid)).toEqual([newest.kid, middle.kid]);
    // With no other key to sign (a first start), the waiting key signs.
    expect(new KeyRing([stored[1]!], { now }).active).toBe(newest);
    // More than a minute of lead: every instance re-reads the ring each minute.
    expect(KEY_PUBLISH_LEAD_MS).toBeGreaterThan(60_000);
  });

  it('counts a retirement scheduled in the future as not yet retired', () => {
    const ring = new KeyRing([{ key: newest, createdAt: new Date(now.getTime() - DAY), retiredAt: new Date(now.getTime() + DAY) }], {
      now,
    });
    expect(ring.active).toBe(newest);
  });

  it('keeps a retired key published for the overlap window, then drops it', () => {
    const stored = [
      { key: newest, createdAt: new Date(now.getTime() - 40 * DAY) },
      { key: middle, createdAt: new Date(now.getTime() - 100 * DAY), retiredAt: new Date(now.getTime() - 40 * DAY) },
    ];
    const retiredAt = now.getTime() - 40 * DAY;
    const justInside = new KeyRing(stored, { now: new Date(retiredAt + DEFAULT_KEY_OVERLAP_SECONDS * 1000 - 1) });
    expect(justInside.findByKid(middle.kid)).toBe(middle);
    const atTheEnd = new KeyRing(stored, { now: new Date(retiredAt + DEFAULT_KEY_OVERLAP_SECONDS * 1000) });
    expect(atTheEnd.findByKid(middle.kid)).toBeUndefined();
    expect(atTheEnd.jwks().keys.map((jwk) => jwk.kid)).toEqual([newest.kid]);
    // A longer window keeps it longer.
    const longer = new KeyRing(stored, { now, overlapSeconds: 60 * 24 * 60 * 60 });
    expect(longer.findByKid(middle.kid)).toBe(middle);
  });

  it('defaults the overlap to the session lifetime plus a day, and refuses a shorter one', () => {
    expect(DEFAULT_KEY_OVERLAP_SECONDS).toBe(SESSION_LIFETIME_SECONDS + 86_400);
    expect(() => new KeyRing([{ key: newest, createdAt: now }], { now, overlapSeconds: SESSION_LIFETIME_SECONDS - 1 })).toThrow(RangeError);
    expect(new KeyRing([{ key: newest, createdAt: now }], { now, overlapSeconds: SESSION_LIFETIME_SECONDS }).active).toBe(newest);
  });

  it('publishes a public-only key but never signs with it', () => {
    const publicOnly = verificationKeyFromJwk(newest.publicJwk);
    const ring = new KeyRing(
      [
        { key: publicOnly, createdAt: now },
        { key: middle, createdAt: new Date(now.getTime() - DAY) },
      ],
      { now },
    );
    expect(ring.active).toBe(middle);
    expect(ring.findByKid(newest.kid)).toBe(publicOnly);
  });

  it('throws when no key can sign', () => {
    expect(() => new KeyRing([], { now })).toThrow(/no signing key/);
    expect(() => new KeyRing([{ key: middle, createdAt: now, retiredAt: now }], { now })).toThrow(/no signing key/);
    expect(() => new KeyRing([{ key: verificationKeyFromJwk(middle.publicJwk), createdAt: now }], { now })).toThrow(/no signing key/);
  });

  it('picks the same active key whatever the stored order, when creation times tie', () => {
    const stored = [
      { key: newest, createdAt: now },
      { key: middle, createdAt: now },
      { key: oldest, createdAt: now },
    ];
    const forward = new KeyRing(stored, { now });
    const backward = new KeyRing([...stored].reverse(), { now });
    expect(forward.active.kid).toBe(backward.active.kid);
    expect(forward.jwks()).toEqual(backward.jwks());
  });

  it('publishes each key once even when stored twice', () => {
    const ring = new KeyRing(
      [
        { key: newest, createdAt: now },
        { key: newest, createdAt: new Date(now.getTime() - DAY) },
      ],
      { now },
    );
    expect(ring.jwks().keys).toHaveLength(1);
  });
});
