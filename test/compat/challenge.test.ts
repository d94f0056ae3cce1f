/**
 * The signed-challenge routes as the OrangeCheck SDKs call and read them
 * (issue 12, item 7):
 *
 * - sdk-py `orangecheck/client.py` (oc-packages at a3224a6) `challenge_issue`:
 *   `GET /api/challenge` with `addr`, `audience`, `purpose`, `ttl`, read by
 *   `types.py` `Challenge.from_json` (`message`, `nonce`, `int(expiresAt)`,
 *   `expiresAtIso`);
 * - sdk-py `challenge_verify`: `POST /api/challenge` with `message`,
 *   `signature`, `scheme` and only the `expected…` fields the caller gave;
 *   status 200 or 401 is an answer, anything else an error; success is read
 *   by `ChallengeVerified.from_json` (`address`, `nonce`, `int(expiresAt)`,
 *   `audience`, `purpose`), failure by its `reason`;
 * - the TypeScript SDK `sdk/src/challenge.ts` `VerifyChallengeResult`: `{ok,
 *   reason?, address, expiresAt (unix ms), nonce, audience?, purpose?}`.
 *
 * The one shape the interface does not allow to match: `expiresAt` of GET is
 * an ISO 8601 string here, so sdk-py's `int(d["expiresAt"])` cannot read it
 * and the TypeScript SDK's `Challenge` type (`expiresAt: number`) is wrong
 * about it; `expiresAtMs` beside it is the number (docs/integrating.md "Using the OrangeCheck client libraries" says so).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { signBip322 } from '../support/bitcoin-signer.js';
import { testApp } from '../support/app.js';
import { newWallet, type Reply } from '../support/auth-client.js';
import { forEachEngine, useAuthSuite } from '../support/auth-harness.js';

const AUDIENCE = 'https://shop.example.org';

/** Python's `int()` of a JSON value: numbers and digit strings only. */
function pythonInt(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number(value);
  throw new TypeError(`int(): invalid literal ${JSON.stringify(value)}`);
}

/**
 * docs/api.md "Challenge": `expiresAt` a string, ISO 8601 UTC with
 * milliseconds; `expiresAtMs` an integer of milliseconds; one instant, the
 * message's `expires_at`.
 */
function expectExpiryFields(body: { message: string; expiresAt: unknown; expiresAtMs: unknown }): void {
  expect(typeof body.expiresAt).toBe('string');
  expect(body.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  expect(typeof body.expiresAtMs).toBe('number');
  expect(Number.isSafeInteger(body.expiresAtMs)).toBe(true);
  expect(new Date(body.expiresAtMs as number).toISOString()).toBe(body.expiresAt);
  const line = /^expires_at: (.+)$/m.exec(body.message)?.[1];
  expect(Date.parse(line!)).toBe(body.expiresAtMs);
}

describe('expiresAt and expiresAtMs of GET /api/challenge, for the SDKs that read a number', () => {
  it('are a string and an integer for one instant, in the answer, the OpenAPI document and the documents SDK users read', async () => {
    const app = await testApp();
    try {
      const reply = await app.inject({ method: 'GET', url: `/api/challenge?addr=${newWallet().address}` });
      expect(reply.statusCode).toBe(200);
      expectExpiryFields(reply.json());
      const document = (await app.inject({ method: 'GET', url: '/api/openapi' })).json();
      const schema = document.paths['/api/challenge'].get.responses['200'].content['application/json'].schema;
      expect(schema.required).toEqual(expect.arrayContaining(['expiresAt', 'expiresAtMs']));
      expect(schema.properties.expiresAt.type).toBe('string');
      expect(schema.properties.expiresAtMs.type).toBe('integer');
    } finally {
      await app.close();
    }
    const read = (path: string): string => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
    const api = read('docs/api.md');
    expect(api.slice(api.indexOf('### Challenge'), api.indexOf('### Check result'))).toContain(
      '`{message, nonce, expiresAt, expiresAtMs}`',
    );
    const protocol = read('docs/protocol.md');
    expect(protocol.slice(protocol.indexOf('## 5. '), protocol.indexOf('## 6. '))).toContain('expiresAt, expiresAtMs}');
    // docs/integrating.md's section on the client libraries names the contradiction for both SDKs and what to read instead.
    const integrating = read('docs/integrating.md');
    const libraries = integrating.slice(integrating.indexOf('## Using the OrangeCheck client libraries'));
    const contradiction = libraries.slice(libraries.indexOf('**`expiresAt` of `GET /api/challenge`**'));
    expect(contradiction).toMatch(/challenge_issue[\s\S]*int\(\)/);
    expect(contradiction).toMatch(/TypeScript SDK[\s\S]*expiresAt: number/);
    expect(contradiction).toMatch(/Read `expiresAtMs`/);
  });
});

/** sdk-py `_post`: a 200 or a 401 is an answer; anything else raises. */
function sdkPyAnswer(reply: Reply): { ok: boolean; body: Record<string, unknown> } {
  if (reply.status !== 200 && reply.status !== 401) throw new Error(`OrangeCheckError ${reply.status}`);
  return { ok: reply.status === 200 && reply.body.ok === true, body: reply.body };
}

function challengeSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  it('challenge_issue: GET answers message and nonce, expiresAtMs as the number and expiresAt as ISO 8601', async () => {
    const client = auth.harness.browser(auth.app, AUDIENCE);
    const wallet = newWallet();
    const query = new URLSearchParams({ addr: wallet.address, audience: AUDIENCE, purpose: 'login', ttl: '120' });
    const reply = await client.get(`/api/challenge?${query}`);
    expect(reply.status).toBe(200);
    expect(reply.body.message).toContain(`nonce: ${reply.body.nonce}\n`);
    expect(reply.body.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(pythonInt(reply.body.expiresAtMs)).toBe(Date.parse(reply.body.expiresAt));
    expect(reply.body.expiresAtMs - auth.harness.clock.ms).toBeLessThanOrEqual(120_000);
    expectExpiryFields(reply.body);
    // The documented mismatch: the interface fixes expiresAt of GET as a string.
    expect(() => pythonInt(reply.body.expiresAt)).toThrow(/invalid literal/);
  });

  it('challenge_verify: the body sdk-py sends, with and without expectations, read as ChallengeVerified', async () => {
    const client = auth.harness.browser(auth.app, AUDIENCE);
    const wallet = newWallet('p2tr');
    const issued = await client.get(
      `/api/challenge?${new URLSearchParams({ addr: wallet.address, audience: AUDIENCE, purpose: 'attest' })}`,
    );
    const message = issued.body.message as string;
    const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message });

    for (const expectations of [
      {},
      { expectedNonce: issued.body.nonce },
      { expectedNonce: issued.body.nonce, expectedAudience: AUDIENCE, expectedPurpose: 'attest' },
    ]) {
      const answer = sdkPyAnswer(await client.post('/api/challenge', { message, signature, scheme: 'bip322', ...expectations }));
      expect(answer.ok, JSON.stringify(answer.body)).toBe(true);
      const verified = {
        address: answer.body.address,
        nonce: answer.body.nonce,
        expires_at: pythonInt(answer.body.expiresAt),
        audience: answer.body.audience ?? null,
        purpose: answer.body.purpose ?? null,
      };
      expect(verified).toEqual({
        address: wallet.address,
        nonce: issued.body.nonce,
        expires_at: issued.body.expiresAtMs,
        audience: AUDIENCE,
        purpose: 'attest',
      });
      // The TypeScript SDK's result keeps the same names.
      expect(typeof answer.body.expiresAtIso).toBe('string');
    }
  });

  it('challenge_verify: a refusal is an answer with a reason, never an error status', async () => {
    const client = auth.harness.browser(auth.app, AUDIENCE);
    const wallet = newWallet();
    const issued = await client.get(`/api/challenge?${new URLSearchParams({ addr: wallet.address, purpose: 'login' })}`);
    const message = issued.body.message as string;
    const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message });

    const wrongPurpose = sdkPyAnswer(
      await client.post('/api/challenge', { message, signature, scheme: 'bip322', expectedPurpose: 'attest' }),
    );
    expect(wrongPurpose.ok).toBe(false);
    expect(wrongPurpose.body.reason).toBe('invalid_challenge');
    expect(wrongPurpose.body.codes).toEqual(['purpose_mismatch']);

    const otherSigner = newWallet();
    const forged = signBip322({ privateKey: otherSigner.privateKey, address: otherSigner.address, message });
    const refused = sdkPyAnswer(await client.post('/api/challenge', { message, signature: forged, scheme: 'bip322' }));
    expect(refused.ok).toBe(false);
    expect(typeof refused.body.reason).toBe('string');
  });
}

await forEachEngine('the signed challenge as the OrangeCheck SDKs use it', challengeSuite);
