import { startEsploraFake } from './test/support/esplora-fake.ts';
import { createEsploraClient, createBlockCache } from './src/chain/index.ts';
const f = await startEsploraFake({ tipHeight: 5 });
for (const max of [16, 32, 64, 16]) {
  f.resetRequests();
  const cache = createBlockCache({ reader: createEsploraClient({ bases: [f.url], maxConnections: max }), now: Date.now });
  let n = 0; const t = performance.now();
  await Promise.all(Array.from({ length: 50 }, async (_, w) => { for (let i = 0; i < 40; i++) { await cache.addressUtxos(`a-${max}-${w}-${i}-${Math.random()}`); n++; } }));
  console.log(process.env.VARIANT, 'max', max, 'rate', Math.round(n * 1000 / (performance.now() - t)), 'conns', f.connections);
}
await f.close();
