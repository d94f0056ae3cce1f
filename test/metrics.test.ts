/**
 * GET /metrics (docs/operations.md "Metrics"): served on METRICS_PORT only,
 * in the Prometheus text format 0.0.4, and the counters move with what the
 * service does.
 */
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { generateSecretKey } from 'nostr-tools/pure';
import { addressFromPrivateKey } from './support/bitcoin-signer.js';
import { attestationEvent, signAttestation } from './support/attestations.js';
import { Registry } from '../src/platform/metrics/index.js';
import { testApp } from './support/app.js';
import { Browser, newWallet } from './support/auth-client.js';
import { closedPortUrl, startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { startNostrRelay, type NostrRelay } from './support/nostr-relay.js';
import { freePort } from './support/instances.js';
import { closedRedisUrl } from './support/redis.js';

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/**
 * A strict reader of the text format 0.0.4: every sample belongs to a family
 * declared by `# TYPE` before it, label values are quoted with the three
 * escapes, values are numbers or ±Inf/NaN, and the text ends with a line feed.
 */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  expect(text.endsWith('\n')).toBe(true);
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    const help = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (help) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      expect(types.has(type[1]!), `family ${type[1]} declared twice`).toBe(false);
      types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$/.exec(line);
    expect(sample, `not a valid line: ${JSON.stringify(line)}`).not.toBeNull();
    const name = sample![1]!;
    const family = [...types.keys()].find(
      (declared) => name === declared || (types.get(declared) === 'histogram' && /^(.*)_(bucket|sum|count)$/.exec(name)?.[1] === declared),
    );
    expect(family, `sample ${name} has no # TYPE before it`).toBeDefined();
    const labels: Record<string, string> = {};
    const labelText = sample![3] ?? '';
    const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)/y;
    let position = 0;
    while (position < labelText.length) {
      labelPattern.lastIndex = position;
      const match = labelPattern.exec(labelText);
      expect(match, `bad labels: ${labelText}`).not.toBeNull();
      labels[match![1]!] = match![2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      position = labelPattern.lastIndex;
    }
    const raw = sample![4]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (raw !== 'NaN') expect(Number.isNaN(value), `bad value ${raw}`).toBe(false);
    samples.push({ name, labels, value });
  }
  return { types, samples };
}

function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    ?.value;
}

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function appWithMetrics(
  env: Record<string, string> = {},
  deps: Parameters<typeof testApp>[1] = {},
): Promise<{ app: FastifyInstance; scrape: () => Promise<{ types: Map<string, string>; samples: Sample[] }> }> {
  const port = await freePort();
  const app = await testApp({ METRICS_PORT: String(port), HOST: '127.0.0.1', ...env }, deps);
  apps.push(app);
  return {
    app,
    scrape: async () => {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      return parseExposition(await response.text());
    },
  };
}

describe('where /metrics is served', () => {
  it('not on the public port, with or without METRICS_PORT', async () => {
    const plain = await testApp();
    apps.push(plain);
    expect((await plain.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    const { app } = await appWithMetrics();
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error).toBe('not_found');
  });

  it('on METRICS_PORT, at /metrics only', async () => {
    const port = await freePort();
    apps.push(await testApp({ METRICS_PORT: String(port) }));
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/api/auth/me`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('a taken METRICS_PORT stops the start instead of running unobserved', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(testApp({ METRICS_PORT: String(port) })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('closing the app closes the metrics port', async () => {
    const port = await freePort();
    const app = await testApp({ METRICS_PORT: String(port) });
    await app.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});

describe('the text format', () => {
  it('escapes label values and help text, and writes cumulative histogram buckets', () => {
    const registry = new Registry();
    registry.counter('demo_total', 'Help with a \\ backslash\nand a new line.', ['label']).inc(['a "quoted"\\ value\nwith a line'], 2);
    const histogram = registry.histogram('demo_seconds', 'Durations.', ['route'], [0.1, 1]);
    histogram.observe(['/x'], 0.05);
    histogram.observe(['/x'], 0.5);
    histogram.observe(['/x'], 5);
    const text = registry.render();
    expect(text).toContain('# HELP demo_total Help with a \\\\ backslash\\nand a new line.');
    expect(text).toContain('demo_total{label="a \\"quoted\\"\\\\ value\\nwith a line"} 2');
    const { samples } = parseExposition(text);
    expect(sampleValue(samples, 'demo_total')).toBe(2);
    expect(samples.find((sample) => sample.name === 'demo_total')!.labels.label).toBe('a "quoted"\\ value\nwith a line');
    expect(sampleValue(samples, 'demo_seconds_bucket', { le: '0.1' })).toBe(1);
    expect(sampleValue(samples, 'demo_seconds_bucket', { le: '1' })).toBe(2);
    expect(sampleValue(samples, 'demo_seconds_bucket', { le: '+Inf' })).toBe(3);
    expect(sampleValue(samples, 'demo_seconds_count')).toBe(3);
    expect(sampleValue(samples, 'demo_seconds_sum')).toBeCloseTo(5.55);
    expect(() => registry.counter('demo_total', 'again')).toThrow(/twice/);
    expect(() => registry.counter('bad name', 'x')).toThrow(/invalid metric name/);
  });
});

describe('the counters move', () => {
  it('requests by route pattern and status, with a latency histogram; 404s under one label', async () => {
    const { app, scrape } = await appWithMetrics();
    const before = await scrape();
    expect(before.types.get('oc_http_requests_total')).toBe('counter');
    expect(before.types.get('oc_http_request_duration_seconds')).toBe('histogram');
    await app.inject({ method: 'GET', url: '/api/auth/jwks' });
    await app.inject({ method: 'GET', url: '/api/auth/jwks' });
    await app.inject({ method: 'GET', url: '/api/auth/me' });
    await app.inject({ method: 'GET', url: '/no/such/path/a' });
    await app.inject({ method: 'GET', url: '/no/such/path/b' });
    const { samples } = await scrape();
    expect(sampleValue(samples, 'oc_http_requests_total', { method: 'GET', route: '/api/auth/jwks', status: '200' })).toBe(2);
    expect(sampleValue(samples, 'oc_http_requests_total', { method: 'GET', route: '/api/auth/me', status: '401' })).toBe(1);
    expect(sampleValue(samples, 'oc_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    expect(sampleValue(samples, 'oc_http_request_duration_seconds_count', { route: '/api/auth/jwks', status: '200' })).toBe(2);
    expect(sampleValue(samples, 'oc_http_request_duration_seconds_bucket', { route: '/api/auth/jwks', le: '+Inf' })).toBe(2);
    expect(samples.some((sample) => sample.labels.route?.includes('/no/such'))).toBe(false);
    expect(sampleValue(samples, 'oc_build_info')).toBe(1);
    expect(sampleValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('sign-ins by path', async () => {
    const { app, scrape } = await appWithMetrics();
    const browser = new Browser(app);
    expect((await browser.signIn(newWallet())).status).toBe(200);
    expect((await browser.signIn(newWallet(), { add: true })).status).toBe(200);
    const refused = await new Browser(app).post('/api/auth/signin', { message: 'x', signature: 'y', nonce: 'z' });
    expect(refused.status).toBe(401);
    const { samples } = await scrape();
    expect(sampleValue(samples, 'oc_signins_total', { method: 'bip322' })).toBe(2);
  });

  it('rate-limit rejections by class, and Redis failures by mode', async () => {
    const { app, scrape } = await appWithMetrics({
      REDIS_URL: await closedRedisUrl(),
      RATE_LIMIT_READ_PER_MIN: '1',
      RATE_LIMIT_AUTH_PER_MIN: '5',
    });
    await app.inject({ method: 'GET', url: '/api/auth/jwks' });
    await app.inject({ method: 'GET', url: '/api/auth/jwks' });
    await app.inject({ method: 'GET', url: '/api/auth/jwks' });
    await app.inject({ method: 'POST', url: '/api/auth/signin', payload: {}, headers: { origin: 'http://localhost:8787' } });
    const { samples } = await scrape();
    expect(sampleValue(samples, 'oc_rate_limited_total', { class: 'read' })).toBe(2);
    expect(sampleValue(samples, 'oc_rate_limit_store_failures_total', { mode: 'open' })).toBe(3);
    expect(sampleValue(samples, 'oc_rate_limit_store_failures_total', { mode: 'closed' })).toBe(1);
    expect(sampleValue(samples, 'oc_redis_errors_total', { use: 'rate_limit' })).toBe(4);
    expect(sampleValue(samples, 'oc_redis_up')).toBe(0);
  });
});

describe('check cache, relays and chain', () => {
  const NOW = new Date('2026-06-01T00:00:00Z');
  const key = new Uint8Array(32).fill(41);
  const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
  let esplora: EsploraFake;
  let relay: NostrRelay;

  beforeAll(async () => {
    esplora = await startEsploraFake({ tipHeight: 1000 });
    esplora.setUtxos(address, [
      {
        txid: 'ab'.repeat(32),
        vout: 0,
        value: 100_000,
        status: { confirmed: true, block_height: 900, block_time: NOW.getTime() / 1000 - 40 * 86_400 },
      },
    ]);
    relay = await startNostrRelay();
    relay.publishRaw(
      attestationEvent(signAttestation(key, address, '2026-05-01T00:00:00Z'), { publisherKey: generateSecretKey(), createdAt: NOW }),
    );
  });
  afterAll(async () => {
    await esplora.close();
    await relay.close();
  });

  it('hits and misses of /api/check, answered relay queries, chain look-ups', async () => {
    const { app, scrape } = await appWithMetrics(
      { ESPLORA_URLS: esplora.url, NOSTR_RELAYS: relay.url },
      { now: () => NOW, relayTimeoutMs: 500 },
    );
    const first = await app.inject({ method: 'GET', url: `/api/check?addr=${address}` });
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBe('miss');
    expect((await app.inject({ method: 'GET', url: `/api/check?addr=${address}` })).headers['x-cache']).toBe('hit');
    expect((await app.inject({ method: 'GET', url: `/api/check?addr=${address}&min_sats=5` })).headers['x-cache']).toBe('hit');
    const { samples } = await scrape();
    expect(sampleValue(samples, 'oc_check_cache_total', { result: 'miss' })).toBe(1);
    expect(sampleValue(samples, 'oc_check_cache_total', { result: 'hit' })).toBe(2);
    expect(sampleValue(samples, 'oc_relay_queries_total', { result: 'answered' })).toBe(1);
    expect(sampleValue(samples, 'oc_chain_queries_total', { result: 'ok' })).toBe(1);
  });

  it('relays_unavailable and chain_unavailable', async () => {
    const down = (await closedPortUrl()).replace('http:', 'ws:');
    const noRelays = await appWithMetrics({ ESPLORA_URLS: esplora.url, NOSTR_RELAYS: down }, { now: () => NOW, relayTimeoutMs: 500 });
    const unavailable = await noRelays.app.inject({ method: 'GET', url: `/api/check?addr=${address}` });
    expect(unavailable.statusCode).toBe(503);
    const discover = await noRelays.app.inject({ method: 'GET', url: `/api/discover?addr=${address}` });
    expect(discover.json().warnings).toEqual(['relays_unavailable']);
    const relaysDown = await noRelays.scrape();
    expect(sampleValue(relaysDown.samples, 'oc_relay_queries_total', { result: 'relays_unavailable' })).toBe(2);
    expect(sampleValue(relaysDown.samples, 'oc_http_requests_total', { route: '/api/check', status: '503' })).toBe(1);

    const noChain = await appWithMetrics(
      { ESPLORA_URLS: await closedPortUrl(), NOSTR_RELAYS: relay.url },
      { now: () => NOW, relayTimeoutMs: 500 },
    );
    const answer = await noChain.app.inject({ method: 'GET', url: `/api/check?addr=${address}` });
    expect(answer.json().reasons).toEqual(['chain_unavailable']);
    const chainDown = await noChain.scrape();
    expect(sampleValue(chainDown.samples, 'oc_chain_queries_total', { result: 'chain_unavailable' })).toBe(1);
  });
});
