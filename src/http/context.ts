/**
 * What the routes are handed: the parsed config and the domain services built
 * by the composition root (`buildApp`). Routes never construct services.
 */
import type { Config } from '../config.js';
import type { ChainSource } from '../chain/index.js';
import type { AttestationLookupService, AttestationPublisher } from '../attest/index.js';
import type { RelayPool } from '../relay/index.js';
import type { KeyRing } from '../session/keys.js';
import type { SessionService } from '../session/service.js';
import type { NonceGuard } from '../signin/bip322-signin.js';
import type { StatsStore } from '../storage/index.js';
import type { Mailer } from '../mail/index.js';
import type { EmailCodeService } from '../signin/email-code.js';
import type { ProviderRegistry } from '../signin/providers.js';
import type { ContactRelay } from '../forms/index.js';
import type { EventCounter } from '../stats/counter.js';
import type { AccountService, ActivityLog, DeviceService, SignInService } from '../account/index.js';
import type { OriginRules } from '../signin/origins.js';
import type { WebAuthnService } from '../webauthn/index.js';
import type { RevocationFeed } from '../session/revocations.js';
import type { AccountLifecycle } from '../account/lifecycle.js';
import type { WebhookKey } from '../connect/index.js';

export interface ServiceContext {
  readonly config: Config;
  /** The clock; injectable so tests can freeze or move time. */
  readonly now: () => Date;
  readonly chain: ChainSource;
  /** Nostr relays read by /api/check and /api/discover and written by /api/attestations (docs/protocol.md §7). */
  readonly relays: RelayPool;
  /** The check/discover service with its result cache (src/attest/lookup.ts). */
  readonly attestationLookup: AttestationLookupService;
  /** Publishes wallet-signed attestations to the relays (src/attest/publish.ts). */
  readonly attestationPublisher: AttestationPublisher;
  /** The service's own Nostr secret key (32 bytes): signs the events it publishes. */
  readonly nostrSecretKey: Uint8Array;
  /** The statistics area of storage, for /api/family-stats; services hold the areas they need. */
  readonly stats: StatsStore;
  readonly sessions: SessionService;
  /** `OC_SERVER_SECRET`, or the one kept in storage: keys challenge nonces, e-mail code hashes, OAuth state. */
  readonly serverSecret: Uint8Array;
  /** Consumes sign-in nonces once across instances. */
  readonly nonces: NonceGuard;
  /** The current key ring (reloaded periodically so rotations reach every instance). */
  keyRing(): KeyRing;
  /** Family origins and challenge audiences (src/signin/origins.ts). */
  readonly origins: OriginRules;
  /** Step-up, link, unlink, edit (src/account/service.ts). */
  readonly accounts: AccountService;
  /** The end of every sign-in: identity to account to session (src/account/sign-in.ts). */
  readonly signIn: SignInService;
  /** Revoked sessions for consumer sites (src/session/revocations.ts). */
  readonly revocations: RevocationFeed;
  /** The account's security events (src/account/activity.ts). */
  readonly activity: ActivityLog;
  /** Where the active account is signed in (src/account/devices.ts). */
  readonly devices: DeviceService;
  /** Export, deletion and the operator's hold (src/account/lifecycle.ts). */
  readonly lifecycle: AccountLifecycle;
  /** The key that signs Connect webhooks (src/connect/webhooks.ts). */
  readonly webhookKey: () => WebhookKey;
  /** Security keys and passkeys (src/webauthn). */
  readonly webauthn: WebAuthnService;
  readonly mailer: Mailer;
  /** E-mail one-time codes (docs/protocol.md §6). */
  readonly emailCodes: EmailCodeService;
  /** Configured identity providers (docs/protocol.md §6). */
  readonly providers: ProviderRegistry;
  /** The contact-form relay (docs/protocol.md §6). */
  readonly contact: ContactRelay;
  /** Counts /api/check and /api/verify calls for /api/family-stats, written in batches. */
  readonly attestCounter: EventCounter;
  /** Named readiness checks, each `ok` or a short reason. */
  readiness(): Promise<Record<string, string>>;
}
