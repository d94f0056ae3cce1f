/**
 * BIP-322 sign-in (docs/protocol.md §5): the signed-challenge checks with
 * `purpose=login` and a family audience, the signature, then the nonce is
 * consumed exactly once.
 */
import { tryDecodeAddress, addressMatchesNetwork, verifySignature, type SignatureScheme } from '../../bitcoin/index.js';
import type { BitcoinNetwork } from '../../platform/config.js';
import { OcError } from '../../platform/errors.js';
import type { NonceGuard } from '../../platform/storage/index.js';
import { checkChallenge, parseChallengeMessage, type ChallengeContext } from './challenge.js';

export interface ChallengeProofInput {
  readonly message: string;
  readonly signature: string;
  /** When absent, the message's own nonce (still checked against this service's MAC). */
  readonly nonce?: string | undefined;
  /** When given, must equal the message's address. */
  readonly address?: string | undefined;
  readonly scheme?: string | undefined;
  /** When given, must equal the message's audience; else the message's own audience is checked against the family. */
  readonly expectedAudience?: string | undefined;
  readonly expectedPurpose?: string | undefined;
}

/** The challenge's own context (its MAC secret and the time), and what a proof checks besides. */
export interface ChallengeProofContext extends ChallengeContext {
  readonly network: BitcoinNetwork;
  /** Family origins or `PUBLIC_URL`. */
  readonly isAllowedAudience: (audience: string) => boolean;
  readonly nonces: NonceGuard;
}

function refuse(code: string): OcError {
  return new OcError('invalid_challenge', `challenge: ${code}`, { codes: [code] });
}

/**
 * Proves control of an address for `purpose` (`login` for sign-in, `sudo`
 * for a step-up) and consumes the nonce. Returns the address.
 */
export async function proveAddress(
  input: ChallengeProofInput,
  purpose: string,
  context: ChallengeProofContext,
  beforeConsume?: (address: string) => Promise<void>,
): Promise<string> {
  const parsed = parseChallengeMessage(input.message);
  if (!parsed) throw refuse('decode_error');
  const audience = input.expectedAudience ?? parsed.audience;
  // The checks run in the order of docs/protocol.md §5; the family rule on the
  // audience and the caller's own expected purpose come after them.
  const checked = checkChallenge(
    // Without a nonce in the body the message's own is taken; it must still carry this service's MAC.
    { message: input.message, expectedNonce: input.nonce ?? parsed.nonce, expectedAudience: audience, expectedPurpose: purpose },
    context,
  );
  if (!checked.ok) throw refuse(checked.code);
  if (audience === undefined || !context.isAllowedAudience(audience)) throw refuse('aud_mismatch');
  if (input.expectedPurpose !== undefined && input.expectedPurpose !== purpose) throw refuse('purpose_mismatch');
  if (input.address !== undefined && input.address !== checked.address) {
    throw new OcError('bad_request', 'address: differs from the address in the challenge message');
  }
  const decoded = tryDecodeAddress(checked.address);
  if (!decoded || !addressMatchesNetwork(decoded, context.network)) throw refuse('decode_error');
  let scheme: SignatureScheme | undefined;
  if (input.scheme !== undefined) {
    if (input.scheme !== 'bip322' && input.scheme !== 'legacy') throw refuse('invalid_scheme');
    scheme = input.scheme;
  }
  const code = verifySignature({ address: checked.address, message: input.message, signature: input.signature, scheme });
  if (code !== 'sig_ok_bip322' && code !== 'sig_ok_legacy') throw refuse(code);
  // A refusal here (a link to an address of another account without
  // confirm_transfer) leaves the nonce unused, so the same proof can be sent
  // again with the confirmation.
  await beforeConsume?.(checked.address);
  if (!(await context.nonces.consume(checked.nonce, checked.expiresAt.getTime()))) {
    throw new OcError('nonce_reused', 'challenge: this challenge was already used; ask for a new one');
  }
  return checked.address;
}
