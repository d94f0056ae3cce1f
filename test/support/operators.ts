/**
 * The operators' command line as the suites use it (docs/operations.md
 * "Operators and the audit log"): a command run against a harness's store,
 * answering yes to every question, and a new operator with an API token.
 */
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { runOperatorCommand } from '../../src/cli/operator.js';
import { newWallet } from './auth-client.js';
import { LOCAL_ORIGIN, type AuthHarness } from './auth-harness.js';

/** Runs `oc-host <argv>` on the harness's store and clock: its exit code and the lines it printed on stdout. */
export async function operatorCommand(
  harness: AuthHarness,
  argv: string[],
  publicUrl = LOCAL_ORIGIN,
): Promise<{ readonly code: number; readonly lines: string[] }> {
  const lines: string[] = [];
  const code = await runOperatorCommand(argv, {
    store: harness.store,
    io: { out: (line) => lines.push(line), err: () => {}, ask: async () => 'yes' },
    now: harness.clock.now,
    publicUrl,
  });
  return { code, lines };
}

/** A new wallet account, signed in on `app`, named an operator and minted a token with `scopes`: its did and the token. */
export async function operatorWithToken(
  harness: AuthHarness,
  app: FastifyInstance,
  scopes: readonly string[],
): Promise<{ readonly did: string; readonly token: string }> {
  const signedIn = await harness.browser(app).signIn(newWallet());
  const did = signedIn.body.account.did_oc as string;
  expect((await operatorCommand(harness, ['operators', 'add', did])).code).toBe(0);
  const args = ['operators', 'tokens', 'mint', '--operator', did, '--name', 'tests'];
  for (const scope of scopes) args.push('--scope', scope);
  const minted = await operatorCommand(harness, args);
  expect(minted.code).toBe(0);
  return { did, token: minted.lines.at(-1) as string };
}
