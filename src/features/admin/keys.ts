/**
 * The service's signing keys as an operator sees and rotates them from the
 * admin API (docs/api.md "Admin"): the session keys (the `oc_session`
 * cookie), the OpenID provider's keys and the webhook keys, each with where
 * it stands and how old it is; a rotation is `oc-host keys rotate` (or
 * `--oidc`), or the webhook key ring's (src/features/connect/webhook-keys.ts),
 * audited. No private part ever leaves here.
 */
import type { KeyStore } from '../../platform/storage/index.js';
import { rotateSigningKey, sessionKeyStates, type KeyRing } from '../../identity/session/index.js';
import { listOidcKeys, rotateOidcKeys, type OidcStore } from '../oidc/index.js';
import type { WebhookKeyRing } from '../connect/index.js';
import type { Actor, OperatorService } from './operators.js';

/** One key as the admin API lists it. */
export interface KeyView {
  readonly use: 'session' | 'oidc' | 'webhook';
  readonly alg: string;
  readonly kid: string;
  /** `signing`, `pending` (published, signing from `signs_from`), `published` (verifying only) or `withdrawn`. */
  readonly state: 'signing' | 'pending' | 'published' | 'withdrawn';
  readonly signs_from: string | null;
  /** When it was made; for the first webhook key, when the ring started from it. */
  readonly created_at: string | null;
  readonly retired_at: string | null;
}

export interface AdminKeysDeps {
  readonly store: KeyStore & OidcStore;
  /** The ring the instance signs with now: its active key is the signing one. */
  readonly keyRing: () => KeyRing;
  readonly webhookKeys: Pick<WebhookKeyRing, 'all' | 'published' | 'signing' | 'load' | 'rotate'>;
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
      ...(await this.#webhookKeys(now)),
    ];
  }

  /** The webhook keys as every instance will sign with them: read again first, so a rotation elsewhere shows. */
  async #webhookKeys(now: number): Promise<KeyView[]> {
    const ring = this.#deps.webhookKeys;
    await ring.load();
    const signing = ring.signing(now).kid;
    const published = new Set(ring.published(now).map((key) => key.kid));
    return ring.all().map((key) => {
      const state = key.kid === signing ? 'signing' : key.signsFrom > now ? 'pending' : published.has(key.kid) ? 'published' : 'withdrawn';
      return {
        use: 'webhook' as const,
        alg: 'EdDSA',
        kid: key.kid,
        state,
        signs_from: state === 'pending' ? iso(key.signsFrom) : null,
        created_at: iso(key.createdAt),
        retired_at: null,
      };
    });
  }

  /**
   * A new session key or webhook key (published at once, signing once every
   * instance has read it) or new OpenID provider keys; the older ones stay
   * published for their overlap. Audited as `keys.rotate`, target
   * `key:session`, `key:oidc` or `key:webhook`. The new key ids.
   */
  async rotate(use: 'session' | 'oidc' | 'webhook', reason: string | null, actor: Actor): Promise<string[]> {
    const now = this.#deps.now();
    let kids: string[];
    if (use === 'session') kids = [(await rotateSigningKey(this.#deps.store, now)).kid];
    else if (use === 'oidc') kids = (await rotateOidcKeys(this.#deps.store, now.getTime())).map((key) => key.kid);
    else kids = [await this.#deps.webhookKeys.rotate()];
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
