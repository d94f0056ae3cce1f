import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newAccountId, randomHex, sha256Hex, timingSafeEqualString } from '../src/platform/crypto.js';
import { OcError } from '../src/platform/errors.js';
import { checkChallenge, issueChallenge, parseChallengeMessage, type IssueChallengeInput } from '../src/identity/signin/index.js';

const SECRET = new Uint8Array(32).fill(7);
const NOW = new Date('2026-11-21T12:34:56.789Z');
const ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const AUDIENCE = 'https://app.example.com';
const context = { secret: SECRET, now: NOW };

/**
 * The nonce as the module documents it, written out independently: the 8-byte
 * random salt, then the first 8 bytes of HMAC-SHA256 under the secret over a
 * length-prefixed label, the salt, and length-prefixed fields.
 */
function expectedNonce(salt: string, fields: Array<string | undefined>, secret: Uint8Array = SECRET): string {
  const encode = (field: string | undefined): Buffer => {
    if (field === undefined) return Buffer.from([0]);
    const bytes = Buffer.from(field, 'utf8');
    const prefix = Buffer.alloc(5);
    prefix[0] = 1;
    prefix.writeUInt32BE(bytes.length, 1);
    return Buffer.concat([prefix, bytes]);
  };
  const input = Buffer.concat([encode('oc-host/challenge-nonce/v2'), Buffer.from(salt, 'hex'), ...fields.map(encode)]);
  return salt + createHmac('sha256', secret).update(input).digest().subarray(0, 8).toString('hex');
}

function thrownOcError(run: () => unknown): OcError {
  try {
    run();
  } catch (error) {
    if (error instanceof OcError) return error;
    throw error;
  }
  throw new Error('expected an OcError');
}

describe('issueChallenge (docs/protocol.md §5)', () => {
  it('writes the exact message bytes for fixed inputs', () => {
    const challenge = issueChallenge({ address: ADDRESS, audience: AUDIENCE, purpose: 'login' }, context);
    expect(challenge.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(challenge.nonce).toBe(
      expectedNonce(challenge.nonce.slice(0, 16), [ADDRESS, '2026-11-21T12:34:56Z', '2026-11-21T12:39:56Z', AUDIENCE, 'login']),
    );
    expect(challenge.message).toBe(
      'orangecheck-auth\n' +
        `address: ${ADDRESS}\n` +
        `nonce: ${challenge.nonce}\n` +
        'issued_at: 2026-11-21T12:34:56Z\n' +
        'expires_at: 2026-11-21T12:39:56Z\n' +
        'ack: I authorize this session under the OrangeCheck auth challenge.\n' +
        `audience: ${AUDIENCE}\n` +
        'purpose: login\n',
    );
    expect(challenge.expiresAt).toBe('2026-11-21T12:39:56.000Z');
  });

  it('writes the audience and purpose lines only when given, audience first', () => {
    const neither = issueChallenge({ address: ADDRESS }, context).message;
    expect(neither.endsWith('ack: I authorize this session under the OrangeCheck auth challenge.\n')).toBe(true);
    expect(neither.split('\n')).toHaveLength(7);
    const purposeOnly = issueChallenge({ address: ADDRESS, purpose: 'login' }, context).message;
    expect(purposeOnly.endsWith('challenge.\npurpose: login\n')).toBe(true);
    const audienceOnly = issueChallenge({ address: ADDRESS, audience: AUDIENCE }, context).message;
    expect(audienceOnly.endsWith(`challenge.\naudience: ${AUDIENCE}\n`)).toBe(true);
    // An empty query value means "not given".
    const withoutNonce = (message: string): string => message.replace(/^nonce: [0-9a-f]{32}$/m, 'nonce: -');
    expect(withoutNonce(issueChallenge({ address: ADDRESS, audience: '', purpose: '' }, context).message)).toBe(withoutNonce(neither));
  });

  it('uses LF only and ends with exactly one LF', () => {
    const { message } = issueChallenge({ address: ADDRESS, audience: AUDIENCE, purpose: 'login' }, context);
    expect(message).not.toContain('\r');
    expect(message.endsWith('login\n')).toBe(true);
    expect(message.endsWith('\n\n')).toBe(false);
  });

  it('defaults the time-to-live to 300 s and accepts 30 to 3600', () => {
    expect(issueChallenge({ address: ADDRESS }, context).expiresAt).toBe('2026-11-21T12:39:56.000Z');
    expect(issueChallenge({ address: ADDRESS, ttlSeconds: 30 }, context).message).toContain('expires_at: 2026-11-21T12:35:26Z\n');
    expect(issueChallenge({ address: ADDRESS, ttlSeconds: 3600 }, context).expiresAt).toBe('2026-11-21T13:34:56.000Z');
    for (const ttlSeconds of [29, 3601, 0, -300, 30.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = thrownOcError(() => issueChallenge({ address: ADDRESS, ttlSeconds }, context));
      expect(error.code).toBe('bad_request');
      expect(error.detail).toMatch(/^ttl/);
    }
  });

  it('refuses an audience or purpose that could break or fake a line, or is too long', () => {
    const bad = ['a\nb', 'a\rb', 'a\u2028b', 'tab\there', 'nul\u0000', 'x'.repeat(513)];
    for (const value of bad) {
      expect(thrownOcError(() => issueChallenge({ address: ADDRESS, audience: value }, context)).detail).toMatch(/^audience/);
      expect(thrownOcError(() => issueChallenge({ address: ADDRESS, purpose: value }, context)).detail).toMatch(/^purpose/);
    }
    const longest = 'x'.repeat(512);
    const challenge = issueChallenge({ address: ADDRESS, audience: longest, purpose: longest }, context);
    expect(parseChallengeMessage(challenge.message)?.audience).toBe(longest);
  });

  it('refuses an address that would break the line structure', () => {
    for (const address of ['', 'bc1q x', `${ADDRESS}\nnonce: 00`, 'a'.repeat(101)]) {
      expect(thrownOcError(() => issueChallenge({ address }, context)).code).toBe('bad_request');
    }
  });

  it('gives a different nonce to every challenge, even for the same fields in the same second', () => {
    const base: IssueChallengeInput = { address: ADDRESS, audience: AUDIENCE, purpose: 'login', ttlSeconds: 300 };
    const nonces = Array.from({ length: 100 }, () => issueChallenge(base, context).nonce);
    expect(new Set(nonces).size).toBe(100);
    for (const nonce of nonces) {
      const message = issueChallenge(base, context).message.replace(/nonce: [0-9a-f]{32}/, `nonce: ${nonce}`);
      expect(checkChallenge({ message, expectedNonce: nonce, expectedAudience: AUDIENCE, expectedPurpose: 'login' }, context).ok).toBe(
        true,
      );
    }
  });

  it('binds the MAC half of the nonce to every field and to the salt', () => {
    const fields = [ADDRESS, '2026-11-21T12:34:56Z', '2026-11-21T12:39:56Z', AUDIENCE, 'login'];
    const salt = issueChallenge({ address: ADDRESS, audience: AUDIENCE, purpose: 'login' }, context).nonce.slice(0, 16);
    const nonce = expectedNonce(salt, fields);
    const variants: Array<[string, string]> = [
      ['address', expectedNonce(salt, ['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', ...fields.slice(1)])],
      ['issued_at', expectedNonce(salt, [ADDRESS, '2026-11-21T12:34:57Z', ...fields.slice(2)])],
      ['expires_at', expectedNonce(salt, [ADDRESS, fields[1], '2026-11-21T12:40:00Z', AUDIENCE, 'login'])],
      ['audience', expectedNonce(salt, [...fields.slice(0, 3), 'https://app.example.org', 'login'])],
      ['no audience', expectedNonce(salt, [...fields.slice(0, 3), undefined, 'login'])],
      ['purpose', expectedNonce(salt, [...fields.slice(0, 4), 'link'])],
      ['no purpose', expectedNonce(salt, [...fields.slice(0, 4), undefined])],
      ['secret', expectedNonce(salt, fields, new Uint8Array(32).fill(8))],
      ['salt', expectedNonce('00'.repeat(8), fields).slice(16)],
    ];
    for (const [field, other] of variants) expect(other.slice(16), field).not.toBe(nonce.slice(16));
    expect(new Set(variants.map(([, other]) => other.slice(16))).size).toBe(variants.length);
  });

  it('keeps field boundaries apart: the same text in audience or in purpose gives different nonces', () => {
    const asAudience = issueChallenge({ address: ADDRESS, audience: 'x' }, context).nonce;
    const asPurpose = issueChallenge({ address: ADDRESS, purpose: 'x' }, context).nonce;
    expect(asAudience).not.toBe(asPurpose);
  });

  it('throws on a short secret, which is a wiring mistake', () => {
    expect(() => issueChallenge({ address: ADDRESS }, { secret: new Uint8Array(31), now: NOW })).toThrow(TypeError);
    expect(() => issueChallenge({ address: ADDRESS }, { secret: SECRET, now: new Date(Number.NaN) })).toThrow(TypeError);
  });
});

describe('parseChallengeMessage', () => {
  const issued = issueChallenge({ address: ADDRESS, audience: AUDIENCE, purpose: 'login' }, context);

  it('reads back every field', () => {
    expect(parseChallengeMessage(issued.message)).toEqual({
      address: ADDRESS,
      nonce: issued.nonce,
      issuedAt: new Date('2026-11-21T12:34:56.000Z'),
      expiresAt: new Date('2026-11-21T12:39:56.000Z'),
      audience: AUDIENCE,
      purpose: 'login',
    });
    expect(parseChallengeMessage(issueChallenge({ address: ADDRESS }, context).message)).toMatchObject({
      audience: undefined,
      purpose: undefined,
    });
  });

  it('refuses every deviation from the exact form', () => {
    const message = issued.message;
    const deviations: Record<string, string> = {
      'CRLF line ends': message.replace(/\n/g, '\r\n'),
      'no trailing LF': message.slice(0, -1),
      'two trailing LFs': `${message}\n`,
      'leading blank line': `\n${message}`,
      'leading space': ` ${message}`,
      'wrong header': message.replace('orangecheck-auth', 'orangecheck-auth2'),
      'purpose before audience': message.replace(`audience: ${AUDIENCE}\npurpose: login\n`, `purpose: login\naudience: ${AUDIENCE}\n`),
      'extra line': `${message}extra: 1\n`,
      'repeated purpose': `${message}purpose: login\n`,
      'unknown optional line': message.replace('purpose: login', 'scope: login'),
      'uppercase nonce': message.replace(issued.nonce, issued.nonce.toUpperCase()),
      'short nonce': message.replace(issued.nonce, issued.nonce.slice(2)),
      'time with milliseconds': message.replace('issued_at: 2026-11-21T12:34:56Z', 'issued_at: 2026-11-21T12:34:56.000Z'),
      'time with offset': message.replace('expires_at: 2026-11-21T12:39:56Z', 'expires_at: 2026-11-21T12:39:56+00:00'),
      'impossible date': message.replace('issued_at: 2026-11-21', 'issued_at: 2026-02-30'),
      'lines swapped': message.replace(/(issued_at: .*\n)(expires_at: .*\n)/, '$2$1'),
      'two spaces after colon': message.replace('address: ', 'address:  '),
      'different ack': message.replace('I authorize', 'I authorise'),
      'empty audience': message.replace(`audience: ${AUDIENCE}`, 'audience: '),
      'address with space': message.replace(`address: ${ADDRESS}`, `address: ${ADDRESS} x`),
      'too long': message.replace(`audience: ${AUDIENCE}`, `audience: ${'x'.repeat(513)}`),
      empty: '',
    };
    for (const [name, text] of Object.entries(deviations)) {
      expect(text, name).not.toBe(message);
      expect(parseChallengeMessage(text), name).toBeNull();
    }
    expect(parseChallengeMessage(undefined)).toBeNull();
    expect(parseChallengeMessage(42)).toBeNull();
    expect(parseChallengeMessage(`${message}${'x'.repeat(100_000)}\n`)).toBeNull();
  });
});

describe('checkChallenge (docs/protocol.md §5, in order)', () => {
  const issued = issueChallenge({ address: ADDRESS, audience: AUDIENCE, purpose: 'login' }, context);
  const valid = { message: issued.message, expectedNonce: issued.nonce, expectedAudience: AUDIENCE, expectedPurpose: 'login' };
  const later = (seconds: number) => ({ secret: SECRET, now: new Date(NOW.getTime() + seconds * 1000) });

  it('accepts the message it issued', () => {
    expect(checkChallenge(valid, later(10))).toEqual({
      ok: true,
      address: ADDRESS,
      nonce: issued.nonce,
      expiresAt: new Date('2026-11-21T12:39:56.000Z'),
    });
  });

  it('decode_error comes first, whatever else is wrong', () => {
    expect(checkChallenge({ ...valid, message: issued.message.replace(/\n/g, '\r\n'), expectedNonce: 'x' }, later(9999))).toEqual({
      ok: false,
      code: 'decode_error',
    });
    expect(checkChallenge({ ...valid, message: null }, context)).toEqual({ ok: false, code: 'decode_error' });
  });

  it('nonce_mismatch when the nonce is not the expected one, before expiry and audience', () => {
    expect(checkChallenge({ ...valid, expectedNonce: '0'.repeat(32), expectedAudience: 'https://other.example' }, later(9999))).toEqual({
      ok: false,
      code: 'nonce_mismatch',
    });
    expect(checkChallenge({ ...valid, expectedNonce: issued.nonce.toUpperCase() }, context)).toEqual({ ok: false, code: 'nonce_mismatch' });
    expect(checkChallenge({ ...valid, expectedNonce: undefined }, context)).toEqual({ ok: false, code: 'nonce_mismatch' });
  });

  it('nonce_mismatch for a message a client wrote itself in the right format', () => {
    const selfMade = randomHex(16);
    const message = issued.message.replace(issued.nonce, selfMade);
    expect(parseChallengeMessage(message)).not.toBeNull();
    expect(checkChallenge({ ...valid, message, expectedNonce: selfMade }, context)).toEqual({ ok: false, code: 'nonce_mismatch' });
  });

  it('nonce_mismatch when any field of an issued message was changed', () => {
    const edits = [
      issued.message.replace(ADDRESS, '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2'),
      issued.message.replace('expires_at: 2026-11-21T12:39:56Z', 'expires_at: 2026-11-21T13:39:56Z'),
      issued.message.replace('issued_at: 2026-11-21T12:34:56Z', 'issued_at: 2026-11-21T12:34:55Z'),
      issued.message.replace(AUDIENCE, 'https://evil.example'),
      issued.message.replace('purpose: login\n', 'purpose: link\n'),
      issued.message.replace('purpose: login\n', ''),
    ];
    for (const message of edits) {
      expect(parseChallengeMessage(message)).not.toBeNull();
      const parsed = parseChallengeMessage(message)!;
      const result = checkChallenge(
        { message, expectedNonce: issued.nonce, expectedAudience: parsed.audience, expectedPurpose: parsed.purpose },
        context,
      );
      expect(result).toEqual({ ok: false, code: 'nonce_mismatch' });
    }
  });

  it('nonce_mismatch under another secret', () => {
    expect(checkChallenge(valid, { secret: new Uint8Array(32).fill(8), now: NOW })).toEqual({ ok: false, code: 'nonce_mismatch' });
  });

  it('expired from expires_at on, before the audience check', () => {
    // expires_at is 12:39:56Z; NOW is 12:34:56.789Z.
    expect(checkChallenge(valid, { secret: SECRET, now: new Date('2026-11-21T12:39:55.999Z') }).ok).toBe(true);
    expect(checkChallenge(valid, { secret: SECRET, now: new Date('2026-11-21T12:39:56.000Z') })).toEqual({ ok: false, code: 'expired' });
    expect(checkChallenge({ ...valid, expectedAudience: 'https://other.example', expectedPurpose: 'x' }, later(3600))).toEqual({
      ok: false,
      code: 'expired',
    });
  });

  it('aud_mismatch before purpose_mismatch', () => {
    expect(checkChallenge({ ...valid, expectedAudience: 'https://other.example', expectedPurpose: 'x' }, context)).toEqual({
      ok: false,
      code: 'aud_mismatch',
    });
    expect(checkChallenge({ ...valid, expectedAudience: undefined }, context)).toEqual({ ok: false, code: 'aud_mismatch' });
    expect(checkChallenge({ ...valid, expectedAudience: `${AUDIENCE}/` }, context)).toEqual({ ok: false, code: 'aud_mismatch' });
  });

  it('purpose_mismatch last', () => {
    expect(checkChallenge({ ...valid, expectedPurpose: 'link' }, context)).toEqual({ ok: false, code: 'purpose_mismatch' });
    expect(checkChallenge({ ...valid, expectedPurpose: '' }, context)).toEqual({ ok: false, code: 'purpose_mismatch' });
  });

  it('treats an absent audience and purpose on both sides as equal, and empty as absent', () => {
    const bare = issueChallenge({ address: ADDRESS }, context);
    expect(checkChallenge({ message: bare.message, expectedNonce: bare.nonce }, context).ok).toBe(true);
    expect(
      checkChallenge({ message: bare.message, expectedNonce: bare.nonce, expectedAudience: '', expectedPurpose: '' }, context).ok,
    ).toBe(true);
    expect(checkChallenge({ message: bare.message, expectedNonce: bare.nonce, expectedAudience: AUDIENCE }, context)).toEqual({
      ok: false,
      code: 'aud_mismatch',
    });
    expect(checkChallenge({ message: bare.message, expectedNonce: bare.nonce, expectedPurpose: 'login' }, context)).toEqual({
      ok: false,
      code: 'purpose_mismatch',
    });
  });
});

describe('src/platform/crypto.ts helpers the challenge relies on', () => {
  it('timingSafeEqualString compares content and length', () => {
    expect(timingSafeEqualString('abc', 'abc')).toBe(true);
    expect(timingSafeEqualString('abc', 'abd')).toBe(false);
    expect(timingSafeEqualString('abc', 'abcd')).toBe(false);
    expect(timingSafeEqualString('', '')).toBe(true);
    expect(timingSafeEqualString('é', 'e\u0301')).toBe(false);
  });

  it('randomHex, sha256Hex and newAccountId give the documented shapes', () => {
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
    expect(randomHex(16)).not.toBe(randomHex(16));
    expect(() => randomHex(0)).toThrow(RangeError);
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(new TextEncoder().encode('abc'))).toBe(sha256Hex('abc'));
    expect(newAccountId()).toMatch(/^[0-9a-f]{32}$/);
  });
});
