/**
 * The pages' first visit and the cost of compression (docs/performance.md
 * "Page weight", "Compression"):
 *
 * 1. GET /api/openapi through the app in this process (inject), answered
 *    plain, brotli and gzip: requests per second, each next to the plain
 *    answer in the same rounds, so the ratio is what compressing on the fly
 *    costs the largest dynamic answer. Then, over HTTP with wrk, /signin
 *    (which carries its styles, catalog and script inline, compressed once
 *    at start: src/platform/http/page-gzip.ts), the same and with a new return_to at
 *    every request, next to /api-explorer, a page that links its assets.
 * 2. /signin and /account (signed in) in headless Chromium with an empty
 *    cache, time from navigation until the page is usable (its bundled script
 *    has run every module: the ready mark of src/platform/http/page-bundle.ts), on
 *    DevTools' "Slow 4G" network with the CPU slowed 4x, next to the 1.5 s
 *    goal and to the same page loaded unthrottled in the same run. Median of
 *    {@link VISITS} visits each.
 */
import { chromium } from 'playwright-core';
import { AuthHarness } from '../test/support/auth-harness.js';
import { newWallet } from '../test/support/auth-client.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, HAVE_CHROMIUM, pageContext, PHONE } from '../test/support/chromium.js';
import { TestClock } from '../test/support/clock.js';
import { freePort } from '../test/support/instances.js';
import { loadPage, pageWeight, SLOW_4G } from '../test/support/page-load.js';
import { compressDynamic } from '../src/platform/http/compression.js';
import { measureRounds, median, type BenchResult } from './lib.js';
import { runWrk, wrkAvailable } from './wrk.js';

const VISITS = 5;
const GOAL_MS = 1500;
const ROUNDS = 5;

/** Requests per second of `call`, one at a time, for `ms`. */
async function rate(call: () => Promise<unknown>, ms: number): Promise<number> {
  let done = 0;
  const started = performance.now();
  while (performance.now() - started < ms) {
    await call();
    done += 1;
  }
  return (done * 1000) / (performance.now() - started);
}

export async function run(): Promise<BenchResult[]> {
  const harness = await AuthHarness.open('sqlite', new TestClock(Date.now()));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const app = await harness.app({ PUBLIC_URL: base });
  await app.listen({ host: '127.0.0.1', port });
  const results: BenchResult[] = [];
  try {
    const encodings = { plain: undefined, br: 'br', gzip: 'gzip' } as const;
    const figures = new Map<string, number[]>(Object.keys(encodings).map((name) => [name, []]));
    const sizes = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, encoding] of Object.entries(encodings)) {
        const headers = encoding === undefined ? {} : { 'accept-encoding': encoding };
        const call = () => app.inject({ method: 'GET', url: '/api/openapi', headers });
        sizes.set(name, (await call()).rawPayload.length);
        figures.get(name)!.push(await rate(call, 400));
      }
    }
    const plain = figures.get('plain')!;
    for (const name of Object.keys(encodings)) {
      const values = figures.get(name)!;
      results.push({
        name: `GET /api/openapi ${name}`,
        opsPerSec: median(values),
        ...(name === 'plain'
          ? {}
          : { baseline: 'GET /api/openapi plain', ratio: median(values.map((value, index) => value / plain[index]!)) }),
        note: `${sizes.get(name)!.toLocaleString('en-US')} bytes`,
      });
    }

    // What compressing a new answer costs, next to serialising it (CPU time, interleaved rounds).
    const document = (await app.inject({ method: 'GET', url: '/api/openapi' })).body;
    const parsed: unknown = JSON.parse(document);
    const body = Buffer.from(document, 'utf8');
    const cpu = measureRounds(
      [
        { name: 'serialise', fn: () => JSON.stringify(parsed) },
        { name: 'br', fn: () => compressDynamic(body, 'br') },
        { name: 'gzip', fn: () => compressDynamic(body, 'gzip') },
      ],
      ROUNDS,
      { clock: 'cpu', minMs: 300 },
    );
    const serialise = cpu.get('serialise')!;
    results.push({
      name: 'OpenAPI document: JSON.stringify',
      opsPerSec: median(serialise),
      note: `${(1000 / median(serialise)).toFixed(2)} ms CPU`,
    });
    for (const encoding of ['br', 'gzip'] as const) {
      const values = cpu.get(encoding)!;
      results.push({
        name: `OpenAPI document: ${encoding === 'br' ? 'brotli 4' : 'gzip 1'} on the fly`,
        opsPerSec: median(values),
        baseline: 'OpenAPI document: JSON.stringify',
        ratio: median(values.map((value, index) => value / serialise[index]!)),
        note: `${(1000 / median(values)).toFixed(2)} ms CPU`,
      });
    }

    // The sign-in page over HTTP, as a browser asks for it, next to the explorer, a page that links its assets.
    if (wrkAvailable()) {
      const browserAccept = { 'accept-encoding': 'gzip, deflate, br, zstd' };
      const unique =
        'counter = 0\nrequest = function()\n  counter = counter + 1\n  return wrk.format(nil, "/signin?return_to=/r" .. counter)\nend';
      const rows = [
        { name: 'GET /api-explorer over HTTP', url: `${base}/api-explorer` },
        { name: 'GET /signin over HTTP', url: `${base}/signin` },
        { name: 'GET /signin over HTTP, a new return_to each', url: base, lua: unique },
      ];
      const measured = new Map(rows.map((row) => [row.name, [] as number[]]));
      for (let round = 0; round < 3; round++) {
        for (const row of rows) {
          const result = await runWrk(row.url, {
            durationSeconds: 2,
            connections: 8,
            headers: browserAccept,
            ...(row.lua ? { lua: row.lua } : {}),
          });
          measured.get(row.name)!.push(result.requestsPerSec);
        }
      }
      const explorer = measured.get(rows[0]!.name)!;
      for (const row of rows) {
        const values = measured.get(row.name)!;
        results.push({
          name: row.name,
          opsPerSec: median(values),
          ...(row === rows[0] ? {} : { baseline: rows[0]!.name, ratio: median(values.map((value, index) => value / explorer[index]!)) }),
          note: '8 connections, Accept-Encoding of a browser',
        });
      }
    }

    if (!HAVE_CHROMIUM) {
      results.push({ name: 'pages in Chromium', opsPerSec: 0, note: `skipped: no ${CHROMIUM_PATH}` });
      return results;
    }
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      for (const path of ['/signin', '/account']) {
        const times = { fast: [] as number[], slow: [] as number[] };
        const slowNetwork = { html: [] as number[], last: [] as number[] };
        let weight = { requests: 0, bytes: 0 };
        for (let visit = 0; visit < VISITS; visit++) {
          for (const profile of ['fast', 'slow'] as const) {
            let cookie: string | undefined;
            if (path === '/account') {
              const host = harness.browser(app, base);
              await host.signIn(newWallet());
              cookie = host.cookie as string;
            }
            // A new context each time: an empty cache, a first visit.
            const context = await pageContext(browser, base, 'en', PHONE, cookie);
            try {
              const throttle = profile === 'slow' ? { network: SLOW_4G, cpuRate: 4 } : undefined;
              const load = await loadPage(await context.newPage(), path, throttle);
              times[profile].push(load.readyMs);
              if (profile === 'slow') {
                slowNetwork.html.push(load.htmlMs);
                slowNetwork.last.push(load.lastByteMs);
              }
              weight = pageWeight(load);
            } finally {
              await context.close();
            }
          }
        }
        const fast = median(times.fast);
        const slow = median(times.slow);
        results.push({
          name: `${path} usable, unthrottled`,
          opsPerSec: 1000 / fast,
          note: `${fast.toFixed(0)} ms; ${weight.requests} requests, ${(weight.bytes / 1024).toFixed(1)} KB`,
        });
        results.push({
          name: `${path} usable, Slow 4G + CPU x4`,
          opsPerSec: 1000 / slow,
          baseline: `${path} usable, unthrottled`,
          ratio: fast / slow,
          note:
            `${slow.toFixed(0)} ms, goal ${GOAL_MS} ms: ${slow <= GOAL_MS ? 'met' : 'MISSED'} ` +
            `(HTML in at ${median(slowNetwork.html).toFixed(0)} ms, last byte at ${median(slowNetwork.last).toFixed(0)} ms)`,
        });
      }
    } finally {
      await browser.close();
    }
    return results;
  } finally {
    await harness.close();
  }
}
