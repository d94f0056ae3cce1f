/**
 * The tests whose outcome can depend on the Node.js release, run by CI on
 * its second Node (docs/operations.md "Continuous integration"): the SQLite
 * drivers (better-sqlite3 on Node 20, node:sqlite from Node 22.13), the
 * native and WebAssembly modules, Node's crypto, fetch, zlib, net and TLS
 * under every client and server the service uses, packaging, the
 * command line, start and shutdown, and one browser sign-in end to end.
 * Everything else is the service's own logic over those, and runs on every
 * release the same way; the whole suite runs on the first Node.
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export const RUNTIME_TESTS: readonly string[] = [
  // Storage: the drivers, files, plans, concurrency and restarts.
  'test/storage.conformance.test.ts',
  'test/database-files.test.ts',
  'test/storage-plans.test.ts',
  'test/multi-instance.test.ts',
  'test/oidc-multi-instance.test.ts',
  'test/auth-races.test.ts',
  'test/lifecycle.test.ts',
  // Node's crypto: JWTs, keys, cookies, WebAuthn, secp256k1 and BIP-322.
  'test/jwt.test.ts',
  'test/keys.test.ts',
  'test/cookie.test.ts',
  'test/webauthn.test.ts',
  'test/bip322.test.ts',
  // Packaging, the command line, the process: start, signals, logs, shutdown.
  'test/packaging.test.ts',
  'test/oidc-cli.test.ts',
  'test/operator-cli.test.ts',
  'test/process.test.ts',
  'test/shutdown.test.ts',
  'test/log-sink.test.ts',
  'test/config.test.ts',
  // The HTTP server, compression, and the clients over fetch, net and TLS.
  'test/http-basics.test.ts',
  'test/transport.test.ts',
  'test/compression.test.ts',
  'test/page-gzip.test.ts',
  'test/redis.test.ts',
  'test/relay-client.test.ts',
  'test/mailer.test.ts',
  'test/esplora.test.ts',
  'test/providers.test.ts',
  'test/webhooks.test.ts',
  // The OpenID provider's library and its back-channel logouts.
  'test/oidc-provider.test.ts',
  'test/oidc-logout.test.ts',
  // What consumer sites run: the verifier package and the ecosystem's clients.
  'test/consumer-session.test.ts',
  'test/consumer-middleware.test.ts',
  'test/consumer-frameworks.test.ts',
  'test/verify-access-token.test.ts',
  'test/compat/*.test.ts',
  // One whole sign-in in Chromium.
  'test/e2e-browser.test.ts',
];

// Replaced, not merged: merging would add these to the whole suite's pattern.
export default defineConfig({ ...base, test: { ...base.test, include: [...RUNTIME_TESTS] } });
