/**
 * The OpenID provider (docs/protocol.md §8) on SQLite, the service in a
 * process of its own, with a first-party confidential client registered the
 * operator's way (no consent page) and a host session signed in by BIP-322:
 *
 * 1. the token endpoint: authorization code exchanges (`POST /oidc/token`,
 *    `client_secret_basic` and PKCE) through wrk, 50 connections. A code is
 *    good once and for 60 s, so before each round the bench mints more
 *    codes than the round can use, through the provider's own authorization
 *    redirects with the host session cookie and the provider's cookies in a
 *    small jar, and wrk's script posts them in turn;
 * 2. userinfo: `GET /oidc/userinfo` with one bearer access token, through
 *    wrk, 50 connections;
 * 3. the device grant's poll (RFC 8628, docs/protocol.md §8 "Devices"):
 *    `POST /oidc/token` with `grant_type=…:device_code` for codes nobody
 *    has answered yet, each `authorization_pending`, through wrk, 50
 *    connections, cycling through {@link DEVICE_CODES} codes so that each
 *    is polled no sooner than its interval (a device that keeps time),
 *    never `slow_down`;
 * 4. the whole code flow, for a browser the provider has not seen: the
 *    authorization, the interaction that signs the host session in, the
 *    redirect back with a code, the code exchange and userinfo, from this
 *    process (Node's fetch, keep-alive, {@link FLOW_WORKERS} flows at a
 *    time), counted in flows a second of the wall clock and in flows a
 *    second of the service's CPU time (its one process: the one core the
 *    JavaScript runs on).
 *
 * 5. an API's local check of a JWT access token (bench/access-token.ts):
 *    an ES256 token from the service's `client_credentials` grant, checked
 *    in this process with `@oc-host/verify`, as a ratio to the package's
 *    session-cookie check in the same rounds. It needs no wrk.
 *
 * The token, userinfo and device poll rows are ratios to the bare Fastify
 * route measured with wrk just before each, median of {@link ROUNDS} rounds, with p50/p99
 * and the service CPU time each request cost.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store.js';
import { RATE_LIMITS_OFF } from '../test/support/app.js';
import { newWallet } from '../test/support/auth-client.js';
import { freePort, signInOnInstance, startInstance, type Instance } from '../test/support/instances.js';
import { operatorRegistry } from '../test/support/oidc-rp.js';
import { localCheck } from './access-token.js';
import { loadNote, medianRun } from './http-verify.bench.js';
import { median, type BenchResult } from './lib.js';
import { cpuMsOf, luaList, luaString, peakRssMb, runWrk, startBareFastify, wrkAvailable, type WrkResult } from './wrk.js';

const REDIRECT = 'https://app.example/callback';
/** The API the machine client asks a token for. */
const API = 'https://invoices.example/api';
const SCOPE = 'openid profile bitcoin';
/** Rounds of (bare route, the endpoint), so each ratio compares two runs taken seconds apart on a shared machine. */
const ROUNDS = 3;
/** Flows run at once in the whole-flow figure. */
const FLOW_WORKERS = 8;
/** Authorizations run at once while minting codes. */
const MINT_WORKERS = 8;
/** Device codes the poll figure cycles through: a code comes round again no sooner than its interval below 9,600 polls a second. */
const DEVICE_CODES = 12000;
/** The service's poll interval here (OIDC_DEVICE_POLL_SECONDS), seconds. */
const DEVICE_POLL_SECONDS = 1;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** The clock ticks of /proc/<pid>/stat, read once. */
/** The host session cookie and the provider's own cookies of one browser. */
class CookieJar {
  readonly #host: string;
  readonly #own = new Map<string, string>();

  constructor(hostCookie: string) {
    this.#host = hostCookie;
  }

  header(): string {
    return [this.#host, ...[...this.#own].map(([name, value]) => `${name}=${value}`)].join('; ');
  }

  keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const match = /^([^=]+)=([^;]*)/.exec(line);
      const name = match?.[1];
      // The host session is the jar's own; only the provider's cookies are kept from answers.
      if (name === undefined || name === 'oc_session' || name === '__Host-oc_roster') continue;
      if (/expires=Thu, 01 Jan 1970/i.test(line) || /Max-Age=0(;|$)/i.test(line) || match?.[2] === '') this.#own.delete(name);
      else this.#own.set(name, match?.[2] ?? '');
    }
  }
}

interface Setup {
  readonly service: Instance;
  readonly issuer: string;
  readonly clientId: string;
  /** `Authorization: Basic …` of the client. */
  readonly basic: string;
  /** A public device client (RFC 8628). */
  readonly deviceClientId: string;
  readonly hostCookie: string;
  /** `Authorization: Basic …` of a machine client allowed {@link API}'s scope. */
  readonly machineBasic: string;
}

/** RFC 6749 §2.3.1: the id and secret are form-encoded before base64. */
function basicOf(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** A JWT access token for {@link API}, from the service's client_credentials grant. */
async function apiToken(setup: Setup): Promise<string> {
  const response = await fetch(`${setup.issuer}/oidc/token`, {
    method: 'POST',
    headers: { authorization: setup.machineBasic, 'content-type': FORM },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read:invoices', resource: API }).toString(),
  });
  const answer = (await response.json()) as { access_token?: string };
  if (response.status !== 200 || answer.access_token === undefined) {
    throw new Error(`bench: client_credentials answered ${response.status} ${JSON.stringify(answer)}`);
  }
  return answer.access_token;
}

/** PKCE with one verifier for every authorization of the bench: the exchange checks it the same way. */
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER, 'ascii').digest('base64url');

function authorizationUrl(setup: Setup): string {
  const params = new URLSearchParams({
    client_id: setup.clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: SCOPE,
    state: randomBytes(8).toString('base64url'),
    nonce: randomBytes(8).toString('base64url'),
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  });
  return `${setup.issuer}/oidc/auth?${params}`;
}

/** Follows the provider's redirects from an authorization request to the redirect URI; its code. */
async function authorize(setup: Setup, jar: CookieJar): Promise<string> {
  let url = authorizationUrl(setup);
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.keep(response);
    const body = await response.text();
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) {
      throw new Error(`bench: the authorization stopped at ${response.status} ${url}: ${body.slice(0, 300)}`);
    }
    const next = new URL(location, url);
    if (next.origin !== setup.issuer) {
      const code = next.searchParams.get('code');
      if (code === null) throw new Error(`bench: the authorization answered ${next.href}`);
      return code;
    }
    url = next.href;
  }
  throw new Error('bench: the authorization redirected too often');
}

function tokenBody(code: string): string {
  return new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER }).toString();
}

const FORM = 'application/x-www-form-urlencoded';

async function exchange(setup: Setup, code: string): Promise<{ access_token: string; id_token: string }> {
  const response = await fetch(`${setup.issuer}/oidc/token`, {
    method: 'POST',
    headers: { authorization: setup.basic, 'content-type': FORM },
    body: tokenBody(code),
  });
  const answer = (await response.json()) as { access_token?: string; id_token?: string };
  if (response.status !== 200 || answer.access_token === undefined || answer.id_token === undefined) {
    throw new Error(`bench: the token endpoint answered ${response.status} ${JSON.stringify(answer)}`);
  }
  return { access_token: answer.access_token, id_token: answer.id_token };
}

async function userinfo(setup: Setup, accessToken: string): Promise<void> {
  const response = await fetch(`${setup.issuer}/oidc/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  const answer = (await response.json()) as { sub?: string };
  if (response.status !== 200 || answer.sub === undefined) throw new Error(`bench: userinfo answered ${response.status}`);
}

/** Runs `task` `count` times, `workers` at a time; the results in order. */
async function pooled<T>(count: number, workers: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await task(index);
      }
    }),
  );
  return results;
}

/** A device authorization (RFC 8628) of the bench's device client: its device code. */
async function deviceCode(setup: Setup): Promise<string> {
  const response = await fetch(`${setup.issuer}/oidc/device/auth`, {
    method: 'POST',
    headers: { 'content-type': FORM },
    body: new URLSearchParams({ client_id: setup.deviceClientId, scope: 'openid' }).toString(),
  });
  const answer = (await response.json()) as { device_code?: string };
  if (response.status !== 200 || answer.device_code === undefined) {
    throw new Error(`bench: the device authorization answered ${response.status} ${JSON.stringify(answer)}`);
  }
  return answer.device_code;
}

function pollBody(setup: Setup, code: string): string {
  return new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: code, client_id: setup.deviceClientId }).toString();
}

/** One poll of a device code: what the token endpoint says. */
async function pollOnce(setup: Setup, code: string): Promise<string> {
  const response = await fetch(`${setup.issuer}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': FORM },
    body: pollBody(setup, code),
  });
  return String(((await response.json()) as { error?: unknown }).error);
}

/** A wrk script that polls the device codes in turn, round and round (one wrk thread: one counter). */
function pollingInTurn(bodies: readonly string[]): string {
  return [
    luaList('bodies', bodies),
    `local headers = { ["content-type"] = ${luaString(FORM)} }`,
    'local next = 0',
    'request = function()',
    `  next = next % ${bodies.length} + 1`,
    '  return wrk.format("POST", "/oidc/token", headers, bodies[next])',
    'end',
  ].join('\n');
}

/** A wrk script that posts one code each, in turn (one wrk thread: one counter). */
function exchangingInTurn(setup: Setup, bodies: readonly string[]): string {
  return [
    luaList('bodies', bodies),
    `local headers = { ["authorization"] = ${luaString(setup.basic)}, ["content-type"] = ${luaString(FORM)} }`,
    'local next = 0',
    'request = function()',
    '  next = next + 1',
    '  return wrk.format("POST", "/oidc/token", headers, bodies[next])',
    'end',
  ].join('\n');
}

async function startService(dir: string): Promise<Setup> {
  const databaseUrl = `sqlite:${join(dir, 'oc.sqlite')}`;
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  // The operator's way (`oc-host oidc clients add --first-party`), before the service starts.
  const store = await openStore(databaseUrl);
  let clientId: string;
  let secret: string;
  let machineBasic: string;
  let deviceClientId: string;
  try {
    const registry = await operatorRegistry(store, issuer, () => new Date());
    const issued = await registry.clients.create({ client_name: 'Bench app', redirect_uris: [REDIRECT] }, { firstParty: true });
    if (issued.client_secret === undefined) throw new Error('bench: the client has no secret');
    clientId = issued.client_id;
    secret = issued.client_secret;
    // An API and a machine client of it (`oc-host oidc resources add`, `oc-host oidc clients add --machine`).
    await registry.resources.add({ uri: API, name: 'Invoices', scopes: ['read:invoices'] });
    const machine = await registry.clients.create({
      client_name: 'Bench job',
      redirect_uris: [],
      machine: true,
      api_scopes: ['read:invoices'],
    });
    if (machine.client_secret === undefined) throw new Error('bench: the machine client has no secret');
    machineBasic = basicOf(machine.client_id, machine.client_secret);
    const device = await registry.clients.create({
      client_name: 'Bench TV',
      redirect_uris: [],
      device: true,
      token_endpoint_auth_method: 'none',
    });
    deviceClientId = device.client_id;
  } finally {
    await store.close();
  }
  const service = await startInstance({
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    PUBLIC_URL: issuer,
    NOSTR_RELAYS: 'ws://127.0.0.1:9',
    ESPLORA_URLS: 'http://127.0.0.1:9',
    // Figures of the routes themselves: the rate limits are measured in scale.bench.ts.
    ...RATE_LIMITS_OFF,
    OIDC_DEVICE_POLL_SECONDS: String(DEVICE_POLL_SECONDS),
  });
  try {
    const token = await signInOnInstance(service, issuer, newWallet());
    return {
      service,
      issuer,
      clientId,
      basic: basicOf(clientId, secret),
      deviceClientId,
      hostCookie: `oc_session=${token}`,
      machineBasic,
    };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

/** A round's codes: `count` authorizations from one browser whose provider session is already there. */
async function mintCodes(setup: Setup, jar: CookieJar, count: number): Promise<{ codes: string[]; perSecond: number }> {
  const started = performance.now();
  const codes = await pooled(count, MINT_WORKERS, () => authorize(setup, jar));
  return { codes, perSecond: (count * 1000) / (performance.now() - started) };
}

interface Measured {
  readonly wrk: WrkResult;
  /** Service CPU time per request, ms. */
  readonly cpuMs: number;
}

async function measuredWrk(setup: Setup, url: string, options: Parameters<typeof runWrk>[1]): Promise<Measured> {
  const cpuBefore = cpuMsOf(setup.service.child.pid!);
  const wrk = await runWrk(url, options);
  return { wrk, cpuMs: (cpuMsOf(setup.service.child.pid!) - cpuBefore) / wrk.requests };
}

function cpuNote(rounds: readonly Measured[]): string {
  const perRequest = median(rounds.map((round) => round.cpuMs));
  return Number.isNaN(perRequest) ? '' : `service CPU ${(perRequest * 1000).toFixed(0)} µs a request`;
}

export async function run(options: { durationSeconds?: number } = {}): Promise<BenchResult[]> {
  const durationSeconds = options.durationSeconds ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'oc-bench-oidc-'));
  const bare = await startBareFastify();
  const results: BenchResult[] = [];
  try {
    const setup = await startService(dir);
    try {
      // An API's local check first: it runs in this process and needs no wrk.
      results.push(
        ...(await localCheck({
          issuer: setup.issuer,
          audience: API,
          accessToken: await apiToken(setup),
          sessionToken: setup.hostCookie.slice('oc_session='.length),
        })),
      );
      if (!wrkAvailable()) {
        results.push({ name: 'OpenID provider endpoints', opsPerSec: 0, note: 'skipped: wrk not installed (apt-get install wrk)' });
        return results;
      }
      const pid = setup.service.child.pid!;
      // One browser signed in to the provider: every later authorization of it is one redirect with a code.
      const jar = new CookieJar(setup.hostCookie);
      await exchange(setup, await authorize(setup, jar));

      // A pilot sizes the code supply: 4 times what a round at the pilot's rate would use, within bounds
      // that keep a round's minting well inside a code's 60 s.
      const pilot = await mintCodes(setup, jar, 400);
      const pilotStarted = performance.now();
      await pooled(pilot.codes.length, MINT_WORKERS, (index) => exchange(setup, pilot.codes[index]!));
      const pilotRate = (pilot.codes.length * 1000) / (performance.now() - pilotStarted);
      const supply = Math.min(8000, Math.max(3000, Math.ceil(pilotRate * durationSeconds * 4)));

      const bareRuns: WrkResult[] = [];
      const tokenRuns: Measured[] = [];
      const mintRates: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const minted = await mintCodes(setup, jar, supply);
        mintRates.push(minted.perSecond);
        bareRuns.push(await runWrk(bare.url, { durationSeconds }));
        const measured = await measuredWrk(setup, `${setup.issuer}/oidc/token`, {
          durationSeconds,
          // Newest first: the oldest codes of a slow minting are the last wrk would reach.
          lua: exchangingInTurn(setup, minted.codes.map(tokenBody).reverse()),
        });
        if (measured.wrk.requests + 50 > supply) throw new Error(`bench: a round used up its ${supply} codes; raise the supply`);
        if (measured.wrk.non2xx > 0) throw new Error(`bench: the token endpoint answered ${measured.wrk.non2xx} non-2xx responses`);
        tokenRuns.push(measured);
      }
      const bareMedian = medianRun(bareRuns);
      results.push({
        name: 'bare Fastify JSON route (wrk, 50 conns)',
        opsPerSec: bareMedian.requestsPerSec,
        note: `p50 ${bareMedian.p50Ms.toFixed(2)} ms, p99 ${bareMedian.p99Ms.toFixed(2)} ms; medians of ${ROUNDS} rounds`,
      });
      const token = medianRun(tokenRuns.map((round) => round.wrk));
      results.push({
        name: 'POST /oidc/token, code exchange, client_secret_basic + PKCE, RS256 ID token, SQLite (wrk, 50 conns)',
        opsPerSec: token.requestsPerSec,
        baseline: 'bare Fastify JSON route',
        ratio: median(tokenRuns.map((round, index) => round.wrk.requestsPerSec / bareRuns[index]!.requestsPerSec)),
        note: loadNote(token, `${cpuNote(tokenRuns)}; ${supply} codes minted a round`),
      });
      results.push({
        name: `GET /oidc/auth to the code, provider session present (fetch, ${MINT_WORKERS} at a time)`,
        opsPerSec: median(mintRates),
        note: `the code minting of the rounds above; median of ${ROUNDS}`,
      });

      // Userinfo: one access token, asked again and again.
      const { access_token: accessToken } = await exchange(setup, await authorize(setup, jar));
      const userinfoBare: WrkResult[] = [];
      const userinfoRuns: Measured[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        userinfoBare.push(await runWrk(bare.url, { durationSeconds }));
        const measured = await measuredWrk(setup, `${setup.issuer}/oidc/userinfo`, {
          durationSeconds,
          headers: { authorization: `Bearer ${accessToken}` },
        });
        if (measured.wrk.non2xx > 0) throw new Error(`bench: userinfo answered ${measured.wrk.non2xx} non-2xx responses`);
        userinfoRuns.push(measured);
      }
      const info = medianRun(userinfoRuns.map((round) => round.wrk));
      results.push({
        name: `GET /oidc/userinfo, bearer access token, scope "${SCOPE}", SQLite (wrk, 50 conns)`,
        opsPerSec: info.requestsPerSec,
        baseline: 'bare Fastify JSON route',
        ratio: median(userinfoRuns.map((round, index) => round.wrk.requestsPerSec / userinfoBare[index]!.requestsPerSec)),
        note: loadNote(info, `${cpuNote(userinfoRuns)}; bare ${Math.round(median(userinfoBare.map((run) => run.requestsPerSec)))}/s`),
      });

      // The device grant's poll: pending codes, each polled no sooner than its interval.
      const codes = await pooled(DEVICE_CODES, MINT_WORKERS, () => deviceCode(setup));
      const first = await pollOnce(setup, codes[0]!);
      if (first !== 'authorization_pending') throw new Error(`bench: a pending device code was answered ${first}`);
      const pollScript = pollingInTurn(codes.map((code) => pollBody(setup, code)));
      const pollBare: WrkResult[] = [];
      const pollRuns: Measured[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        pollBare.push(await runWrk(bare.url, { durationSeconds }));
        const measured = await measuredWrk(setup, `${setup.issuer}/oidc/token`, { durationSeconds, lua: pollScript });
        // Every answer is 400 authorization_pending; a code polled again within its interval would be slow_down instead.
        if (measured.wrk.requestsPerSec * DEVICE_POLL_SECONDS * 1.25 > DEVICE_CODES) {
          throw new Error(
            `bench: ${Math.round(measured.wrk.requestsPerSec)} polls a second come round to a code too soon; raise DEVICE_CODES`,
          );
        }
        pollRuns.push(measured);
      }
      const poll = medianRun(pollRuns.map((round) => round.wrk));
      results.push({
        name: 'POST /oidc/token, device code poll (RFC 8628), authorization_pending, SQLite (wrk, 50 conns)',
        opsPerSec: poll.requestsPerSec,
        baseline: 'bare Fastify JSON route',
        ratio: median(pollRuns.map((round, index) => round.wrk.requestsPerSec / pollBare[index]!.requestsPerSec)),
        note: loadNote(poll, `${cpuNote(pollRuns)}; ${DEVICE_CODES} pending codes in turn`),
      });

      // The whole flow for a browser new to the provider: a jar with a host
      // session alone. Each worker is one browser with a host session of its
      // own: one host session's flows through several provider sessions at
      // once are not a browser's, and the provider ends the provider session
      // a later sign-in of the same host session to the same app supersedes
      // (docs/protocol.md §8 "Signing in").
      const browsers = await Promise.all(
        Array.from({ length: FLOW_WORKERS }, async () => `oc_session=${await signInOnInstance(setup.service, setup.issuer, newWallet())}`),
      );
      const flow = async (worker: number) => {
        const tokens = await exchange(setup, await authorize(setup, new CookieJar(browsers[worker]!)));
        await userinfo(setup, tokens.access_token);
      };
      // Warm-up: six flows per browser, one at a time in each.
      await Promise.all(
        browsers.map(async (_, worker) => {
          for (let round = 0; round < 6; round++) await flow(worker);
        }),
      );
      const cpuBefore = cpuMsOf(pid);
      const ownBefore = process.cpuUsage();
      const started = performance.now();
      let flows = 0;
      await Promise.all(
        Array.from({ length: FLOW_WORKERS }, async (_, worker) => {
          while (performance.now() - started < durationSeconds * 1000 * 2) {
            await flow(worker);
            flows += 1;
          }
        }),
      );
      const wallMs = performance.now() - started;
      const serviceCpuMs = cpuMsOf(pid) - cpuBefore;
      const own = process.cpuUsage(ownBefore);
      results.push({
        name: `whole code flow: authorize, interaction, code, token, userinfo; new provider session (fetch, ${FLOW_WORKERS} at a time)`,
        opsPerSec: (flows * 1000) / wallMs,
        note: `${flows} flows in ${(wallMs / 1000).toFixed(1)} s of wall time`,
      });
      results.push({
        name: 'whole code flow per second of the service CPU (one core)',
        opsPerSec: (flows * 1000) / serviceCpuMs,
        note:
          `service CPU ${(serviceCpuMs / flows).toFixed(2)} ms a flow (5 requests); ` +
          `the client here ${((own.user + own.system) / 1000 / flows).toFixed(2)} ms; ` +
          `service peak RSS ${peakRssMb(pid)?.toFixed(0) ?? '?'} MiB`,
      });
    } finally {
      await setup.service.stop();
    }
  } finally {
    await bare.app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}
