/**
 * Rate limits per client IP (docs/protocol.md §4 "Rate limits", docs/api.md
 * Limits), as an onRequest hook registered before the routes, plus a
 * preHandler for the one limit that needs the parsed body.
 *
 * - Each route declares its class, its extra limits and its behaviour with
 *   the limit store down in its policy (src/platform/http/policy.ts); the hook reads
 *   the policy of the route the router matched, so `/api/%61uth/signin`
 *   counts as the sign-in route it reaches. Requests that match no route get
 *   the policy of their path.
 * - read (default 60/min): /api/check, /api/verify, /api/discover,
 *   GET /api/challenge, /api/family-stats, /api/auth/me,
 *   /api/auth/providers, JWKS, /api/openapi, and any other /api/* path that
 *   matches no route (a scan still spends a budget).
 * - auth (default 20/min): every other /api/auth/* route, POST
 *   /api/challenge, POST /api/attestations, /api/connect/*, /api/contact.
 * - also: POST /api/auth/email-otp/start 5/hour per e-mail address and
 *   client network (IPv4 /24, IPv6 /48, as in src/identity/session/device.ts), by
 *   default 50/hour per e-mail address from all clients together (addresses
 *   keyed by a SHA-256 of the lowercased address, so no address is kept in
 *   memory or in Redis), and by default 120/hour per IP whatever the
 *   addresses; POST /api/contact 5/hour per IP. The mailbox is protected by
 *   address: the per-address ceiling is counted only for starts that passed
 *   the per-address-and-network limit, so one client cannot use it up for
 *   the owner of the address, and by default it is 10 times that limit, so a
 *   handful of networks cannot reach it either. The per-IP limit only stops
 *   one client from mailing addresses without end: it is 24 addresses'
 *   worth, so an office or a campus behind one IP is not locked out.
 * - A resend (docs/protocol.md §6 "E-mail codes"): a start that carries an
 *   unexpired token a start answered for the address skips the
 *   per-address-and-network limit and the ceiling, so whoever asked for a
 *   code can ask for a new one after others used up the address's starts,
 *   even though their starts replaced its code. It counts instead against
 *   the resends of its chain (`otp_resend`, {@link RESENDS_PER_START} an
 *   hour): the first start and every resend asked with a token of it share
 *   the chain its token names (src/features/email-code/email-code.ts). A token proves a
 *   start, not the address, so the bound is per chain: a stranger gets
 *   chains only by starts the ceiling counted, and each chain adds at most
 *   3 mails an hour (a token lives 10 minutes, so a chain ends unless
 *   resent within them). With its resends spent, a start with a token is
 *   counted like any other. The per-IP limit always applies.
 * - Not limited: OPTIONS preflights, /healthz, /readyz, the explorer's
 *   static assets, anything outside /api and JWKS.
 * - A limit of 0 turns its class off (docs/protocol.md §1).
 * - The client IP is `request.ip`: the socket address, or with
 *   `TRUST_PROXY` the address the proxy in front added to X-Forwarded-For
 *   (src/app.ts). IPv6 clients are counted per /64, the block one
 *   subscriber usually holds, so rotating addresses inside it gains nothing.
 * - Every limited response carries `X-RateLimit-Limit`, `-Remaining` and
 *   `-Reset` (seconds until the bucket is full again) of the tightest limit
 *   that applied; a refusal is 429 `rate_limited` with `Retry-After` and
 *   `retry_after_seconds`.
 * - Redis unreachable: see src/platform/limits/resilient.ts. `closed` limits answer
 *   503 `not_ready` with `Retry-After`, since the client did nothing wrong.
 */
import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../platform/config.js';
import { OcError } from '../platform/errors.js';
import type { FailureMode, RateDecision, ResilientLimiter } from '../platform/limits/index.js';
import { coarseNetwork } from '../identity/session/index.js';
import { sendError } from '../platform/http/errors.js';
import { policyOf, type RoutePolicy } from '../platform/http/policy.js';

type LimitName = 'read' | 'auth' | 'otp_ip' | 'otp_email' | 'otp_address' | 'otp_resend' | 'contact';

interface LimitSpec {
  readonly name: LimitName;
  readonly limit: number;
  readonly windowMs: number;
}

interface RouteRule {
  /** Limits counted per client IP in onRequest; never empty. */
  readonly perIp: readonly LimitSpec[];
  readonly mode: FailureMode;
}

export interface RateLimitEvents {
  /** A request was refused with 429 by this limit. */
  onRejected?(name: LimitName): void;
}

export interface RateLimitChecks {
  /** The resend chain of `token` when it is an unexpired start token of `email` (src/features/email-code/email-code.ts), else null. */
  resendChainOf?(email: string, token: string): string | null;
}

/** Resends an hour per chain (one browser's start and its resends; docs/protocol.md §4 "Rate limits"). */
const RESENDS_PER_START = 3;

const MINUTE = 60_000;
const HOUR = 3_600_000;
/** Seconds a client is asked to wait while the shared limit store is unreachable. */
const STORE_DOWN_RETRY_AFTER_SECONDS = 5;

/** The counting key of a client address: IPv4 as is, IPv6 by its /64. */
export function clientKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  if (ip.startsWith('::ffff:') && isIPv4(ip.slice(7))) return ip.slice(7);
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::') ? [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back] : front;
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Picks the decision a client should see: a refusal over an allowance, then the fewest remaining. */
function tighter(current: Applied | undefined, next: Applied): Applied {
  if (current === undefined) return next;
  if (current.decision.allowed !== next.decision.allowed) return next.decision.allowed ? current : next;
  if (!next.decision.allowed) return next.decision.retryAfterSeconds > current.decision.retryAfterSeconds ? next : current;
  return next.decision.remaining < current.decision.remaining ? next : current;
}

interface Applied {
  readonly spec: LimitSpec;
  readonly decision: RateDecision;
}

/** Browsers show cross-origin scripts only safelisted headers unless told (Fetch standard, CORS). */
const EXPOSED = 'retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset';

function setHeaders(reply: FastifyReply, applied: Applied): void {
  if (reply.hasHeader('access-control-allow-origin')) reply.header('access-control-expose-headers', EXPOSED);
  reply.header('x-ratelimit-limit', applied.spec.limit);
  reply.header('x-ratelimit-remaining', applied.decision.remaining);
  reply.header('x-ratelimit-reset', Math.ceil(applied.decision.resetMs / 1000));
}

function refuse(request: FastifyRequest, reply: FastifyReply, applied: Applied, events: RateLimitEvents): FastifyReply {
  events.onRejected?.(applied.spec.name);
  const seconds = applied.decision.retryAfterSeconds;
  reply.header('retry-after', seconds);
  return sendError(request, reply, new OcError('rate_limited', `rate limit: try again in ${seconds} s`), { retry_after_seconds: seconds });
}

function storeDown(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('retry-after', STORE_DOWN_RETRY_AFTER_SECONDS);
  return sendError(request, reply, new OcError('not_ready', 'rate limit: the shared limit store is unreachable; try again shortly'), {
    retry_after_seconds: STORE_DOWN_RETRY_AFTER_SECONDS,
  });
}

/**
 * The counting key of a client's network for the per-address e-mail limit:
 * its /24 or /48 (src/identity/session/device.ts), else its {@link clientKey}.
 */
function networkKey(ip: string): string {
  return coarseNetwork(ip) ?? clientKey(ip);
}

export function registerRateLimits(
  app: FastifyInstance,
  config: Config,
  limiter: ResilientLimiter,
  events: RateLimitEvents = {},
  checks: RateLimitChecks = {},
): void {
  const limits = config.rateLimits;
  const read: LimitSpec = { name: 'read', limit: limits.readPerMinute, windowMs: MINUTE };
  const auth: LimitSpec = { name: 'auth', limit: limits.authPerMinute, windowMs: MINUTE };
  const otpIp: LimitSpec = { name: 'otp_ip', limit: limits.otpIpPerHour, windowMs: HOUR };
  const otpEmail: LimitSpec = { name: 'otp_email', limit: limits.otpPerHour, windowMs: HOUR };
  const otpAddress: LimitSpec = { name: 'otp_address', limit: limits.otpAddressPerHour, windowMs: HOUR };
  // Never more resends than starts per address and network: 0 there turns resends' own limit off too.
  const otpResend: LimitSpec = { name: 'otp_resend', limit: Math.min(RESENDS_PER_START, limits.otpPerHour), windowMs: HOUR };
  const contact: LimitSpec = { name: 'contact', limit: limits.contactPerHour, windowMs: HOUR };
  const on = (spec: LimitSpec): boolean => spec.limit > 0;
  if (![read, auth, otpIp, otpEmail, otpAddress, contact].some(on)) return;

  // The rule of each policy, decided once: the hook is on every request, and
  // there are as few policies as presets.
  const rules = new Map<RoutePolicy, RouteRule | null>();
  function ruleOf(policy: RoutePolicy): RouteRule | null {
    let rule = rules.get(policy);
    if (rule !== undefined) return rule;
    const perIp = policy.limit === null ? [] : [policy.limit === 'read' ? read : auth];
    if (policy.extra === 'otp') perIp.push(otpIp);
    if (policy.extra === 'contact') perIp.push(contact);
    const active = perIp.filter(on);
    rule = active.length === 0 ? null : { perIp: active, mode: policy.storeDown };
    rules.set(policy, rule);
    return rule;
  }

  // The decision of the onRequest hook, for the preHandler of the e-mail start to compare with.
  const appliedOf = new WeakMap<FastifyRequest, Applied>();

  type Outcome = Applied | undefined | 'replied';

  /** Counts the request against each limit of its rule; synchronous while the limiter is (in memory). */
  function evaluate(
    request: FastifyRequest,
    reply: FastifyReply,
    rule: RouteRule,
    ip: string,
    from: number,
    applied: Applied | undefined,
  ): Outcome | Promise<Outcome> {
    for (let index = from; index < rule.perIp.length; index++) {
      const spec = rule.perIp[index]!;
      const answer = limiter.hit(`${spec.name}:${ip}`, spec.limit, spec.windowMs, rule.mode);
      if (answer instanceof Promise) {
        return answer.then((decision) => {
          if (decision === 'unavailable') {
            storeDown(request, reply);
            return 'replied';
          }
          return evaluate(request, reply, rule, ip, index + 1, tighter(applied, { spec, decision }));
        });
      }
      if (answer === 'unavailable') {
        storeDown(request, reply);
        return 'replied';
      }
      applied = tighter(applied, { spec, decision: answer });
    }
    return applied;
  }

  function conclude(request: FastifyRequest, reply: FastifyReply, outcome: Outcome, done: (error?: Error) => void): void {
    if (outcome === 'replied') return;
    if (outcome !== undefined) {
      setHeaders(reply, outcome);
      // A hook that replies does not call done (Fastify "Respond to a request from a hook").
      if (!outcome.decision.allowed) return void refuse(request, reply, outcome, events);
      if (policyOf(request).extra === 'otp') appliedOf.set(request, outcome);
    }
    done();
  }

  // A callback hook, not an async one: with the in-memory limiter the whole
  // check runs without a promise (docs/performance.md: this is on every request).
  app.addHook('onRequest', (request, reply, done) => {
    const rule = ruleOf(policyOf(request));
    if (rule === null) return done();
    const outcome = evaluate(request, reply, rule, clientKey(request.ip), 0, undefined);
    if (outcome instanceof Promise) {
      outcome.then((settled) => conclude(request, reply, settled, done), done);
      return;
    }
    conclude(request, reply, outcome, done);
  });

  if (!on(otpEmail) && !on(otpAddress)) return;

  /** A resend's chain: the start carries an unexpired token of its address (see the file comment). */
  function resendChainOf(email: string, token: unknown): string | null {
    if (typeof token !== 'string' || checks.resendChainOf === undefined) return null;
    return checks.resendChainOf(email, token);
  }

  // Per address: the body is parsed and validated by now (docs/api.md: `{email, token?}`).
  // First per address and network, then the ceiling per address, which only
  // starts that passed the first are counted against; a resend counts
  // against the resends of its chain instead, while it has some.
  app.addHook('preHandler', async (request, reply) => {
    if (policyOf(request).extra !== 'otp') return;
    const body = request.body as { email?: unknown; token?: unknown } | undefined;
    const email = body?.email;
    if (typeof email !== 'string') return;
    const addressKey = createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
    let applied = appliedOf.get(request);
    const chain = resendChainOf(email, body?.token);
    if (chain !== null) {
      if (!on(otpResend)) return;
      const answer = limiter.hit(`otp_resend:${addressKey}:${chain}`, otpResend.limit, otpResend.windowMs, 'closed');
      const decision = answer instanceof Promise ? await answer : answer;
      if (decision === 'unavailable') return storeDown(request, reply);
      if (decision.allowed) {
        applied = tighter(applied, { spec: otpResend, decision });
        setHeaders(reply, applied);
        return;
      }
    }
    const startLimits: Array<[LimitSpec, string]> = [
      [otpEmail, `otp_email:${addressKey}:${networkKey(request.ip)}`],
      [otpAddress, `otp_address:${addressKey}`],
    ];
    for (const [spec, key] of startLimits) {
      if (!on(spec)) continue;
      const answer = limiter.hit(key, spec.limit, spec.windowMs, 'closed');
      const decision = answer instanceof Promise ? await answer : answer;
      if (decision === 'unavailable') return storeDown(request, reply);
      applied = tighter(applied, { spec, decision });
      setHeaders(reply, applied);
      if (!applied.decision.allowed) return refuse(request, reply, applied, events);
    }
  });
}
