/**
 * A loopback HTTP server that speaks the parts of GitHub a sign-in uses
 * (docs.github.com "Authorizing OAuth apps" and the REST API), for tests:
 *
 *   GET  /login/oauth/authorize     → 302 to redirect_uri with code and state,
 *                                     or error=access_denied when denying
 *   POST /login/oauth/access_token  → token JSON (Accept: application/json),
 *                                     else form-encoded; a bad code answers
 *                                     200 with `error`, as GitHub does
 *   GET  /user, GET /user/emails    → the configured user (Bearer token and
 *                                     User-Agent required, as on GitHub)
 *
 * It checks what GitHub checks: the client id and secret, the registered
 * redirect URI, single-use codes, and the PKCE verifier (S256).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
  visibility: 'public' | 'private' | null;
}

export interface GitHubTestUser {
  id: number;
  login: string;
  name: string | null;
  /** The public profile e-mail, which the registry must not trust. */
  email: string | null;
  emails: GitHubEmail[];
}

/** How the fake misbehaves: `user-error` / `emails-error` answer 500 on those routes. */
type GitHubFakeFailure = 'user-error' | 'emails-error' | undefined;

export interface GitHubFakeOptions {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  user?: GitHubTestUser;
}

export interface GitHubFake {
  /** `http://127.0.0.1:<port>`; serves both the github.com and the api.github.com routes. */
  readonly url: string;
  setUser(user: GitHubTestUser): void;
  setDeny(deny: boolean): void;
  setFailure(failure: GitHubFakeFailure): void;
  /** Scopes asked for in the last authorize request. */
  readonly lastScope: string | undefined;
  readonly tokenRequests: number;
  close(): Promise<void>;
}

export const DEFAULT_GITHUB_USER: GitHubTestUser = {
  id: 583231,
  login: 'octocat',
  name: 'The Octocat',
  email: 'public-but-unverified@example.net',
  emails: [
    { email: 'old@example.org', primary: false, verified: true, visibility: null },
    { email: 'octocat@example.org', primary: true, verified: true, visibility: 'private' },
  ],
};

interface PendingCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  expiresAt: number;
}

export async function startGitHubFake(options: GitHubFakeOptions): Promise<GitHubFake> {
  let user = options.user ?? DEFAULT_GITHUB_USER;
  let deny = false;
  let failure: GitHubFakeFailure;
  let lastScope: string | undefined;
  let tokenRequests = 0;
  const codes = new Map<string, PendingCode>();
  const tokens = new Set<string>();

  function json(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  function authorize(url: URL, res: ServerResponse): void {
    const params = url.searchParams;
    const redirectUri = params.get('redirect_uri') ?? options.redirectUri;
    // GitHub shows an error page (no redirect) for a wrong client or redirect URI.
    if (params.get('client_id') !== options.clientId || redirectUri !== options.redirectUri) {
      json(res, 400, { error: 'redirect_uri_mismatch' });
      return;
    }
    const back = new URL(redirectUri);
    const state = params.get('state');
    if (state !== null) back.searchParams.set('state', state);
    lastScope = params.get('scope') ?? undefined;
    if (deny) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user has denied your application access.');
    } else {
      const challenge = params.get('code_challenge');
      if (challenge === null || params.get('code_challenge_method') !== 'S256') {
        json(res, 400, { error: 'invalid_request', error_description: 'PKCE S256 expected by this fake' });
        return;
      }
      const code = randomBytes(10).toString('hex');
      codes.set(code, { clientId: options.clientId, redirectUri, codeChallenge: challenge, expiresAt: Date.now() + 600_000 });
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { location: back.href });
    res.end();
  }

  async function accessToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    tokenRequests += 1;
    const raw = await readBody(req);
    const type = req.headers['content-type'] ?? '';
    const form = type.includes('application/json')
      ? new URLSearchParams(JSON.parse(raw) as Record<string, string>)
      : new URLSearchParams(raw);
    const wantsJson = (req.headers.accept ?? '').includes('application/json');
    const answer = (body: Record<string, string>): void => {
      if (wantsJson) json(res, 200, body);
      else {
        res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' });
        res.end(new URLSearchParams(body).toString());
      }
    };
    const code = form.get('code') ?? '';
    const pending = codes.get(code);
    codes.delete(code);
    if (form.get('client_id') !== options.clientId || form.get('client_secret') !== options.clientSecret) {
      answer({ error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
      return;
    }
    const verifier = form.get('code_verifier') ?? '';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (
      pending === undefined ||
      pending.expiresAt < Date.now() ||
      form.get('redirect_uri') !== pending.redirectUri ||
      challenge !== pending.codeChallenge
    ) {
      answer({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      return;
    }
    const token = `gho_${randomBytes(18).toString('hex')}`;
    tokens.add(token);
    answer({ access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
  }

  function api(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (req.headers['user-agent'] === undefined) {
      json(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header' });
      return;
    }
    const match = /^(?:Bearer|token) (.+)$/.exec(req.headers.authorization ?? '');
    if (match?.[1] === undefined || !tokens.has(match[1])) {
      json(res, 401, { message: 'Bad credentials' });
      return;
    }
    if (path === '/user') {
      if (failure === 'user-error') json(res, 500, { message: 'Server Error' });
      else json(res, 200, { login: user.login, id: user.id, name: user.name, email: user.email, type: 'User' });
      return;
    }
    if (failure === 'emails-error') json(res, 500, { message: 'Server Error' });
    else json(res, 200, user.emails);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') return authorize(url, res);
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      accessToken(req, res).catch(() => json(res, 500, { message: 'fake failed' }));
      return;
    }
    if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) return api(req, res, url.pathname);
    json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    setUser(next) {
      user = next;
    },
    setDeny(next) {
      deny = next;
    },
    setFailure(next) {
      failure = next;
    },
    get lastScope() {
      return lastScope;
    },
    get tokenRequests() {
      return tokenRequests;
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
