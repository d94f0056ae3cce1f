/**
 * Session JWT throughput (docs/performance.md JWT): our mint and verify next to the
 * floor (raw `node:crypto` Ed25519 sign / verify over the same bytes) and next
 * to `jose` (SignJWT / jwtVerify), all in the same run, with ratios to the
 * floor. Cases are interleaved round by round and medians are reported, so
 * drift of the machine hits every case alike. Ours and the floor run on the
 * main thread; jose goes through WebCrypto, whose operations Node runs on its
 * thread pool, awaited one at a time here.
 *
 * Run alone: `node --import tsx bench/jwt.bench.ts`.
 */
import { sign, verify } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { SignJWT, jwtVerify } from 'jose';
import {
  KeyRing,
  SESSION_LIFETIME_SECONDS,
  generateSigningKey,
  mintSessionJwt,
  tokenHash,
  verifySessionJwt,
  type SessionClaimsInput,
} from '../src/identity/session/index.js';
import { formatTable, median, roundRatio, type BenchResult } from './lib.js';

export interface JwtBenchOptions {
  /** Rounds per case; medians over rounds are reported. */
  rounds?: number;
  /** Time of one case in one round, in milliseconds of the chosen clock. */
  roundMillis?: number;
  /**
   * 'cpu' (default) counts the CPU time of this process, all threads, so
   * jose's thread-pool work counts too and other processes on the shared
   * cores disturb the figures less; 'wall' counts elapsed time.
   */
  clock?: 'cpu' | 'wall';
}

export type Case = { name: string; baseline?: string } & ({ sync: () => unknown } | { async: () => Promise<unknown> });

/**
 * bench/lib.ts measures synchronous functions only; jose's API is async, so
 * this timer runs both kinds in the same interleaved rounds.
 */
export async function timeCase(testCase: Case, millis: number, clock: () => number): Promise<number> {
  let operations = 0;
  const start = clock();
  let elapsed = 0;
  do {
    if ('sync' in testCase) for (let index = 0; index < 32; index += 1) testCase.sync();
    else for (let index = 0; index < 32; index += 1) await testCase.async();
    operations += 32;
    elapsed = clock() - start;
  } while (elapsed < millis);
  return (operations * 1000) / elapsed;
}

export function cpuMillis(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

export async function run(options: JwtBenchOptions = {}): Promise<BenchResult[]> {
  const rounds = options.rounds ?? 9;
  const roundMillis = options.roundMillis ?? 200;
  const clock = options.clock === 'wall' ? () => performance.now() : cpuMillis;

  const key = generateSigningKey();
  const ring = KeyRing.single(key);
  const issuer = 'https://auth.example.com';
  const now = new Date();
  const iat = Math.floor(now.getTime() / 1000);
  // A realistic token: every claim a BIP-322 sign-in carries.
  const claims: SessionClaimsInput = {
    iss: issuer,
    sub: '0123456789abcdef0123456789abcdef',
    did_oc: 'did:oc:0123456789abcdef0123456789abcdef',
    jti: 'fedcba9876543210fedcba9876543210',
    iat,
    exp: iat + SESSION_LIFETIME_SECONDS,
    name: 'Satoshi',
    primary_btc: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    display_identity: { kind: 'btc', value: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' },
    signing_method: 'bip322',
    step_up_at: iat,
  };
  const token = mintSessionJwt(key, claims);
  const lastDot = token.lastIndexOf('.');
  const signingInput = Buffer.from(token.slice(0, lastDot), 'ascii');
  const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');

  // Every path must succeed, or the figures would time a failure.
  const joseClaims = { ...claims } as Record<string, unknown>;
  const joseToken = await new SignJWT(joseClaims).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: key.kid }).sign(key.privateKey);
  if (verifySessionJwt(token, ring, { issuer, now }) === null) throw new Error('bench jwt: our token does not verify');
  if (verifySessionJwt(joseToken, ring, { issuer, now }) === null) throw new Error('bench jwt: the jose token does not verify with ours');
  await jwtVerify(token, key.publicKey, { issuer, algorithms: ['EdDSA'], currentDate: now });
  if (!verify(null, signingInput, key.publicKey, signature)) throw new Error('bench jwt: raw signature does not verify');

  const signFloor = 'node:crypto sign (floor)';
  const verifyFloor = 'node:crypto verify (floor)';
  const cases: Case[] = [
    { name: signFloor, sync: () => sign(null, signingInput, key.privateKey) },
    { name: 'mintSessionJwt (ours)', baseline: signFloor, sync: () => mintSessionJwt(key, claims) },
    {
      name: 'jose SignJWT',
      baseline: signFloor,
      async: () => new SignJWT(joseClaims).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: key.kid }).sign(key.privateKey),
    },
    { name: verifyFloor, sync: () => verify(null, signingInput, key.publicKey, signature) },
    { name: 'verifySessionJwt (ours)', baseline: verifyFloor, sync: () => verifySessionJwt(token, ring, { issuer, now }) },
    {
      name: 'jose jwtVerify',
      baseline: verifyFloor,
      async: () => jwtVerify(token, key.publicKey, { issuer, algorithms: ['EdDSA'], currentDate: now }),
    },
    // What the host does per request instead of a signature check (docs/performance.md JWT).
    { name: 'tokenHash (host lookup key)', baseline: verifyFloor, sync: () => tokenHash(token) },
  ];

  for (const testCase of cases) await timeCase(testCase, 100, clock); // warm-up: JIT and OpenSSL contexts
  const samples = new Map<string, number[]>(cases.map((testCase) => [testCase.name, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (const testCase of cases) samples.get(testCase.name)!.push(await timeCase(testCase, roundMillis, clock));
  }

  return cases.map((testCase) => {
    const own = samples.get(testCase.name)!;
    const opsPerSec = Math.round(median(own));
    if (testCase.baseline === undefined) return { name: testCase.name, opsPerSec };
    // Within a round the case ran right after its baseline, so a per-round
    // ratio sees the same machine load on both sides; its median is reported.
    const ratio = roundRatio(own, samples.get(testCase.baseline)!);
    return { name: testCase.name, opsPerSec, baseline: testCase.baseline, ratio: Math.round(ratio * 1000) / 1000 };
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${formatTable(await run())}\n`);
}
