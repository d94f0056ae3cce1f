/**
 * What a session's token says about how the person signed in
 * (docs/protocol.md §3 "How the person signed in"), in two claims:
 *
 * - `signing_method`: the row's own method, as docs/protocol.md §3 lists it
 *   (`bip322`, `email_otp`, `passkey`, `oauth:<provider>`);
 * - `amr`, RFC 8176 §2, the same in the standard vocabulary: a BIP-322
 *   signature is `swk` (the host cannot tell a hardware wallet from a
 *   software one, so it claims the weaker); an e-mail code `otp`; a passkey
 *   `hwk` (a WebAuthn authenticator signs inside itself) and `user` (its
 *   sign-in demands user verification); a provider nothing, since the host
 *   did not see how the person proved themselves there and RFC 8176 has no
 *   value for "another site vouched". A key step-up on the row
 *   (`step_up_at`) adds `hwk` and `mfa`: a second proof on top of the
 *   sign-in, and it stays for the row's life, as `step_up_at` does.
 */
import type { AuthenticationMethod } from './jwt.js';

export interface SignInMethodClaims {
  /** The row's method; null on rows from before methods were kept (the claim is then left out). */
  readonly signing_method: string | null;
  /** Empty when no RFC 8176 value fits: the claim is then left out. */
  readonly amr: readonly AuthenticationMethod[];
}

const METHOD_AMR: Readonly<Record<string, readonly AuthenticationMethod[]>> = {
  bip322: ['swk'],
  email_otp: ['otp'],
  passkey: ['hwk', 'user'],
};

/** The claims for a row opened with `method` (null on rows from before methods were kept), stepped up at `stepUpAt` or never. */
export function signInMethodClaims(method: string | null, stepUpAt: number | null): SignInMethodClaims {
  const amr: AuthenticationMethod[] =
    method !== null && Object.hasOwn(METHOD_AMR, method) ? [...(METHOD_AMR[method] as readonly AuthenticationMethod[])] : [];
  if (stepUpAt !== null) {
    if (!amr.includes('hwk')) amr.push('hwk');
    amr.push('mfa');
  }
  return { signing_method: method, amr };
}
