/**
 * Verification status codes (docs/api.md "Verification status codes", plus the
 * codes docs/protocol.md §5 and §7 add). `ok` is false exactly when a code of
 * severity `error` is present (docs/protocol.md §7).
 */
export const VERIFY_CODES = {
  sig_ok_bip322: 'success',
  sig_ok_legacy: 'success',
  sig_invalid: 'error',
  sig_unsupported_script: 'error',
  invalid_scheme: 'error',
  decode_error: 'error',
  invalid_attestation_id: 'error',
  bond_confirmed: 'success',
  bond_zero: 'warn',
  bond_pending: 'info',
  bond_insufficient: 'error',
  below_min_sats: 'error',
  below_min_days: 'error',
  aud_mismatch: 'warn',
  expired: 'error',
  network_testmode: 'warn',
  bad_request: 'error',
  chain_unavailable: 'error',
  nonce_mismatch: 'error',
  purpose_mismatch: 'error',
} as const satisfies Record<string, 'success' | 'info' | 'warn' | 'error'>;

export type VerifyCode = keyof typeof VERIFY_CODES;
export type Severity = (typeof VERIFY_CODES)[VerifyCode];

export function severityOf(code: VerifyCode): Severity {
  return VERIFY_CODES[code];
}

/** True when no code of severity `error` is present. */
export function codesPass(codes: readonly VerifyCode[]): boolean {
  return codes.every((code) => VERIFY_CODES[code] !== 'error');
}
