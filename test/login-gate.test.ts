/**
 * Login by declaration (docs/architecture.md "Login by declaration"): every
 * operation the OpenAPI document marks with the session cookie answers 401
 * `not_authenticated` to a request without a live session, whatever its body
 * (none, empty JSON, JSON of the wrong type), before the body is checked:
 * with no cookie, with a garbage cookie and with an expired token. And every
 * operation documented as needing a step-up answers 401 `sudo_required` to a
 * live session whose step-up is older than 5 minutes. On every engine.
 */
import { expect, it } from 'vitest';
import { newWallet } from './support/auth-client.js';
import { forEachEngine, LOCAL_ORIGIN, useAuthSuite } from './support/auth-harness.js';
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
    return STEP_UP.test(`${operation.summary} ${operation.description ?? ''} ${operation.responses?.['401']?.description ?? ''}`);
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

  it('answers 401 sudo_required to every operation documented as needing a step-up, with a live session stepped up too long ago', async () => {
    const browser = auth.harness.browser(auth.app);
    const signedIn = await browser.signIn(newWallet());
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    // Signing in counts as a step-up (docs/protocol.md §3 "Freshness"): let it age.
    auth.harness.clock.advance(6 * MINUTE);
    const stepUps = (await sessionOperations()).filter(({ operation }) => needsStepUp(operation));
    expect(stepUps.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(STEP_UP_OPERATIONS);
    for (const { method, path, operation } of stepUps) {
      const payload = operation.requestBody?.content['application/json']?.example;
      const reply = await browser.request(method, exampleUrl(path, operation), payload ?? (method === 'GET' ? undefined : {}));
      expect.soft(reply.status, `${method} ${path}: ${JSON.stringify(reply.body)}`).toBe(401);
      expect.soft(reply.body?.error, `${method} ${path}`).toBe('sudo_required');
    }
    // The session itself is still live: only its step-up is stale.
    expect((await browser.get('/api/auth/me')).status).toBe(200);
  });
}

await forEachEngine('login by declaration', loginGateSuite);
