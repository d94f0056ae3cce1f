/**
 * The one error class of the service. Every failure a client can see carries a
 * stable `code` from {@link ERROR_CODES} and the HTTP status documented next to
 * it (docs/errors.md holds the same table; test/errors.test.ts keeps them equal).
 * Code branches on `code`, never on message text.
 */
export const ERROR_CODES = {
  bad_request: 400,
  already_active: 400,
  webauthn_origin_mismatch: 400,
  webauthn_rp_id_mismatch: 400,
  credential_not_discoverable: 400,
  confirmation_mismatch: 400,
  invalid_webhook_url: 400,
  not_authenticated: 401,
  nonce_reused: 401,
  invalid_challenge: 401,
  invalid_code: 401,
  code_dead: 401,
  invalid_handoff: 401,
  code_replaced: 401,
  link_elsewhere: 401,
  sudo_required: 401,
  step_up_required: 401,
  invalid_api_key: 401,
  identity_not_linked: 401,
  ambiguous_session: 401,
  verify_failed: 401,
  cloned_authenticator: 401,
  credential_outside_allowlist: 401,
  cross_site: 403,
  not_in_roster: 403,
  account_disabled: 403,
  forbidden: 403,
  not_found: 404,
  unknown_did_oc: 404,
  unknown_provider: 404,
  no_roster: 409,
  handoff_used: 409,
  handoff_mismatch: 409,
  address_linked_elsewhere: 409,
  email_linked_elsewhere: 409,
  last_identity: 409,
  transfer_changed: 409,
  no_credentials_registered: 409,
  credential_exists: 409,
  delivery_not_failed: 409,
  handoff_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  mail_unavailable: 503,
  provider_unavailable: 503,
  relays_unavailable: 503,
  not_ready: 503,
  webauthn_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An identity, key or app of the other account, as a `*_linked_elsewhere` refusal lists it. */
interface HeldItem {
  readonly id: string;
  readonly kind?: string;
  readonly value?: string;
  readonly name?: string;
}

/**
 * The other account named by a `*_linked_elsewhere` refusal, with what it
 * holds: the identities and Connect apps a transfer may move (by id, in
 * `confirm_transfer`) and the security keys it would remove (docs/protocol.md
 * §2 "Merging").
 */
export interface ErrorHolder {
  readonly did_oc: string;
  readonly display_name: string | null;
  readonly identities?: readonly HeldItem[];
  readonly security_keys?: readonly HeldItem[];
  readonly apps?: readonly HeldItem[];
}

export interface ErrorBodyShape {
  ok: false;
  error: ErrorCode;
  reason: ErrorCode;
  detail?: string;
  codes?: string[];
  attempts_left?: number;
  holder?: ErrorHolder;
}

export class OcError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string | undefined;
  /** The verification codes behind an `invalid_challenge` (docs/errors.md), for clients to branch on instead of `detail`. */
  readonly codes: readonly string[] | undefined;
  /** Tries left of an e-mail code, on `invalid_code` to the holder of its token (docs/errors.md). */
  readonly attemptsLeft: number | undefined;
  /** The account that holds a proven identity, on `*_linked_elsewhere` (docs/errors.md). */
  readonly holder: ErrorHolder | undefined;

  constructor(
    code: ErrorCode,
    detail?: string,
    options?: { cause?: unknown; codes?: readonly string[]; attemptsLeft?: number; holder?: ErrorHolder },
  ) {
    super(detail ? `${code}: ${detail}` : code, options);
    this.name = 'OcError';
    this.code = code;
    this.status = ERROR_CODES[code];
    this.detail = detail;
    this.codes = options?.codes;
    this.attemptsLeft = options?.attemptsLeft;
    this.holder = options?.holder;
  }

  /** The error body of docs/protocol.md §4: both keys carry the code. */
  toBody(): ErrorBodyShape {
    const body: ErrorBodyShape = {
      ok: false,
      error: this.code,
      reason: this.code,
    };
    if (this.detail !== undefined) body.detail = this.detail;
    if (this.codes !== undefined) body.codes = [...this.codes];
    if (this.attemptsLeft !== undefined) body.attempts_left = this.attemptsLeft;
    if (this.holder !== undefined) body.holder = structuredClone(this.holder);
    return body;
  }
}

export function isOcError(value: unknown): value is OcError {
  return value instanceof OcError;
}
