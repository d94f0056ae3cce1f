import { createHash, createHmac, sign } from 'node:crypto';
import fc from 'fast-check';
import { createLocalJWKSet, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { decodeBase64url } from '../src/platform/crypto.js';
import {
  KeyRing,
  MAX_TOKEN_LENGTH,
  SESSION_LIFETIME_SECONDS,
  generateSigningKey,
  mintSessionJwt,
  signInMethodClaims,
  tokenHash,
  verifySessionJwt,
  type SessionClaims,
  type SessionClaimsInput,
  type SigningKey,
} from '../src/identity/session/index.js';
import { SESSION_CLAIMS } from './support/session-claims.js';

const ISSUER = 'https://auth.example.com';
const NOW = new Date('2026-11-21T12:00:00.000Z');
const IAT = NOW.getTime() / 1000;
const EXP = IAT + SESSION_LIFETIME_SECONDS;
const SUB = '0123456789abcdef0123456789abcdef';

const key = generateSigningKey();
const ring = KeyRing.single(key);

function required(): SessionClaimsInput {
  return { iss: ISSUER, sub: SUB, did_oc: `did:oc:${SUB}`, jti: 'f'.repeat(32), iat: IAT, exp: EXP };
}

/**
 * Every claim of the one definition (packages/verify/src/claims.ts), each
 * given: a claim added there fails to compile here until it is named, and
 * then fails the tests below until minting writes it.
 */
type EveryClaim = { readonly [K in keyof SessionClaims]-?: NonNullable<SessionClaims[K]> };

function full(): EveryClaim {
  return {
    ...required(),
    name: 'Satoshi',
    primary_btc: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    display_identity: { kind: 'btc', value: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' },
    signing_method: 'bip322',
    amr: ['swk', 'hwk', 'mfa'],
    step_up_at: IAT - 60,
    sudo_at: IAT - 30,
    merged_from: [`did:oc:${'a'.repeat(32)}`],
  };
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
const unb64 = (segment: string): string => Buffer.from(segment, 'base64url').toString('utf8');

/** Signs arbitrary header and payload text with a real key, for tokens our minting would never make. */
function rawToken(headerJson: string, payloadJson: string, signer: SigningKey = key): string {
  const input = `${b64(headerJson)}.${b64(payloadJson)}`;
  return `${input}.${sign(null, Buffer.from(input), signer.privateKey).toString('base64url')}`;
}

const verifyNow = (token: unknown, now = NOW) => verifySessionJwt(token, ring, { issuer: ISSUER, now });

describe('signInMethodClaims: how the person signed in, as the token says it (docs/protocol.md §3)', () => {
  it("keeps the row's method in signing_method; amr names each method by RFC 8176", () => {
    expect(signInMethodClaims('bip322', null)).toEqual({ signing_method: 'bip322', amr: ['swk'] });
    expect(signInMethodClaims('email_otp', null)).toEqual({ signing_method: 'email_otp', amr: ['otp'] });
    expect(signInMethodClaims('passkey', null)).toEqual({ signing_method: 'passkey', amr: ['hwk', 'user'] });
    expect(signInMethodClaims('oauth:github', null)).toEqual({ signing_method: 'oauth:github', amr: [] });
    expect(signInMethodClaims(null, null)).toEqual({ signing_method: null, amr: [] });
    expect(signInMethodClaims('constructor', null)).toEqual({ signing_method: 'constructor', amr: [] });
  });

  it('adds hwk and mfa once the row has a key step-up, without naming hwk twice', () => {
    const at = NOW.getTime();
    expect(signInMethodClaims('bip322', at)).toEqual({ signing_method: 'bip322', amr: ['swk', 'hwk', 'mfa'] });
    expect(signInMethodClaims('email_otp', at).amr).toEqual(['otp', 'hwk', 'mfa']);
    expect(signInMethodClaims('passkey', at).amr).toEqual(['hwk', 'user', 'mfa']);
    expect(signInMethodClaims('oauth:acme', at).amr).toEqual(['hwk', 'mfa']);
  });
});

describe('mintSessionJwt', () => {
  it('writes the header exactly {alg, typ, kid} (docs/protocol.md §3)', () => {
    const [header] = mintSessionJwt(key, required()).split('.');
    expect(unb64(header!)).toBe(`{"alg":"EdDSA","typ":"JWT","kid":"${key.kid}"}`);
  });

  it('writes the required claims and nothing else', () => {
    const [, payload] = mintSessionJwt(key, required()).split('.');
    expect(unb64(payload!)).toBe(
      `{"iss":"${ISSUER}","sub":"${SUB}","did_oc":"did:oc:${SUB}","jti":"${'f'.repeat(32)}","iat":${IAT},"exp":${EXP}}`,
    );
  });

  it('writes every optional claim in a fixed order', () => {
    const [, payload] = mintSessionJwt(key, full()).split('.');
    expect(JSON.parse(unb64(payload!))).toEqual(full());
    expect(Object.keys(JSON.parse(unb64(payload!)))).toEqual(SESSION_CLAIMS);
  });

  it('leaves out optional claims given as null or undefined', () => {
    const token = mintSessionJwt(key, { ...required(), name: null, primary_btc: undefined, display_identity: null, sudo_at: null });
    expect(Object.keys(JSON.parse(unb64(token.split('.')[1]!)))).toEqual(['iss', 'sub', 'did_oc', 'jti', 'iat', 'exp']);
  });

  it('never writes an e-mail display identity', () => {
    for (const identity of [
      { kind: 'email', value: 'alice@example.com' },
      { kind: 'did', value: 'alice@example.com' },
    ]) {
      const payload = JSON.parse(unb64(mintSessionJwt(key, { ...required(), display_identity: identity }).split('.')[1]!));
      expect(payload).not.toHaveProperty('display_identity');
      expect(JSON.stringify(payload)).not.toContain('alice@example.com');
    }
    const kept = JSON.parse(
      unb64(mintSessionJwt(key, { ...required(), display_identity: { kind: 'did', value: `did:oc:${SUB}` } }).split('.')[1]!),
    );
    expect(kept.display_identity).toEqual({ kind: 'did', value: `did:oc:${SUB}` });
  });

  it('never writes roster_id, email or any key outside the whitelist', () => {
    const sneaky = { ...full(), roster_id: '6c3b1f0e-1111-4222-8333-944445555666', email: 'alice@example.com', admin: true };
    const payloadText = unb64(mintSessionJwt(key, sneaky as SessionClaimsInput).split('.')[1]!);
    expect(payloadText).not.toContain('roster_id');
    expect(payloadText).not.toContain('email');
    expect(payloadText).not.toContain('admin');
    expect(JSON.parse(payloadText)).toEqual(full());
  });

  it('leaves out a null signing_method and an empty amr, and refuses an empty method or method name', () => {
    const payload = JSON.parse(unb64(mintSessionJwt(key, { ...required(), signing_method: null, amr: [] }).split('.')[1]!));
    expect(payload).not.toHaveProperty('signing_method');
    expect(payload).not.toHaveProperty('amr');
    expect(() => mintSessionJwt(key, { ...required(), signing_method: '' })).toThrow(/session jwt: signing_method/);
    expect(() => mintSessionJwt(key, { ...required(), amr: [''] })).toThrow(/session jwt: amr/);
    expect(() => mintSessionJwt(key, { ...required(), amr: 'otp' as never })).toThrow(/session jwt: amr/);
  });

  it('throws on a missing or mistyped claim, which is a programming mistake', () => {
    expect(() => mintSessionJwt(key, { ...required(), jti: '' })).toThrow(/session jwt: jti/);
    expect(() => mintSessionJwt(key, { ...required(), iat: 1.5 })).toThrow(/session jwt: iat/);
    expect(() => mintSessionJwt(key, { ...required(), exp: IAT })).toThrow(/session jwt: exp/);
    expect(() => mintSessionJwt(key, { ...required(), step_up_at: -1 })).toThrow(/session jwt: step_up_at/);
    expect(() => mintSessionJwt(key, { ...required(), sub: undefined } as unknown as SessionClaimsInput)).toThrow(/session jwt: sub/);
  });

  it('refuses to mint a token longer than the cookie reader and verifier accept', () => {
    expect(() => mintSessionJwt(key, { ...required(), name: 'x'.repeat(MAX_TOKEN_LENGTH) })).toThrow(RangeError);
  });
});

describe('tokens verify with jose as a consumer would (docs/api.md Authentication 2)', () => {
  it('verifies against the public JWK from OC_AUTH_PUBLIC_JWK', async () => {
    const token = mintSessionJwt(key, full());
    const publicKey = await importJWK({ ...key.publicJwk }, 'EdDSA');
    const { payload, protectedHeader } = await jwtVerify(token, publicKey, {
      issuer: ISSUER,
      algorithms: ['EdDSA'],
      typ: 'JWT',
      currentDate: NOW,
    });
    expect(protectedHeader).toEqual({ alg: 'EdDSA', typ: 'JWT', kid: key.kid });
    expect(payload).toEqual(full());
  });

  it('verifies against the JWKS body, choosing the key by kid', async () => {
    const other = generateSigningKey();
    const twoKeys = new KeyRing(
      [
        { key, createdAt: new Date('2026-11-01T00:00:00Z') },
        { key: other, createdAt: new Date('2026-10-01T00:00:00Z'), retiredAt: new Date('2026-11-01T00:00:00Z') },
      ],
      { now: NOW },
    );
    const jwks = createLocalJWKSet(JSON.parse(JSON.stringify(twoKeys.jwks())));
    for (const signer of [key, other]) {
      const { payload } = await jwtVerify(mintSessionJwt(signer, required()), jwks, { issuer: ISSUER, currentDate: NOW });
      expect(payload.sub).toBe(SUB);
    }
  });
});

describe('verifySessionJwt', () => {
  it('returns the claims of a token we minted', () => {
    expect(verifyNow(mintSessionJwt(key, full()))).toEqual(full());
    expect(verifyNow(mintSessionJwt(key, required()))).toEqual(required());
  });

  it('accepts until exp and rejects from exp on', () => {
    const token = mintSessionJwt(key, required());
    expect(verifyNow(token, new Date((EXP - 1) * 1000 + 999))).not.toBeNull();
    expect(verifyNow(token, new Date(EXP * 1000))).toBeNull();
    expect(verifyNow(token, new Date(Number.NaN))).toBeNull();
  });

  it('rejects a wrong issuer', () => {
    expect(verifySessionJwt(mintSessionJwt(key, required()), ring, { issuer: 'https://evil.example', now: NOW })).toBeNull();
    expect(verifySessionJwt(mintSessionJwt(key, required()), ring, { issuer: `${ISSUER}/`, now: NOW })).toBeNull();
  });

  it('rejects a tampered payload', () => {
    const [header, payload, signature] = mintSessionJwt(key, required()).split('.');
    const altered = b64(unb64(payload!).replace(SUB, 'ffffffffffffffffffffffffffffffff'));
    expect(verifyNow(`${header}.${altered}.${signature}`)).toBeNull();
  });

  it('rejects a tampered signature', () => {
    const [header, payload, signature] = mintSessionJwt(key, required()).split('.');
    const bytes = Buffer.from(signature!, 'base64url');
    bytes[10]! ^= 0x01;
    expect(verifyNow(`${header}.${payload}.${bytes.toString('base64url')}`)).toBeNull();
  });

  it('rejects a token of another key, by kid and by signature', () => {
    const other = generateSigningKey();
    expect(verifyNow(mintSessionJwt(other, required()))).toBeNull();
    // Another key's signature under our kid.
    const forged = rawToken(`{"alg":"EdDSA","typ":"JWT","kid":"${key.kid}"}`, JSON.stringify(required()), other);
    expect(verifyNow(forged)).toBeNull();
  });

  it('rejects alg none, with or without a signature segment', () => {
    const header = b64(`{"alg":"none","typ":"JWT","kid":"${key.kid}"}`);
    const payload = b64(JSON.stringify(required()));
    expect(verifyNow(`${header}.${payload}.`)).toBeNull();
    const real = mintSessionJwt(key, required()).split('.')[2];
    expect(verifyNow(`${header}.${payload}.${real}`)).toBeNull();
  });

  it('rejects an HS256-labelled token keyed with the public key (algorithm confusion)', () => {
    const input = `${b64(`{"alg":"HS256","typ":"JWT","kid":"${key.kid}"}`)}.${b64(JSON.stringify(required()))}`;
    for (const secret of [Buffer.from(key.publicJwk.x, 'base64url'), Buffer.from(JSON.stringify(key.publicJwk))]) {
      const mac = createHmac('sha256', secret).update(input).digest('base64url');
      expect(verifyNow(`${input}.${mac}`)).toBeNull();
    }
  });

  it('rejects any other header: wrong typ, extra member, missing kid, crit', () => {
    const claims = JSON.stringify(required());
    expect(verifyNow(rawToken(`{"alg":"EdDSA","typ":"JWT","kid":"${key.kid}"}`, claims))).not.toBeNull();
    expect(verifyNow(rawToken(`{"alg":"EdDSA","typ":"at+jwt","kid":"${key.kid}"}`, claims))).toBeNull();
    expect(verifyNow(rawToken(`{"alg":"EdDSA","kid":"${key.kid}"}`, claims))).toBeNull();
    expect(verifyNow(rawToken(`{"alg":"EdDSA","typ":"JWT"}`, claims))).toBeNull();
    expect(verifyNow(rawToken(`{"alg":"EdDSA","typ":"JWT","kid":"${key.kid}","crit":["b64"]}`, claims))).toBeNull();
    expect(verifyNow(rawToken(`{"alg":"Ed25519","typ":"JWT","kid":"${key.kid}"}`, claims))).toBeNull();
  });

  it('rejects bad JSON and non-object JSON, even when properly signed', () => {
    const header = `{"alg":"EdDSA","typ":"JWT","kid":"${key.kid}"}`;
    expect(verifyNow(rawToken(header, '{"iss":'))).toBeNull();
    expect(verifyNow(rawToken(header, '[1,2,3]'))).toBeNull();
    expect(verifyNow(rawToken(header, 'null'))).toBeNull();
    expect(verifyNow(rawToken('not json', JSON.stringify(required())))).toBeNull();
  });

  it('rejects a signed payload that lacks a required claim or mistypes one', () => {
    const header = `{"alg":"EdDSA","typ":"JWT","kid":"${key.kid}"}`;
    for (const claim of ['iss', 'sub', 'did_oc', 'jti', 'iat', 'exp'] as const) {
      const { [claim]: _dropped, ...rest } = required();
      expect(verifyNow(rawToken(header, JSON.stringify(rest))), claim).toBeNull();
    }
    expect(verifyNow(rawToken(header, JSON.stringify({ ...required(), exp: String(EXP) })))).toBeNull();
    expect(verifyNow(rawToken(header, JSON.stringify({ ...required(), sudo_at: 'soon' })))).toBeNull();
  });

  it('returns only whitelisted claims from a signed payload', () => {
    const header = `{"alg":"EdDSA","typ":"JWT","kid":"${key.kid}"}`;
    const claims = verifyNow(rawToken(header, JSON.stringify({ ...required(), roster_id: 'r', email: 'a@b.c' })));
    expect(claims).toEqual(required());
  });

  it('rejects bad base64url: padding, foreign characters, non-canonical trailing bits', () => {
    const [header, payload, signature] = mintSessionJwt(key, required()).split('.');
    expect(verifyNow(`${header}=.${payload}.${signature}`)).toBeNull();
    // Same 64 bytes to a lenient decoder, but the unused low bits of the last character are set.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const lenient = signature!.slice(0, -1) + alphabet[alphabet.indexOf(signature!.at(-1)!) | 1];
    expect(Buffer.from(lenient, 'base64url')).toEqual(Buffer.from(signature!, 'base64url'));
    expect(verifyNow(`${header}.${payload}.${lenient}`)).toBeNull();
    expect(verifyNow(`${header}.${payload!.slice(0, 8)}+${payload!.slice(9)}.${signature}`)).toBeNull();
    expect(verifyNow(`${header} .${payload}.${signature}`)).toBeNull();
  });

  it('requires exactly three segments', () => {
    const [header, payload, signature] = mintSessionJwt(key, required()).split('.');
    expect(verifyNow(`${header}.${payload}`)).toBeNull();
    expect(verifyNow(`${header}.${payload}.${signature}.${signature}`)).toBeNull();
    expect(verifyNow(`${header}.${payload}.${signature}.`)).toBeNull();
    expect(verifyNow(`.${header}.${payload}.${signature}`)).toBeNull();
    expect(verifyNow(`${header}..${signature}`)).toBeNull();
  });

  it('rejects huge and non-string input without throwing', () => {
    const token = mintSessionJwt(key, required());
    expect(verifyNow(token + 'A'.repeat(2_000_000))).toBeNull();
    expect(verifyNow('a.'.repeat(500_000))).toBeNull();
    expect(verifyNow(undefined)).toBeNull();
    expect(verifyNow(42)).toBeNull();
    expect(verifyNow({ toString: () => token })).toBeNull();
  });

  it('never throws and never accepts on arbitrary input', () => {
    const token = mintSessionJwt(key, required());
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.nat({ max: token.length }), (noise, at) => {
        const mutated = token.slice(0, at) + noise + token.slice(at + noise.length);
        const result = verifyNow(mutated);
        return mutated === token ? result !== null : result === null;
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips any name, including non-ASCII text and characters JSON must escape', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), (name) => {
        const claims = verifyNow(mintSessionJwt(key, { ...required(), name }));
        return claims !== null && claims.name === name;
      }),
      { numRuns: 200 },
    );
  });

  it('follows the key ring: a retired key verifies during the overlap and not after', () => {
    const old = generateSigningKey();
    const token = mintSessionJwt(old, required());
    const stored = [
      { key, createdAt: new Date('2026-11-01T00:00:00Z') },
      { key: old, createdAt: new Date('2026-01-01T00:00:00Z'), retiredAt: new Date('2026-11-01T00:00:00Z') },
    ];
    expect(verifySessionJwt(token, new KeyRing(stored, { now: NOW }), { issuer: ISSUER, now: NOW })).not.toBeNull();
    const later = new KeyRing(stored, { now: new Date('2026-12-03T00:00:00Z') });
    expect(verifySessionJwt(token, later, { issuer: ISSUER, now: NOW })).toBeNull();
  });
});

describe('tokenHash', () => {
  it('is the lowercase hex SHA-256 of the token text (docs/protocol.md §3 token_hash)', () => {
    const token = mintSessionJwt(key, required());
    expect(tokenHash(token)).toBe(createHash('sha256').update(token).digest('hex'));
    expect(tokenHash(token)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('decodeBase64url (the strict decoder under verifySessionJwt)', () => {
  it('decodes what Buffer encodes, for every length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), (bytes) => {
        const decoded = decodeBase64url(Buffer.from(bytes).toString('base64url'));
        return decoded !== null && Buffer.from(decoded).equals(Buffer.from(bytes));
      }),
    );
  });

  it('accepts a text only when it is the one canonical spelling of its bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'AQgw-_z9+/=. \u00e9'), maxLength: 40 }), (text) => {
        const decoded = decodeBase64url(text);
        return decoded === null || Buffer.from(decoded).toString('base64url') === text;
      }),
    );
    expect(decodeBase64url('')).toBeNull();
    expect(decodeBase64url('QQ')).toEqual(new Uint8Array([0x41]));
    expect(decodeBase64url('QR')).toBeNull();
    expect(decodeBase64url('QQ==')).toBeNull();
    expect(decodeBase64url('Q')).toBeNull();
    expect(decodeBase64url('+/8')).toBeNull();
    expect(decodeBase64url('-_8')).toEqual(new Uint8Array([0xfb, 0xff]));
  });
});
