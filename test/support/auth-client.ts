/**
 * A browser-like client for HTTP tests of the auth host: a cookie jar for
 * `oc_session` (honouring Max-Age=0), a family Origin on state-changing
 * requests, and a wallet that signs challenges with BIP-322.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { addressFromPrivateKey, signBip322 } from './bitcoin-signer.js';
import type { BitcoinNetwork } from '../../src/platform/config.js';

export interface Wallet {
  readonly privateKey: Uint8Array;
  readonly address: string;
}

let walletCounter = 1;

/** A deterministic, distinct wallet per call (P2WPKH unless asked otherwise). */
export function newWallet(type: 'p2wpkh' | 'p2tr' | 'p2pkh' | 'p2sh-p2wpkh' = 'p2wpkh', network: BitcoinNetwork = 'mainnet'): Wallet {
  const privateKey = new Uint8Array(32);
  const seed = walletCounter++;
  privateKey[0] = 1;
  privateKey[28] = (seed >>> 24) & 0xff;
  privateKey[29] = (seed >>> 16) & 0xff;
  privateKey[30] = (seed >>> 8) & 0xff;
  privateKey[31] = seed & 0xff;
  return { privateKey, address: addressFromPrivateKey(privateKey, type, network) };
}

export interface Reply {
  readonly status: number;
  readonly body: any;
  readonly headers: LightMyRequestResponse['headers'];
  readonly setCookies: string[];
}

/** What a test browser keeps of the host's cookies: the session and the roster binding (`__Host-oc_roster`). */
export interface SessionJar {
  cookie: string | undefined;
  binding: string | undefined;
}

/** The `Cookie` header a jar sends, as a browser would: its session and its binding. */
export function sessionCookieHeader(jar: SessionJar): string {
  return [jar.cookie === undefined ? '' : `oc_session=${jar.cookie}`, jar.binding === undefined ? '' : `__Host-oc_roster=${jar.binding}`]
    .filter((pair) => pair !== '')
    .join('; ');
}

/** Takes the session and binding cookies an answer sets into `jar`; Max-Age=0 clears, any other value sets. */
export function keepSessionCookies(jar: SessionJar, setCookies: readonly string[]): void {
  for (const line of setCookies) {
    const match = /^(oc_session|__Host-oc_roster)=([^;]*);/.exec(line);
    if (!match) continue;
    const value = /Max-Age=0(;|$)/.test(line) ? undefined : match[2];
    if (match[1] === 'oc_session') jar.cookie = value;
    else jar.binding = value;
  }
}

export class Browser implements SessionJar {
  readonly #app: FastifyInstance;
  readonly origin: string;
  /** The jar's `oc_session` value, or undefined when none is held. */
  cookie: string | undefined;
  /** The jar's `__Host-oc_roster` binding (the roster this browser proves is its own), or undefined. */
  binding: string | undefined;
  /** Sent as User-Agent on every request, when set. */
  userAgent: string | undefined;
  /** The client address the app sees (light-my-request's remoteAddress), when set. */
  remoteAddress: string | undefined;

  constructor(app: FastifyInstance, origin = 'http://localhost:8787') {
    this.#app = app;
    this.origin = origin;
  }

  async request(
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const response = await this.#app.inject({
      method,
      url,
      headers: {
        ...(method === 'GET' ? {} : { origin: this.origin }),
        ...(sessionCookieHeader(this) === '' ? {} : { cookie: sessionCookieHeader(this) }),
        ...(this.userAgent === undefined ? {} : { 'user-agent': this.userAgent }),
        ...headers,
      },
      ...(this.remoteAddress === undefined ? {} : { remoteAddress: this.remoteAddress }),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
    const raw = response.headers['set-cookie'];
    const setCookies = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    keepSessionCookies(this, setCookies);
    let body: unknown;
    try {
      body = response.json();
    } catch {
      body = response.body;
    }
    return { status: response.statusCode, body, headers: response.headers, setCookies };
  }

  get(url: string): Promise<Reply> {
    return this.request('GET', url);
  }

  post(url: string, payload?: unknown): Promise<Reply> {
    return this.request('POST', url, payload ?? {});
  }

  /** GET /api/challenge for the wallet, sign it, POST /api/auth/signin. */
  async signIn(wallet: Wallet, options: { add?: boolean; audience?: string } = {}): Promise<Reply> {
    const proof = await this.prove(wallet, 'login', options.audience);
    return this.post(`/api/auth/signin${options.add ? '?add=1' : ''}`, proof);
  }

  /** A signed login (or other purpose) proof, ready to post. */
  async prove(
    wallet: Wallet,
    purpose: string,
    audience = this.origin,
  ): Promise<{ address: string; message: string; signature: string; nonce: string }> {
    const query = new URLSearchParams({ addr: wallet.address, audience, purpose });
    const challenge = await this.get(`/api/challenge?${query}`);
    if (challenge.status !== 200) throw new Error(`test client: challenge failed: ${JSON.stringify(challenge.body)}`);
    const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: challenge.body.message });
    return { address: wallet.address, message: challenge.body.message, signature, nonce: challenge.body.nonce };
  }

  me(): Promise<Reply> {
    return this.get('/api/auth/me');
  }

  switchTo(did: string): Promise<Reply> {
    return this.post('/api/auth/switch', { did_oc: did });
  }

  logout(scope?: 'current' | 'all'): Promise<Reply> {
    return this.post(`/api/auth/logout${scope ? `?scope=${scope}` : ''}`);
  }
}
