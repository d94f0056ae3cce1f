/**
 * The service's signing keys as an operator sees and rotates them from the
 * admin API (docs/api.md "Admin"): the session keys (the `oc_session`
 * cookie), the OpenID provider's keys and the webhook key, each with where it
 * stands and how old it is; a rotation is `oc-host keys rotate` (or
 * `--oidc`), audited. No private part ever leaves here.
 */
import type { KeyStore } from '../../platform/storage/index.js';
import { rotateSigningKey, sessionKeyStates, type KeyRing } from '../../identity/session/index.js';
import { listOidcKeys, rotateOidcKeys, type OidcStore } from '../oidc/index.js';
import type { WebhookKey } from '../connect/index.js';
import type { Actor, OperatorService } from './operators.js';

/** One key as the admin API lists it. */
export interface KeyView {
  readonly use: 'session' | 'oidc' | 'webhook';
  readonly alg: string;
  readonly kid: string;
  /** `signing`, `pending` (published, signing from `signs_from`), `published` (verifying only) or `withdrawn`. */
  readonly state: 'signing' | 'pending' | 'published' | 'withdrawn';
  readonly signs_from: string | null;
  /** When it was made; null for the webhook key, whose making is not recorded. */
  readonly created_at: string | null;
  readonly retired_at: string | null;
}

export interface AdminKeysDeps {
  readonly store: KeyStore & OidcStore;
  /** The ring the instance signs with now: its active key is the signing one. */
  readonly keyRing: () => KeyRing;
  readonly webhookKey: () => WebhookKey;
  readonly operators: Pick<OperatorService, 'audit'>;
  readonly now: () => Date;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export class AdminKeys {
  readonly #deps: AdminKeysDeps;

  constructor(deps: AdminKeysDeps) {
    this.#deps = deps;
  }

  async list(): Promise<KeyView[]> {
    const now = this.#deps.now().getTime();
    const { store } = this.#deps;
    const session = await sessionKeyStates(store, this.#deps.keyRing().active.kid, now);
    const oidc = listOidcKeys(await store.listOidcKeys(), now);
    return [
      ...session.map((key) => ({
        use: 'session' as const,
        alg: 'EdDSA',
        kid: key.kid,
        state: key.state,
        signs_from: key.state === 'pending' ? iso(key.signs_from) : null,
        created_at: iso(key.created_at),
        retired_at: iso(key.retired_at),
      })),
      ...oidc.map((key) => ({
        use: 'oidc' as const,
        alg: key.alg,
        kid: key.kid,
        state: key.state,
        signs_from: null,
        created_at: iso(key.created_at),
        retired_at: iso(key.retired_at),
      })),
      {
        use: 'webhook' as const,
        alg: 'EdDSA',
        kid: this.#deps.webhookKey().kid,
        state: 'signing' as const,
        signs_from: null,
        created_at: null,
        retired_at: null,
      },
    ];
  }

  /**
   * A new session key (published at once, signing once every instance has
   * read it) or new OpenID provider keys; the older ones stay published for
   * their overlap. Audited as `keys.rotate`, target `key:session` or
   * `key:oidc`. The new key ids.
   */
  async rotate(use: 'session' | 'oidc', reason: string | null, actor: Actor): Promise<string[]> {
    const now = this.#deps.now();
    const kids =
      use === 'session'
        ? [(await rotateSigningKey(this.#deps.store, now)).kid]
        : (await rotateOidcKeys(this.#deps.store, now.getTime())).map((key) => key.kid);
    await this.#deps.operators.audit(actor, { action: 'keys.rotate', target: `key:${use}`, reason, detail: { kids } });
    return kids;
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The signing keys as an operator lists and rotates them. */
    readonly adminKeys: AdminKeys;
  }
}
