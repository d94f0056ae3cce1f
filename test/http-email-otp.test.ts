/**
 * E-mail code sign-in through HTTP with the code read from a real SMTP
 * server on loopback: the same cookie and roster behaviour as BIP-322, on
 * SQLite and PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { extractCode, startSmtpServer } from './support/smtp-server.js';
import { testApp } from './support/app.js';
import { Browser, newWallet, type Reply } from './support/auth-client.js';
import { expectError, forEachEngine, useAuthHarness, useSmtpServer } from './support/auth-harness.js';
import type { TestEngine } from './support/databases.js';

function emailOtpSuite(engine: TestEngine): void {
  const smtp = useSmtpServer();
  let app: FastifyInstance;

  useAuthHarness(
    engine,
    (_harness, built) => {
      app = built;
    },
    () => ({ SMTP_URL: smtp.url, MAIL_FROM: 'oc-host <no-reply@localhost>' }),
  );

  /** Starts a code (a resend with `token`) and reads it from the mail. */
  async function codeFor(
    browser: Browser,
    email: string,
    token?: string,
  ): Promise<{ code: string; token: string; fragment: URLSearchParams }> {
    const before = smtp.messages().length;
    const started = await browser.post('/api/auth/email-otp/start', token === undefined ? { email } : { email, token });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ ok: true, token: expect.any(String), expiresAt: expect.any(String) });
    const mail = await smtp.waitForMessage(
      (message) =>
        message.envelope.to.includes(email.toLowerCase()) &&
        smtp.messages().indexOf(message) >= before &&
        (message.subject ?? '').includes('sign-in code'),
      5000,
    );
    const link = /https?:\/\/\S+\/signin#(\S+)/.exec(mail.text ?? '');
    expect(link).not.toBeNull();
    return { code: extractCode(mail), token: started.body.token, fragment: new URLSearchParams(link![1]) };
  }

  describe('e-mail code sign-in', () => {
    it('signs in with the mailed code and sets the same cookie as the other paths', async () => {
      const browser = new Browser(app);
      const { code, token } = await codeFor(browser, 'Carol@Example.org');
      const verified = await browser.post('/api/auth/email-otp/verify', { email: 'carol@example.org', code, token });
      expect(verified.status).toBe(200);
      expect(verified.body.ok).toBe(true);
      expect(verified.body.account.kind).toBe('federated');
      expect(verified.body.account.display_identity).toEqual({ kind: 'email', value: 'carol@example.org' });
      expect(verified.setCookies[0]).toMatch(/^oc_session=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=2592000$/);
      const claims = decodeJwt(verified.body.token);
      // The method in the host's words and in RFC 8176's (docs/protocol.md §3).
      expect(claims.signing_method).toBe('email_otp');
      expect(claims.amr).toEqual(['otp']);
      // The JWT never carries an e-mail address (docs/protocol.md §3).
      expect(JSON.stringify(claims)).not.toContain('carol@example.org');
      const me = await browser.me();
      expect(me.body.account.did_oc).toBe(verified.body.account.did_oc);
    });

    it('a second sign-in of the same address lands in the same account', async () => {
      const first = new Browser(app);
      const one = await codeFor(first, 'dave@example.org');
      const a = await first.post('/api/auth/email-otp/verify', { email: 'dave@example.org', code: one.code });
      const second = new Browser(app);
      const two = await codeFor(second, 'dave@example.org');
      const b = await second.post('/api/auth/email-otp/verify', { email: 'dave@example.org', code: two.code });
      expect(b.body.account.did_oc).toBe(a.body.account.did_oc);
    });

    it('add=1 puts the e-mail account into the roster of a BIP-322 session', async () => {
      const browser = new Browser(app);
      const btc = await browser.signIn(newWallet());
      const { code } = await codeFor(browser, 'erin@example.org');
      const added = await browser.post('/api/auth/email-otp/verify?add=1', { email: 'erin@example.org', code });
      expect(added.status).toBe(200);
      const me = await browser.me();
      expect(me.body.account.did_oc).toBe(added.body.account.did_oc);
      expect(me.body.roster.map((entry: { did_oc: string }) => entry.did_oc)).toEqual([btc.body.account.did_oc]);
    });

    it('a wrong code is 401 invalid_code, and the code dies after five wrong tries', async () => {
      const browser = new Browser(app);
      const { code } = await codeFor(browser, 'frank@example.org');
      const wrong = code === '000000' ? '111111' : '000000';
      for (let attempt = 0; attempt < 5; attempt++) {
        const reply = await browser.post('/api/auth/email-otp/verify', { email: 'frank@example.org', code: wrong });
        expect(reply.status).toBe(401);
        expect(reply.body).toMatchObject({ ok: false, error: 'invalid_code', reason: 'invalid_code' });
      }
      const late = await browser.post('/api/auth/email-otp/verify', { email: 'frank@example.org', code });
      expect(late.status).toBe(401);
      expect(browser.cookie).toBeUndefined();
    });

    it('a code is single use', async () => {
      const browser = new Browser(app);
      const { code } = await codeFor(browser, 'gina@example.org');
      expect((await browser.post('/api/auth/email-otp/verify', { email: 'gina@example.org', code })).status).toBe(200);
      expect((await new Browser(app).post('/api/auth/email-otp/verify', { email: 'gina@example.org', code })).status).toBe(401);
    });

    it('answers the same for an address with or without an account (no enumeration)', async () => {
      const browser = new Browser(app);
      const known = await browser.post('/api/auth/email-otp/start', { email: 'carol@example.org' });
      const unknown = await browser.post('/api/auth/email-otp/start', { email: 'nobody-here@example.org' });
      expect(Object.keys(known.body).sort()).toEqual(Object.keys(unknown.body).sort());
      expect(known.status).toBe(unknown.status);
    });

    it('bad input: malformed address 400, missing code 400, cross-site 403', async () => {
      const browser = new Browser(app);
      expect((await browser.post('/api/auth/email-otp/start', { email: 'not-an-address' })).body.error).toBe('bad_request');
      expect((await browser.post('/api/auth/email-otp/verify', { email: 'a@example.org' })).status).toBe(400);
      for (const token of ['f'.repeat(129), 42, null]) {
        expectError(await browser.post('/api/auth/email-otp/start', { email: 'a@example.org', token }), 400, 'bad_request');
      }
      const evil = new Browser(app, 'https://evil.test');
      const crossSite = await evil.post('/api/auth/email-otp/start', { email: 'a@example.org' });
      expect(crossSite.status).toBe(403);
      expect(crossSite.body.error).toBe('cross_site');
    });

    it('SMTP down: 503 mail_unavailable', async () => {
      const down = await startSmtpServer();
      const downApp = await testApp({ SMTP_URL: down.url });
      try {
        await down.stop();
        const browser = new Browser(downApp);
        const reply = await browser.post('/api/auth/email-otp/start', { email: 'hank@example.org' });
        expect(reply.status).toBe(503);
        expect(reply.body.error).toBe('mail_unavailable');
      } finally {
        await downApp.close();
        await down.close();
      }
    });
  });

  describe('e-mail code tries belong to the browser that started the code', () => {
    const verify = (browser: Browser, body: Record<string, unknown>): Promise<Reply> => browser.post('/api/auth/email-otp/verify', body);

    it("a stranger who knows only the address cannot use up the owner's tries", async () => {
      const email = 'ivy@example.org';
      const owner = new Browser(app);
      const { code, token } = await codeFor(owner, email);
      const wrong = code === '000000' ? '111111' : '000000';
      const stranger = new Browser(app);
      const strangersToken = (await stranger.post('/api/auth/email-otp/start', { email: 'stranger@example.org' })).body.token as string;
      for (let attempt = 0; attempt < 10; attempt++) {
        expectError(await verify(stranger, { email, code: wrong }), 401, 'invalid_code');
        expectError(await verify(stranger, { email, code: wrong, token: randomBytes(16).toString('hex') }), 401, 'invalid_code');
        expectError(await verify(stranger, { email, code: wrong, token: strangersToken }), 401, 'invalid_code');
      }
      // The owner's own four wrong tries are still allowed, and the fifth is the right one.
      for (let attempt = 0; attempt < 4; attempt++) expectError(await verify(owner, { email, code: wrong, token }), 401, 'invalid_code');
      const verified = await verify(owner, { email, code, token });
      expect(verified.status).toBe(200);
      expect(verified.body.account.display_identity).toEqual({ kind: 'email', value: email });
    });

    it("after a resend, the earlier mail's code is 401 code_replaced to the holder of the resend's token, and invalid_code to anyone else", async () => {
      const email = 'kate@example.org';
      const browser = new Browser(app);
      const older = await codeFor(browser, email);
      const newer = await codeFor(browser, email, older.token);
      // One chance in a million that the codes are equal: then there is nothing to tell apart.
      if (newer.code === older.code) return;
      const replaced = await verify(browser, { email, code: older.code, token: newer.token });
      expectError(replaced, 401, 'code_replaced');
      expect(replaced.body.detail).toMatch(/newer mail/);
      expectError(await verify(new Browser(app), { email, code: older.code }), 401, 'invalid_code');
      expectError(await verify(new Browser(app), { email, code: older.code, token: randomBytes(16).toString('hex') }), 401, 'invalid_code');
      expect((await verify(browser, { email, code: newer.code, token: newer.token })).status).toBe(200);
    });

    it("after two resends, the first mail's code is still 401 code_replaced with the newest token", async () => {
      const email = 'lena@example.org';
      const browser = new Browser(app);
      const first = await codeFor(browser, email);
      const second = await codeFor(browser, email, first.token);
      const third = await codeFor(browser, email, second.token);
      // Rarely two mails share a code: then there is nothing to tell apart.
      if (new Set([first.code, second.code, third.code]).size < 3) return;
      for (const earlier of [first, second]) {
        const replaced = await verify(browser, { email, code: earlier.code, token: third.token });
        expectError(replaced, 401, 'code_replaced');
      }
      expectError(await verify(new Browser(app), { email, code: first.code }), 401, 'invalid_code');
      // A new start without the token begins afresh: the earlier codes are wrong codes then.
      const fresh = await codeFor(browser, email);
      if (fresh.code !== first.code) {
        const refused = await verify(browser, { email, code: first.code, token: fresh.token });
        expectError(refused, 401, 'invalid_code');
        expect(refused.body.attempts_left).toBe(4);
      }
      expect((await verify(browser, { email, code: fresh.code, token: fresh.token })).status).toBe(200);
    });

    it('the browser that started the code is told code_dead once its tries are spent or a newer code replaced it', async () => {
      const email = 'jack@example.org';
      const browser = new Browser(app);
      const older = await codeFor(browser, email);
      const wrong = older.code === '000000' ? '111111' : '000000';
      for (let attempt = 0; attempt < 4; attempt++) {
        const refused = await verify(browser, { email, code: wrong, token: older.token });
        expectError(refused, 401, 'invalid_code');
        // The token's holder learns how many tries remain.
        expect(refused.body.attempts_left).toBe(4 - attempt);
      }
      const fifth = await verify(browser, { email, code: wrong, token: older.token });
      expectError(fifth, 401, 'code_dead');
      expect(fifth.body.detail).toMatch(/ask for a new code/);
      expectError(await verify(browser, { email, code: older.code, token: older.token }), 401, 'code_dead');

      const newer = await codeFor(browser, email);
      expectError(await verify(browser, { email, code: older.code, token: older.token }), 401, 'code_dead');
      // Typed as people copy it: "123 456" or "123-456".
      const spaced = `${newer.code.slice(0, 3)} ${newer.code.slice(3)}`;
      expect((await verify(browser, { email, code: spaced, token: newer.token })).status).toBe(200);
      // Used: the same token is told so too.
      expectError(await verify(browser, { email, code: newer.code, token: newer.token }), 401, 'code_dead');
      expect(browser.cookie).toBeDefined();
    });

    it('a resend (a start with the token of the live code) mails a new code and kills the older one', async () => {
      const email = 'kate@example.org';
      const browser = new Browser(app);
      const older = await codeFor(browser, email);
      const newer = await codeFor(browser, email, older.token);
      expect(newer.token).not.toBe(older.token);
      expectError(await verify(browser, { email, code: older.code, token: older.token }), 401, 'code_dead');
      expect((await verify(browser, { email, code: newer.code, token: newer.token })).status).toBe(200);
    });

    it('without a token, no code, a wrong code and a dead code all answer the same invalid_code', async () => {
      const email = 'kim@example.org';
      const stranger = new Browser(app);
      const before = await verify(stranger, { email, code: '123456' });
      const { code } = await codeFor(new Browser(app), email);
      const wrong = code === '000000' ? '111111' : '000000';
      const pending = await verify(stranger, { email, code: wrong });
      for (let attempt = 0; attempt < 5; attempt++) await verify(stranger, { email, code: wrong });
      const dead = await verify(stranger, { email, code });
      for (const reply of [before, pending, dead]) {
        expectError(reply, 401, 'invalid_code');
        expect(reply.body).toEqual({ ok: false, error: 'invalid_code', reason: 'invalid_code' });
      }
    });
  });

  describe("the mail's sign-in link signs in only in the browser that asked (docs/protocol.md §6)", () => {
    const useLink = (browser: Browser, body: Record<string, unknown>, query = ''): Promise<Reply> =>
      browser.post(`/api/auth/email-otp/link${query}`, body);

    it('a link read by anyone else (a mail scanner, a forwarded mail) signs in nowhere and leaves the code to its owner', async () => {
      const email = 'lena@example.org';
      const owner = new Browser(app);
      const { code, token, fragment } = await codeFor(owner, email);
      expect(fragment.get('email')).toBe(email);
      // The link does not carry the code: what it carries is no code on verify.
      const scanner = new Browser(app);
      expectError(await scanner.post('/api/auth/email-otp/verify', { email, code: fragment.get('code') ?? '' }), 401, 'invalid_code');
      expect(fragment.get('code')).toBeNull();
      expect(fragment.toString()).not.toContain(code);
      // As a link: alone, with a made-up token, or with a token of another address's start, it is link_elsewhere.
      const link = fragment.get('link') ?? '';
      expect(link).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const othersToken = (await scanner.post('/api/auth/email-otp/start', { email: 'scanner@example.org' })).body.token as string;
      for (const body of [
        { email, link },
        { email, link, token: randomBytes(28).toString('hex') },
        { email, link, token: othersToken },
      ]) {
        const refused = await useLink(scanner, body);
        expectError(refused, 401, 'link_elsewhere');
        expect(refused.setCookies).toEqual([]);
      }
      expect(scanner.cookie).toBeUndefined();
      expect((await scanner.me()).status).toBe(401);
      // Nothing was counted: the owner's code and link both still work; the link signs in once.
      const signedIn = await useLink(owner, { email: email.toUpperCase(), link, token });
      expect(signedIn.status).toBe(200);
      expect(signedIn.body.account.display_identity).toEqual({ kind: 'email', value: email });
      expect(decodeJwt(signedIn.body.token).signing_method).toBe('email_otp');
      expectError(await useLink(owner, { email, link, token }), 401, 'code_dead');
      expectError(await owner.post('/api/auth/email-otp/verify', { email, code, token }), 401, 'code_dead');
    });

    it('the link keeps the code usable for typing after refusals, and add=1 keeps the roster', async () => {
      const email = 'lars@example.org';
      const browser = new Browser(app);
      const btc = await browser.signIn(newWallet());
      expect(btc.status).toBe(200);
      const { code, token, fragment } = await codeFor(browser, email);
      const link = fragment.get('link') ?? '';
      expectError(await useLink(new Browser(app), { email, link }), 401, 'link_elsewhere');
      // The typed code still works after the link was refused elsewhere; a new code then signs in by link with add=1.
      expect((await new Browser(app).post('/api/auth/email-otp/verify', { email, code, token })).status).toBe(200);
      const next = await codeFor(browser, email);
      const added = await useLink(browser, { email, link: next.fragment.get('link'), token: next.token }, '?add=1');
      expect(added.status).toBe(200);
      const me = await browser.me();
      expect(me.body.account.did_oc).toBe(added.body.account.did_oc);
      expect(me.body.roster.map((entry: { did_oc: string }) => entry.did_oc)).toEqual([btc.body.account.did_oc]);
    });

    it('bad input: a missing or oversized link is 400, a cross-site post 403, a made-up link code_dead', async () => {
      const browser = new Browser(app);
      expectError(await useLink(browser, { email: 'a@example.org' }), 400, 'bad_request');
      expectError(await useLink(browser, { email: 'a@example.org', link: 'x'.repeat(129) }), 400, 'bad_request');
      expectError(await useLink(browser, { email: 'not-an-address', link: 'x'.repeat(43) }), 400, 'bad_request');
      expectError(await useLink(browser, { email: 'a@example.org', link: 'x'.repeat(43), token: 'f'.repeat(56) }), 401, 'code_dead');
      const evil = new Browser(app, 'https://evil.test');
      expectError(await evil.post('/api/auth/email-otp/link', { email: 'a@example.org', link: 'x'.repeat(43) }), 403, 'cross_site');
    });
  });
}

await forEachEngine('e-mail code sign-in over HTTP', emailOtpSuite);
