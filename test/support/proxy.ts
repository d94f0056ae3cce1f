/**
 * A load balancer for multi-instance tests: a loopback reverse proxy that
 * hands requests to its backends in turn (round robin), forwarding method,
 * path, headers and body as nginx in docs/operations.md would (Host kept,
 * X-Forwarded-For appended, X-Forwarded-Proto set), and remembers which
 * backend served each request. Its URL is the deployment's `PUBLIC_URL`.
 *
 * And a browser behind it: one cookie jar for every cookie the service sets,
 * redirects followed while they stay on the proxy, the provider library's
 * self-submitting forms submitted as its script would, and a BIP-322 wallet
 * sign-in to the host, so a whole OpenID flow runs through the proxy.
 */
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { signBip322 } from './bitcoin-signer.js';
import type { Wallet } from './auth-client.js';
import { FollowingBrowser, type Hop } from './oidc-rp.js';

export interface Served {
  /** The backend's index in the order given to {@link RoundRobinProxy.route}. */
  readonly backend: number;
  readonly method: string;
  /** Path and query. */
  readonly path: string;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1): the proxy's own business on each side. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'transfer-encoding']);

export class RoundRobinProxy {
  readonly #server: Server;
  readonly #agent = new Agent({ keepAlive: true });
  #backends: readonly URL[] = [];
  #next = 0;
  /** Every request forwarded, in the order they arrived. */
  readonly served: Served[] = [];
  readonly url: string;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  /** Listens on a free loopback port; requests wait for {@link route}. */
  static async start(): Promise<RoundRobinProxy> {
    let proxy: RoundRobinProxy | undefined;
    const server = createServer((request, response) => {
      if (proxy === undefined || proxy.#backends.length === 0) {
        response.writeHead(503).end();
        return;
      }
      proxy.#forward(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as { port: number }).port;
    proxy = new RoundRobinProxy(server, `http://127.0.0.1:${port}`);
    return proxy;
  }

  /** The instances behind the proxy (`http://127.0.0.1:<port>`). */
  route(backends: readonly string[]): void {
    this.#backends = backends.map((backend) => new URL(backend));
    this.#next = 0;
  }

  /**
   * Makes the next request go to a backend other than `backend` (round robin
   * goes on from there): a test that must see one step on one instance and
   * the next on another says so, instead of counting the requests between.
   */
  steerAwayFrom(backend: number): void {
    if (this.#next % this.#backends.length === backend) this.#next += 1;
  }

  /** The backend that served the last request matching `test`. */
  lastServed(test: (served: Served) => boolean): number {
    const found = this.served.findLast(test);
    if (found === undefined) throw new Error('proxy: no such request was served');
    return found.backend;
  }

  #forward(request: IncomingMessage, response: ServerResponse): void {
    const backend = this.#next % this.#backends.length;
    this.#next += 1;
    const target = this.#backends[backend] as URL;
    this.served.push({ backend, method: request.method ?? 'GET', path: request.url ?? '/' });
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    const peer = request.socket.remoteAddress ?? '127.0.0.1';
    const forwardedFor = request.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = typeof forwardedFor === 'string' ? `${forwardedFor}, ${peer}` : peer;
    headers['x-forwarded-proto'] = 'http';
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: request.method, path: request.url, headers, agent: this.#agent },
      (answer) => {
        const raw: string[] = [];
        for (let i = 0; i < answer.rawHeaders.length; i += 2) {
          const name = answer.rawHeaders[i] as string;
          if (!HOP_BY_HOP.has(name.toLowerCase())) raw.push(name, answer.rawHeaders[i + 1] as string);
        }
        raw.push('x-served-by', String(backend));
        response.writeHead(answer.statusCode ?? 502, raw);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(upstream);
  }

  async close(): Promise<void> {
    this.#agent.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A browser of the deployment behind the proxy. */
export class ProxyBrowser extends FollowingBrowser {
  /** One request: a form body or JSON for a POST, the family Origin on anything but GET. */
  async request(method: 'GET' | 'POST', url: string, body?: Record<string, string> | { json: unknown }): Promise<Hop> {
    const target = new URL(url, this.origin);
    const headers: Record<string, string> = {};
    if (this.jar.size > 0) headers.cookie = [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    if (method !== 'GET') headers.origin = this.origin;
    let payload: string | undefined;
    if (body !== undefined && 'json' in body) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body.json);
    } else if (body !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(body as Record<string, string>).toString();
    }
    const response = await fetch(target, { method, headers, redirect: 'manual', ...(payload === undefined ? {} : { body: payload }) });
    this.keep(response.headers.getSetCookie());
    const location = response.headers.get('location');
    const answerHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      answerHeaders[name] = value;
    });
    return {
      status: response.status,
      url: target.href,
      location: location === null ? undefined : new URL(location, target).href,
      body: await response.text(),
      headers: answerHeaders,
    };
  }

  /** Signs `wallet` in to the host (challenge, BIP-322 signature, sign-in); the DID of the account. */
  async signIn(wallet: Wallet): Promise<string> {
    const query = new URLSearchParams({ addr: wallet.address, audience: this.origin, purpose: 'login' });
    const challenge = await this.request('GET', `/api/challenge?${query}`);
    if (challenge.status !== 200) throw new Error(`proxy browser: challenge answered ${challenge.status}: ${challenge.body}`);
    const { message, nonce } = JSON.parse(challenge.body) as { message: string; nonce: string };
    const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message });
    const signedIn = await this.request('POST', '/api/auth/signin', { json: { address: wallet.address, message, signature, nonce } });
    if (signedIn.status !== 200) throw new Error(`proxy browser: sign-in answered ${signedIn.status}: ${signedIn.body}`);
    return (JSON.parse(signedIn.body) as { account: { did_oc: string } }).account.did_oc;
  }

  /** A JSON call to the host's API with this browser's session. */
  async api(method: 'GET' | 'POST', path: string, json?: unknown): Promise<{ status: number; body: any }> {
    const hop = await this.request(method, path, json === undefined ? undefined : { json });
    return { status: hop.status, body: hop.body === '' ? undefined : JSON.parse(hop.body) };
  }
}
