/**
 * A resource server's local check of one of the provider's JWT access
 * tokens (docs/protocol.md §8 "APIs"), in process, as an API using
 * `@oc-host/verify` runs it per request: `createAccessTokenVerifier().check`
 * on an ES256 token from the running service's `client_credentials` grant,
 * its JWKS fetched once and cached. Next to it, in the same interleaved
 * rounds (CPU clock, medians, per-round ratios as in jwt.bench.ts):
 *
 * - the baseline: the package's session-cookie check (`createSessionVerifier`,
 *   EdDSA) of a real `oc_session` of the same service, what a consumer site
 *   does per request;
 * - the floor: jose's bare `jwtVerify` of the same access token with the
 *   same key, which the check is built on.
 */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { createAccessTokenVerifier, createSessionVerifier } from '../packages/verify/src/index.js';
import { median, roundRatio, type BenchResult } from './lib.js';
import { cpuMillis, timeCase, type Case } from './jwt.bench.js';

export interface LocalCheckInput {
  /** The service's issuer (its PUBLIC_URL, here its own address). */
  readonly issuer: string;
  readonly audience: string;
  /** A JWT access token for `audience`. */
  readonly accessToken: string;
  /** An `oc_session` of the same service. */
  readonly sessionToken: string;
}

const ROUNDS = 9;
const ROUND_MS = 200;

export async function localCheck(input: LocalCheckInput): Promise<BenchResult[]> {
  const { issuer, audience, accessToken, sessionToken } = input;
  const accessVerifier = createAccessTokenVerifier({ issuer, audience });
  const sessionVerifier = createSessionVerifier({ issuer, jwksUrl: `${issuer}/api/auth/jwks` });
  const keys = createLocalJWKSet((await (await fetch(`${issuer}/oidc/jwks`)).json()) as JSONWebKeySet);
  // Warm both key caches and check that every case does what it is said to, before anything is timed.
  if (!(await accessVerifier.check(accessToken)).ok) throw new Error('bench: the access token does not verify');
  if ((await sessionVerifier.verify(sessionToken)) === null) throw new Error('bench: the session does not verify');
  await jwtVerify(accessToken, keys, { issuer, audience, typ: 'at+jwt', algorithms: ['ES256'] });

  const baseline = '@oc-host/verify session cookie check (EdDSA)';
  const floor = 'jose jwtVerify of the access token (ES256)';
  const cases: Case[] = [
    { name: baseline, async: () => sessionVerifier.verify(sessionToken) },
    { name: floor, async: () => jwtVerify(accessToken, keys, { issuer, audience, typ: 'at+jwt', algorithms: ['ES256'] }) },
    { name: '@oc-host/verify access-token check (ES256, JWKS cached)', baseline, async: () => accessVerifier.check(accessToken) },
  ];
  for (const testCase of cases) await timeCase(testCase, 100, cpuMillis); // warm-up
  const samples = new Map<string, number[]>(cases.map((testCase) => [testCase.name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const testCase of cases) samples.get(testCase.name)!.push(await timeCase(testCase, ROUND_MS, cpuMillis));
  }
  const own = samples.get(cases[2]!.name)!;
  return [
    { name: baseline, opsPerSec: Math.round(median(samples.get(baseline)!)), note: 'CPU clock, medians of 9 rounds' },
    {
      name: floor,
      opsPerSec: Math.round(median(samples.get(floor)!)),
      baseline,
      ratio: roundRatio(samples.get(floor)!, samples.get(baseline)!),
    },
    {
      name: cases[2]!.name,
      opsPerSec: Math.round(median(own)),
      baseline,
      ratio: roundRatio(own, samples.get(baseline)!),
      note: `${(roundRatio(own, samples.get(floor)!) * 100).toFixed(0)} % of the bare jose check`,
    },
  ];
}
