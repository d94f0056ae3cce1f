/**
 * `npm run bench [name …]`: runs every benchmark (or the named ones) and
 * prints each figure next to its same-run baseline. Names: bip322, jwt,
 * verify, check, mixed, sessions, email, scale, oidc, pages. The service
 * is built first: the suites that run it in a process of its own run
 * `dist/src/main.js`, as `npm start` does.
 */
import { execFileSync } from 'node:child_process';
import { formatTable, type BenchResult } from './lib.js';

const SUITES: Record<string, () => Promise<{ run: () => Promise<BenchResult[]> }>> = {
  bip322: () => import('./bip322.bench.js'),
  jwt: () => import('./jwt.bench.js'),
  verify: () => import('./http-verify.bench.js'),
  check: () => import('./check.bench.js'),
  mixed: () => import('./mixed.bench.js'),
  sessions: () => import('./sessions.bench.js'),
  email: () => import('./email.bench.js'),
  scale: () => import('./scale.bench.js'),
  oidc: () => import('./oidc.bench.js'),
  pages: () => import('./pages.bench.js'),
  admin: () => import('./admin.bench.js'),
};

async function main(): Promise<void> {
  const asked = process.argv.slice(2);
  const unknown = asked.filter((name) => !(name in SUITES));
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown suite(s) ${unknown.join(', ')}; known: ${Object.keys(SUITES).join(', ')}\n`);
    process.exit(2);
  }
  const names = asked.length > 0 ? asked : Object.keys(SUITES);
  // The suites that start the service in a process of its own measure the compiled service, as `npm start` runs it.
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
  process.stdout.write(`node ${process.version}, ${new Date().toISOString()}, the service as built by npm run build\n`);
  for (const name of names) {
    process.stdout.write(`\n## ${name}\n`);
    const suite = await SUITES[name]!();
    const results = await suite.run();
    process.stdout.write(`${formatTable(results)}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
