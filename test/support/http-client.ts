/**
 * A browser over real HTTP (fetch), for tests and benches that talk to
 * running instances: a cookie jar for `oc_session` (honouring Max-Age=0), a
 * family Origin on state-changing requests, its own client address through
 * X-Forwarded-For (the instances run with TRUST_PROXY, as behind a proxy),
 * and a wallet that signs challenges. Each request names the instance it
 * goes to, so one browser can move between instances like a browser behind
 * a load balancer.
 */
import { signBip322 } from './bitcoin-signer.js';
import { keepSessionCookies, sessionCookieHeader, type SessionJar, type Wallet } from './auth-client.js';

export interface HttpReply {
  readonly status: number;
  readonly body: any;
  readonly headers: Headers;
}

export interface LoginProof {
  readonly address: string;
  readonly message: string;
  readonly signature: string;
  readonly nonce: string;
}

export class HttpBrowser implements SessionJar {
  /** The jar's `oc_session` value, or undefined when none is held. */
  cookie: string | undefined;
  /** The jar's `__Host-oc_roster` binding (the roster this browser proves is its own), or undefined. */
  binding: string | undefined;

  constructor(
    /** Sent as Origin on POSTs and used as the challenge audience: `PUBLIC_URL` of the instances. */
    readonly origin: string,
    /** This browser's client address, sent as X-Forwarded-For. */
    readonly ip?: string,
  ) {}

  async request(base: string, method: string, path: string, payload?: unknown, headers: Record<string, string> = {}): Promise<HttpReply> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(method === 'GET' ? {} : { origin: this.origin }),
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        ...(sessionCookieHeader(this) === '' ? {} : { cookie: sessionCookieHeader(this) }),
        ...(this.ip ? { 'x-forwarded-for': this.ip } : {}),
        ...headers,
      },
      ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
    });
    keepSessionCookies(this, response.headers.getSetCookie());
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body, headers: response.headers };
  }

  get(base: string, path: string): Promise<HttpReply> {
    return this.request(base, 'GET', path);
  }

  post(base: string, path: string, payload: unknown = {}): Promise<HttpReply> {
    return this.request(base, 'POST', path, payload);
  }

  /**
   * A signed login proof from `base`'s challenge, ready to post (to any
   * instance). Two challenges for one address within a second share their
   * nonce (docs/protocol.md §5: it is a MAC of address and times) unless their
   * `ttl` differs.
   */
  async prove(base: string, wallet: Wallet, options: { purpose?: string; ttl?: number } = {}): Promise<LoginProof> {
    const query = new URLSearchParams({ addr: wallet.address, audience: this.origin, purpose: options.purpose ?? 'login' });
    if (options.ttl !== undefined) query.set('ttl', String(options.ttl));
    const challenge = await this.get(base, `/api/challenge?${query}`);
    if (challenge.status !== 200) throw new Error(`test client: challenge failed (${challenge.status}): ${JSON.stringify(challenge.body)}`);
    const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: challenge.body.message });
    return { address: wallet.address, message: challenge.body.message, signature, nonce: challenge.body.nonce };
  }

  submit(base: string, proof: LoginProof, options: { add?: boolean } = {}): Promise<HttpReply> {
    return this.post(base, `/api/auth/signin${options.add ? '?add=1' : ''}`, proof);
  }

  async signIn(base: string, wallet: Wallet, options: { add?: boolean } = {}): Promise<HttpReply> {
    return this.submit(base, await this.prove(base, wallet), options);
  }

  me(base: string): Promise<HttpReply> {
    return this.get(base, '/api/auth/me');
  }

  switchTo(base: string, did: string): Promise<HttpReply> {
    return this.post(base, '/api/auth/switch', { did_oc: did });
  }

  logout(base: string, scope?: 'current' | 'all'): Promise<HttpReply> {
    return this.post(base, `/api/auth/logout${scope ? `?scope=${scope}` : ''}`);
  }
}
