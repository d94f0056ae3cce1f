/**
 * One page load in Chromium as the network saw it, read from the DevTools
 * protocol's Network events: each request the page made, what it cost on
 * the wire, whether a cache answered it, and what started it, so the page
 * budget test (test/page-budget.test.ts) and the page benchmark
 * (bench/pages.bench.ts) count the same things. The load is over when the
 * page's bundled script has run all its modules: the User Timing mark
 * src/platform/http/page-bundle.ts appends to it.
 */
import type { CDPSession, Page } from 'playwright-core';
import { PAGE_READY_MARK } from '../../src/platform/http/page-assets.js';

/** DevTools' "Slow 4G" preset (its network conditions, in bytes per second and ms). */
export const SLOW_4G = {
  offline: false,
  downloadThroughput: (1.6 * 1000 * 1000 * 0.9) / 8,
  uploadThroughput: (750 * 1000 * 0.9) / 8,
  latency: 562.5,
};

interface Fetched {
  readonly url: string;
  /** The protocol's resource type: Document, Stylesheet, Script, Fetch, … */
  readonly type: string;
  /** Bytes on the wire (headers and encoded body); 0 for what a cache answered. */
  readonly transferred: number;
  /** Answered by the memory, disk or prefetch cache, with no request on the network. */
  readonly cached: boolean;
  /** Requests between the document and this one: 0 for the document, 1 for what its HTML names. */
  readonly depth: number;
}

export interface PageLoad {
  /** Everything the page asked for, the API calls its scripts made included. */
  readonly fetched: readonly Fetched[];
  /** From the start of the navigation to the page's ready mark, in ms. */
  readonly readyMs: number;
  /** From the start of the navigation to the end of the HTML, and of the last thing the page loaded, in ms (Resource Timing). */
  readonly htmlMs: number;
  readonly lastByteMs: number;
}

/** The page's own weight: what it loads to be shown and run, not the API calls its scripts make for data. */
export function pageWeight(load: PageLoad): { requests: number; bytes: number; depth: number; urls: string[] } {
  const own = load.fetched.filter((entry) => entry.type !== 'Fetch' && entry.type !== 'XHR' && !entry.cached);
  return {
    requests: own.length,
    bytes: own.reduce((sum, entry) => sum + entry.transferred, 0),
    depth: Math.max(0, ...own.map((entry) => entry.depth)),
    urls: own.map((entry) => entry.url),
  };
}

interface Pending {
  url: string;
  type: string;
  parent: string | undefined;
  transferred: number;
  cached: boolean;
  done: boolean;
}

/**
 * Goes to `url` in `page` and waits until the page is ready and every
 * request it made has finished; `throttle` applies network conditions and a
 * CPU slowdown first (bench/pages.bench.ts).
 */
export async function loadPage(
  page: Page,
  url: string,
  throttle?: { readonly network: typeof SLOW_4G; readonly cpuRate: number },
): Promise<PageLoad> {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  const pending = new Map<string, Pending>();
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: false });
  if (throttle !== undefined) {
    await cdp.send('Network.emulateNetworkConditions', throttle.network);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle.cpuRate });
  }
  cdp.on('Network.requestWillBeSent', (event) => {
    const initiator = event.initiator;
    const parent = initiator.url ?? initiator.stack?.callFrames[0]?.url;
    pending.set(event.requestId, {
      url: event.request.url,
      type: event.type ?? 'Other',
      parent,
      transferred: 0,
      cached: false,
      done: false,
    });
  });
  cdp.on('Network.requestServedFromCache', (event) => {
    const entry = pending.get(event.requestId);
    if (entry !== undefined) entry.cached = true;
  });
  cdp.on('Network.responseReceived', (event) => {
    const entry = pending.get(event.requestId);
    if (entry !== undefined && (event.response.fromDiskCache || event.response.fromPrefetchCache)) entry.cached = true;
  });
  const finish = (requestId: string, transferred: number) => {
    const entry = pending.get(requestId);
    if (entry === undefined) return;
    entry.transferred = transferred;
    entry.done = true;
  };
  cdp.on('Network.loadingFinished', (event) => finish(event.requestId, event.encodedDataLength));
  cdp.on('Network.loadingFailed', (event) => finish(event.requestId, 0));

  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction((mark) => performance.getEntriesByName(mark).length > 0, PAGE_READY_MARK, { timeout: 60_000 });
  // Resource Timing, in the page: the ready mark, the end of the HTML, the end of the last thing it loaded (not its API calls).
  const [readyMs = Number.NaN, htmlMs = Number.NaN, lastByteMs = Number.NaN] = (await page.evaluate(`(() => {
    const html = performance.getEntriesByType('navigation')[0];
    const loaded = performance.getEntriesByType('resource').filter((entry) => entry.initiatorType !== 'fetch');
    const ready = performance.getEntriesByName(${JSON.stringify(PAGE_READY_MARK)})[0];
    return [ready ? ready.startTime : NaN, html ? html.responseEnd : NaN, Math.max(html ? html.responseEnd : 0, ...loaded.map((entry) => entry.responseEnd))];
  })()`)) as number[];
  for (let waited = 0; [...pending.values()].some((entry) => !entry.done) && waited < 100; waited += 1) await page.waitForTimeout(50);
  if (throttle !== undefined) {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, downloadThroughput: -1, uploadThroughput: -1, latency: 0 });
  }
  await cdp.detach();

  const document = [...pending.values()].find((entry) => entry.type === 'Document');
  const depthOf = (entry: Pending, seen: Set<Pending>): number => {
    if (entry === document) return 0;
    const parent = [...pending.values()].find((candidate) => candidate.url === entry.parent && candidate !== entry);
    if (parent === undefined || seen.has(parent)) return 1;
    return depthOf(parent, new Set([...seen, entry])) + 1;
  };
  return {
    fetched: [...pending.values()].map((entry) => ({
      url: entry.url,
      type: entry.type,
      transferred: entry.transferred,
      cached: entry.cached,
      depth: depthOf(entry, new Set()),
    })),
    readyMs,
    htmlMs,
    lastByteMs,
  };
}
