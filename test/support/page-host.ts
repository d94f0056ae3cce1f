/**
 * The host a page suite drives in headless Chromium: an {@link AuthHarness}
 * on SQLite (or the engine given) serving on loopback under its own PUBLIC_URL, and the browser.
 * `usePageHost` registers the suite's `beforeAll` and `afterAll` and answers
 * a handle whose members are there once the suite runs.
 */
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { AuthHarness } from './auth-harness.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.js';
import { TestClock } from './clock.js';
import type { TestEngine } from './databases.js';
import { freePort } from './instances.js';

export interface PageHost {
  readonly harness: AuthHarness;
  readonly app: FastifyInstance;
  /** `http://<host>:<port>`: PUBLIC_URL and the pages' origin. */
  readonly base: string;
  readonly browser: Browser;
}

/**
 * `hostname`: `localhost` where WebAuthn runs (an IP address is no relying
 * party id), else 127.0.0.1. `ready` runs once the host listens (clients to
 * register, for example).
 */
export function usePageHost(
  options: {
    readonly hostname?: 'localhost' | '127.0.0.1';
    /** The database engine; SQLite unless a suite runs on each. */
    readonly engine?: TestEngine;
    /** More settings of the host, read when the suite starts (a mailbox's SMTP URL, say), given the host's origin. */
    readonly env?: (base: string) => Record<string, string>;
    readonly ready?: (host: PageHost) => Promise<void>;
  } = {},
): PageHost {
  let current: PageHost | undefined;
  const started = (): PageHost => {
    if (current === undefined) throw new Error('page host: used before the suite started');
    return current;
  };
  beforeAll(async () => {
    const harness = await AuthHarness.open(options.engine ?? 'sqlite', new TestClock(Date.now()));
    const port = await freePort();
    const base = `http://${options.hostname ?? '127.0.0.1'}:${port}`;
    const app = await harness.app({ ...options.env?.(base), PUBLIC_URL: base });
    await app.listen({ host: '127.0.0.1', port });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    current = { harness, app, base, browser };
    await options.ready?.(current);
  }, 60_000);
  afterAll(async () => {
    await current?.browser.close();
    await current?.harness.close();
  });
  return {
    get harness() {
      return started().harness;
    },
    get app() {
      return started().app;
    },
    get base() {
      return started().base;
    },
    get browser() {
      return started().browser;
    },
  };
}
