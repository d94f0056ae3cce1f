/**
 * The one list of the features (docs/architecture.md "Features"): every
 * folder of `src/features/` and the routes it registers, each route file
 * handed what it uses from the services and nothing more ("Routes get what
 * they use"). `buildApp` (src/app.ts) registers the list in its order, which
 * is the order of the routes in the OpenAPI document; a feature appears more
 * than once where its routes sit on either side of another's (the session's
 * reads and changes around the wallet's sign-in). `test/features.test.ts`
 * holds the list and the folders to each other.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from './platform/config.js';
import type { ResilientLimiter } from './platform/limits/index.js';
import type { TypedApp } from './platform/http/schema-types.js';
import type { SessionDoor } from './web/session.js';
import type { ServiceContext } from './services.js';
import { registerHealthRoutes } from './features/operations/health-routes.js';
import { registerAttestationRoutes, registerLookupRoutes } from './features/attestations/index.js';
import { registerChallengeRoutes } from './features/challenge/routes.js';
import { registerSessionChangeRoutes, registerSessionReadRoutes } from './features/session/routes.js';
import { registerRevocationRoutes } from './features/session/revocation-routes.js';
import { registerWalletRoutes } from './features/wallet/routes.js';
import { registerEmailOtpRoutes } from './features/email-code/routes.js';
import { registerHandoffRoutes } from './features/phone/routes.js';
import { registerProviderRoutes } from './features/providers/routes.js';
import { registerAccountRoutes } from './features/account/routes.js';
import { registerWebAuthnRoutes } from './features/passkeys/index.js';
import { registerDeviceRoutes } from './features/devices/routes.js';
import { registerLifecycleRoutes } from './features/account-data/routes.js';
import { registerActivityRoutes } from './features/activity/routes.js';
import { registerConnectRoutes } from './features/connect/index.js';
import { registerStatsRoutes } from './features/stats/routes.js';
import { registerContactRoutes } from './features/contact/index.js';
import { registerConsentRoutes, registerOidcClientRoutes, registerOidcRoutes } from './features/oidc/index.js';
import { registerAdminRoutes } from './features/admin/index.js';

/** What a feature's routes are built from: the app, the services, the settings and the session door. */
interface RouteKit {
  /** The app, for the routes that mount a library (the OpenID provider) or need no schema types. */
  readonly app: FastifyInstance;
  /** The same app, with the request types of the route schemas. */
  readonly routes: TypedApp;
  readonly context: ServiceContext;
  readonly config: Config;
  /** The session of a request, the cookies of an answer; the roster secret stays inside (src/web/session.ts). */
  readonly door: SessionDoor;
  /** The request limiter, for the limits a library's endpoints count themselves. */
  readonly rateLimiter: ResilientLimiter;
}

/** One entry of the list: a folder of `src/features/` and routes of it. */
export interface FeatureRoutes {
  /** The folder's name in `src/features/`. */
  readonly feature: string;
  register(kit: RouteKit): void;
}

export const FEATURE_ROUTES: readonly FeatureRoutes[] = [
  {
    feature: 'operations',
    register: ({ app, context }) => registerHealthRoutes(app, { readiness: context.readiness }),
  },
  {
    feature: 'attestations',
    register: ({ routes, context, config }) => {
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
    register: ({ routes, context, config }) =>
      registerChallengeRoutes(routes, {
        serverSecret: context.serverSecret,
        network: config.bitcoinNetwork,
        publicUrl: config.publicUrl,
        now: context.now,
      }),
  },
  {
    feature: 'session',
    register: ({ routes, context, door }) =>
      registerSessionReadRoutes(routes, { door, sessions: context.sessions, keyRing: context.keyRing }),
  },
  {
    feature: 'wallet',
    register: ({ routes, context, door }) => registerWalletRoutes(routes, { door, signIn: context.signIn }),
  },
  {
    feature: 'session',
    register: ({ routes, context, door }) =>
      registerSessionChangeRoutes(routes, { door, sessions: context.sessions, devices: context.devices }),
  },
  {
    feature: 'email-code',
    register: ({ routes, context, door }) =>
      registerEmailOtpRoutes(routes, { door, emailCodes: context.emailCodes, signIn: context.signIn }),
  },
  {
    feature: 'phone',
    register: ({ routes, context, config, door }) =>
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
    register: ({ routes, context, config, door }) =>
      registerProviderRoutes(routes, { door, providers: context.providers, signIn: context.signIn, publicUrl: config.publicUrl }),
  },
  {
    feature: 'account',
    register: ({ routes, context, door }) =>
      registerAccountRoutes(routes, { door, accounts: context.accounts, webauthn: context.webauthn }),
  },
  {
    feature: 'passkeys',
    register: ({ routes, context, door }) => registerWebAuthnRoutes(routes, { door, webauthn: context.webauthn }),
  },
  {
    feature: 'devices',
    register: ({ routes, context, door }) => registerDeviceRoutes(routes, { door, devices: context.devices }),
  },
  {
    feature: 'account-data',
    register: ({ routes, context, door }) => registerLifecycleRoutes(routes, { door, lifecycle: context.lifecycle }),
  },
  {
    feature: 'activity',
    register: ({ routes, context }) => registerActivityRoutes(routes, { activity: context.activity }),
  },
  {
    feature: 'session',
    register: ({ routes, context }) => registerRevocationRoutes(routes, { revocations: context.revocations }),
  },
  {
    feature: 'connect',
    register: ({ routes, context }) => registerConnectRoutes(routes, { connect: context.connect, webhookKey: context.webhookKey }),
  },
  {
    feature: 'stats',
    register: ({ routes, context }) =>
      registerStatsRoutes(routes, { stats: context.stats, attestCounter: context.attestCounter, now: context.now }),
  },
  {
    feature: 'contact',
    register: ({ routes, context }) => registerContactRoutes(routes, { contact: context.contact }),
  },
  {
    feature: 'oidc',
    register: ({ app, routes, context, config, door, rateLimiter }) => {
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
    register: ({ routes, context }) => registerAdminRoutes(routes, { operators: context.operators, accounts: context.adminAccounts }),
  },
];
