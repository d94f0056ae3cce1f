import { startEsploraFake } from '../test/support/esplora-fake.js';
import { freePort } from '../test/support/instances.js';
import { spawn } from 'node:child_process';
import { benchAttestations, serveUtxos } from './attestations.js';
import { luaList, runWrk } from './wrk.js';
import { RATE_LIMITS_OFF } from '../test/support/app.js';
const esplora = await startEsploraFake({ tipHeight: 1000 });
const set = benchAttestations(7, 6000);
serveUtxos(esplora, set);
const port = await freePort();
const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir=/tmp/prof', '--import', 'tsx', 'src/main.ts'], {
  env: {
    ...process.env,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ESPLORA_URLS: esplora.url,
    DATABASE_URL: 'sqlite::memory:',
    NOSTR_RELAYS: 'ws://127.0.0.1:9',
    ...RATE_LIMITS_OFF,
    PORT: String(port),
  },
  stdio: 'inherit',
});
for (;;) {
  try {
    await fetch(`http://127.0.0.1:${port}/healthz`);
    break;
  } catch {
    await new Promise((r) => setTimeout(r, 200));
  }
}
const service = {
  url: `http://127.0.0.1:${port}`,
  stop: async () => {
    child.kill('SIGINT');
    await new Promise((r) => child.on('exit', r));
  },
};
const lua = [
  luaList(
    'bodies',
    set.map((e) => e.body),
  ),
  'local next = 0',
  'request = function()',
  '  next = next + 1',
  '  return wrk.format("POST", "/api/verify", nil, bodies[((next - 1) % #bodies) + 1])',
  'end',
].join('\n');
const r = await runWrk(`${service.url}/api/verify`, { durationSeconds: 4, headers: { 'content-type': 'application/json' }, lua });
console.log(r.requestsPerSec, r.p50Ms, r.p99Ms, r.non2xx);
await service.stop();
await esplora.close();
process.exit(0);
