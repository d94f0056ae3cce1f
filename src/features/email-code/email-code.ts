/**
 * The e-mail one-time code of docs/protocol.md §6 (docs/api.md "E-mail one-time
 * code", Limits: 6 digits): `start` mails a code, `verify` checks it. What a
 * successful verify leads to (an account, a session, a step-up) is the
 * caller's business; this service knows nothing about accounts, so `start`
 * cannot answer differently for known and unknown addresses (no enumeration).
 *
 * Rules, all from docs/protocol.md §6:
 * - 6 digits from the operating system's CSPRNG, uniform (`randomInt` draws
 *   without modulo bias), zero-padded;
 * - valid 10 minutes: usable while `now < expires_at`;
 * - stored only as a keyed hash: HMAC-SHA256 under `OC_SERVER_SECRET` of a
 *   label, the address and the code. Without the secret a leaked table does
 *   not give the codes away by trying all 10^6, and binding the address means
 *   a hash copied to another address's row matches no code there;
 * - a new start for the same address replaces (kills) the older code;
 * - single use: a right code is consumed by a conditional delete
 *   (`deleteEmailCode(email, codeHash)`), which succeeds for exactly one of
 *   several parallel verifies;
 * - at most 5 wrong tries: every verify that reaches a live code first counts
 *   one try atomically, and only the first 5 tries can ever succeed. Counting
 *   before comparing (not after a wrong answer) is what makes the limit hold
 *   under parallel guessing: each request gets its own count from the
 *   database, so of a burst of a thousand guesses only five can succeed.
 *
 * Whose tries (issue 10, item 5). The address is no secret, so tries by
 * whoever knows only the address must not use up the tries of the browser
 * that started the code. `start` answers a `token`: 8 random bytes naming
 * the start's resend chain (the first start's, kept by its resends), 8
 * random bytes, the code's expiry in Unix seconds (4 bytes), then the first
 * 8 bytes of a MAC under the server secret of all that and the address, so
 * verify can tell a token it issued for this address from any other string,
 * and the rate limits can tell an unexpired one, without storing old ones.
 * (Tokens issued before the chain and expiry were added are 8 random bytes
 * and their MAC; they still count for verify, not for a resend.)
 * - With the code's own token, the try counts against the code (`attempts`):
 *   5 tries, then the code is dead and the answer is `code_dead`, as it is
 *   for a token of this address whose code is gone (replaced by a newer
 *   start, used, or expired). Only whoever started a code holds its token,
 *   so `code_dead` tells nothing to anyone else.
 * - Without a token (docs/protocol.md §6 makes it optional, docs/api.md does not
 *   name it), the try counts against a second budget of 5 on the same code
 *   (`tokenless_attempts`), which the token's tries never touch: strangers
 *   can use up only that one. Every failure there is `invalid_code`, so it
 *   never says whether a code is pending.
 * - A token that is not this address's (forged, or issued for another
 *   address) counts against nothing and is `invalid_code`.
 * So at most 10 guesses at one code can succeed: 5 through its token, 5 without.
 *
 * Replaced codes (docs/protocol.md §6 "E-mail codes"). Resends form a chain:
 * a start whose `replacing` token is the live code's stores, with the new
 * code, the keyed hash of the code it replaces followed by the hashes that
 * code's row held, newest first, cut to the last {@link REPLACED_CODES_KEPT}
 * (5). An ordinary start (no token, or one that is not the live code's)
 * starts a new chain with an empty list; a code that was used or has
 * expired cannot be resent, so its chain ends there. The hashes are keyed
 * exactly as `code_hash` is (never a code is stored), so without the server
 * secret a leaked table does not give those codes away either.
 * When a try with the newest token is wrong and its code's hash is one of
 * the list, the holder of the token (only they: without the token no try
 * gets this far) is told `code_replaced` instead of `invalid_code`. The try
 * counts all the same. The typed hash is compared in constant time with 5
 * slots every time, the list padded with placeholders, so how long the chain
 * is does not show in the timing. A code of a mail more than 5 resends back
 * is a wrong code like any other (`invalid_code`).
 *
 * A resend (docs/protocol.md §6 "E-mail codes"). A start may carry a token
 * this service issued for the address; `resendChainOf` tells, by the MAC and
 * the expiry alone, whether it is one and unexpired, and names its chain, so
 * the rate limits can let its holder ask for a new code when others have used
 * up the address's starts, counting it against its own chain's resends. It
 * need not be the live code's: a stranger's start replaces the code and so
 * must not take the resend from the browser that asked first. The new code
 * keeps the chain of the token it was asked with.
 *
 * The mail's link (docs/protocol.md §6 "E-mail codes", issue 35 item 12).
 * The link carries no code but a secret of its own: 32 bytes from the
 * CSPRNG, stored as a keyed hash like the code, compared in constant time.
 * `verifyLink` signs in only when the link's secret and the start's token are
 * both the live code's, so a link read anywhere but in the browser that asked
 * (a mail scanner, a forwarded mail) signs in nowhere: `link_elsewhere`, and
 * nothing is counted or used up, the code stays good for typing. A link that
 * is not the live code's (a newer start replaced it, it was used, it expired,
 * its 5 tries are spent, or it was never issued) is `code_dead`. The secret
 * has 256 bits, so no try limit is needed to keep it from being guessed.
 *
 * Same work whether or not a code is pending: once the input is well formed,
 * verify always computes the code's keyed hash and the token's MAC, always
 * reads the code and always runs the counting update (on no row when there
 * is nothing to count against), and compares hash and token in constant time
 * against the stored ones or against placeholders, and the hash with the 5
 * slots of replaced codes (placeholders where the list is shorter). Only a
 * right code costs one more round trip, the delete that consumes it.
 *
 * A code that is not 6 digits is `invalid_code`, not `bad_request`: to the
 * user it is simply a wrong code, and it is refused before the database is
 * asked, so it costs no try; so is a token that is not 32 lowercase hex. A
 * malformed address is `bad_request` on both calls, like any malformed field
 * (docs/protocol.md §4). No expired or dead code is deleted by verify (that would
 * be a round trip only when a code is pending): its count keeps it dead, a
 * new start replaces it, and the purge removes it after expiry.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { hmacSha256, timingSafeEqualString } from '../../platform/crypto.js';
import { OcError } from '../../platform/errors.js';
import { escapeHtml, normalizeEmail, frameMail, mailBrandOf, type MailBrand } from '../../platform/mail/index.js';
import type { Mailer } from '../../platform/mail/index.js';
import { formatUtcParts, translator, type Locale } from '../../platform/i18n/index.js';
import type { Brand } from '../../platform/config.js';
import type { EmailCodeStore } from './store.js';
import type { IssuedChallenge } from '../../identity/signin/index.js';

/** docs/protocol.md §6: valid 10 minutes. */
export const EMAIL_CODE_TTL_MS = 10 * 60 * 1000;

/** docs/protocol.md §6: at most 5 wrong tries, then dead. */
export const EMAIL_CODE_MAX_ATTEMPTS = 5;

/** docs/api.md Limits: "E-mail code length: 6 digits". */
const EMAIL_CODE_LENGTH = 6;

const CODE_FORMAT = /^[0-9]{6}$/;

/**
 * 8 random bytes and 8 bytes of their MAC, as 32 lowercase hex. (Tokens of
 * resends issued before the replaced codes were stored had a MAC tag of the
 * replaced code in the second half of the salt; to verify a salt is opaque,
 * so they stay valid.)
 */
const TOKEN_FORMAT = /^(?:[0-9a-f]{32}|[0-9a-f]{56})$/;
const TOKEN_SALT_BYTES = 8;
const TOKEN_MAC_BYTES = 8;
/** A token with a chain and an expiry: chain (8 bytes), salt (8), expiry in Unix seconds (4), MAC (8). */
const CHAIN_TOKEN_HEX = 56;
const TOKEN_CHAIN_BYTES = 8;
const TOKEN_EXPIRY_BYTES = 4;

/** The mail link's secret: 32 bytes from the CSPRNG, base64url without padding. */
const LINK_BYTES = 32;
const LINK_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** docs/protocol.md §1: `OC_SERVER_SECRET` is 32+ bytes. */
const MIN_SECRET_BYTES = 32;

/**
 * Domain separation: the same secret also keys the challenge nonce MAC and the
 * OAuth state (docs/protocol.md §1), so every use MACs under its own label.
 */
const CODE_HASH_LABEL = 'oc-host/email-code/v1';
const TOKEN_LABEL = 'oc-host/email-code-token/v1';
const CHAIN_TOKEN_LABEL = 'oc-host/email-code-token/v2';
const LINK_HASH_LABEL = 'oc-host/email-link/v1';

/** docs/protocol.md §6: a code remembers the codes of at most this many earlier mails of its resend chain. */
const REPLACED_CODES_KEPT = 5;

/**
 * What verify compares with when no live code can take the try: never equal
 * to a real hash or token in practice (a stored token is never all zeroes but
 * with chance 2^-64), and of their length, so the comparison costs the same.
 */
const PLACEHOLDER = { code_hash: '0'.repeat(64), token: '0'.repeat(32) } as const;

export interface EmailCodeServiceOptions {
  readonly store: EmailCodeStore;
  readonly mailer: Mailer;
  /** `OC_SERVER_SECRET`, at least 32 bytes. */
  readonly secret: Uint8Array;
  readonly now: () => Date;
  /** `PUBLIC_URL`; the mail names the service by its host unless a brand name is set. */
  readonly publicUrl: string;
  /** The operator's brand (BRAND_NAME, BRAND_SUPPORT_URL). */
  readonly brand?: Brand | undefined;
  /** Default {@link EMAIL_CODE_TTL_MS}. */
  readonly ttlMs?: number | undefined;
  /** Default {@link EMAIL_CODE_MAX_ATTEMPTS}. */
  readonly maxAttempts?: number | undefined;
}

/** The body of `start` without `ok` (docs/protocol.md §6: `{ok: true, token, expiresAt}`). */
interface EmailCodeStarted extends Pick<IssuedChallenge, 'expiresAt'> {
  /**
   * Opaque; the client sends it back with the code, so that its tries count
   * against this start's code and no one else's can use them up.
   */
  readonly token: string;
}

interface EmailCodeVerified {
  /** The normalized (trimmed, lowercased) address whose control was proven. */
  readonly email: string;
}

export interface EmailCodeService {
  /**
   * Mails a new code to `email`, replacing any older one.
   * @throws OcError `bad_request` (malformed address), `mail_unavailable`
   *   (the mail could not be sent; no usable code is left behind).
   */
  /**
   * Mails a code to `email`, in `locale` (default English). `replacing`, on a
   * resend, is the token of the code it replaces: when it is that live code's,
   * the new code remembers the replaced one and those it had replaced (the
   * last 5 in all), so that a try of any of them is `code_replaced`.
   */
  start(email: unknown, locale?: Locale, replacing?: unknown): Promise<EmailCodeStarted>;
  /**
   * Consumes the code.
   * @throws OcError `code_dead` when the token is this address's but its code
   *   can no longer be used (5 tries spent, replaced, used, expired);
   *   `code_replaced` when, with the code's own token, the code of one of
   *   the last 5 mails that the resends leading to this code replaced was
   *   typed;
   *   `invalid_code` for every other failure of the code or token;
   *   `bad_request` for a malformed address.
   */
  /**
   * `beforeConsume` runs once the code is known to be right, before it is
   * used up: when it throws, the code stays usable (its try is counted).
   */
  verify(email: unknown, code: unknown, token?: unknown, beforeConsume?: (email: string) => Promise<void>): Promise<EmailCodeVerified>;
  /**
   * Consumes the code with the mail's link secret and the start's token,
   * both the live code's; `beforeConsume` as for {@link verify}.
   * @throws OcError `link_elsewhere` when the link is the live code's but the
   *   token is missing or not that code's (nothing is counted);
   *   `code_dead` when the link is not the live code's (replaced, used,
   *   expired, tries spent, never issued); `bad_request` for a malformed address.
   */
  verifyLink(email: unknown, link: unknown, token?: unknown, beforeConsume?: (email: string) => Promise<void>): Promise<EmailCodeVerified>;
  /**
   * The resend chain of `token` when it is a token this service issued for
   * `email` and it has not expired, whether or not its code is still live;
   * null for anything else, malformed input included. Reads no store.
   */
  resendChainOf(email: unknown, token: unknown): string | null;
}

/**
 * The stored form of a code: lowercase hex HMAC-SHA256 under the server
 * secret of `label NUL email NUL code`. NUL cannot occur in a normalized
 * address, so the three parts cannot be shifted into one another.
 */
export function hashEmailCode(secret: Uint8Array, email: string, code: string): string {
  return Buffer.from(hmacSha256(secret, `${CODE_HASH_LABEL}\u0000${email}\u0000${code}`)).toString('hex');
}

/** A uniform 6-digit code, zero-padded (`randomInt` rejects and redraws instead of reducing modulo). */
export function generateEmailCode(): string {
  return randomInt(0, 10 ** EMAIL_CODE_LENGTH)
    .toString()
    .padStart(EMAIL_CODE_LENGTH, '0');
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`email-code: ${name} must be a positive whole number, got ${value}`);
  }
  return value;
}

/**
 * The MAC half of a start's token: HMAC-SHA256 under the server secret of
 * `label NUL email NUL salt-hex`, cut to 8 bytes, as hex.
 */
function tokenMac(secret: Uint8Array, email: string, saltHex: string): string {
  return Buffer.from(hmacSha256(secret, `${TOKEN_LABEL}\u0000${email}\u0000${saltHex}`))
    .subarray(0, TOKEN_MAC_BYTES)
    .toString('hex');
}

/** The MAC half of a chain token: HMAC-SHA256 of `label NUL email NUL body-hex`, cut to 8 bytes, as hex. */
function chainTokenMac(secret: Uint8Array, email: string, bodyHex: string): string {
  return Buffer.from(hmacSha256(secret, `${CHAIN_TOKEN_LABEL}\u0000${email}\u0000${bodyHex}`))
    .subarray(0, TOKEN_MAC_BYTES)
    .toString('hex');
}

/** A fresh token for a start of `email` in resend chain `chain` (16 hex), valid until `expiresAtMs`. */
function issueToken(secret: Uint8Array, email: string, chain: string, expiresAtMs: number): string {
  const expiry = Buffer.alloc(TOKEN_EXPIRY_BYTES);
  expiry.writeUInt32BE(Math.floor(expiresAtMs / 1000));
  const body = chain + randomBytes(TOKEN_SALT_BYTES).toString('hex') + expiry.toString('hex');
  return body + chainTokenMac(secret, email, body);
}

/** The stored form of a link secret: keyed like the code's hash, under a label of its own. */
export function hashEmailLink(secret: Uint8Array, email: string, link: string): string {
  return Buffer.from(hmacSha256(secret, `${LINK_HASH_LABEL}\u0000${email}\u0000${link}`)).toString('hex');
}

/**
 * Whether `codeHash` is one of `replaced` (the live code's list, or empty
 * when none is live). Always {@link REPLACED_CODES_KEPT} constant-time
 * comparisons, placeholders filling the slots the list leaves empty, and no
 * early exit, so the time does not tell how many codes were replaced.
 */
function isReplacedCode(codeHash: string, replaced: readonly string[]): boolean {
  let found = false;
  for (let slot = 0; slot < REPLACED_CODES_KEPT; slot += 1) {
    const matches = timingSafeEqualString(codeHash, replaced[slot] ?? PLACEHOLDER.code_hash);
    found = found || matches;
  }
  return found;
}

/** Whether `token` (of {@link TOKEN_FORMAT}) was issued by this service for `email`; constant time in the MAC. */
function isTokenOf(secret: Uint8Array, email: string, token: string): boolean {
  if (token.length === CHAIN_TOKEN_HEX) {
    const body = token.slice(0, -TOKEN_MAC_BYTES * 2);
    return timingSafeEqualString(token.slice(-TOKEN_MAC_BYTES * 2), chainTokenMac(secret, email, body));
  }
  const salt = token.slice(0, TOKEN_SALT_BYTES * 2);
  return timingSafeEqualString(token.slice(TOKEN_SALT_BYTES * 2), tokenMac(secret, email, salt));
}

/** The chain of a chain token whose MAC holds and whose expiry is after `nowMs`, else null. */
function chainOf(secret: Uint8Array, email: string, token: string, nowMs: number): string | null {
  if (token.length !== CHAIN_TOKEN_HEX || !isTokenOf(secret, email, token)) return null;
  const expiryStart = (TOKEN_CHAIN_BYTES + TOKEN_SALT_BYTES) * 2;
  const expiresAtSeconds = Number.parseInt(token.slice(expiryStart, expiryStart + TOKEN_EXPIRY_BYTES * 2), 16);
  if (nowMs >= expiresAtSeconds * 1000) return null;
  return token.slice(0, TOKEN_CHAIN_BYTES * 2);
}

function invalidCode(attemptsLeft?: number): OcError {
  return new OcError('invalid_code', undefined, attemptsLeft === undefined ? undefined : { attemptsLeft });
}

function codeReplaced(): OcError {
  return new OcError('code_replaced', 'email code: a newer mail replaced this code, enter the code of the newest mail');
}

function codeDead(): OcError {
  return new OcError('code_dead', 'email code: this code can no longer be used, ask for a new code');
}

function linkElsewhere(): OcError {
  return new OcError('link_elsewhere', 'email code: this link signs in only in the browser that asked for the code; type the code instead');
}

function serviceHost(publicUrl: string): string {
  try {
    return new URL(publicUrl).host;
  } catch {
    throw new TypeError('email-code: publicUrl must be a URL');
  }
}

interface CodeMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/**
 * The mail's sign-in link: the sign-in page with the link's secret (never
 * the code) and the address in the fragment, which browsers never send to a
 * server (so no log holds it). It signs in only together with the start's
 * token, which only the browser that asked for the code keeps
 * (docs/protocol.md §6 "E-mail codes").
 */
function codeLink(publicUrl: string, email: string, link: string): string {
  const fragment = new URLSearchParams({ link, email });
  return `${new URL('/signin', publicUrl).href}#${fragment}`;
}

/**
 * docs/protocol.md §6 "E-mail codes": the mail says what the code is for and
 * when it expires, and the subject starts with the code, so it can be read
 * (and autofilled) from the notification without opening the mail. A link
 * signs in with one click in the browser that asked for the code.
 */
function composeCodeMail(
  code: string,
  linkSecret: string,
  email: string,
  brand: MailBrand,
  publicUrl: string,
  ttlMs: number,
  expiresAt: Date,
  locale: Locale,
): CodeMail {
  const t = translator(locale);
  const name = brand.name;
  const minutes = Math.max(1, Math.round(ttlMs / 60_000));
  const expires = t('code.expires', { minutes, ...formatUtcParts(expiresAt, locale) });
  const subject = t('code.subject', { code, name });
  const link = codeLink(publicUrl, email, linkSecret);
  const { text, html } = frameMail(brand, locale, publicUrl, {
    text: [
      t('code.intro', { name }),
      '',
      `    ${code}`,
      '',
      expires,
      t('code.enter', { name }),
      '',
      t('code.link'),
      link,
      '',
      t('code.ignore'),
      '',
    ],
    html: [
      `<p>${escapeHtml(t('code.intro', { name }))}</p>`,
      `<p style="font-size: 28px; font-weight: bold; letter-spacing: 4px; font-family: monospace">${code}</p>`,
      `<p>${escapeHtml(expires)} ${escapeHtml(t('code.enter', { name }))}</p>`,
      `<p>${escapeHtml(t('code.link'))}<br><a href="${escapeHtml(link)}">${escapeHtml(t('code.link_button', { name }))}</a></p>`,
      `<p>${escapeHtml(t('code.ignore'))}</p>`,
    ],
  });
  return { subject, text, html };
}

export function createEmailCodeService(options: EmailCodeServiceOptions): EmailCodeService {
  const { store, mailer, now, publicUrl } = options;
  // Programmer misuse throws at start (docs/architecture.md Errors).
  if (!(options.secret instanceof Uint8Array) || options.secret.length < MIN_SECRET_BYTES) {
    throw new TypeError(`email-code: the secret must hold at least ${MIN_SECRET_BYTES} bytes`);
  }
  const secret = options.secret;
  const ttlMs = positiveInteger('ttlMs', options.ttlMs ?? EMAIL_CODE_TTL_MS);
  const maxAttempts = positiveInteger('maxAttempts', options.maxAttempts ?? EMAIL_CODE_MAX_ATTEMPTS);
  serviceHost(publicUrl);
  const brand = mailBrandOf(options.brand, publicUrl);

  /**
   * The replaced codes a new start's row remembers: when `replacing` is the
   * token of the live code, that code's keyed hash and then its own list,
   * cut to {@link REPLACED_CODES_KEPT}; otherwise (a first start, any other
   * token) none, and a new chain begins.
   */
  async function replacedHashesOf(email: string, replacing: unknown): Promise<readonly string[]> {
    if (typeof replacing !== 'string' || !TOKEN_FORMAT.test(replacing) || !isTokenOf(secret, email, replacing)) return [];
    const record = await store.findEmailCode(email);
    if (record === null || now().getTime() >= record.expires_at) return [];
    if (!timingSafeEqualString(replacing, record.token)) return [];
    return [record.code_hash, ...record.replaced_code_hashes].slice(0, REPLACED_CODES_KEPT);
  }

  async function start(input: unknown, locale: Locale = 'en', replacing?: unknown): Promise<EmailCodeStarted> {
    const email = normalizeEmail(input, 'email');
    const code = generateEmailCode();
    const codeHash = hashEmailCode(secret, email, code);
    const linkSecret = randomBytes(LINK_BYTES).toString('base64url');
    const replacedCodeHashes = await replacedHashesOf(email, replacing);
    const createdAt = now().getTime();
    const expiresAt = createdAt + ttlMs;
    // A resend stays in the chain of the token it was asked with (the rate limits count its resends there).
    const chain = resendChainOf(email, replacing) ?? randomBytes(TOKEN_CHAIN_BYTES).toString('hex');
    const token = issueToken(secret, email, chain, expiresAt);
    // Stored before the mail goes out, so the code works the moment it arrives.
    await store.putEmailCode({
      email,
      code_hash: codeHash,
      token,
      expires_at: expiresAt,
      created_at: createdAt,
      replaced_code_hashes: replacedCodeHashes,
      link_hash: hashEmailLink(secret, email, linkSecret),
    });
    const mail = composeCodeMail(code, linkSecret, email, brand, publicUrl, ttlMs, new Date(expiresAt), locale);
    try {
      await mailer.send({ to: email, ...mail });
    } catch (error) {
      // The user never got this code, so it must not stay usable (nor guessable).
      // Conditional on the hash: a newer start that raced this one keeps its code.
      await store.deleteEmailCode(email, codeHash).catch(() => false);
      if (error instanceof OcError && error.code === 'mail_unavailable') throw error;
      throw new OcError('mail_unavailable', 'mail: the message could not be sent, try again later', { cause: error });
    }
    return { token, expiresAt: new Date(expiresAt).toISOString() };
  }

  async function verify(
    emailInput: unknown,
    codeInput: unknown,
    tokenInput?: unknown,
    beforeConsume?: (email: string) => Promise<void>,
  ): Promise<EmailCodeVerified> {
    const email = normalizeEmail(emailInput, 'email');
    // People copy "123 456" or "123-456" as often as "123456".
    const code = typeof codeInput === 'string' ? codeInput.replace(/[\s-]/g, '') : '';
    if (!CODE_FORMAT.test(code)) throw invalidCode();
    // The token is optional (docs/protocol.md §6 `token?`); when sent it must be one we could have issued.
    const token = tokenInput === undefined || tokenInput === null || tokenInput === '' ? undefined : tokenInput;
    if (token !== undefined && (typeof token !== 'string' || !TOKEN_FORMAT.test(token))) throw invalidCode();

    // From here on the work is the same whether or not a code is pending (see the file comment).
    const codeHash = hashEmailCode(secret, email, code);
    const ownToken = isTokenOf(secret, email, token ?? PLACEHOLDER.token) && token !== undefined;
    const record = await store.findEmailCode(email);
    const live = record !== null && now().getTime() < record.expires_at;
    const stored = live ? record : PLACEHOLDER;
    // Every comparison always runs (no short-circuit), against placeholders when no code is live.
    const tokenMatches = timingSafeEqualString(token ?? PLACEHOLDER.token, stored.token);
    const codeMatches = timingSafeEqualString(codeHash, stored.code_hash);
    const codeReplacedMatches = isReplacedCode(codeHash, live ? record.replaced_code_hashes : []);

    // The try counts against the code when it carries the code's own token,
    // against the code's tokenless budget when it carries none, and against
    // nothing otherwise: then the update matches no row, which costs the same
    // round trip as counting.
    const kind = token === undefined ? 'tokenless' : 'token';
    const countable = live && (token === undefined || (ownToken && tokenMatches));
    // Count this try before looking at the answer (see the file comment).
    const attempts = await store.incrementEmailCodeAttempts(email, countable ? stored.token : PLACEHOLDER.token, kind);
    // Only whoever started a code of this address holds a token of it, so only
    // they learn that its code is gone; everyone else gets invalid_code.
    const dead = (): OcError => (ownToken ? codeDead() : invalidCode());
    if (!countable || attempts === null) throw dead(); // none pending, expired, replaced, used, or not this code's token
    // Past the limit: refused whatever the code (the comparison above ran
    // only so that the work is the same). No delete: the count alone
    // keeps the code dead, and a try counted within the limit may be a right
    // one still on its way to consuming the code (parallel verifies).
    if (attempts > maxAttempts) throw dead();
    if (!codeMatches) {
      // The last allowed try of the token was wrong: say so now, not on the next try.
      // Only the token's holder, who started this code, learns how many tries remain,
      // and that the code typed is the one of an earlier mail that its resends replaced.
      if (attempts >= maxAttempts) throw dead();
      if (kind === 'token' && codeReplacedMatches) throw codeReplaced();
      throw invalidCode(kind === 'token' ? maxAttempts - attempts : undefined);
    }

    await beforeConsume?.(email);
    // Single use: only the verify whose delete removed the row has consumed
    // the code. A parallel verify of the same code, or a start that replaced
    // it since we read it, makes this false.
    if (!(await store.deleteEmailCode(email, stored.code_hash))) throw dead();
    return { email };
  }

  async function verifyLink(
    emailInput: unknown,
    linkInput: unknown,
    tokenInput?: unknown,
    beforeConsume?: (email: string) => Promise<void>,
  ): Promise<EmailCodeVerified> {
    const email = normalizeEmail(emailInput, 'email');
    // A link that is not one this service could have mailed is a dead link, asked of no store.
    if (typeof linkInput !== 'string' || !LINK_FORMAT.test(linkInput)) throw codeDead();
    // Without a well-formed token the link still gets its answer: it is the token that is wrong here.
    const token = typeof tokenInput === 'string' && TOKEN_FORMAT.test(tokenInput) ? tokenInput : PLACEHOLDER.token;
    const linkHash = hashEmailLink(secret, email, linkInput);
    const record = await store.findEmailCode(email);
    const live = record !== null && now().getTime() < record.expires_at && record.link_hash !== null;
    // Both comparisons always run, against placeholders when no code is live.
    const linkMatches = timingSafeEqualString(linkHash, live ? (record.link_hash ?? PLACEHOLDER.code_hash) : PLACEHOLDER.code_hash);
    const tokenMatches = timingSafeEqualString(token, live ? record.token : PLACEHOLDER.token);
    // Only the token's tries kill the code (the 5th wrong one): strangers' tokenless tries do not kill its link.
    if (!live || !linkMatches || record.attempts >= maxAttempts) throw codeDead();
    // The right link without its browser's token: nothing is counted, the code stays good for typing.
    if (!tokenMatches || token === PLACEHOLDER.token) throw linkElsewhere();
    await beforeConsume?.(email);
    // Single use, shared with the code: the delete succeeds for one of the link and any parallel verify.
    if (!(await store.deleteEmailCode(email, record.code_hash))) throw codeDead();
    return { email };
  }

  function resendChainOf(emailInput: unknown, tokenInput: unknown): string | null {
    let email: string;
    try {
      email = normalizeEmail(emailInput, 'email');
    } catch {
      return null;
    }
    if (typeof tokenInput !== 'string' || !TOKEN_FORMAT.test(tokenInput)) return null;
    return chainOf(secret, email, tokenInput, now().getTime());
  }

  return { start, verify, verifyLink, resendChainOf };
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** E-mail one-time codes (docs/protocol.md §6). */
    readonly emailCodes: EmailCodeService;
  }
}
