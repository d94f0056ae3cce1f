/**
 * The one list of the features (docs/architecture.md "Features"): every
 * folder of `src/features/`, once, with what it adds to the service — its
 * tables (migrations, storage areas, hooks, purge), its pages' words, its
 * services (with what starts and stops them) and its routes, each route
 * file handed what it uses from the services and nothing more ("Routes get
 * what they use"). src/store.ts joins the tables, src/page-words.ts the
 * words, src/services.ts builds the services and src/app.ts registers the
 * routes, all in the order of this list:
 *
 * - a feature's services may use those of the entries above it (and the
 *   platform's and the identity core's, built first);
 * - its routes come in the OpenAPI document in this order;
 * - a migration version several features share runs their parts in this
 *   order, after the identity core's.
 *
 * Adding a way to sign in is its folder and one entry here.
 * `test/features.test.ts` holds the list and the folders to each other.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { generateSecretKey } from 'nostr-tools/pure';
import { VERSION } from './platform/version.js';
import { isOcError } from './platform/errors.js';
import { createRedisSingleFlight } from './platform/redis/index.js';
import type { Feature } from './feature-kit.js';
import { registerHealthRoutes } from './features/operations/health-routes.js';
import {
  buildAttestationLookup,
  createAttestationPublisher,
  createSignatureVerdicts,
  registerAttestationRoutes,
  registerLookupRoutes,
  sharedCheckCache,
  verificationUrlOf,
} from './features/attestations/index.js';
import { registerChallengeRoutes } from './features/challenge/routes.js';
import { registerSessionChangeRoutes, registerSessionReadRoutes } from './features/session/routes.js';
import { registerRevocationRoutes } from './features/session/revocation-routes.js';
import { registerWalletRoutes } from './features/wallet/routes.js';
import { WALLET_WORDS } from './features/wallet/words.js';
import { createEmailCodeService } from './features/email-code/email-code.js';
import { registerEmailOtpRoutes } from './features/email-code/routes.js';
import { EMAIL_CODE_TABLES } from './features/email-code/tables.js';
import { EMAIL_CODE_WORDS } from './features/email-code/words.js';
import { HandoffService } from './features/phone/handoff.js';
import { registerHandoffRoutes } from './features/phone/routes.js';
import { PHONE_TABLES } from './features/phone/tables.js';
import { PHONE_WORDS } from './features/phone/words.js';
import { createProviderRegistry } from './features/providers/providers.js';
import { registerProviderRoutes } from './features/providers/routes.js';
import { PROVIDERS_WORDS } from './features/providers/words.js';
import { registerAccountRoutes } from './features/account/routes.js';
import { ACCOUNT_WORDS } from './features/account/words.js';
import { PASSKEY_TABLES, PASSKEYS_WORDS, registerWebAuthnRoutes, relyingParty, WebAuthnService } from './features/passkeys/index.js';
import { DeviceService } from './features/devices/devices.js';
import { registerDeviceRoutes } from './features/devices/routes.js';
import { AccountLifecycle } from './features/account-data/lifecycle.js';
import { registerLifecycleRoutes } from './features/account-data/routes.js';
import { registerActivityRoutes } from './features/activity/routes.js';
import { ACTIVITY_WORDS } from './features/activity/words.js';
import {
  CONNECT_TABLES,
  createConnectService,
  isDevelopmentUrl,
  WEBHOOK_KEY_RELOAD_MS,
  WebhookKeyRing,
  postToEndpoint,
  registerConnectRoutes,
  WebhookDispatcher,
  webhookBackoffMs,
} from './features/connect/index.js';
import { createEventCounter } from './features/stats/counter.js';
import { registerStatsRoutes } from './features/stats/routes.js';
import { STATS_TABLES } from './features/stats/tables.js';
import { createContactRelay, registerContactRoutes } from './features/contact/index.js';
import {
  backchannelUriChecker,
  BackchannelLogoutDispatcher,
  OIDC_TABLES,
  OIDC_WORDS,
  OidcService,
  registerConsentRoutes,
  registerOidcClientRoutes,
  registerOidcRoutes,
} from './features/oidc/index.js';
import {
  ADMIN_TABLES,
  ADMIN_WORDS,
  AdminAccounts,
  adminGate,
  AdminApps,
  AdminClients,
  AdminDashboard,
  AdminHealth,
  AdminKeys,
  DashboardCounter,
  OperatorService,
  registerAdminAppRoutes,
  registerAdminClientRoutes,
  registerConsoleRoutes,
  registerDashboardRoutes,
  registerAdminRoutes,
  registerAdminServiceRoutes,
} from './features/admin/index.js';

/** How often each instance's webhook and logout workers look for due deliveries (docs/protocol.md §6 "Webhooks"). */
const OUTBOX_POLL_MS = 1000;

/** How often the OpenID provider's keys are re-read, as the session keys are (a rotation reaches every instance). */
const KEY_REFRESH_MS = 60_000;

export const FEATURES: readonly Feature[] = [
  {
    feature: 'operations',
    routes: ({ app, context }) => registerHealthRoutes(app, { readiness: context.readiness }),
  },
  {
    feature: 'attestations',
    async services({ config, deps, store, redis, now, redisFailed, use, onClose }) {
      const nowMs = () => now().getTime();
      const relays = use('relays');
      // The event pubkey is trusted for nothing (docs/protocol.md §7), but a stable one lets relay operators recognise the service.
      const nostrSecretKey =
        deps.nostrSecretKey ?? hexToBytes(await store.getOrCreateSetting('nostr_secret_key', () => bytesToHex(generateSecretKey())));
      const attestationLookup = buildAttestationLookup(config, {
        chain: use('chain'),
        relays,
        now,
        cache: deps.checkCache ?? (redis !== undefined ? sharedCheckCache(redis, nowMs, redisFailed('cache'), onClose) : undefined),
        singleFlight:
          deps.checkSingleFlight ??
          (redis !== undefined ? createRedisSingleFlight({ redis, onError: redisFailed('single_flight') }) : undefined),
      });
      const attestationPublisher = createAttestationPublisher({
        relays,
        network: config.bitcoinNetwork,
        now,
        secretKey: nostrSecretKey,
        verificationUrlOf: verificationUrlOf(config),
        checkResults: attestationLookup,
      });
      return { signatureVerdicts: createSignatureVerdicts(), nostrSecretKey, attestationLookup, attestationPublisher };
    },
    routes: ({ routes, context, config }) => {
      registerAttestationRoutes(routes, {
        chain: context.chain,
        signatureVerdicts: context.signatureVerdicts,
        attestCounter: context.attestCounter,
        network: config.bitcoinNetwork,
        minConfirmations: config.minConfirmations,
        now: context.now,
      });
      registerLookupRoutes(routes, {
        attestationLookup: context.attestationLookup,
        attestationPublisher: context.attestationPublisher,
        attestCounter: context.attestCounter,
        now: context.now,
      });
    },
  },
  {
    feature: 'challenge',
    // Besides the session door, the only holder of the server secret: it keys the challenge nonces.
    routes: ({ routes, context, config }) =>
      registerChallengeRoutes(routes, {
        serverSecret: context.serverSecret,
        network: config.bitcoinNetwork,
        publicUrl: config.publicUrl,
        now: context.now,
      }),
  },
  {
    feature: 'session',
    // The session's reads, the wallet's sign-in beside them, then its changes and the revocation feed.
    routes: ({ routes, context, door }) => {
      registerSessionReadRoutes(routes, { door, sessions: context.sessions, keyRing: context.keyRing });
      registerSessionChangeRoutes(routes, { door, sessions: context.sessions, devices: context.devices });
      registerRevocationRoutes(routes, { revocations: context.revocations });
    },
  },
  {
    feature: 'wallet',
    words: WALLET_WORDS,
    routes: ({ routes, context, door }) => registerWalletRoutes(routes, { door, signIn: context.signIn }),
  },
  {
    feature: 'email-code',
    tables: EMAIL_CODE_TABLES,
    words: EMAIL_CODE_WORDS,
    services: ({ config, store, now, use }) => ({
      emailCodes: createEmailCodeService({
        store,
        mailer: use('mailer'),
        secret: use('serverSecret'),
        now,
        publicUrl: config.publicUrl,
        brand: config.brand,
      }),
    }),
    routes: ({ routes, context, door }) => registerEmailOtpRoutes(routes, { door, emailCodes: context.emailCodes, signIn: context.signIn }),
  },
  {
    feature: 'phone',
    tables: PHONE_TABLES,
    words: PHONE_WORDS,
    services: ({ config, store, now, use }) => {
      const checkers = use('checkers');
      return { handoffs: new HandoffService({ store, now, publicUrl: config.publicUrl, proof: () => checkers().challenge }) };
    },
    routes: ({ routes, context, config, door }) =>
      registerHandoffRoutes(routes, {
        door,
        handoffs: context.handoffs,
        origins: context.origins,
        signIn: context.signIn,
        publicUrl: config.publicUrl,
      }),
  },
  {
    feature: 'providers',
    words: PROVIDERS_WORDS,
    services: ({ config, deps, now, use }) => {
      const origins = use('origins');
      const nonces = use('nonces');
      return {
        providers: createProviderRegistry({
          providers: config.oauthProviders,
          publicUrl: config.publicUrl,
          secret: use('serverSecret'),
          now,
          ...(deps.fetch ? { fetch: deps.fetch } : {}),
          ...(deps.githubAuthBase ? { githubAuthBase: deps.githubAuthBase } : {}),
          ...(deps.githubApiBase ? { githubApiBase: deps.githubApiBase } : {}),
          isAllowedReturnTo: (origin) => origins.isFamilyOrigin(origin),
          // The state is single-use across instances: the same table as challenge nonces.
          consumeOnce: (stateId, expiresAt) => nonces.consume(`oauth:${stateId}`, expiresAt.getTime()),
        }),
      };
    },
    routes: ({ routes, context, config, door }) =>
      registerProviderRoutes(routes, { door, providers: context.providers, signIn: context.signIn, publicUrl: config.publicUrl }),
  },
  {
    feature: 'account',
    words: ACCOUNT_WORDS,
    routes: ({ routes, context, door }) => registerAccountRoutes(routes, { door, accounts: context.accounts, webauthn: context.webauthn }),
  },
  {
    feature: 'passkeys',
    tables: PASSKEY_TABLES,
    words: PASSKEYS_WORDS,
    services: ({ config, store, now, use }) => ({
      webauthn: new WebAuthnService({
        store,
        sessions: use('sessions'),
        signIn: use('signIn'),
        rp: relyingParty(config, use('origins')),
        secret: use('serverSecret'),
        nonces: use('nonces'),
        now,
        activity: use('activity'),
      }),
    }),
    routes: ({ routes, context, door }) => registerWebAuthnRoutes(routes, { door, webauthn: context.webauthn }),
  },
  {
    feature: 'devices',
    services: ({ store, now, use }) => ({
      devices: new DeviceService({ store, now, activity: use('activity'), sessions: use('sessions') }),
    }),
    routes: ({ routes, context, door }) => registerDeviceRoutes(routes, { door, devices: context.devices }),
  },
  {
    feature: 'account-data',
    services: ({ config, store, now, use }) => ({
      lifecycle: new AccountLifecycle({ store, activity: use('activity'), now, publicUrl: config.publicUrl }),
    }),
    routes: ({ routes, context, door }) => registerLifecycleRoutes(routes, { door, lifecycle: context.lifecycle }),
  },
  {
    feature: 'activity',
    words: ACTIVITY_WORDS,
    routes: ({ routes, context }) => registerActivityRoutes(routes, { activity: context.activity }),
  },
  {
    feature: 'connect',
    tables: CONNECT_TABLES,
    async services({ config, deps, store, now, log, use, onStart, onClose }) {
      // docs/protocol.md §6 "Webhooks": every instance runs a worker on the shared outbox.
      const webhookKeys = new WebhookKeyRing({ store, now });
      await webhookKeys.load();
      // Every instance reads the ring again, so a rotation elsewhere is published here before it signs.
      const reloadKeys = setInterval(() => {
        webhookKeys.load().catch((error: unknown) => log.warn({ err: error }, 'webhooks: could not read the keys again'));
      }, WEBHOOK_KEY_RELOAD_MS);
      reloadKeys.unref();
      onClose(() => clearInterval(reloadKeys));
      const webhookRules = { development: isDevelopmentUrl(config.publicUrl), allowPrivate: config.webhookAllowPrivate };
      const webhooks = new WebhookDispatcher({
        store,
        key: () => webhookKeys.signing(),
        rules: webhookRules,
        now,
        timeoutMs: config.webhookTimeoutSeconds * 1000,
        retryBaseMs: config.webhookRetrySeconds * 1000,
        pollMs: deps.webhookPollMs ?? OUTBOX_POLL_MS,
        onError: (error) => log.error({ err: error }, 'webhooks: the worker failed a pass'),
        onAttempt: (entry) => log.info(entry, 'webhooks: attempt'),
      });
      onStart(() => webhooks.start());
      onClose(() => webhooks.stop());
      return {
        webhookKeys,
        connect: createConnectService({ store, secret: use('serverSecret'), now, activity: use('activity'), webhookRules }),
      };
    },
    routes: ({ routes, context }) => registerConnectRoutes(routes, { connect: context.connect, webhookKeys: context.webhookKeys }),
  },
  {
    feature: 'stats',
    tables: STATS_TABLES,
    services({ store, now, log, onClose }) {
      const attestCounter = createEventCounter({
        record: (kind, at, count) => store.recordAttestEvent(kind, at, count),
        now: () => now().getTime(),
        onError: (error) => log.error({ err: error }, 'stats: could not record attestation counts'),
      });
      // Written before the store closes (closers run newest first, the store's first of all).
      onClose(() => attestCounter.close());
      return { stats: store, attestCounter };
    },
    routes: ({ routes, context }) =>
      registerStatsRoutes(routes, { stats: context.stats, attestCounter: context.attestCounter, now: context.now }),
  },
  {
    feature: 'contact',
    services: ({ config, now, use }) => ({ contact: createContactRelay({ mailer: use('mailer'), contactTo: config.contactTo, now }) }),
    routes: ({ routes, context }) => registerContactRoutes(routes, { contact: context.contact }),
  },
  {
    feature: 'oidc',
    tables: OIDC_TABLES,
    words: OIDC_WORDS,
    async services({ config, deps, store, now, log, use, onStart, onClose }) {
      const connect = use('connect');
      // docs/protocol.md §8: the OpenID provider's keys are made on first start and reloaded with the session keys.
      const oidc = await OidcService.open({
        store,
        issuer: config.publicUrl,
        serverSecret: use('serverSecret'),
        attestations: use('attestationLookup'),
        appOfApiKey: async (apiKey) => {
          try {
            return { appId: (await connect.authenticate(`Bearer ${apiKey}`)).id };
          } catch (error) {
            if (isOcError(error) && error.code === 'invalid_api_key') return null;
            if (isOcError(error) && error.code === 'account_disabled') return { held: true };
            throw error;
          }
        },
        appMayAct: (appId) => connect.appMayAct(appId),
        backchannelUriProblem: backchannelUriChecker(config),
        development: isDevelopmentUrl(config.publicUrl),
        devicePollSeconds: config.oidcDevicePollSeconds,
        now,
      });
      const reloadKeys = setInterval(() => {
        oidc.reloadKeys().catch((error: unknown) => log.error({ err: error }, 'oidc: could not reload the provider keys'));
      }, KEY_REFRESH_MS);
      reloadKeys.unref();
      onClose(() => clearInterval(reloadKeys));
      // docs/protocol.md §8 "Logout": every instance runs a worker on the back-channel logout outbox,
      // posting under the webhook endpoint rules, timeout and backoff.
      const rules = { development: isDevelopmentUrl(config.publicUrl), allowPrivate: config.webhookAllowPrivate };
      const timeoutMs = config.webhookTimeoutSeconds * 1000;
      const logouts = new BackchannelLogoutDispatcher({
        store,
        build: (logout) => oidc.logoutToken(logout),
        post: (uri, body, headers) => postToEndpoint(uri, body, headers, { rules, timeoutMs }),
        backoffMs: (attempts) => webhookBackoffMs(attempts, config.webhookRetrySeconds * 1000),
        timeoutMs,
        pollMs: deps.webhookPollMs ?? OUTBOX_POLL_MS,
        now,
        userAgent: `oc-host-logout/${VERSION}`,
        onError: (error) => log.error({ err: error }, 'oidc: the back-channel logout worker failed a pass'),
        onAttempt: (entry) => log.info(entry, 'oidc: back-channel logout attempt'),
      });
      oidc.onLogoutQueued(() => logouts.kick());
      onStart(() => logouts.start());
      onClose(() => logouts.stop());
      return { oidc };
    },
    routes: ({ app, routes, context, config, door, rateLimiter }) => {
      registerOidcRoutes(
        app,
        {
          door,
          oidc: context.oidc,
          sessions: context.sessions,
          accounts: context.accounts,
          webauthn: context.webauthn,
          now: context.now,
          publicUrl: config.publicUrl,
          brand: config.brand,
          devicePollSeconds: config.oidcDevicePollSeconds,
          deviceCodePerHour: config.rateLimits.deviceCodePerHour,
        },
        rateLimiter,
      );
      registerOidcClientRoutes(routes, { connect: context.connect, oidc: context.oidc });
      registerConsentRoutes(routes, { oidc: context.oidc });
    },
  },
  {
    feature: 'admin',
    tables: ADMIN_TABLES,
    words: ADMIN_WORDS,
    services: ({ config, deps, store, now, log, use, onClose }) => {
      const operators = new OperatorService({ operators: store, accounts: store, now });
      const dashboardCounter = new DashboardCounter({
        store,
        now,
        onError: (error) => log.error({ err: error }, 'dashboard: could not record the counts'),
      });
      onClose(() => dashboardCounter.flush());
      const oidc = use('oidc');
      oidc.onSignIn((clientId) => dashboardCounter.count('oidc_signin', clientId));
      const adminAccounts = new AdminAccounts({
        store,
        oidc: use('oidc'),
        lifecycle: use('lifecycle'),
        activity: use('activity'),
        operators,
        now,
      });
      return {
        operators,
        adminAccounts,
        adminClients: new AdminClients({ oidc, operators }),
        dashboardCounter,
        adminDashboard: new AdminDashboard({ store, counter: dashboardCounter, clients: () => oidc.clients.list(), now }),
        adminKeys: new AdminKeys({ store, keyRing: use('keyRing'), webhookKeys: use('webhookKeys'), operators, now }),
        adminApps: new AdminApps({ store, connect: use('connect'), operators, now }),
        adminHealth: new AdminHealth({
          config,
          ping: () => store.ping(),
          readiness: use('readiness'),
          relays: use('relays'),
          fetch: deps.fetch,
        }),
      };
    },
    routes: ({ app, routes, context, config, door }) => {
      const gate = adminGate({ operators: context.operators, door, publicOrigin: config.publicOrigin, now: context.now });
      registerConsoleRoutes(app, routes, {
        gate,
        path: config.adminPath,
        brand: config.brand,
        keysOf: (accountId) => context.adminAccounts.keyCount(accountId),
        now: context.now,
      });
      registerAdminRoutes(routes, { gate, operators: context.operators, accounts: context.adminAccounts });
      registerAdminClientRoutes(routes, { gate, clients: context.adminClients });
      registerAdminServiceRoutes(routes, {
        gate,
        keys: context.adminKeys,
        health: context.adminHealth,
        // What the settings view masks and answers: the variables given, not the parsed settings.
        config: { environment: config.environment, defaulted: config.defaulted },
      });
      registerAdminAppRoutes(routes, { gate, apps: context.adminApps });
      registerDashboardRoutes(app, routes, {
        gate,
        dashboard: context.adminDashboard,
        counter: context.dashboardCounter,
        providers: new Set(config.oauthProviders.map((provider) => provider.id)),
      });
    },
  },
];
