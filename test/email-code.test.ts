/**
 * The e-mail one-time code (docs/protocol.md §6, docs/api.md Limits) end to end:
 * codes travel through a real SMTP server on loopback and are stored in real
 * SQLite and PostgreSQL (test/support/databases.ts); time is a frozen clock.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OcError } from '../src/platform/errors.js';
import { createSmtpMailer, type Mailer } from '../src/platform/mail/index.js';
import {
  EMAIL_CODE_MAX_ATTEMPTS,
  EMAIL_CODE_TTL_MS,
  createEmailCodeService,
  generateEmailCode,
  hashEmailCode,
  hashEmailLink,
  type EmailCodeService,
} from '../src/features/email-code/email-code.js';
import type { Store } from '../src/store.js';
import { openTestStore, testEngines, type TestEngine, type TestStore } from './support/databases.js';
import { extractCode, startSmtpServer, type ReceivedMail, type TestSmtpServer } from './support/smtp-server.js';
import { ocFailure } from './support/errors.js';

const PUBLIC_URL = 'https://auth.example.com';
const FROM = 'oc-host <no-reply@auth.example.com>';
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
const SECRET = new Uint8Array(randomBytes(32));

function newAddress(): string {
  return `user-${randomBytes(6).toString('hex')}@example.com`;
}

async function expectInvalidCode(promise: Promise<unknown>): Promise<void> {
  const error = await ocFailure(promise);
  expect(error.code).toBe('invalid_code');
  expect(error.status).toBe(401);
}

async function expectCodeDead(promise: Promise<unknown>): Promise<void> {
  const error = await ocFailure(promise);
  expect(error.code).toBe('code_dead');
  expect(error.status).toBe(401);
  expect(error.detail).toMatch(/new code/);
}

function emailCodeSuite(engine: TestEngine): void {
  let testStore: TestStore;
  let store: Store;
  let smtp: TestSmtpServer;
  let mailer: Mailer;
  let clock = T0;
  let service: EmailCodeService;

  beforeAll(async () => {
    testStore = await openTestStore(engine);
    store = testStore.store;
    smtp = await startSmtpServer();
    mailer = createSmtpMailer({ smtpUrl: smtp.url, from: FROM, publicUrl: PUBLIC_URL, now: () => new Date(clock) });
    service = createEmailCodeService({ store, mailer, secret: SECRET, now: () => new Date(clock), publicUrl: PUBLIC_URL });
  });
  afterEach(() => {
    clock = T0;
    smtp.setMode('accept');
  });
  afterAll(async () => {
    await mailer?.close();
    await smtp?.close();
    await testStore?.dispose();
  });

  /** The service over the suite's store with some store methods replaced, to force an interleaving. */
  function serviceOverStore(overrides: Partial<Store>): EmailCodeService {
    const wrapped = new Proxy(store, {
      get(target, key) {
        if (Object.hasOwn(overrides, key)) return overrides[key as keyof Store];
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    return createEmailCodeService({ store: wrapped, mailer, secret: SECRET, now: () => new Date(clock), publicUrl: PUBLIC_URL });
  }

  /** The newest mail to `email`: `start` resolves only after the server accepted it. */
  function lastMailTo(email: string): ReceivedMail {
    const mails = smtp.messages().filter((mail) => mail.envelope.to.includes(email));
    const last = mails[mails.length - 1];
    if (!last) throw new Error(`no mail to ${email}`);
    return last;
  }

  async function startAndReadCode(email: string): Promise<{ code: string; token: string; mail: ReceivedMail }> {
    const { token } = await service.start(email);
    const mail = lastMailTo(email);
    return { code: extractCode(mail), token, mail };
  }

  function wrongCode(code: string): string {
    return code === '000000' ? '000001' : '000000';
  }

  it('mails a 6-digit code over SMTP that verifies, for the normalized address', async () => {
    const email = newAddress();
    const started = await service.start(`  ${email.toUpperCase()} `);
    expect(started.token).toMatch(/^[0-9a-f]{56}$/);
    expect(started.expiresAt).toBe(new Date(T0 + EMAIL_CODE_TTL_MS).toISOString());
    expect(started.expiresAt).toBe('2025-01-15T12:10:00.000Z');

    const mail = await smtp.waitForMessage((received) => received.envelope.to.includes(email));
    expect(mail.header('To')).toBe(email);
    const code = extractCode(mail);
    expect(code).toMatch(/^[0-9]{6}$/);

    await expect(service.verify(email.toUpperCase(), code, started.token)).resolves.toEqual({ email });
  });

  it("names a resend's chain for any unexpired token of the address, even one whose code a stranger's start replaced; none for forged, foreign, malformed or expired", async () => {
    const email = newAddress();
    const first = await startAndReadCode(email);
    const chain = service.resendChainOf(email.toUpperCase(), first.token);
    expect(chain).toMatch(/^[0-9a-f]{16}$/);
    // A stranger's start replaces the code, not the asking browser's right to a resend.
    const stranger = await startAndReadCode(email);
    expect(service.resendChainOf(email, first.token)).toBe(chain);
    expect(service.resendChainOf(email, stranger.token)).not.toBe(chain);
    // A resend asked with the first token stays in its chain.
    const { token: resent } = await service.start(email, 'en', first.token);
    expect(service.resendChainOf(email, resent)).toBe(chain);
    const forged = resent.slice(0, 16) + (resent[16] === '0' ? '1' : '0') + resent.slice(17);
    expect(service.resendChainOf(email, forged)).toBeNull();
    // A later expiry written into the token breaks its MAC.
    const extended = `${resent.slice(0, 32)}ffffffff${resent.slice(40)}`;
    expect(service.resendChainOf(email, extended)).toBeNull();
    expect(service.resendChainOf(`other-${email}`, resent)).toBeNull();
    for (const malformed of [undefined, 42, '', resent.toUpperCase(), `${resent}0`, resent.slice(0, 32)]) {
      expect(service.resendChainOf(email, malformed)).toBeNull();
    }
    expect(service.resendChainOf('not an address', resent)).toBeNull();
    clock = T0 + EMAIL_CODE_TTL_MS - 1000;
    expect(service.resendChainOf(email, resent)).toBe(chain);
    clock = T0 + EMAIL_CODE_TTL_MS;
    expect(service.resendChainOf(email, resent)).toBeNull(); // expired with its code
  });

  it('says in the mail what the code is for, when it expires, and to ignore it if unasked; text and HTML', async () => {
    const email = newAddress();
    const { code, mail } = await startAndReadCode(email);
    // The code leads the subject, readable (and autofilled) from the notification.
    expect(mail.subject).toBe(`${code} is your sign-in code for auth.example.com`);
    expect(mail.header('From')).toBe('"oc-host" <no-reply@auth.example.com>');
    expect(mail.header('Message-ID')).toMatch(/@auth\.example\.com>$/);
    expect(new Date(mail.header('Date') ?? '').getTime()).toBe(T0);
    expect(mail.text).toContain('sign in to auth.example.com');
    expect(mail.text).toContain('10 minutes');
    expect(mail.text).toMatch(/\(on Jan 15, 2025 at 12:10\sPM UTC\)/);
    expect(mail.text).toMatch(/did not ask for this code, ignore this e-mail/);
    expect(mail.html).toContain(`>${code}</p>`);
    expect(mail.html).toContain('10 minutes');
    expect(mail.html).toMatch(/did not ask for this code, ignore this e-mail/);
  });

  it('accepts the code until 10 minutes have passed, not at 10 minutes', async () => {
    const early = newAddress();
    const late = newAddress();
    const first = await startAndReadCode(early);
    const second = await startAndReadCode(late);

    clock = T0 + EMAIL_CODE_TTL_MS - 1;
    await expect(service.verify(early, first.code)).resolves.toEqual({ email: early });

    clock = T0 + EMAIL_CODE_TTL_MS;
    await expectInvalidCode(service.verify(late, second.code));
    // Whoever started it is told to ask for a new one.
    await expectCodeDead(service.verify(late, second.code, second.token));
  });

  it('is single use', async () => {
    const email = newAddress();
    const { code, token } = await startAndReadCode(email);
    await service.verify(email, code, token);
    await expectCodeDead(service.verify(email, code, token));
    await expectInvalidCode(service.verify(email, code));
    expect(await store.findEmailCode(email)).toBeNull();
  });

  it('allows the right code on the 5th try, with the token and without', async () => {
    for (const withToken of [true, false]) {
      const email = newAddress();
      const { code, token } = await startAndReadCode(email);
      for (let attempt = 1; attempt < EMAIL_CODE_MAX_ATTEMPTS; attempt += 1) {
        await expectInvalidCode(service.verify(email, wrongCode(code), withToken ? token : undefined));
      }
      await expect(service.verify(email, code, withToken ? token : undefined)).resolves.toEqual({ email });
    }
  });

  it('dies on the 5th wrong try with its token, which is told code_dead then and after', async () => {
    expect(EMAIL_CODE_MAX_ATTEMPTS).toBe(5);
    const email = newAddress();
    const { code, token } = await startAndReadCode(email);
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      await expectInvalidCode(service.verify(email, wrongCode(code), token));
    }
    expect((await store.findEmailCode(email))?.attempts).toBe(4);
    await expectCodeDead(service.verify(email, wrongCode(code), token));
    await expectCodeDead(service.verify(email, code, token));
    expect((await store.findEmailCode(email))?.attempts).toBe(6);
  });

  it('dies for tries without a token after 5 of them, always saying only invalid_code', async () => {
    const email = newAddress();
    const { code } = await startAndReadCode(email);
    for (let attempt = 1; attempt <= EMAIL_CODE_MAX_ATTEMPTS + 2; attempt += 1) {
      await expectInvalidCode(service.verify(email, wrongCode(code)));
    }
    await expectInvalidCode(service.verify(email, code));
    expect(await store.findEmailCode(email)).toMatchObject({ attempts: 0, tokenless_attempts: EMAIL_CODE_MAX_ATTEMPTS + 3 });
  });

  it("a stranger who knows only the address cannot use up the owner's tries", async () => {
    const email = newAddress();
    const { code, token } = await startAndReadCode(email);
    const otherAddressToken = (await service.start(newAddress())).token;
    // Guesses without a token, with a forged token, with another address's
    // token: none of them touches the tries of the browser that started.
    for (let attempt = 1; attempt <= 3 * EMAIL_CODE_MAX_ATTEMPTS; attempt += 1) {
      await expectInvalidCode(service.verify(email, wrongCode(code)));
      await expectInvalidCode(service.verify(email, wrongCode(code), randomBytes(16).toString('hex')));
      await expectInvalidCode(service.verify(email, code, randomBytes(16).toString('hex')));
      await expectInvalidCode(service.verify(email, code, otherAddressToken));
    }
    expect((await store.findEmailCode(email))?.attempts).toBe(0);
    await expectInvalidCode(service.verify(email, wrongCode(code), token));
    await expect(service.verify(email, code, token)).resolves.toEqual({ email });
  });

  it('does the same storage work for a verify whether or not a code is pending', async () => {
    const calls: string[] = [];
    const counting = new Proxy(store, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(key));
          return (value as (...inner: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const counted = createEmailCodeService({ store: counting, mailer, secret: SECRET, now: () => new Date(clock), publicUrl: PUBLIC_URL });
    const expired = newAddress();
    const old = await startAndReadCode(expired);
    clock = T0 + EMAIL_CODE_TTL_MS;
    const pending = newAddress();
    const { code, token } = await startAndReadCode(pending);
    const replaced = newAddress();
    const first = await startAndReadCode(replaced);
    await startAndReadCode(replaced);
    const callsOf = async (attempt: () => Promise<unknown>): Promise<string[]> => {
      calls.length = 0;
      await attempt().catch(() => undefined);
      return [...calls];
    };
    const same = ['findEmailCode', 'incrementEmailCodeAttempts'];
    // Without a token: pending (wrong code), never started, expired.
    expect(await callsOf(() => counted.verify(pending, wrongCode(code)))).toEqual(same);
    expect(await callsOf(() => counted.verify(newAddress(), wrongCode(code)))).toEqual(same);
    expect(await callsOf(() => counted.verify(expired, old.code))).toEqual(same);
    // With a token: its own pending code, a replaced code, a forged token.
    expect(await callsOf(() => counted.verify(pending, wrongCode(code), token))).toEqual(same);
    expect(await callsOf(() => counted.verify(replaced, first.code, first.token))).toEqual(same);
    expect(await callsOf(() => counted.verify(pending, code, randomBytes(16).toString('hex')))).toEqual(same);
    // Only a right code costs the delete that consumes it.
    expect(await callsOf(() => counted.verify(pending, code, token))).toEqual([...same, 'deleteEmailCode']);
  });

  it('keeps the limit under parallel guessing: only the first 5 tries are ever compared', async () => {
    const email = newAddress();
    const { code } = await startAndReadCode(email);
    // The worst interleaving, forced through a store wrapper: every verify
    // reads the live code (attempts 0) before any of them goes on; then they
    // count their tries strictly one after another, in the order sent. The
    // right guess is sent last. A verifier that trusted the count it read
    // would compare all ten guesses and let the right one through.
    const guesses = [
      ...Array.from({ length: 10 }, (_, index) => `00000${index}`)
        .filter((guess) => guess !== code)
        .slice(0, 9),
      code,
    ];
    const position = new AsyncLocalStorage<number>();
    let reads = 0;
    let releaseReads: () => void = () => {};
    const allRead = new Promise<void>((resolve) => (releaseReads = resolve));
    const counted = guesses.map(() => {
      let resolve: () => void = () => {};
      const promise = new Promise<void>((done) => (resolve = done));
      return { promise, resolve };
    });
    const waitAtMost = (promise: Promise<void>, ms: number): Promise<void> =>
      Promise.race([promise, new Promise<void>((resolve) => setTimeout(resolve, ms))]);
    const gated = serviceOverStore({
      findEmailCode: async (address: string) => {
        const record = await store.findEmailCode(address);
        reads += 1;
        if (reads === guesses.length) releaseReads();
        await waitAtMost(allRead, 2000);
        return record;
      },
      incrementEmailCodeAttempts: async (...args: Parameters<Store['incrementEmailCodeAttempts']>) => {
        const index = position.getStore() ?? 0;
        if (index > 0) await waitAtMost(counted[index - 1]?.promise ?? Promise.resolve(), 2000);
        try {
          return await store.incrementEmailCodeAttempts(...args);
        } finally {
          counted[index]?.resolve();
        }
      },
    });
    const results = await Promise.allSettled(guesses.map((guess, index) => position.run(index, () => gated.verify(email, guess))));
    expect(results.map((result) => result.status)).toEqual(guesses.map(() => 'rejected'));
    // Dead for good without a token: the right code fails afterwards too.
    await expectInvalidCode(service.verify(email, code));
    expect((await store.findEmailCode(email))?.tokenless_attempts).toBe(guesses.length + 1);
  });

  it('lets the newest code win: the older one fails', async () => {
    const email = newAddress();
    let older = await startAndReadCode(email);
    let newer = await startAndReadCode(email);
    // One chance in a million that both draws are equal; draw again then.
    while (newer.code === older.code) {
      older = newer;
      newer = await startAndReadCode(email);
    }
    await expectCodeDead(service.verify(email, older.code, older.token));
    await expectInvalidCode(service.verify(email, older.code));
    await expect(service.verify(email, newer.code, newer.token)).resolves.toEqual({ email });
  });

  it("tells the holder of a resend's token that the earlier mail's code was replaced, and no one else", async () => {
    const email = newAddress();
    let older = await startAndReadCode(email);
    let newer = await service.start(email, 'en', older.token);
    let newerCode = extractCode(lastMailTo(email));
    while (newerCode === older.code) {
      older = { ...older, code: newerCode, token: newer.token };
      newer = await service.start(email, 'en', older.token);
      newerCode = extractCode(lastMailTo(email));
    }
    const replaced = await ocFailure(service.verify(email, older.code, newer.token));
    expect(replaced.code).toBe('code_replaced');
    expect(replaced.status).toBe(401);
    // Without the token, or with a start that replaced nothing, it is a wrong code like any other.
    await expectInvalidCode(service.verify(email, older.code));
    const plain = await startAndReadCode(email);
    const wrong = plain.code === older.code ? wrongCode(plain.code) : older.code;
    expect((await ocFailure(service.verify(email, wrong, plain.token))).code).toBe('invalid_code');
    // The try counted; the newest code still works.
    expect(await store.findEmailCode(email)).toMatchObject({ attempts: 1 });
    await expect(service.verify(email, plain.code, plain.token)).resolves.toEqual({ email });
  });

  /**
   * A start and then `resends` resends, each carrying the token of the code
   * before it: every mail's code and token, oldest first. Codes are drawn at
   * random, so two mails of a chain may share a code (about once in 30,000
   * chains of 8); the chain is then started again on a new address, as
   * nothing could tell those two codes apart.
   */
  async function resendChain(resends: number): Promise<{ email: string; mails: Array<{ code: string; token: string }> }> {
    for (;;) {
      const email = newAddress();
      const first = await startAndReadCode(email);
      const mails: Array<{ code: string; token: string }> = [{ code: first.code, token: first.token }];
      for (let resend = 0; resend < resends; resend += 1) {
        const { token } = await service.start(email, 'en', mails[mails.length - 1]?.token);
        mails.push({ code: extractCode(lastMailTo(email)), token });
      }
      if (new Set(mails.map((mail) => mail.code)).size === mails.length) return { email, mails };
    }
  }

  it('after 3 resends, the code of each earlier mail typed with the newest token is code_replaced, and each try counts', async () => {
    const { email, mails } = await resendChain(3);
    const newest = mails[3]!;
    // The row remembers the keyed hashes of the replaced codes, newest first, never a code.
    expect((await store.findEmailCode(email))?.replaced_code_hashes).toEqual(
      [mails[2]!, mails[1]!, mails[0]!].map((mail) => hashEmailCode(SECRET, email, mail.code)),
    );
    for (const [index, earlier] of mails.slice(0, 3).entries()) {
      const replaced = await ocFailure(service.verify(email, earlier.code, newest.token));
      expect(replaced.code).toBe('code_replaced');
      expect(replaced.status).toBe(401);
      expect(await store.findEmailCode(email)).toMatchObject({ attempts: index + 1 });
    }
    // Without the token they are wrong codes like any other; the earlier tokens' codes are dead.
    await expectInvalidCode(service.verify(email, mails[0]!.code));
    await expectCodeDead(service.verify(email, mails[0]!.code, mails[0]!.token));
    // The newest code still signs in, on the 4th try of its token.
    await expect(service.verify(email, newest.code, newest.token)).resolves.toEqual({ email });
  });

  it('an ordinary start, or a resend with a dead token, begins a new chain: the earlier codes are then wrong codes', async () => {
    const { email, mails } = await resendChain(2);
    const plain = await startAndReadCode(email);
    expect((await store.findEmailCode(email))?.replaced_code_hashes).toEqual([]);
    // The token of a code that is no longer live (here replaced) makes an ordinary start too.
    const { token: deadTokenStart } = await service.start(email, 'en', mails[2]!.token);
    const fresh = { code: extractCode(lastMailTo(email)), token: deadTokenStart };
    expect((await store.findEmailCode(email))?.replaced_code_hashes).toEqual([]);
    let tries = 0;
    for (const earlier of [...mails, plain]) {
      if (earlier.code === fresh.code) continue; // one chance in a million: it would sign in
      const refused = await ocFailure(service.verify(email, earlier.code, fresh.token));
      expect(refused.code).toBe('invalid_code');
      tries += 1;
      expect(await store.findEmailCode(email)).toMatchObject({ attempts: tries });
    }
    // A resend from that start remembers only the start's code.
    const { token: resentToken } = await service.start(email, 'en', fresh.token);
    expect((await store.findEmailCode(email))?.replaced_code_hashes).toEqual([hashEmailCode(SECRET, email, fresh.code)]);
    const resent = extractCode(lastMailTo(email));
    await expect(service.verify(email, resent, resentToken)).resolves.toEqual({ email });
  });

  it('remembers the codes of the last 5 mails a chain replaced, no more: after 7 resends the 2 oldest are wrong codes', async () => {
    const { email, mails } = await resendChain(7);
    const newest = mails[7]!;
    const kept = mails.slice(2, 7).reverse();
    expect((await store.findEmailCode(email))?.replaced_code_hashes).toEqual(kept.map((mail) => hashEmailCode(SECRET, email, mail.code)));
    // Room for more than 5 tries, so that all 7 earlier codes can be typed.
    const roomy = createEmailCodeService({
      store,
      mailer,
      secret: SECRET,
      now: () => new Date(clock),
      publicUrl: PUBLIC_URL,
      maxAttempts: 10,
    });
    const answers = [];
    for (const earlier of mails.slice(0, 7)) answers.push((await ocFailure(roomy.verify(email, earlier.code, newest.token))).code);
    expect(answers).toEqual([
      'invalid_code',
      'invalid_code',
      'code_replaced',
      'code_replaced',
      'code_replaced',
      'code_replaced',
      'code_replaced',
    ]);
    expect(await store.findEmailCode(email)).toMatchObject({ attempts: 7 });
    await expect(roomy.verify(email, newest.code, newest.token)).resolves.toEqual({ email });
  });

  it('keeps the tries limit for replaced codes: the 5th wrong try is code_dead even when it is a replaced code', async () => {
    const { email, mails } = await resendChain(1);
    const [older, newer] = [mails[0]!, mails[1]!];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      expect((await ocFailure(service.verify(email, older.code, newer.token))).code).toBe('code_replaced');
    }
    await expectCodeDead(service.verify(email, older.code, newer.token));
    await expectCodeDead(service.verify(email, newer.code, newer.token));
  });

  /** The secret of the mail's sign-in link (`/signin#link=…&email=…`). */
  function linkSecretOf(mail: ReceivedMail): string {
    const found = /https:\/\/auth\.example\.com\/signin#(\S+)/.exec(mail.text ?? '');
    if (!found) throw new Error('no sign-in link in the mail');
    return new URLSearchParams(found[1]).get('link') ?? '';
  }

  it('puts a sign-in link in the mail with a secret of its own and the address in its fragment only, never the code; stores the secret only as a keyed hash', async () => {
    const email = newAddress();
    const { code, mail } = await startAndReadCode(email);
    const secret = linkSecretOf(mail);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const link = `https://auth.example.com/signin#${new URLSearchParams({ link: secret, email })}`;
    expect(mail.text).toContain(`\n${link}\n`);
    expect(mail.html).toContain(`href="${link.replace(/&/g, '&amp;')}"`);
    expect(new URL(link).search).toBe('');
    // The code is shown for typing, but the link does not carry it.
    expect(new URL(link).hash).not.toContain(code);
    const record = await store.findEmailCode(email);
    expect(record?.link_hash).toBe(hashEmailLink(SECRET, email, secret));
    expect(record?.link_hash).not.toContain(secret);
    // Every start draws a new secret.
    const again = await startAndReadCode(email);
    expect(linkSecretOf(again.mail)).not.toBe(secret);
  });

  it("signs in by the mail's link only with the start's token: alone or with another start's token it is link_elsewhere, counts nothing and leaves the code usable", async () => {
    const email = newAddress();
    const { code, token, mail } = await startAndReadCode(email);
    const link = linkSecretOf(mail);
    const elsewhere = async (promise: Promise<unknown>) => {
      const error = await ocFailure(promise);
      expect(error.code).toBe('link_elsewhere');
      expect(error.status).toBe(401);
    };
    const otherAddress = await startAndReadCode(newAddress());
    for (const wrongToken of [undefined, '', 'f'.repeat(56), otherAddress.token, token.toUpperCase(), 42]) {
      await elsewhere(service.verifyLink(email, link, wrongToken));
    }
    expect(await store.findEmailCode(email)).toMatchObject({ attempts: 0, tokenless_attempts: 0 });
    // The code still works for typing, where the link did not.
    await expect(service.verify(email, code, token)).resolves.toEqual({ email });
    // And the link with the right token signs in, once.
    const next = await startAndReadCode(email);
    await expect(service.verifyLink(email.toUpperCase(), linkSecretOf(next.mail), next.token)).resolves.toEqual({ email });
    await expectCodeDead(service.verifyLink(email, linkSecretOf(next.mail), next.token));
    await expectCodeDead(service.verify(email, next.code, next.token));
  });

  it("a link that is not the live code's is code_dead: replaced, expired, tries spent, forged; with or without the token", async () => {
    const email = newAddress();
    const first = await startAndReadCode(email);
    const second = await startAndReadCode(email);
    // The first mail's link, with its own token or the newest: a newer start replaced it.
    await expectCodeDead(service.verifyLink(email, linkSecretOf(first.mail), first.token));
    await expectCodeDead(service.verifyLink(email, linkSecretOf(first.mail), second.token));
    // A made-up link, and a malformed one.
    await expectCodeDead(service.verifyLink(email, randomBytes(32).toString('base64url'), second.token));
    await expectCodeDead(service.verifyLink(email, 'short', second.token));
    await expectCodeDead(service.verifyLink(email, 42, second.token));
    // Another address's link does not sign in here.
    const other = newAddress();
    const theirs = await startAndReadCode(other);
    await expectCodeDead(service.verifyLink(email, linkSecretOf(theirs.mail), second.token));
    // Five wrong tries with the token kill the link with the code; strangers' tokenless tries do not.
    const third = await startAndReadCode(email);
    for (let i = 0; i < EMAIL_CODE_MAX_ATTEMPTS; i++) await ocFailure(service.verify(email, wrongCode(third.code)));
    for (let i = 0; i < EMAIL_CODE_MAX_ATTEMPTS - 1; i++) await ocFailure(service.verify(email, wrongCode(third.code), third.token));
    expect(await store.findEmailCode(email)).toMatchObject({
      attempts: EMAIL_CODE_MAX_ATTEMPTS - 1,
      tokenless_attempts: EMAIL_CODE_MAX_ATTEMPTS,
    });
    await expect(service.verifyLink(email, linkSecretOf(third.mail), third.token)).resolves.toEqual({ email });
    const fifth = await startAndReadCode(email);
    for (let i = 0; i < EMAIL_CODE_MAX_ATTEMPTS; i++) await ocFailure(service.verify(email, wrongCode(fifth.code), fifth.token));
    await expectCodeDead(service.verifyLink(email, linkSecretOf(fifth.mail), fifth.token));
    // Expired: usable until 10 minutes, not at 10 minutes.
    const sixth = await startAndReadCode(email);
    clock = T0 + EMAIL_CODE_TTL_MS;
    await expectCodeDead(service.verifyLink(email, linkSecretOf(sixth.mail), sixth.token));
    await expect(service.verifyLink(other, linkSecretOf(theirs.mail), theirs.token)).rejects.toMatchObject({ code: 'code_dead' });
  });

  it('binds a verify to its start when the token is given', async () => {
    const email = newAddress();
    const older = await startAndReadCode(email);
    const newer = await startAndReadCode(email);
    await expectInvalidCode(service.verify(email, newer.code, 'f'.repeat(32)));
    // The older start's token is this address's: its holder learns that its code is gone.
    await expectCodeDead(service.verify(email, newer.code, older.token));
    await expectInvalidCode(service.verify(email, newer.code, 'not-a-token'));
    await expectInvalidCode(service.verify(email, newer.code, 12345));
    // A token that is not the code's own counts against nothing; the right one still works.
    expect(await store.findEmailCode(email)).toMatchObject({ attempts: 0, tokenless_attempts: 0 });
    await expect(service.verify(email, newer.code, newer.token)).resolves.toEqual({ email });
  });

  it('lets exactly one of several parallel verifies of the right code succeed', async () => {
    const email = newAddress();
    const { code, token } = await startAndReadCode(email);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) => service.verify(email, code, index % 2 === 0 ? token : undefined)),
    );
    const successes = results.filter((result) => result.status === 'fulfilled');
    expect(successes).toHaveLength(1);
    results.forEach((result, index) => {
      // The losers with the token are told the code is used up; those without it only that it failed.
      if (result.status === 'rejected') expect((result.reason as OcError).code).toBe(index % 2 === 0 ? 'code_dead' : 'invalid_code');
    });
  });

  it('a try past the limit does not take the code from a right try counted within it', async () => {
    const email = newAddress();
    const { code } = await startAndReadCode(email);
    // Every try is counted before any goes on; then the tries past the limit
    // finish first, and the ones within it only after them.
    const tries = EMAIL_CODE_MAX_ATTEMPTS + 3;
    let reached = 0;
    let releaseCounts: () => void = () => {};
    const allCounted = new Promise<void>((resolve) => (releaseCounts = resolve));
    let releaseLate: () => void = () => {};
    const lateDone = new Promise<void>((resolve) => (releaseLate = resolve));
    let lateLeft = tries - EMAIL_CODE_MAX_ATTEMPTS;
    const gated = serviceOverStore({
      incrementEmailCodeAttempts: async (...args: Parameters<Store['incrementEmailCodeAttempts']>) => {
        const attempts = await store.incrementEmailCodeAttempts(...args);
        reached += 1;
        if (reached === tries) releaseCounts();
        await allCounted;
        if (attempts !== null && attempts <= EMAIL_CODE_MAX_ATTEMPTS) {
          await lateDone;
        } else {
          setTimeout(() => {
            lateLeft -= 1;
            if (lateLeft === 0) releaseLate();
          }, 20);
        }
        return attempts;
      },
    });
    const results = await Promise.allSettled(Array.from({ length: tries }, () => gated.verify(email, code)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(await store.findEmailCode(email)).toBeNull();
  });

  it('refuses with invalid_code when no code was started', async () => {
    await expectInvalidCode(service.verify(newAddress(), '123456'));
  });

  it('refuses a malformed code with invalid_code without counting a try', async () => {
    const email = newAddress();
    const { code } = await startAndReadCode(email);
    for (const malformed of ['12345', '1234567', 'abcdef', '12 456', '１２３４５６', '', 123456, null, undefined]) {
      await expectInvalidCode(service.verify(email, malformed));
    }
    expect(await store.findEmailCode(email)).toMatchObject({ attempts: 0, tokenless_attempts: 0 });
    // Surrounding white space of a pasted code is forgiven.
    await expect(service.verify(email, ` ${code}\n`)).resolves.toEqual({ email });
  });

  it('refuses a malformed address with bad_request on start and verify, sending nothing', async () => {
    const before = smtp.messages().length;
    for (const bad of ['not-an-address', 'a@b', 'x\r\nBcc: victim@example.com@example.com', 42]) {
      const started = await ocFailure(service.start(bad));
      expect(started.code).toBe('bad_request');
      expect(started.detail).toMatch(/^email: /);
      const verified = await ocFailure(service.verify(bad, '123456'));
      expect(verified.code).toBe('bad_request');
    }
    expect(smtp.messages()).toHaveLength(before);
  });

  it('stores only a keyed hash, bound to the address', async () => {
    const email = newAddress();
    const { code, token } = await startAndReadCode(email);
    const record = await store.findEmailCode(email);
    expect(record).not.toBeNull();
    expect(record?.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(record?.code_hash).not.toContain(code);
    expect(record?.code_hash).toBe(hashEmailCode(SECRET, email, code));
    expect(record?.token).toBe(token);
    expect(record?.expires_at).toBe(T0 + EMAIL_CODE_TTL_MS);
    expect(record?.attempts).toBe(0);

    // The same code for another address, or under another secret, hashes differently.
    expect(hashEmailCode(SECRET, newAddress(), code)).not.toBe(record?.code_hash);
    expect(hashEmailCode(new Uint8Array(randomBytes(32)), email, code)).not.toBe(record?.code_hash);

    // A hash copied to another address's row matches no code there.
    const other = newAddress();
    await store.putEmailCode({
      email: other,
      code_hash: record?.code_hash ?? '',
      token: record?.token ?? '',
      expires_at: T0 + EMAIL_CODE_TTL_MS,
      created_at: T0,
    });
    await expectInvalidCode(service.verify(other, code));
  });

  it('throws mail_unavailable and leaves no code when the server refuses the mail', async () => {
    const email = newAddress();
    smtp.setMode('reject-rcpt');
    const error = await ocFailure(service.start(email));
    expect(error.code).toBe('mail_unavailable');
    expect(error.status).toBe(503);
    expect(await store.findEmailCode(email)).toBeNull();
  });

  it('throws mail_unavailable and leaves no code when the SMTP server is down', async () => {
    const down = await startSmtpServer();
    await down.stop();
    const downMailer = createSmtpMailer({ smtpUrl: down.url, from: FROM, publicUrl: PUBLIC_URL });
    const downService = createEmailCodeService({
      store,
      mailer: downMailer,
      secret: SECRET,
      now: () => new Date(clock),
      publicUrl: PUBLIC_URL,
    });
    try {
      const email = newAddress();
      const error = await ocFailure(downService.start(email));
      expect(error.code).toBe('mail_unavailable');
      expect(error.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
      expect(await store.findEmailCode(email)).toBeNull();
    } finally {
      await downMailer.close();
    }
  });

  it('answers start the same way for any address (no enumeration)', async () => {
    const known = newAddress();
    await startAndReadCode(known);
    const again = await service.start(known);
    const unknown = await service.start(newAddress());
    expect(Object.keys(again).sort()).toEqual(Object.keys(unknown).sort());
    expect(again.expiresAt).toBe(unknown.expiresAt);
  });
}

for (const { engine, skipReason } of await testEngines()) {
  describe.skipIf(skipReason !== undefined)(`e-mail codes on ${engine}`, () => emailCodeSuite(engine));
}

describe('e-mail code parameters', () => {
  it('draws zero-padded 6-digit codes, leading zeros included', () => {
    const codes = Array.from({ length: 5000 }, () => generateEmailCode());
    expect(codes.every((code) => /^[0-9]{6}$/.test(code))).toBe(true);
    // P(no leading zero in 5000 uniform draws) = 0.9^5000: never.
    expect(codes.some((code) => code.startsWith('0'))).toBe(true);
    expect(new Set(codes).size).toBeGreaterThan(4900);
  });

  it('refuses a short secret and bad limits at creation', () => {
    const base = {
      store: {} as Store,
      mailer: { send: async () => {}, close: async () => {} },
      now: () => new Date(T0),
      publicUrl: PUBLIC_URL,
    };
    expect(() => createEmailCodeService({ ...base, secret: new Uint8Array(16) })).toThrow(/at least 32 bytes/);
    expect(() => createEmailCodeService({ ...base, secret: SECRET, ttlMs: 0 })).toThrow(/ttlMs/);
    expect(() => createEmailCodeService({ ...base, secret: SECRET, maxAttempts: 1.5 })).toThrow(/maxAttempts/);
    expect(() => createEmailCodeService({ ...base, secret: SECRET, publicUrl: 'nope' })).toThrow(/publicUrl/);
  });
});
