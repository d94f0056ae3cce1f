/**
 * The generic signed-challenge primitive over HTTP (docs/api.md "Signed
 * challenge", docs/protocol.md §5), on every engine: the exact message layout of
 * GET /api/challenge, and POST /api/challenge for every address type and every
 * failure code. It sets no cookie, touches no account and stores no nonce.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { signBip322, signLegacy } from './support/bitcoin-signer.js';
import { issueChallenge } from '../src/identity/signin/challenge.js';
import { Browser, newWallet, type Reply, type Wallet } from './support/auth-client.js';
import { type AuthHarness, expectError, forEachEngine, LOCAL_ORIGIN, type TimedBrowser, useAuthHarness } from './support/auth-harness.js';
import { CLOCK_START, SECOND } from './support/clock.js';

const ACK = 'ack: I authorize this session under the OrangeCheck auth challenge.';
const AUDIENCE = 'https://shop.example.org';
const PURPOSE = 'attest';

function challengeHttpSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;
  let client: TimedBrowser;

  useAuthHarness(engine, (opened, built) => {
    harness = opened;
    app = built;
    client = harness.browser(app, 'https://shop.example.org');
  });

  async function issue(wallet: Wallet, params: Record<string, string> = { audience: AUDIENCE, purpose: PURPOSE }): Promise<Reply> {
    const reply = await client.get(`/api/challenge?${new URLSearchParams({ addr: wallet.address, ...params })}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply;
  }

  async function verify(body: Record<string, unknown>): Promise<Reply> {
    const reply = await client.post('/api/challenge', body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.setCookies, 'no cookie is set').toEqual([]);
    return reply;
  }

  /** A challenge for `wallet`, signed by it (or by `signer`), as the POST body. */
  async function signedProof(
    wallet: Wallet,
    sign: (message: string) => string = (message) => signBip322({ privateKey: wallet.privateKey, address: wallet.address, message }),
  ) {
    const { body } = await issue(wallet);
    return {
      message: body.message as string,
      signature: sign(body.message),
      expectedNonce: body.nonce as string,
      expectedAudience: AUDIENCE,
      expectedPurpose: PURPOSE,
    };
  }

  async function expectUntouched(): Promise<void> {
    const stats = await harness.store.familyStats(harness.clock.ms);
    expect(stats.accounts.total, 'no account was created').toBe(0);
    expect(stats.sessions.active, 'no session was created').toBe(0);
  }

  describe('GET /api/challenge', () => {
    it('builds the exact message of docs/protocol.md §5: lines, order, trailing LF, times to the second', async () => {
      harness.clock.set(CLOCK_START); // 2026-03-01T12:34:56.789Z
      const wallet = newWallet();
      const reply = await issue(wallet);
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.headers['access-control-allow-origin']).toBe('*');
      expect(Object.keys(reply.body).sort()).toEqual(['expiresAt', 'expiresAtMs', 'message', 'nonce']);
      expect(reply.body.expiresAtMs).toBe(Date.parse(reply.body.expiresAt));
      const { message, nonce, expiresAt } = reply.body;
      expect(nonce).toMatch(/^[0-9a-f]{32}$/);
      expect(message).toBe(
        [
          'orangecheck-auth',
          `address: ${wallet.address}`,
          `nonce: ${nonce}`,
          'issued_at: 2026-03-01T12:34:56Z',
          'expires_at: 2026-03-01T12:39:56Z',
          ACK,
          `audience: ${AUDIENCE}`,
          `purpose: ${PURPOSE}`,
          '',
        ].join('\n'),
      );
      expect(message).not.toContain('\r');
      // docs/api.md Challenge: ISO 8601 UTC with milliseconds, the same instant as expires_at.
      expect(expiresAt).toBe('2026-03-01T12:39:56.000Z');
    });

    it('asked without purpose or audience, writes purpose login and audience PUBLIC_URL; keeps the order when one is given', async () => {
      // Until issue 24 the lines were left out when not given; now both are always written.
      harness.clock.set(CLOCK_START);
      const wallet = newWallet('p2tr');
      const bare = (await issue(wallet, {})).body;
      expect(bare.message).toBe(
        [
          'orangecheck-auth',
          `address: ${wallet.address}`,
          `nonce: ${bare.nonce}`,
          'issued_at: 2026-03-01T12:34:56Z',
          'expires_at: 2026-03-01T12:39:56Z',
          ACK,
          `audience: ${LOCAL_ORIGIN}`,
          'purpose: login',
          '',
        ].join('\n'),
      );
      const purposeOnly = (await issue(wallet, { purpose: PURPOSE })).body;
      expect(purposeOnly.message.split('\n').slice(5)).toEqual([ACK, `audience: ${LOCAL_ORIGIN}`, `purpose: ${PURPOSE}`, '']);
      const audienceOnly = (await issue(wallet, { audience: AUDIENCE })).body;
      expect(audienceOnly.message.split('\n').slice(5)).toEqual([ACK, `audience: ${AUDIENCE}`, 'purpose: login', '']);
      // The nonce binds the fields: each variant has its own.
      expect(new Set([bare.nonce, purposeOnly.nonce, audienceOnly.nonce]).size).toBe(3);
    });

    it('refuses an explicit empty audience or purpose with 400: every message carries both lines', async () => {
      const wallet = newWallet();
      for (const params of [{ audience: '' }, { purpose: '' }, { audience: '', purpose: '' }] as Array<Record<string, string>>) {
        expectError(await client.get(`/api/challenge?${new URLSearchParams({ addr: wallet.address, ...params })}`), 400, 'bad_request');
      }
    });

    it('honours ttl from 30 to 3600 seconds', async () => {
      harness.clock.set(CLOCK_START);
      const wallet = newWallet();
      for (const [ttl, expires] of [
        ['30', '2026-03-01T12:35:26'],
        ['60', '2026-03-01T12:35:56'],
        ['3600', '2026-03-01T13:34:56'],
      ] as const) {
        const { body } = await issue(wallet, { audience: AUDIENCE, ttl });
        expect(body.message).toContain(`\nissued_at: 2026-03-01T12:34:56Z\nexpires_at: ${expires}Z\n`);
        expect(body.expiresAt).toBe(`${expires}.000Z`);
      }
    });

    it('issues a new nonce each second', async () => {
      const wallet = newWallet();
      const first = (await issue(wallet)).body;
      harness.clock.advance(SECOND);
      const second = (await issue(wallet)).body;
      expect(second.nonce).not.toBe(first.nonce);
    });
  });

  describe('POST /api/challenge', () => {
    it.each([
      ['P2WPKH', 'p2wpkh', undefined],
      ['P2TR', 'p2tr', undefined],
      ['P2SH-P2WPKH', 'p2sh-p2wpkh', undefined],
      ['P2PKH (BIP-322 full)', 'p2pkh', undefined],
      ['P2WPKH (BIP-322 full)', 'p2wpkh', 'full'],
      ['P2PKH (legacy signmessage)', 'p2pkh', 'legacy'],
    ] as const)('verifies a %s proof: {ok: true, address}', async (_name, type, form) => {
      const wallet = newWallet(type);
      const proof = await signedProof(wallet, (message) =>
        form === 'legacy'
          ? signLegacy(wallet.privateKey, message)
          : signBip322({ privateKey: wallet.privateKey, address: wallet.address, message, ...(form ? { form } : {}) }),
      );
      const reply = await verify(proof);
      expect(reply.body).toMatchObject({ ok: true, address: wallet.address });
      expect(reply.headers['access-control-allow-origin']).toBe('*');
      await expectUntouched();
    });

    it('answers the nonce, the expiry (ms and ISO), audience and purpose, as the OrangeCheck SDKs read them', async () => {
      harness.clock.set(CLOCK_START);
      const wallet = newWallet();
      const proof = await signedProof(wallet);
      const reply = await verify(proof);
      expect(reply.body).toEqual({
        ok: true,
        address: wallet.address,
        nonce: proof.expectedNonce,
        expiresAt: Date.parse('2026-03-01T12:39:56Z'),
        expiresAtIso: '2026-03-01T12:39:56.000Z',
        audience: AUDIENCE,
        purpose: PURPOSE,
      });
    });

    it('does not compare an expectation the caller left out (the SDK rule), but still needs its own nonce', async () => {
      const wallet = newWallet();
      const proof = await signedProof(wallet);
      const bare = { message: proof.message, signature: proof.signature };
      expect((await verify(bare)).body).toMatchObject({ ok: true, address: wallet.address, audience: AUDIENCE, purpose: PURPOSE });
      expect((await verify({ ...bare, scheme: 'bip322' })).body.ok).toBe(true);
      expect((await verify({ ...bare, scheme: 'schnorr' })).body).toEqual({
        ok: false,
        reason: 'invalid_challenge',
        codes: ['invalid_scheme'],
      });
      // A message this service did not issue fails on its MAC even with nothing expected.
      const forged = proof.message.replace(/nonce: ([0-9a-f]{16})[0-9a-f]{16}/, `nonce: $1${'0'.repeat(16)}`);
      const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: forged });
      expect((await verify({ message: forged, signature })).body).toEqual({
        ok: false,
        reason: 'invalid_challenge',
        codes: ['nonce_mismatch'],
      });
    });

    it('with empty expectations, verifies a challenge asked without the fields and one issued before they were always written', async () => {
      const wallet = newWallet();
      const sign = (message: string): string => signBip322({ privateKey: wallet.privateKey, address: wallet.address, message });
      const asked = (await issue(wallet, {})).body;
      const none = { expectedAudience: '', expectedPurpose: '' };
      expect(
        (await verify({ message: asked.message, signature: sign(asked.message), expectedNonce: asked.nonce, ...none })).body,
      ).toMatchObject({
        ok: true,
        audience: LOCAL_ORIGIN,
        purpose: 'login',
      });
      // Empty stands for the default only: a message naming another purpose or audience is refused.
      const named = (await issue(wallet)).body;
      expect(
        (await verify({ message: named.message, signature: sign(named.message), expectedNonce: named.nonce, expectedPurpose: '' })).body
          .codes,
      ).toEqual(['purpose_mismatch']);

      // A message without the lines, as this service issued them before, under a secret both apps share.
      const secret = randomBytes(32);
      const keyed = new Browser(await harness.app({ OC_SERVER_SECRET: secret.toString('hex') }), AUDIENCE);
      const older = issueChallenge({ address: wallet.address }, { secret, now: harness.clock.now() });
      expect(older.message.split('\n').slice(5)).toEqual([ACK, '']);
      const proof = { message: older.message, signature: sign(older.message), expectedNonce: older.nonce };
      for (const expectations of [{}, none, { expectedAudience: '' }, { expectedPurpose: '' }]) {
        const reply = await keyed.post('/api/challenge', { ...proof, ...expectations });
        expect(reply.body, JSON.stringify(expectations)).toMatchObject({ ok: true, address: wallet.address });
        expect(reply.body.audience).toBeUndefined();
        expect(reply.body.purpose).toBeUndefined();
      }
      expect((await keyed.post('/api/challenge', { ...proof, expectedPurpose: 'login' })).body.codes).toEqual(['purpose_mismatch']);
      expect((await keyed.post('/api/challenge', { ...proof, expectedAudience: LOCAL_ORIGIN })).body.codes).toEqual(['aud_mismatch']);
      await expectUntouched();
    });

    it('does not consume the nonce: the same proof verifies twice (the caller prevents replay)', async () => {
      const wallet = newWallet();
      const proof = await signedProof(wallet);
      expect((await verify(proof)).body).toMatchObject({ ok: true, address: wallet.address });
      expect((await verify(proof)).body).toMatchObject({ ok: true, address: wallet.address });
      await expectUntouched();
    });

    it('verifies a login challenge without consuming it for sign-in', async () => {
      const wallet = newWallet();
      const proof = await signedProof(wallet);
      const login = await client.prove(wallet, 'login');
      expect(
        (
          await verify({
            message: login.message,
            signature: login.signature,
            expectedNonce: login.nonce,
            expectedAudience: client.origin,
            expectedPurpose: 'login',
          })
        ).body,
      ).toMatchObject({ ok: true, address: wallet.address });
      expect(proof.expectedNonce).not.toBe(login.nonce);
      await expectUntouched();
    });

    const failures: Array<[string, (wallet: Wallet) => Promise<Record<string, unknown>>]> = [
      ['decode_error', async (wallet) => ({ ...(await signedProof(wallet)), message: 'hello world' })],
      [
        'decode_error',
        async (wallet) => {
          const proof = await signedProof(wallet);
          return { ...proof, message: proof.message.replace(/\n/g, '\r\n') };
        },
      ],
      [
        'decode_error',
        async (wallet) => {
          const proof = await signedProof(wallet);
          return { ...proof, message: proof.message.slice(0, -1) };
        },
      ],
      ['nonce_mismatch', async (wallet) => ({ ...(await signedProof(wallet)), expectedNonce: randomBytes(16).toString('hex') })],
      [
        'nonce_mismatch',
        async (wallet) => {
          // A message the client wrote itself, with its own nonce: not our MAC.
          const proof = await signedProof(wallet);
          const nonce = randomBytes(16).toString('hex');
          const message = proof.message.replace(/^nonce: [0-9a-f]{32}$/m, `nonce: ${nonce}`);
          return {
            ...proof,
            message,
            expectedNonce: nonce,
            signature: signBip322({ privateKey: wallet.privateKey, address: wallet.address, message }),
          };
        },
      ],
      [
        'nonce_mismatch',
        async (wallet) => {
          // A field changed after issue: the MAC no longer matches.
          const proof = await signedProof(wallet);
          const message = proof.message.replace(`audience: ${AUDIENCE}`, 'audience: https://other.example');
          return { ...proof, message, expectedAudience: 'https://other.example' };
        },
      ],
      [
        'expired',
        async (wallet) => {
          const { body } = await issue(wallet, { audience: AUDIENCE, purpose: PURPOSE, ttl: '30' });
          const proof = {
            message: body.message,
            signature: signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: body.message }),
            expectedNonce: body.nonce,
            expectedAudience: AUDIENCE,
            expectedPurpose: PURPOSE,
          };
          harness.clock.advance(30 * SECOND);
          return proof;
        },
      ],
      ['aud_mismatch', async (wallet) => ({ ...(await signedProof(wallet)), expectedAudience: 'https://other.example' })],
      ['aud_mismatch', async (wallet) => ({ ...(await signedProof(wallet)), expectedAudience: '' })],
      ['purpose_mismatch', async (wallet) => ({ ...(await signedProof(wallet)), expectedPurpose: 'login' })],
      [
        'sig_invalid',
        async (wallet) => {
          const thief = newWallet();
          return signedProof(wallet, (message) => signBip322({ privateKey: thief.privateKey, address: thief.address, message }));
        },
      ],
      ['sig_invalid', async (wallet) => ({ ...(await signedProof(wallet)), signature: 'not base64 at all!' })],
    ];

    it.each(failures)('fails with %s as {ok: false, reason: "invalid_challenge", codes} and HTTP 200', async (code, build) => {
      const wallet = newWallet();
      const reply = await verify(await build(wallet));
      expect(reply.body).toEqual({ ok: false, reason: 'invalid_challenge', codes: [code] });
      await expectUntouched();
    });

    it('runs the checks in the order of docs/protocol.md §5', async () => {
      const wallet = newWallet();
      const { body } = await issue(wallet, { audience: AUDIENCE, purpose: PURPOSE, ttl: '30' });
      harness.clock.advance(31 * SECOND);
      const everythingWrong = {
        message: body.message,
        signature: 'AAAA',
        expectedNonce: body.nonce,
        expectedAudience: 'https://x.example',
        expectedPurpose: 'nope',
      };
      expect((await verify(everythingWrong)).body.codes).toEqual(['expired']);
      expect((await verify({ ...everythingWrong, expectedNonce: '0'.repeat(32) })).body.codes).toEqual(['nonce_mismatch']);
      expect((await verify({ ...everythingWrong, message: `${body.message}x` })).body.codes).toEqual(['decode_error']);
    });

    it('refuses a malformed body with 400, not a verification result', async () => {
      expectError(await client.post('/api/challenge', { message: 'm' }), 400, 'bad_request');
      expectError(
        await client.post('/api/challenge', { message: 'm', signature: 's', expectedNonce: 'n', expectedAudience: 5 }),
        400,
        'bad_request',
      );
      await expectUntouched();
    });
  });

  // Runs last: these sign in, so the store is no longer untouched afterwards.
  describe('the sign-in walk-through, followed literally', () => {
    it('GET /api/challenge?addr= alone, the wallet signs, POST /api/auth/signin {address, message, signature, nonce}: signed in', async () => {
      for (const publicUrl of [undefined, 'https://auth.example.org/oc']) {
        const served = publicUrl === undefined ? app : await harness.app({ PUBLIC_URL: publicUrl });
        const site = new Browser(served, publicUrl === undefined ? LOCAL_ORIGIN : 'https://auth.example.org');
        const wallet = newWallet();
        const challenge = await site.get(`/api/challenge?addr=${encodeURIComponent(wallet.address)}`);
        expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
        const { message, nonce } = challenge.body as { message: string; nonce: string };
        const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message });
        const signedIn = await site.post('/api/auth/signin', { address: wallet.address, message, signature, nonce });
        expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
        expect(message.split('\n').slice(6)).toEqual([`audience: ${publicUrl ?? LOCAL_ORIGIN}`, 'purpose: login', '']);
        expect(signedIn.body.ok).toBe(true);
        expect(typeof signedIn.body.token).toBe('string');
        expect(site.cookie).toBeDefined();
        const me = await site.me();
        expect(me.status).toBe(200);
        expect(JSON.stringify(me.body.account)).toContain(wallet.address);
        expectError(await site.post('/api/auth/signin', { address: wallet.address, message, signature, nonce }), 401, 'nonce_reused');
      }
    });
  });

  // Runs last: it signs in, so the store is no longer untouched afterwards.
  describe('challenges asked in the same second', () => {
    it('100 challenges for one address in one second: all distinct, all verify, each consumed once by sign-in', async () => {
      harness.clock.set(CLOCK_START); // frozen: every challenge below is issued in the same second
      const wallet = newWallet();
      const browser = new Browser(app, LOCAL_ORIGIN);
      const challenges = [];
      for (let index = 0; index < 100; index += 1) {
        const reply = await browser.get(
          `/api/challenge?${new URLSearchParams({ addr: wallet.address, audience: LOCAL_ORIGIN, purpose: 'login' })}`,
        );
        expect(reply.status).toBe(200);
        challenges.push(reply.body as { message: string; nonce: string });
      }
      expect(new Set(challenges.map((challenge) => challenge.nonce)).size).toBe(100);
      expect(new Set(challenges.map((challenge) => challenge.message.split('\n')[3])).size, 'one issued_at for all').toBe(1);

      for (const { message, nonce } of challenges) {
        const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message });
        const proof = { address: wallet.address, message, signature, nonce };
        const checked = await verify({
          message,
          signature,
          expectedNonce: nonce,
          expectedAudience: LOCAL_ORIGIN,
          expectedPurpose: 'login',
        });
        expect(checked.body).toMatchObject({ ok: true, address: wallet.address });
        expect((await browser.post('/api/auth/signin', proof)).status).toBe(200);
        expectError(await browser.post('/api/auth/signin', proof), 401, 'nonce_reused');
      }
    });
  });
}

await forEachEngine('the signed challenge over HTTP', challengeHttpSuite);
