/**
 * The shared set-up of the suites that run the attestation routes over real
 * Nostr relays on loopback: start relays in given modes, build apps that read
 * them, and close both after each test.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import type { AppDeps } from '../../src/app.js';
import { testApp } from './app.js';
import { startNostrRelay, type NostrRelay, type RelayMode } from './nostr-relay.js';

export interface RelayHarness {
  /** Relays in the given modes, closed after the test. */
  relays(...modes: RelayMode[]): Promise<NostrRelay[]>;
  /**
   * An app whose NOSTR_RELAYS are `relayList` (none: the test default, a
   * closed port), closed after the test; `deps` overrides the harness's own
   * (a longer relay time-out where every relay answers and the test sends
   * many events).
   */
  appOver(relayList: readonly NostrRelay[], env?: Record<string, string>, deps?: AppDeps): Promise<FastifyInstance>;
}

/**
 * `env` and `deps` are read each time an app is built, so they may name
 * things a `beforeAll` starts (an Esplora fake) or a clock a test moves.
 * Relays answer within 400 ms or count as down.
 */
export function useRelayHarness(options: { env?: () => Record<string, string>; deps?: () => AppDeps } = {}): RelayHarness {
  const apps: FastifyInstance[] = [];
  const started: NostrRelay[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await Promise.all(started.splice(0).map((relay) => relay.close()));
  });
  return {
    async relays(...modes) {
      const relays = await Promise.all(modes.map((mode) => startNostrRelay({ mode })));
      started.push(...relays);
      return relays;
    },
    async appOver(relayList, env = {}, deps = {}) {
      const app = await testApp(
        { ...options.env?.(), ...(relayList.length === 0 ? {} : { NOSTR_RELAYS: relayList.map((relay) => relay.url).join(',') }), ...env },
        { relayTimeoutMs: 400, ...options.deps?.(), ...deps },
      );
      apps.push(app);
      return app;
    },
  };
}
