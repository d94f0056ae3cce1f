/**
 * Step-up ("sudo") of docs/protocol.md §6: the active account proves itself again,
 * by a BIP-322 challenge with `purpose=sudo` for an address it holds or by an
 * e-mail code for an e-mail it holds, and its own session row records when.
 * Linking and unlinking identities then need that proof to be younger than
 * five minutes.
 *
 * Freshness is per account and per session row (docs/api.md Authentication
 * 7: "step_up_at and sudo_at are per account ... need their own
 * re-authentication even after a switch"), and per token: a gate reads the
 * freshness of the presented token (identity/session/freshness.ts), never another
 * member's of the roster, nor its own row's when the token is a tab's.
 *
 * The same proof shapes serve the linking endpoints (purpose `link`), so both
 * are parsed here.
 */
import type { ProvenIdentity } from './accounts.js';
import { OcError } from '../../platform/errors.js';
import { normalizeEmail } from '../../platform/mail/index.js';
import { proveAddress, type ChallengeProofContext, type ChallengeProofInput } from '../signin/index.js';
import type { AccountRecord, SessionRecord, AccountStore } from '../../platform/storage/index.js';
import type { Authenticated, TokenFreshness } from '../session/index.js';

/** docs/protocol.md §6: "need `sudo_at` younger than 5 minutes". */
const SUDO_WINDOW_MS = 5 * 60 * 1000;

/** A signed challenge (docs/protocol.md §5): the body docs/api.md gives POST /api/auth/signin, minus `add`. */
export interface AddressProof extends Pick<ChallengeProofInput, 'message' | 'signature' | 'nonce' | 'address' | 'scheme'> {
  readonly kind: 'btc';
}

/** An e-mail code from POST /api/auth/email-otp/start (docs/protocol.md §6). */
export interface EmailProof {
  readonly kind: 'email';
  readonly email: string;
  readonly code: string;
  readonly token?: string | undefined;
}

export type IdentityProof = AddressProof | EmailProof;

/** An address or e-mail whose control was just proven: the kinds a step-up or a link proves. */
export type ProvenAddressOrEmail = ProvenIdentity & { readonly kind: 'btc' | 'email' };

/** What checks a proof: the challenge rules of docs/protocol.md §5 and the e-mail codes of §6. */
export interface ProofCheckers {
  readonly challenge: ChallengeProofContext;
  readonly emailCodes: EmailCodeChecker;
}

/**
 * What a sign-in, a step-up or a link asks of the e-mail codes
 * (src/features/email-code): consume the live code of the address (typed, or
 * the mail's link), calling `beforeConsume` with the normalized address
 * first, and answer that address.
 */
interface EmailCodeChecker {
  verify(
    email: unknown,
    code: unknown,
    token?: unknown,
    beforeConsume?: (email: string) => Promise<void>,
  ): Promise<{ readonly email: string }>;
  verifyLink(
    email: unknown,
    link: unknown,
    token?: unknown,
    beforeConsume?: (email: string) => Promise<void>,
  ): Promise<{ readonly email: string }>;
}

/** The fields a step-up or link body may carry (both proof shapes in one object). */
export type ProofFields = {
  readonly [field in 'message' | 'signature' | 'nonce' | 'address' | 'scheme' | 'email' | 'code' | 'token']?: string | undefined;
};

/**
 * The one proof a step-up body carries: `{message, signature, nonce}` or
 * `{email, code, token?}`. Both at once, or neither, is `bad_request`: the
 * caller must say which identity it proves.
 */
export function proofFromFields(fields: ProofFields): IdentityProof {
  const challenge = fields.message !== undefined || fields.signature !== undefined || fields.nonce !== undefined;
  const email = fields.email !== undefined || fields.code !== undefined;
  if (challenge && email) {
    throw new OcError('bad_request', 'body: send either {message, signature, nonce} or {email, code}, not both');
  }
  if (email) {
    if (fields.email === undefined) throw new OcError('bad_request', 'body.email: required with code');
    if (fields.code === undefined) throw new OcError('bad_request', 'body.code: required with email');
    return { kind: 'email', email: fields.email, code: fields.code, token: fields.token };
  }
  if (!challenge) throw new OcError('bad_request', 'body: send {message, signature, nonce} or {email, code}');
  for (const field of ['message', 'signature', 'nonce'] as const) {
    if (fields[field] === undefined) throw new OcError('bad_request', `body.${field}: required`);
  }
  return {
    kind: 'btc',
    message: fields.message!,
    signature: fields.signature!,
    nonce: fields.nonce!,
    address: fields.address,
    scheme: fields.scheme,
  };
}

/**
 * Checks the proof and consumes it (the challenge nonce or the e-mail code,
 * each usable once). `purpose` is the challenge purpose the message must
 * carry (docs/protocol.md §5 `purpose_mismatch`): a login challenge cannot be
 * replayed as a step-up or a link.
 */
export async function proveIdentity(
  proof: IdentityProof,
  purpose: 'sudo' | 'link',
  checkers: ProofCheckers,
  beforeConsume?: (identity: ProvenAddressOrEmail) => Promise<void>,
): Promise<ProvenAddressOrEmail> {
  if (proof.kind === 'email') {
    const check = beforeConsume && ((value: string) => beforeConsume({ kind: 'email', value }));
    const { email } = await checkers.emailCodes.verify(proof.email, proof.code, proof.token, check);
    return { kind: 'email', value: email };
  }
  const check = beforeConsume && ((value: string) => beforeConsume({ kind: 'btc', value }));
  const address = await proveAddress(proof, purpose, checkers.challenge, check);
  return { kind: 'btc', value: address };
}

/**
 * What a gate reads of the request's session: the freshness of the presented
 * token (identity/session/freshness.ts), never the row's columns, so a tab token
 * passes only with the claims it was minted with.
 */
export type PresentedSession = Pick<Authenticated, 'freshness'>;

/** True when the presented token's re-proof is younger than {@link SUDO_WINDOW_MS}. */
function isSudoFresh(freshness: Pick<TokenFreshness, 'sudo_at'>, nowMs: number): boolean {
  return freshness.sudo_at !== null && nowMs - freshness.sudo_at < SUDO_WINDOW_MS;
}

/**
 * The freshness a route may need beyond a session, declared where the route
 * is (`sessionRoute(…, { fresh })`, web/route.ts) and checked by
 * {@link requireFreshness} before the body is read:
 * - `sudo`: a re-proof (`sudo_at`, POST /api/auth/sudo) younger than 5 minutes;
 * - `step-up`: a re-proof or a key assertion (`step_up_at`) younger than 5 minutes;
 * - `link`: a re-proof, or a sign-in by a proof of the person's own in the
 *   last 5 minutes presented by the browser that made it ({@link PROOF_SIGN_INS}).
 */
export type FreshnessNeed = 'sudo' | 'step-up' | 'link';

/**
 * The ways in that are a proof the person made themselves in this browser:
 * a wallet signature, an e-mail code, a passkey. A provider sign-in is not
 * among them (the provider may sign the person in from a session of its own,
 * unseen), nor is anything that only re-mints a row.
 */
const PROOF_SIGN_INS: ReadonlySet<string> = new Set(['bip322', 'email_otp', 'passkey']);

/** True when the row was opened by a proof sign-in ({@link PROOF_SIGN_INS}) less than {@link SUDO_WINDOW_MS} ago. */
function isFreshProofSignIn(session: Pick<SessionRecord, 'signing_method' | 'created_at'>, nowMs: number): boolean {
  return session.signing_method !== null && PROOF_SIGN_INS.has(session.signing_method) && nowMs - session.created_at < SUDO_WINDOW_MS;
}

/**
 * The one check of a route's declared freshness ({@link FreshnessNeed}),
 * for every door: it reads only what the presented token carries
 * (`current.freshness`, identity/session/freshness.ts), so a cookie, a bearer token
 * and a tab token pass or fail alike. 401 `sudo_required` when the token is
 * not fresh enough; `what` names the operation in the message.
 *
 * Linking's rule (docs/protocol.md §6 "Step-up") also takes a proof sign-in
 * when `ownBrowser` (the request carries the `__Host-oc_roster` binding of
 * the row's roster, which no other site can set). The sign-in never writes
 * `sudo_at`: the token's claims keep meaning what consumer sites read into them.
 */
export function requireFreshness(
  need: FreshnessNeed,
  current: PresentedSession & Pick<Authenticated, 'session' | 'superseded' | 'ownBrowser'>,
  nowMs: number,
  what: string,
): void {
  const { freshness } = current;
  if (isSudoFresh(freshness, nowMs)) return;
  if (need === 'sudo') {
    throw new OcError('sudo_required', `${what}: prove this account again with POST /api/auth/sudo; it stays valid 5 minutes`);
  }
  if (need === 'step-up') {
    if (freshness.step_up_at !== null && nowMs - freshness.step_up_at < SUDO_WINDOW_MS) return;
    throw new OcError('sudo_required', `${what} needs a step-up (POST /api/auth/sudo or a key assertion) younger than 5 minutes`);
  }
  // A superseded token carries nothing, not even its row's sign-in.
  if (current.ownBrowser === true && current.superseded !== true && isFreshProofSignIn(current.session, nowMs)) return;
  throw new OcError(
    'sudo_required',
    `${what}: prove this account again with POST /api/auth/sudo (or link within 5 minutes of signing in); it stays valid 5 minutes`,
  );
}

/**
 * The operators' console (src/features/admin/gate-routes.ts): a key assertion
 * (`step_up_at`, set only by a security key or passkey) younger than
 * `withinMs`. A re-proof by a wallet or an e-mail code does not count: the
 * console asks for something the person holds in hand. Read from the
 * presented token's claims like every other gate, so a superseded tab token
 * never passes. 401 `step_up_required`; `what` names the operation.
 */
export function requireKeyStepUp(freshness: TokenFreshness, nowMs: number, withinMs: number, what: string): void {
  if (freshness.step_up_at !== null && nowMs - freshness.step_up_at < withinMs && freshness.step_up_at <= nowMs) return;
  const minutes = Math.round(withinMs / 60_000);
  const window = minutes >= 1 ? `${minutes} minute${minutes === 1 ? '' : 's'}` : `${Math.round(withinMs / 1000)} seconds`;
  throw new OcError('step_up_required', `${what} needs a security key or passkey step-up younger than ${window}`);
}

async function requireHeld(store: AccountStore, account: AccountRecord, identity: ProvenAddressOrEmail): Promise<void> {
  const identities = await store.listIdentities(account.id);
  // Only a verified identity is a way into the account, so only it can re-prove the account.
  const held = identities.some((candidate) => candidate.kind === identity.kind && candidate.value === identity.value && candidate.verified);
  if (!held) {
    const what = identity.kind === 'btc' ? 'address' : 'e-mail address';
    throw new OcError('identity_not_linked', `step-up: this ${what} is not linked to the active account`);
  }
}

/**
 * POST /api/auth/sudo: proves `account` again. On success the caller sets
 * `sudo_at` of the session row to now and re-mints (`step_up_at` is a key
 * assertion's alone, src/features/passkeys).
 *
 * An e-mail is checked against the account before its code is spent, so a
 * code mailed to the wrong address is not burnt by a request that cannot
 * succeed (the caller may list its own identities anyway, so the order
 * reveals nothing). An address is only known once the challenge is parsed
 * and proven, so it is checked after.
 *
 * @throws OcError `bad_request`, `invalid_challenge`, `nonce_reused`,
 *   `invalid_code`, `identity_not_linked`.
 */
export async function proveAccountAgain(
  store: AccountStore,
  account: AccountRecord,
  proof: IdentityProof,
  checkers: ProofCheckers,
): Promise<ProvenAddressOrEmail> {
  if (proof.kind === 'email') {
    await requireHeld(store, account, { kind: 'email', value: normalizeEmail(proof.email, 'email') });
  }
  const proven = await proveIdentity(proof, 'sudo', checkers);
  if (proof.kind === 'btc') await requireHeld(store, account, proven);
  return proven;
}
