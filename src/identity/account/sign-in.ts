/**
 * The end of every sign-in (docs/protocol.md §2, §3, docs/architecture.md
 * "The sign-in door"): a proven identity becomes its account (created on
 * first sight, a provider's profile cleaned as an edit would be), the account
 * a session, and with `add` the session joins the browser's roster. The ways
 * in (a signed challenge, an e-mail code, an identity provider) differ only
 * in how the identity is proven and finish in {@link SignInService.complete};
 * a passkey names its account itself and enters at
 * {@link SignInService.open}, where every sign-in has its side effects:
 *
 * 1. the session row (SessionService.signIn);
 * 2. the new sign-in notice is assessed, before this sign-in's own event is
 *    recorded (docs/protocol.md §6 "New sign-in notice");
 * 3. the `signin` activity event (§6 "Activity");
 * 4. the sign-in counter of the metrics, by method;
 * 5. the notice, when due, is mailed in the background after the response.
 */
import type { ChallengeProofInput } from '../signin/index.js';
import { proveAddress } from '../signin/index.js';
import type { Authenticated, IssuedSession, SessionService, SigningMethod, ClientFacts } from '../session/index.js';
import type { AccountStore } from '../../platform/storage/index.js';
import { accountForIdentity, type ProvenIdentity } from './accounts.js';
import type { AccountService, ProviderProfile } from './service.js';
import type { ProofCheckers } from './step-up.js';
import type { ActivityLog } from './activity.js';
import type { SignInNotices } from './notices.js';

/** An identity an external provider vouched for (src/features/providers), as the door takes it. */
export interface ProviderSignIn {
  readonly provider: string;
  /** The provider's stable user id; the identity is `<provider>:<subject>`. */
  readonly subject: string;
  readonly email?: string;
  /** Present with `email`: whether the provider vouches for the address. */
  readonly emailVerified?: boolean;
  readonly name?: string;
  /** Checked again on the way out; `/` when absent or no longer allowed. */
  readonly returnTo: string;
  readonly add: boolean;
}

export interface SignInServiceDeps {
  readonly store: AccountStore;
  readonly sessions: Pick<SessionService, 'signIn'>;
  readonly accounts: Pick<AccountService, 'adoptProviderProfile'>;
  readonly checkers: () => ProofCheckers;
  readonly now: () => Date;
  readonly activity: Pick<ActivityLog, 'record'>;
  /** The new sign-in notice; absent when `NOTIFY_NEW_SIGNIN` is off. */
  readonly notices?: Pick<SignInNotices, 'assess' | 'dispatch'> | undefined;
  /** Counts a sign-in by its method (the metrics' `oc_signins_total`). */
  readonly counted?: ((method: SigningMethod) => void) | undefined;
}

/** A session for an account already known: what {@link SignInService.open} takes. */
export interface OpenSession extends SignInTarget {
  readonly accountId: string;
  readonly method: SigningMethod;
  /** The identity the sign-in proved, when one did: unlinking it later ends this session. */
  readonly identity?: ProvenIdentity | undefined;
}

/** Where a new session goes: with `add`, into the roster of `current` (the caller's session). */
export interface SignInTarget {
  readonly add: boolean;
  readonly current: Authenticated | null;
  /** The signing-in browser's device label and coarse network (docs/protocol.md §3 "Devices"). */
  readonly client?: ClientFacts | undefined;
}

export interface CompleteSignIn extends SignInTarget {
  readonly identity: ProvenIdentity;
  readonly method: SigningMethod;
  /** A provider's profile, adopted only by an account this sign-in creates. */
  readonly profile?: ProviderProfile;
}

export class SignInService {
  readonly #deps: SignInServiceDeps;

  constructor(deps: SignInServiceDeps) {
    this.#deps = deps;
  }

  /** A login challenge signed by an address (docs/protocol.md §5); the nonce is consumed. */
  async withAddress(proof: ChallengeProofInput, target: SignInTarget): Promise<IssuedSession> {
    const address = await proveAddress(proof, 'login', this.#deps.checkers().challenge);
    return this.complete({ ...target, identity: { kind: 'btc', value: address }, method: 'bip322' });
  }

  /** A mailed one-time code (docs/protocol.md §6); the code is consumed. */
  async withEmailCode(proof: { email: string; code: string; token?: string | undefined }, target: SignInTarget): Promise<IssuedSession> {
    const { email } = await this.#deps.checkers().emailCodes.verify(proof.email, proof.code, proof.token);
    return this.complete({ ...target, identity: { kind: 'email', value: email }, method: 'email_otp' });
  }

  /** The mail's sign-in link with the start's token (docs/protocol.md §6 "E-mail codes"); the code is consumed. */
  async withEmailLink(proof: { email: string; link: string; token?: string | undefined }, target: SignInTarget): Promise<IssuedSession> {
    const { email } = await this.#deps.checkers().emailCodes.verifyLink(proof.email, proof.link, proof.token);
    return this.complete({ ...target, identity: { kind: 'email', value: email }, method: 'email_otp' });
  }

  /** A provider's callback, already checked by the provider registry (docs/protocol.md §6). */
  withProvider(result: ProviderSignIn, current: Authenticated | null, client?: ClientFacts): Promise<IssuedSession> {
    return this.complete({
      add: result.add,
      current,
      client,
      identity: { kind: 'oauth', value: `${result.provider}:${result.subject}` },
      method: `oauth:${result.provider}`,
      profile: { name: result.name, email: result.email, emailVerified: result.emailVerified },
    });
  }

  /** A proven identity: its account (made on first sight), then {@link open}. */
  async complete(input: CompleteSignIn): Promise<IssuedSession> {
    const { account, created } = await accountForIdentity(this.#deps.store, input.identity, this.#deps.now().getTime());
    if (created && input.profile !== undefined) await this.#deps.accounts.adoptProviderProfile(account, input.profile);
    return this.open({ ...input, accountId: account.id });
  }

  /** The door: a session for `accountId`, and the side effects every sign-in has (the list at the top of this file). */
  async open(input: OpenSession): Promise<IssuedSession> {
    const issued = await this.#deps.sessions.signIn({
      accountId: input.accountId,
      method: input.method,
      add: input.add,
      current: input.add ? input.current : null,
      identity: input.identity,
      client: input.client,
    });
    const accountId = issued.session.account_id;
    const facts = { method: input.method, device: input.client?.device ?? null, network: input.client?.network ?? null };
    const notice =
      this.#deps.notices === undefined ? null : await this.#deps.notices.assess(accountId, { ...facts, locale: input.client?.locale });
    await this.#deps.activity.record(accountId, 'signin', { ...facts, added: input.add && input.current !== null });
    this.#deps.counted?.(input.method);
    if (notice !== null) this.#deps.notices?.dispatch(notice);
    return issued;
  }
}
