/**
 * The signed challenge of docs/protocol.md §5: the message a wallet signs to prove
 * control of a Bitcoin address, for sign-in and for the generic
 * `/api/challenge` primitive.
 *
 * The nonce is 8 random bytes and a MAC of those bytes and the message's other
 * fields under the server secret (`OC_SERVER_SECRET`), so issuing stores
 * nothing, no two challenges are alike, and a message a client wrote itself
 * is told apart from one this service issued. Replay protection is the
 * caller's job (docs/protocol.md §5: sign-in consumes the nonce once).
 * The signature is checked by the caller with the bitcoin module.
 *
 * Pure: the secret and the clock are parameters.
 */
import { randomBytes } from 'node:crypto';

import { hmacSha256, timingSafeEqualString } from '../../platform/crypto.js';
import { OcError } from '../../platform/errors.js';

const HEADER = 'orangecheck-auth';
const ACK = 'I authorize this session under the OrangeCheck auth challenge.';

const DEFAULT_CHALLENGE_TTL_SECONDS = 300;
const MIN_CHALLENGE_TTL_SECONDS = 30;
const MAX_CHALLENGE_TTL_SECONDS = 3600;

/**
 * The purpose of a challenge asked without one (docs/protocol.md §5): a
 * sign-in, so the walk-through that asks for a challenge by address alone
 * and posts it to the sign-in route works as written. Its audience defaults
 * to `PUBLIC_URL`, which the route knows.
 */
export const DEFAULT_CHALLENGE_PURPOSE = 'login';

/** Longest audience or purpose value, in UTF-16 code units. */
export const MAX_CHALLENGE_FIELD_LENGTH = 512;

/**
 * Bitcoin addresses are base58 or bech32: letters and digits only, at most 90
 * characters (BIP-173). Whether the address is valid for the network is the
 * route's check; this only keeps the line structure intact.
 */
const ADDRESS = /^[A-Za-z0-9]{1,100}$/;
const NONCE = /^[0-9a-f]{32}$/;
const TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;
/**
 * Control characters, and the Unicode line and paragraph separators, are
 * refused in audience and purpose: a wallet that renders them as line breaks
 * would show the user a line the service never wrote.
 */
const FORBIDDEN_IN_FIELD = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Upper bound on a message we will look at: every line at its longest. */
const MAX_MESSAGE_LENGTH = 1024 + 2 * MAX_CHALLENGE_FIELD_LENGTH;

/** The MAC needs at least this much key (docs/protocol.md §1: `OC_SERVER_SECRET` is 32+ bytes). */
const MIN_SECRET_BYTES = 32;

/**
 * Domain separation: this MAC key also keys e-mail code hashes and OAuth state
 * (docs/protocol.md). v2: the nonce carries its own random half.
 */
const NONCE_LABEL = 'oc-host/challenge-nonce/v2';
/** The nonce is SALT_BYTES random bytes followed by MAC_BYTES of the MAC: 16 bytes, 32 hex. */
const SALT_BYTES = 8;
const MAC_BYTES = 8;

export interface ChallengeContext {
  /** `OC_SERVER_SECRET`. */
  readonly secret: Uint8Array;
  readonly now: Date;
}

export interface IssueChallengeInput {
  /** Already checked by the caller to be an address of the configured network. */
  readonly address: string;
  /** Absent or empty leaves the line out; `GET /api/challenge` always gives one (docs/protocol.md §5). */
  readonly audience?: string | undefined;
  /** Absent or empty leaves the line out; `GET /api/challenge` always gives one (docs/protocol.md §5). */
  readonly purpose?: string | undefined;
  /** 30 to 3600; default 300 (docs/protocol.md §5). */
  readonly ttlSeconds?: number | undefined;
}

/** The body of `GET /api/challenge` (docs/api.md Challenge). */
export interface IssuedChallenge {
  readonly message: string;
  readonly nonce: string;
  /** ISO 8601 UTC with milliseconds (docs/api.md Challenge). */
  readonly expiresAt: string;
}

export interface ParsedChallenge {
  readonly address: string;
  readonly nonce: string;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  readonly audience: string | undefined;
  readonly purpose: string | undefined;
}

export interface CheckChallengeInput {
  readonly message: unknown;
  readonly expectedNonce: unknown;
  /** Absent, or empty, means the message must carry no audience line. */
  readonly expectedAudience?: string | undefined;
  /** Absent, or empty, means the message must carry no purpose line. */
  readonly expectedPurpose?: string | undefined;
}

/** docs/protocol.md §5 codes, in the order the checks run. */
/** Why a challenge check failed; with the verification codes, what `invalid_challenge` carries in `codes` (docs/errors.md). */
export const CHALLENGE_CODES: readonly string[] = ['decode_error', 'nonce_mismatch', 'expired', 'aud_mismatch', 'purpose_mismatch'];
type ChallengeFailureCode = 'decode_error' | 'nonce_mismatch' | 'expired' | 'aud_mismatch' | 'purpose_mismatch';

export type ChallengeCheckResult =
  | { readonly ok: true; readonly address: string; readonly nonce: string; readonly expiresAt: Date }
  | { readonly ok: false; readonly code: ChallengeFailureCode };

/** A short secret or an invalid clock is a wiring mistake, not client input: it throws. */
function nowMillisOf(context: ChallengeContext): number {
  if (!(context.secret instanceof Uint8Array) || context.secret.length < MIN_SECRET_BYTES) {
    throw new TypeError(`challenge: the server secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  const nowMillis = context.now instanceof Date ? context.now.getTime() : Number.NaN;
  if (!Number.isFinite(nowMillis)) throw new TypeError('challenge: now must be a valid Date');
  return nowMillis;
}

/** RFC 3339 UTC to the second (docs/protocol.md §5), from whole unix seconds. */
function formatTime(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

/** Parses the exact form {@link formatTime} writes; anything else (2026-02-30, +hh:mm, fractions) is refused. */
function parseTime(text: string): Date | undefined {
  const match = TIME.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number) as [number, number, number, number, number, number, number];
  const time = Date.UTC(year, month - 1, day, hour, minute, second);
  return Number.isFinite(time) && formatTime(time / 1000) === text ? new Date(time) : undefined;
}

function isValidField(value: string): boolean {
  return value.length > 0 && value.length <= MAX_CHALLENGE_FIELD_LENGTH && !FORBIDDEN_IN_FIELD.test(value);
}

/** Empty means absent: a query `?audience=` or a body `expectedAudience: ""` asks for no audience. */
function optionalField(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The MAC half of a nonce: HMAC-SHA256 under the server secret over a label,
 * the random half and each field, truncated to 8 bytes (docs/protocol.md,
 * the signed challenge). Each field is written as a presence byte, a 4-byte
 * big-endian length and its UTF-8 bytes, so no two different field sets (say,
 * audience "a" and no purpose versus no audience and purpose "a") encode alike.
 */
function nonceMac(
  secret: Uint8Array,
  salt: Uint8Array,
  fields: { address: string; issuedAt: string; expiresAt: string; audience: string | undefined; purpose: string | undefined },
): Buffer {
  const parts: Buffer[] = [];
  const pushField = (field: string | undefined): void => {
    if (field === undefined) {
      parts.push(Buffer.from([0]));
      return;
    }
    const bytes = Buffer.from(field, 'utf8');
    const prefix = Buffer.alloc(5);
    prefix[0] = 1;
    prefix.writeUInt32BE(bytes.length, 1);
    parts.push(prefix, bytes);
  };
  pushField(NONCE_LABEL);
  parts.push(Buffer.from(salt)); // always SALT_BYTES long, so it needs no length
  for (const field of [fields.address, fields.issuedAt, fields.expiresAt, fields.audience, fields.purpose]) pushField(field);
  return Buffer.from(hmacSha256(secret, Buffer.concat(parts)).subarray(0, MAC_BYTES));
}

function buildMessage(fields: {
  address: string;
  nonce: string;
  issuedAt: string;
  expiresAt: string;
  audience: string | undefined;
  purpose: string | undefined;
}): string {
  let message = `${HEADER}\naddress: ${fields.address}\nnonce: ${fields.nonce}\nissued_at: ${fields.issuedAt}\nexpires_at: ${fields.expiresAt}\nack: ${ACK}\n`;
  if (fields.audience !== undefined) message += `audience: ${fields.audience}\n`;
  if (fields.purpose !== undefined) message += `purpose: ${fields.purpose}\n`;
  return message;
}

/**
 * Builds a challenge (docs/protocol.md §5). The times are cut to whole seconds, as
 * the message carries them, and `expiresAt` is the same instant as the
 * message's `expires_at`. Bad audience, purpose or ttl is a client mistake:
 * `OcError('bad_request')` naming the field.
 *
 * The nonce starts with 8 fresh random bytes, so two requests for the same
 * address, audience and purpose in the same second get different challenges,
 * each of which can be consumed once.
 */
export function issueChallenge(input: IssueChallengeInput, context: ChallengeContext): IssuedChallenge {
  const nowMillis = nowMillisOf(context);

  const { address } = input;
  if (typeof address !== 'string' || !ADDRESS.test(address)) throw new OcError('bad_request', 'addr: must be a Bitcoin address');
  const ttlSeconds = input.ttlSeconds ?? DEFAULT_CHALLENGE_TTL_SECONDS;
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < MIN_CHALLENGE_TTL_SECONDS || ttlSeconds > MAX_CHALLENGE_TTL_SECONDS) {
    throw new OcError('bad_request', `ttl must be a whole number from ${MIN_CHALLENGE_TTL_SECONDS} to ${MAX_CHALLENGE_TTL_SECONDS}`);
  }
  const audience = optionalField(input.audience);
  const purpose = optionalField(input.purpose);
  if (audience !== undefined && !isValidField(audience)) {
    throw new OcError(
      'bad_request',
      `audience must be at most ${MAX_CHALLENGE_FIELD_LENGTH} characters without line breaks or control characters`,
    );
  }
  if (purpose !== undefined && !isValidField(purpose)) {
    throw new OcError(
      'bad_request',
      `purpose must be at most ${MAX_CHALLENGE_FIELD_LENGTH} characters without line breaks or control characters`,
    );
  }

  const issuedSeconds = Math.floor(nowMillis / 1000);
  const issuedAt = formatTime(issuedSeconds);
  const expiresAt = formatTime(issuedSeconds + ttlSeconds);
  const salt = randomBytes(SALT_BYTES);
  const mac = nonceMac(context.secret, salt, { address, issuedAt, expiresAt, audience, purpose });
  const nonce = Buffer.concat([salt, mac]).toString('hex');
  return {
    message: buildMessage({ address, nonce, issuedAt, expiresAt, audience, purpose }),
    nonce,
    expiresAt: new Date((issuedSeconds + ttlSeconds) * 1000).toISOString(),
  };
}

/**
 * Parses a challenge message exactly as {@link issueChallenge} writes it: the
 * header, the five fixed lines in order, then optionally `audience` and then
 * `purpose`, each line ended by one LF, no CR, nothing before or after.
 * Returns null for anything else. Says nothing about who issued it.
 */
export function parseChallengeMessage(message: unknown): ParsedChallenge | null {
  if (typeof message !== 'string' || message.length > MAX_MESSAGE_LENGTH || !message.endsWith('\n')) return null;
  const lines = message.slice(0, -1).split('\n');
  if (lines.length < 6 || lines.length > 8 || lines[0] !== HEADER) return null;

  const lineValue = (index: number, name: string): string | undefined => {
    const line = lines[index];
    const prefix = `${name}: `;
    return line?.startsWith(prefix) ? line.slice(prefix.length) : undefined;
  };
  const address = lineValue(1, 'address');
  const nonce = lineValue(2, 'nonce');
  const issuedText = lineValue(3, 'issued_at');
  const expiresText = lineValue(4, 'expires_at');
  if (address === undefined || !ADDRESS.test(address)) return null;
  if (nonce === undefined || !NONCE.test(nonce)) return null;
  if (issuedText === undefined || expiresText === undefined) return null;
  const issuedAt = parseTime(issuedText);
  const expiresAt = parseTime(expiresText);
  if (issuedAt === undefined || expiresAt === undefined) return null;
  if (lines[5] !== `ack: ${ACK}`) return null;

  let next = 6;
  const audience = lineValue(next, 'audience');
  if (audience !== undefined) next += 1;
  const purpose = lineValue(next, 'purpose');
  if (purpose !== undefined) next += 1;
  if (next !== lines.length) return null;
  if (audience !== undefined && !isValidField(audience)) return null;
  if (purpose !== undefined && !isValidField(purpose)) return null;

  return { address, nonce, issuedAt, expiresAt, audience, purpose };
}

/**
 * What `POST /api/challenge` compares a message's audience or purpose with
 * (docs/protocol.md §5), given the caller's expectation, the value the
 * message carries and the default a challenge asked without it gets:
 * absent, the message's own value (not compared); empty, what a challenge
 * asked without the field carries, which is the default, or no line at all
 * in a message issued before the defaults; else the value given.
 */
export function expectedField(expected: string | undefined, carried: string | undefined, fallback: string): string | undefined {
  if (expected === undefined) return carried;
  if (expected === '') return carried === fallback ? fallback : undefined;
  return expected;
}

/**
 * The message checks of docs/protocol.md §5, in its order, stopping at the first
 * failure: it parses (`decode_error`); its nonce equals `expectedNonce` and is
 * this service's MAC of its fields (`nonce_mismatch`); it has not expired
 * (`expired`); its audience equals the expected one (`aud_mismatch`); its
 * purpose equals the expected one (`purpose_mismatch`). The signature check
 * that follows is the caller's.
 */
export function checkChallenge(input: CheckChallengeInput, context: ChallengeContext): ChallengeCheckResult {
  const nowMillis = nowMillisOf(context);
  const parsed = parseChallengeMessage(input.message);
  if (parsed === null) return { ok: false, code: 'decode_error' };

  const expected = typeof input.expectedNonce === 'string' ? input.expectedNonce : '';
  // The nonce's first half is its random salt; its second half must be our
  // MAC of that salt and the message's fields.
  const salt = Buffer.from(parsed.nonce.slice(0, SALT_BYTES * 2), 'hex');
  const mac = nonceMac(context.secret, salt, {
    address: parsed.address,
    issuedAt: formatTime(parsed.issuedAt.getTime() / 1000),
    expiresAt: formatTime(parsed.expiresAt.getTime() / 1000),
    audience: parsed.audience,
    purpose: parsed.purpose,
  });
  // Both comparisons always run (no `&&` short-circuit), so the timing does not
  // say which of the two failed.
  const matchesExpected = timingSafeEqualString(parsed.nonce, expected);
  const matchesMac = timingSafeEqualString(parsed.nonce.slice(SALT_BYTES * 2), mac.toString('hex'));
  if (!(matchesExpected && matchesMac)) return { ok: false, code: 'nonce_mismatch' };

  if (nowMillis >= parsed.expiresAt.getTime()) return { ok: false, code: 'expired' };
  if (parsed.audience !== optionalField(input.expectedAudience)) return { ok: false, code: 'aud_mismatch' };
  if (parsed.purpose !== optionalField(input.expectedPurpose)) return { ok: false, code: 'purpose_mismatch' };
  return { ok: true, address: parsed.address, nonce: parsed.nonce, expiresAt: parsed.expiresAt };
}
