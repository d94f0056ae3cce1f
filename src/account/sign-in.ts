/**
 * The end of every sign-in (docs/protocol.md §2, §3): a proven identity
 * becomes its account (created on first sight, a provider's profile cleaned
 * as an edit would be), the account a session, and with `add` the session
 * joins the browser's roster. The three ways in (a signed challenge, an
 * e-mail code, an identity provider) differ only in how the identity is
 * proven; they all finish in {@link SignInService.complete}.
 */
import type { ChallengeProofInput } from '../signin/bip322-signin.js';
import { proveAddress } from '../signin/bip322-signin.js';
import type { ProviderSignIn } from '../signin/providers.js';
import type { Authenticated, IssuedSession, SessionService, SigningMethod } from '../session/service.js';
import type { ClientFacts } from '../session/device.js';
import type { AccountStore } from '../storage/index.js';
import { accountForIdentity, type ProvenIdentity } from './accounts.js';
import type { AccountService, ProviderProfile } from './service.js';
import type { ProofCheckers } from './step-up.js';

export interface SignInServiceDeps {
  readonly store: AccountStore;
  readonly sessions: Pick<SessionService, 'signIn'>;
  readonly accounts: Pick<AccountService, 'adoptProviderProfile'>;
  readonly checkers: () => ProofCheckers;
  readonly now: () => Date;
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

  async complete(input: CompleteSignIn): Promise<IssuedSession> {
    const { account, created } = await accountForIdentity(this.#deps.store, input.identity, this.#deps.now().getTime());
    if (created && input.profile !== undefined) await this.#deps.accounts.adoptProviderProfile(account, input.profile);
    return this.#deps.sessions.signIn({
      accountId: account.id,
      method: input.method,
      add: input.add,
      current: input.add ? input.current : null,
      identity: input.identity,
      client: input.client,
    });
  }
}
