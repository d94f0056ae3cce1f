/**
 * The canonical attestation message (docs/protocol.md §7 "Canonical message"):
 * the fixed point, the builder, and every malformed case the section lists.
 */
import { describe, expect, it } from 'vitest';
import {
  attestationId,
  buildAttestationMessage,
  parseAttestationMessage,
  parseRfc3339,
  type ParsedAttestation,
} from '../src/format/canonical.js';
import { formatIdentity, identityLookupKeys, parseIdentity } from '../src/format/identities.js';

const ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const NONCE = '0011223344556677889900aabbccddee';
const ISSUED_AT = '2026-04-22T12:00:00Z';

/** The fixed point of docs/protocol.md §7, written out by hand. */
const FIXED_MESSAGE =
  'orangecheck\n' +
  'identities: \n' +
  `address: ${ADDRESS}\n` +
  'purpose: portable reputation attestation (non-custodial)\n' +
  `nonce: ${NONCE}\n` +
  `issued_at: ${ISSUED_AT}\n` +
  'ack: I attest control of this address and bind it to my identities.\n';
const FIXED_ID = '75241b8f222ef029d35c40d7d96d45c3e3bf5480b5c51319844aaae121b3539d';

function parseOk(message: string): ParsedAttestation {
  const result = parseAttestationMessage(message);
  if (!result.ok) throw new Error(`expected a valid message, got ${result.detail}`);
  return result.value;
}

function expectDecodeError(message: string): void {
  const result = parseAttestationMessage(message);
  expect(result.ok).toBe(false);
  if (!result.ok) expect(result.code).toBe('decode_error');
}

describe('the docs/protocol.md §7 fixed point', () => {
  it('builds exactly the expected message', () => {
    expect(buildAttestationMessage({ address: ADDRESS, identities: [], nonce: NONCE, issuedAt: ISSUED_AT })).toBe(FIXED_MESSAGE);
  });

  it('has the id 75241b8f…', () => {
    expect(attestationId(FIXED_MESSAGE)).toBe(FIXED_ID);
  });

  it('parses back to its fields', () => {
    expect(parseOk(FIXED_MESSAGE)).toEqual({
      address: ADDRESS,
      identities: [],
      nonce: NONCE,
      issuedAt: ISSUED_AT,
      issuedAtMs: Date.UTC(2026, 3, 22, 12),
      extensions: {},
      aud: undefined,
      bond: undefined,
      expires: undefined,
      expiresAtMs: undefined,
      network: 'mainnet',
    });
  });
});

describe('attestationId', () => {
  it('hashes the UTF-8 bytes, trailing LF included', () => {
    expect(attestationId('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    // U+00E9 is the two bytes c3 a9 in UTF-8, not the one byte e9 of Latin-1.
    expect(attestationId('\u00e9')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
    expect(attestationId('orangecheck\n')).toBe('f64afcb5026d1556ba3c276c9ffe938b0ff4e3dd986153fc691067db8f3ca4ad');
    expect(attestationId(FIXED_MESSAGE.slice(0, -1))).not.toBe(FIXED_ID);
  });
});

describe('buildAttestationMessage', () => {
  it('sorts identities by the whole item string and drops exact repeats', () => {
    const message = buildAttestationMessage({
      address: ADDRESS,
      identities: ['x:alice', { protocol: 'github', identifier: 'alice' }, 'dns:alice.dev', 'x:alice', 'nostr:npub1zz', 'x:Alice'],
      nonce: NONCE,
      issuedAt: ISSUED_AT,
    });
    expect(message.split('\n')[1]).toBe('identities: dns:alice.dev,github:alice,nostr:npub1zz,x:Alice,x:alice');
  });

  it('sorts extensions by key, writes numbers in base 10 and leaves out undefined values', () => {
    const message = buildAttestationMessage({
      address: ADDRESS,
      identities: [],
      nonce: NONCE,
      issuedAt: ISSUED_AT,
      extensions: { scope: 'demo', bond: 100000n, aud: 'https://example.com', network: 'mainnet', publish: undefined },
    });
    expect(message.split('\n').slice(7)).toEqual(['aud: https://example.com', 'bond: 100000', 'network: mainnet', 'scope: demo', '']);
  });

  it('writes a Date with milliseconds', () => {
    const message = buildAttestationMessage({
      address: ADDRESS,
      identities: [],
      nonce: NONCE,
      issuedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
    });
    expect(parseOk(message).issuedAt).toBe('2026-01-02T03:04:05.006Z');
  });

  const bad: [string, Parameters<typeof buildAttestationMessage>[0]][] = [
    ['an address with a space', { address: 'bc1q abc', identities: [], nonce: NONCE, issuedAt: ISSUED_AT }],
    ['an uppercase nonce', { address: ADDRESS, identities: [], nonce: NONCE.toUpperCase(), issuedAt: ISSUED_AT }],
    ['an offset issued_at', { address: ADDRESS, identities: [], nonce: NONCE, issuedAt: '2026-04-22T12:00:00+00:00' }],
    ['an identity with a comma', { address: ADDRESS, identities: ['x:a,b'], nonce: NONCE, issuedAt: ISSUED_AT }],
    ['an uppercase protocol', { address: ADDRESS, identities: [{ protocol: 'X', identifier: 'a' }], nonce: NONCE, issuedAt: ISSUED_AT }],
    ['a bad extension key', { address: ADDRESS, identities: [], nonce: NONCE, issuedAt: ISSUED_AT, extensions: { 'Bad-Key': 'x' } }],
    ['a core key as extension', { address: ADDRESS, identities: [], nonce: NONCE, issuedAt: ISSUED_AT, extensions: { nonce: 'x' } }],
    ['an extension value with LF', { address: ADDRESS, identities: [], nonce: NONCE, issuedAt: ISSUED_AT, extensions: { aud: 'a\nb' } }],
    ['a negative bond', { address: ADDRESS, identities: [], nonce: NONCE, issuedAt: ISSUED_AT, extensions: { bond: -1 } }],
    ['an unknown network', { address: ADDRESS, identities: [], nonce: NONCE, issuedAt: ISSUED_AT, extensions: { network: 'liquid' } }],
  ];
  for (const [name, fields] of bad) {
    it(`refuses ${name} with an attest: error`, () => {
      expect(() => buildAttestationMessage(fields)).toThrow(/^attest: /);
    });
  }
});

describe('parseAttestationMessage: valid messages', () => {
  it('reads identities as signed: legacy twitter stays twitter, an exact repeat is read once', () => {
    const message = FIXED_MESSAGE.replace('identities: ', 'identities: dns:alice.dev,nostr:npub1abc,twitter:alice,twitter:alice,x:alice');
    expect(parseOk(message).identities).toEqual([
      { protocol: 'dns', identifier: 'alice.dev' },
      { protocol: 'nostr', identifier: 'npub1abc' },
      { protocol: 'twitter', identifier: 'alice' },
      { protocol: 'x', identifier: 'alice' },
    ]);
  });

  it('keeps unknown protocols and identifiers holding colons and spaces', () => {
    const message = FIXED_MESSAGE.replace('identities: ', 'identities: mastodon:@a@b.social,web:https://a.dev/x y');
    expect(parseOk(message).identities).toEqual([
      { protocol: 'mastodon', identifier: '@a@b.social' },
      { protocol: 'web', identifier: 'https://a.dev/x y' },
    ]);
  });

  it('accepts issued_at with milliseconds', () => {
    const parsed = parseOk(FIXED_MESSAGE.replace(ISSUED_AT, '2026-04-22T12:00:00.123Z'));
    expect(parsed.issuedAt).toBe('2026-04-22T12:00:00.123Z');
    expect(parsed.issuedAtMs).toBe(Date.UTC(2026, 3, 22, 12, 0, 0, 123));
  });

  it('types the known extensions and keeps unknown ones uninterpreted, in order', () => {
    const parsed = parseOk(
      FIXED_MESSAGE +
        'aud: https://example.com\n' +
        'bond: 2100000000000000\n' +
        'expires: 2026-05-01T00:00:00+02:00\n' +
        'future_key: anything: at all\n' +
        'network: signet\n' +
        'relay_hints: wss://a,wss://b\n' +
        'scope: \n',
    );
    expect(parsed.aud).toBe('https://example.com');
    expect(parsed.bond).toBe(2_100_000_000_000_000);
    expect(parsed.expires).toBe('2026-05-01T00:00:00+02:00');
    expect(parsed.expiresAtMs).toBe(Date.UTC(2026, 3, 30, 22));
    expect(parsed.network).toBe('signet');
    expect(Object.entries(parsed.extensions)).toEqual([
      ['aud', 'https://example.com'],
      ['bond', '2100000000000000'],
      ['expires', '2026-05-01T00:00:00+02:00'],
      ['future_key', 'anything: at all'],
      ['network', 'signet'],
      ['relay_hints', 'wss://a,wss://b'],
      ['scope', ''],
    ]);
  });

  it('accepts bond 0 and the networks testnet and regtest', () => {
    expect(parseOk(`${FIXED_MESSAGE}bond: 0\n`).bond).toBe(0);
    expect(parseOk(`${FIXED_MESSAGE}network: testnet\n`).network).toBe('testnet');
    expect(parseOk(`${FIXED_MESSAGE}network: regtest\n`).network).toBe('regtest');
  });

  it('accepts extension keys that are Object.prototype names', () => {
    const parsed = parseOk(`${FIXED_MESSAGE}constructor: a\nto_string: b\n`);
    expect(parsed.extensions).toEqual({ constructor: 'a', to_string: 'b' });
  });
});

describe('parseAttestationMessage: every malformed case is decode_error', () => {
  const lines = FIXED_MESSAGE.slice(0, -1).split('\n');
  const withLines = (next: string[]): string => `${next.join('\n')}\n`;
  const replaceLine = (index: number, line: string): string => withLines(lines.map((old, at) => (at === index ? line : old)));

  const cases: [string, string][] = [
    ['an empty string', ''],
    ['a missing trailing LF', FIXED_MESSAGE.slice(0, -1)],
    ['two trailing LFs', `${FIXED_MESSAGE}\n`],
    ['CRLF line ends', FIXED_MESSAGE.replace(/\n/g, '\r\n')],
    ['a lone CR inside a value', FIXED_MESSAGE.replace('identities: ', 'identities: x:a\rb')],
    ['a blank line between core lines', FIXED_MESSAGE.replace('\naddress', '\n\naddress')],
    ['a blank line before extensions', `${FIXED_MESSAGE}\naud: x\n`],
    ['a leading LF', `\n${FIXED_MESSAGE}`],
    ['a BOM', `\ufeff${FIXED_MESSAGE}`],
    ['the header with a version', replaceLine(0, 'orangecheck v0')],
    ['an uppercase header', replaceLine(0, 'OrangeCheck')],
    ['a wrong purpose', replaceLine(3, 'purpose: public reputation bond (non-custodial)')],
    ['a wrong ack', replaceLine(6, 'ack: I understand this links this address to my identity.')],
    ['a core key with two spaces', replaceLine(2, `address:  ${ADDRESS}`)],
    ['a core key without the space', replaceLine(1, 'identities:')],
    ['an uppercase core key', replaceLine(2, `Address: ${ADDRESS}`)],
    ['a missing core line', withLines(lines.filter((_, at) => at !== 4))],
    ['reordered core lines', withLines([lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)])],
    ['only the header', 'orangecheck\n'],
    ['an empty address', replaceLine(2, 'address: ')],
    ['an address with a trailing space', replaceLine(2, `address: ${ADDRESS} `)],
    ['a nonce of 31 hex', replaceLine(4, `nonce: ${NONCE.slice(1)}`)],
    ['a nonce of 33 hex', replaceLine(4, `nonce: ${NONCE}0`)],
    ['an uppercase nonce', replaceLine(4, `nonce: ${NONCE.toUpperCase()}`)],
    ['a non-hex nonce', replaceLine(4, `nonce: ${'g'.repeat(32)}`)],
    ['issued_at without Z', replaceLine(5, 'issued_at: 2026-04-22T12:00:00')],
    ['issued_at with an offset', replaceLine(5, 'issued_at: 2026-04-22T12:00:00+00:00')],
    ['issued_at with microseconds', replaceLine(5, 'issued_at: 2026-04-22T12:00:00.123456Z')],
    ['issued_at with a lowercase t', replaceLine(5, 'issued_at: 2026-04-22t12:00:00Z')],
    ['issued_at on 30 February', replaceLine(5, 'issued_at: 2026-02-30T12:00:00Z')],
    ['issued_at at hour 24', replaceLine(5, 'issued_at: 2026-04-22T24:00:00Z')],
    ['issued_at as a date only', replaceLine(5, 'issued_at: 2026-04-22')],
    ['an identity list with a space after the comma', replaceLine(1, 'identities: dns:a.dev, x:alice')],
    ['an unsorted identity list', replaceLine(1, 'identities: x:alice,dns:a.dev')],
    ['an identity without a colon', replaceLine(1, 'identities: alice')],
    ['an identity with an empty identifier', replaceLine(1, 'identities: x:')],
    ['an identity with an empty protocol', replaceLine(1, 'identities: :alice')],
    ['an identity with an uppercase protocol', replaceLine(1, 'identities: X:alice')],
    ['an identity protocol starting with a digit', replaceLine(1, 'identities: 9x:alice')],
    ['a trailing comma in identities', replaceLine(1, 'identities: x:alice,')],
    ['an empty item in identities', replaceLine(1, 'identities: dns:a,,x:b')],
    ['unsorted extensions', `${FIXED_MESSAGE}scope: a\naud: b\n`],
    ['a repeated extension key', `${FIXED_MESSAGE}aud: a\naud: b\n`],
    ['an extension key with uppercase', `${FIXED_MESSAGE}Aud: a\n`],
    ['an extension key with a hyphen', `${FIXED_MESSAGE}relay-hints: a\n`],
    ['an extension key starting with an underscore', `${FIXED_MESSAGE}__proto__: a\n`],
    ['an extension line without ": "', `${FIXED_MESSAGE}aud:a\n`],
    ['an extension line without a value separator', `${FIXED_MESSAGE}aud\n`],
    ['a core key repeated as an extension', `${FIXED_MESSAGE}address: 1BoatSLRHtKNngkdXEeobR76b53LETtpyT\n`],
    ['a second nonce as an extension', `${FIXED_MESSAGE}nonce: ${NONCE}\n`],
    ['a bond with a sign', `${FIXED_MESSAGE}bond: +100\n`],
    ['a negative bond', `${FIXED_MESSAGE}bond: -100\n`],
    ['a bond with a fraction', `${FIXED_MESSAGE}bond: 100.5\n`],
    ['a bond in exponent form', `${FIXED_MESSAGE}bond: 1e5\n`],
    ['a bond with leading zeros', `${FIXED_MESSAGE}bond: 0100\n`],
    ['a bond in hex', `${FIXED_MESSAGE}bond: 0x10\n`],
    ['an empty bond', `${FIXED_MESSAGE}bond: \n`],
    ['a bond above 21 million BTC', `${FIXED_MESSAGE}bond: 2100000000000001\n`],
    ['a bond beyond 2^64', `${FIXED_MESSAGE}bond: 99999999999999999999999\n`],
    ['an unknown network', `${FIXED_MESSAGE}network: liquid\n`],
    ['an uppercase network', `${FIXED_MESSAGE}network: Mainnet\n`],
    ['a date-only expires', `${FIXED_MESSAGE}expires: 2026-05-01\n`],
    ['an expires in words', `${FIXED_MESSAGE}expires: tomorrow\n`],
    ['an expires on 31 April', `${FIXED_MESSAGE}expires: 2026-04-31T00:00:00Z\n`],
  ];
  for (const [name, message] of cases) {
    it(name, () => {
      expectDecodeError(message);
    });
  }

  it('never throws on non-string input', () => {
    expect(parseAttestationMessage(undefined as unknown as string).ok).toBe(false);
    expect(parseAttestationMessage(42 as unknown as string).ok).toBe(false);
  });
});

describe('parseRfc3339', () => {
  it('reads offsets, lowercase separators and long fractions', () => {
    expect(parseRfc3339('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1));
    expect(parseRfc3339('2026-01-01t00:00:00z')).toBe(Date.UTC(2026, 0, 1));
    expect(parseRfc3339('2026-01-01T01:30:00+01:30')).toBe(Date.UTC(2026, 0, 1));
    expect(parseRfc3339('2025-12-31T23:00:00-01:00')).toBe(Date.UTC(2026, 0, 1));
    expect(parseRfc3339('2026-01-01T00:00:00.123456789Z')).toBe(Date.UTC(2026, 0, 1, 0, 0, 0, 123));
    expect(parseRfc3339('0001-01-01T00:00:00Z')).toBe(new Date('0001-01-01T00:00:00Z').getTime());
    expect(parseRfc3339('2026-01-01T00:00:00+24:00')).toBeNull();
    expect(parseRfc3339('2026-01-01T00:00:60Z')).toBeNull();
  });
});

describe('identities', () => {
  it('parses protocol:identifier for look-ups, splitting at the first colon', () => {
    expect(parseIdentity('x:alice')).toEqual({ protocol: 'x', identifier: 'alice' });
    expect(parseIdentity('twitter:alice')).toEqual({ protocol: 'x', identifier: 'alice' });
    expect(parseIdentity('web:https://a.dev')).toEqual({ protocol: 'web', identifier: 'https://a.dev' });
    for (const bad of ['', 'x', 'x:', ':a', 'X:a', 'x:a,b', 'x:a\nb', '1x:a']) expect(parseIdentity(bad)).toBeNull();
  });

  it('lists every tag value an identity may have been signed under', () => {
    expect(identityLookupKeys({ protocol: 'x', identifier: 'alice' })).toEqual(['x:alice', 'twitter:alice']);
    expect(identityLookupKeys({ protocol: 'twitter', identifier: 'alice' })).toEqual(['x:alice', 'twitter:alice']);
    expect(identityLookupKeys({ protocol: 'github', identifier: 'alice' })).toEqual(['github:alice']);
    expect(formatIdentity({ protocol: 'dns', identifier: 'a.dev' })).toBe('dns:a.dev');
  });
});
