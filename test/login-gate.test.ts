/**
 * Login by declaration (docs/architecture.md "Login by declaration"): every
 * operation the OpenAPI document marks with the session cookie answers 401
 * `not_authenticated` to a request without a live session, whatever its body
 * (none, empty JSON, JSON of the wrong type), before the body is checked:
 * with no cookie, with a garbage cookie and with an expired token. And every
 * operation documented as needing a step-up answers 401 `sudo_required`,
 * whatever its body, to a live session whose step-up is older than 5
 * minutes, and to one stepped up by a key alone unless the document says a
 * key will do; the routes declared fresh in code are exactly those the
 * document names. On every engine.
 */
import { expect, it } from 'vitest';
import { type Browser, newWallet } from './support/auth-client.js';
import { addDeskKey, forEachEngine, LOCAL_ORIGIN, stepUpWithKey, useAuthSuite } from './support/auth-harness.js';
import { DAY, MINUTE } from './support/clock.js';

type Operation = {
  security?: Array<Record<string, unknown>>;
  summary?: string;
  description?: string;
  parameters?: Array<{ in: string; name: string; example?: unknown }>;
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses?: Record<string, { description?: string }>;
};
type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** The bodies a request without a session may carry: none, empty JSON, and JSON of the wrong type. */
const BODIES: ReadonlyArray<{ readonly name: string; readonly payload?: string }> = [
  { name: 'no body' },
  { name: 'an empty JSON object', payload: '{}' },
  { name: 'a JSON array', payload: '[]' },
  { name: 'a JSON string', payload: '"x"' },
];

/** What the document says an operation needs: a step-up younger than 5 minutes (docs/api.md). */
const STEP_UP = /needs a step-up|re-proof younger|needs `sudo_at`|sudo_required/;

/** What the document says of an operation that also takes a key step-up (`step_up_at`) for a re-proof. */
const KEY_WILL_DO = /`sudo_at` or `step_up_at`/;

/** The operations docs/api.md documents as needing a step-up younger than 5 minutes. */
const STEP_UP_OPERATIONS = [
  'DELETE /api/auth/account',
  'DELETE /api/auth/identities',
  'DELETE /api/auth/sessions/{id}',
  'DELETE /api/auth/webauthn/credentials/{id}',
  'GET /api/auth/account/export',
  'POST /api/auth/link/btc',
  'POST /api/auth/link/email',
  'POST /api/auth/sessions/revoke-others',
  'POST /api/auth/webauthn/register/options',
];

/** Of {@link STEP_UP_OPERATIONS}, those a key step-up also opens. */
const KEY_STEP_UP_OPERATIONS = [
  'DELETE /api/auth/sessions/{id}',
  'DELETE /api/auth/webauthn/credentials/{id}',
  'POST /api/auth/sessions/revoke-others',
];

function loginGateSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  async function sessionOperations(): Promise<Array<{ method: Method; path: string; operation: Operation }>> {
    const document = (await auth.app.inject({ method: 'GET', url: '/api/openapi' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    return Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => (operation.security ?? []).some((scheme) => 'cookieAuth' in scheme))
        // A path parameter the gate never reaches: the request is refused before its route checks it.
        .map(([method, operation]) => ({ method: method.toUpperCase() as Method, path, operation })),
    );
  }

  /** The operation's URL with its documented example parameters, or `x1` where it has none. */
  function exampleUrl(path: string, operation: Operation): string {
    const example = (name: string) => String(operation.parameters?.find((parameter) => parameter.name === name)?.example ?? 'x1');
    const url = path.replace(/\{([^}]+)\}/g, (_whole, name: string) => encodeURIComponent(example(name)));
    const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query' && parameter.example !== undefined);
    return query.length === 0
      ? url
      : `${url}?${query.map((parameter) => `${parameter.name}=${encodeURIComponent(String(parameter.example))}`).join('&')}`;
  }

  function needsStepUp(operation: Operation): boolean {
    return STEP_UP.test(documentText(operation));
  }

  async function expectRefusedEverywhere(cookie: string | undefined): Promise<void> {
    const operations = await sessionOperations();
    expect(operations.length).toBeGreaterThan(25);
    const wrong: string[] = [];
    for (const { method, path, operation } of operations) {
      const url = exampleUrl(path, operation);
      for (const body of method === 'GET' ? [BODIES[0]!] : BODIES) {
        const reply = await auth.app.inject({
          method,
          url,
          headers: {
            ...(method === 'GET' ? {} : { origin: LOCAL_ORIGIN }),
            ...(body.payload === undefined ? {} : { 'content-type': 'application/json' }),
            ...(cookie === undefined ? {} : { cookie }),
          },
          ...(body.payload === undefined ? {} : { payload: body.payload }),
        });
        const code = (reply.json() as { error?: string }).error;
        if (reply.statusCode !== 401 || code !== 'not_authenticated')
          wrong.push(`${method} ${url} with ${body.name}: ${reply.statusCode} ${code}`);
      }
    }
    expect(wrong).toEqual([]);
  }

  it('answers 401 not_authenticated to every session operation without a cookie, whatever the body', async () => {
    await expectRefusedEverywhere(undefined);
  });

  it('answers 401 not_authenticated to every session operation with a garbage cookie, whatever the body', async () => {
    await expectRefusedEverywhere('oc_session=not-a-token');
  });

  it('answers 401 not_authenticated to every session operation with an expired token, whatever the body', async () => {
    const browser = auth.harness.browser(auth.app);
    const signedIn = await browser.signIn(newWallet());
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    const token = browser.cookie;
    expect(token).toBeDefined();
    auth.harness.clock.advance(400 * DAY);
    await expectRefusedEverywhere(`oc_session=${token}`);
  });

  function documentText(operation: Operation): string {
    return `${operation.summary} ${operation.description ?? ''} ${operation.responses?.['401']?.description ?? ''}`;
  }

  async function stepUpOperations(): Promise<Array<{ method: Method; path: string; operation: Operation }>> {
    const stepUps = (await sessionOperations()).filter(({ operation }) => needsStepUp(operation));
    expect(stepUps.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(STEP_UP_OPERATIONS);
    return stepUps;
  }

  /** Sends `browser`'s cookies to every operation with every body of {@link BODIES}; what answered other than 401 `sudo_required`. */
  async function notRefused(
    browser: Browser,
    operations: Array<{ method: Method; path: string; operation: Operation }>,
  ): Promise<string[]> {
    const wrong: string[] = [];
    for (const { method, path, operation } of operations) {
      const url = exampleUrl(path, operation);
      for (const body of method === 'GET' ? [BODIES[0]!] : BODIES) {
        const headers: Record<string, string> = body.payload === undefined ? {} : { 'content-type': 'application/json' };
        const reply = await browser.request(method, url, body.payload, headers);
        const code = (reply.body as { error?: string } | undefined)?.error;
        if (reply.status !== 401 || code !== 'sudo_required') wrong.push(`${method} ${url} with ${body.name}: ${reply.status} ${code}`);
      }
    }
    return wrong;
  }

  it('answers 401 sudo_required to every operation documented as needing a step-up, whatever the body, with a live session stepped up too long ago', async () => {
    const browser = auth.harness.browser(auth.app);
    const signedIn = await browser.signIn(newWallet());
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    // A sign-in stands in for a re-proof when linking, for 5 minutes (docs/protocol.md §6): let it age.
    auth.harness.clock.advance(6 * MINUTE);
    const stepUps = await stepUpOperations();
    // The refusal comes before the body is checked: none of these bodies is valid, and none answers 400.
    expect(await notRefused(browser, stepUps)).toEqual([]);
    // With the documented example body too.
    for (const { method, path, operation } of stepUps) {
      const payload = operation.requestBody?.content['application/json']?.example;
      const reply = await browser.request(method, exampleUrl(path, operation), payload ?? (method === 'GET' ? undefined : {}));
      expect.soft(reply.status, `${method} ${path}: ${JSON.stringify(reply.body)}`).toBe(401);
      expect.soft(reply.body?.error, `${method} ${path}`).toBe('sudo_required');
    }
    // The session itself is still live: only its step-up is stale.
    expect((await browser.get('/api/auth/me')).status).toBe(200);
  });

  it('answers 401 sudo_required to a session stepped up by a key alone wherever the document does not say a key will do', async () => {
    const browser = auth.harness.browser(auth.app);
    const wallet = newWallet();
    const signedIn = await browser.signIn(wallet);
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    // Adding the key needs a re-proof; it ages below with the sign-in.
    expect((await browser.post('/api/auth/sudo', await browser.prove(wallet, 'sudo'))).status).toBe(200);
    const { key } = await addDeskKey(browser);
    auth.harness.clock.advance(6 * MINUTE);
    // A key assertion now: `step_up_at` is fresh, `sudo_at` (the sign-in's) is not.
    const steppedUp = await stepUpWithKey(browser, key);
    expect(steppedUp.status, JSON.stringify(steppedUp.body)).toBe(200);
    const stepUps = await stepUpOperations();
    const keyWillDo = stepUps.filter(({ operation }) => KEY_WILL_DO.test(documentText(operation)));
    expect(keyWillDo.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(KEY_STEP_UP_OPERATIONS);
    expect(
      await notRefused(
        browser,
        stepUps.filter((operation) => !keyWillDo.includes(operation)),
      ),
    ).toEqual([]);
    // Where a key will do, the gate lets the request through to the route: the documented example id is unknown, its 404.
    for (const { method, path, operation } of keyWillDo.filter(({ method }) => method === 'DELETE')) {
      const reply = await browser.request(method, exampleUrl(path, operation));
      expect(reply.status, `${method} ${path}: ${JSON.stringify(reply.body)}`).toBe(404);
      expect(reply.body?.error).toBe('not_found');
    }
    const others = await browser.post('/api/auth/sessions/revoke-others', {});
    expect(others.status, JSON.stringify(others.body)).toBe(200);
  });

  it("signs this browser's own session out without a step-up: DELETE /api/auth/sessions/{id} of itself is a logout", async () => {
    const browser = auth.harness.browser(auth.app);
    expect((await browser.signIn(newWallet())).status).toBe(200);
    auth.harness.clock.advance(6 * MINUTE);
    const listed = await browser.get('/api/auth/sessions');
    const own = (listed.body.sessions as Array<{ id: string; current: boolean }>).find((session) => session.current);
    expect(own).toBeDefined();
    const reply = await browser.request('DELETE', `/api/auth/sessions/${own!.id}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toMatchObject({ ok: true, current: true, switched_to: null });
  });

  it('declares in code exactly the freshness the document names, route by route', async () => {
    const stepUps = await stepUpOperations();
    const declared = [...auth.app.declaredFreshness].map(([route, need]) => ({
      operation: route.replace(/:([A-Za-z_]+)/g, '{$1}'),
      keyWillDo: need === 'step-up',
    }));
    expect(declared.map(({ operation }) => operation).sort()).toEqual(stepUps.map(({ method, path }) => `${method} ${path}`).sort());
    const documentedKey = stepUps
      .filter(({ operation }) => KEY_WILL_DO.test(documentText(operation)))
      .map(({ method, path }) => `${method} ${path}`);
    expect(
      declared
        .filter(({ keyWillDo }) => keyWillDo)
        .map(({ operation }) => operation)
        .sort(),
    ).toEqual(documentedKey.sort());
  });
}

await forEachEngine('login by declaration', loginGateSuite);
