/**
 * Shared TypeBox schemas for the HTTP layer. They validate input and feed the
 * OpenAPI document, so every route names its error responses with these.
 */
import { Type, type TSchema } from 'typebox';

export const ErrorBody = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.String({ description: 'Stable error code (docs/errors.md)' }),
    reason: Type.String({ description: 'Same code as `error`; client libraries read either' }),
    detail: Type.Optional(Type.String({ description: 'Human-readable detail, e.g. the field at fault' })),
    reasons: Type.Optional(Type.Array(Type.String())),
    codes: Type.Optional(Type.Array(Type.String(), { description: 'Verification codes behind an `invalid_challenge`' })),
    retry_after_seconds: Type.Optional(Type.Integer()),
    holder: Type.Optional(
      Type.Object(
        {
          did_oc: Type.String(),
          display_name: Type.Union([Type.String(), Type.Null()]),
          identities: Type.Optional(
            Type.Array(Type.Object({ id: Type.String(), kind: Type.String(), value: Type.String() }), {
              description: 'Its identities: the proven one moves; the others move only when `confirm_transfer.identities` names them',
            }),
          ),
          security_keys: Type.Optional(
            Type.Array(Type.Object({ id: Type.String(), name: Type.String() }), {
              description: 'Its security keys and passkeys: never moved, removed by a transfer',
            }),
          ),
          apps: Type.Optional(
            Type.Array(Type.Object({ id: Type.String(), name: Type.String() }), {
              description: 'Its Connect apps: moved only when `confirm_transfer.apps` names them, otherwise removed by a transfer',
            }),
          ),
        },
        {
          description:
            'The account that holds the identity just proven (`address_linked_elsewhere`, `email_linked_elsewhere`), and what it holds',
        },
      ),
    ),
    attempts_left: Type.Optional(Type.Integer({ description: "Tries left of an e-mail code (`invalid_code` with the start's token)" })),
  },
  {
    $id: 'ErrorBody',
    description: 'Error body (docs/protocol.md §4)',
    examples: [{ ok: false, error: 'bad_request', reason: 'bad_request', detail: 'body/addr: must NOT have fewer than 1 characters' }],
  },
);

const errorRef = Type.Ref('ErrorBody');

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Request shape wrong (bad_request, with `detail` naming the field)',
  401: 'Session or proof rejected',
  403: 'Cross-site request to a browser-only endpoint, or not allowed',
  404: 'Not found',
  409: 'Conflict with the current state',
  410: 'Expired (a phone sign-in past its 3 minutes)',
  413: 'Request body over 64 KiB',
  415: 'Unsupported content type',
  429: 'Rate limit exceeded',
  500: 'An unexpected failure (`internal_error`); the x-request-id header finds it in the log',
  503: 'A dependency is unavailable',
};

/** Response schemas for the listed error statuses, all pointing at {@link ErrorBody}. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {};
  for (const status of statuses) {
    responses[status] = Type.Unsafe({ ...errorRef, description: ERROR_DESCRIPTIONS[status] ?? 'Error' });
  }
  return responses;
}

export const Identity = Type.Object({
  protocol: Type.String(),
  identifier: Type.String(),
});

/**
 * What signing this browser's own session out answers beside `ok`
 * (`signOutCurrent` in src/web/session.ts): the roster's account now
 * active, with its `account` and `token`, or `switched_to: null` when none
 * is left.
 */
export const SignedOutSwitch = {
  switched_to: Type.Optional(Type.Union([Type.Object({ did_oc: Type.String() }), Type.Null()])),
  account: Type.Optional(Type.Ref('Account')),
  token: Type.Optional(Type.String()),
};

/**
 * `string | null` as one JSON Schema type list. A `anyOf` union would make
 * the response serializer validate every value at run time to pick a branch
 * (measured: most of the time GET /api/auth/me spent outside the database).
 */
export function NullableString(options: { description?: string } = {}) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], ...options });
}

/** One of a few strings, as a plain `enum` for the same reason. */
export function StringEnum<const Values extends readonly string[]>(values: Values, options: { description?: string } = {}) {
  return Type.Unsafe<Values[number]>({ type: 'string', enum: [...values], ...options });
}

const AccountKind = StringEnum(['btc', 'federated'] as const);

export const Account = Type.Object(
  {
    id: Type.String({ description: 'Internal id, equal to the JWT `sub`' }),
    did_oc: Type.String({ pattern: '^did:oc:[0-9a-f]{32}$' }),
    kind: AccountKind,
    display_name: NullableString(),
    primary_btc: NullableString({ description: 'Bitcoin address' }),
    display_identity: Type.Object({ kind: Type.String(), value: Type.String() }),
    has_email: Type.Boolean({ description: 'Whether an e-mail is linked (the address is only in GET /api/auth/identities)' }),
    signing_method: Type.Unsafe<'bip322' | null>({
      type: ['string', 'null'],
      enum: ['bip322', null],
      description: '`bip322` when the account holds a Bitcoin address, else null',
    }),
    nostr_npub: NullableString({ description: 'The npub of a linked Nostr key' }),
    home_federation_slug: Type.Null({ description: 'Always null: no federation custody here' }),
    is_owner: Type.Boolean({ description: 'Always false: no owner accounts here' }),
  },
  { $id: 'Account' },
);

export const RosterEntry = Type.Object(
  {
    id: Type.String(),
    did_oc: Type.String(),
    kind: AccountKind,
    display_name: NullableString(),
    primary_btc: NullableString(),
    display_identity: Type.Object({ kind: Type.String(), value: Type.String() }),
    has_email: Type.Boolean(),
    signing_method: Type.Unsafe<'bip322' | null>({ type: ['string', 'null'], enum: ['bip322', null] }),
    nostr_npub: NullableString(),
    home_federation_slug: Type.Null(),
    is_owner: Type.Boolean(),
    last_seen_at: Type.String({ description: 'ISO 8601 UTC' }),
  },
  { $id: 'RosterEntry' },
);

/** The `?add=` of a sign-in (src/web/session.ts `wantsAdd`). */
export const AddQuery = Type.Object({
  add: Type.Optional(Type.String({ enum: ['1', '0', 'true', 'false'], description: "`1` keeps the caller's roster (add an account)" })),
});

/**
 * The values the request examples of the OpenAPI document share (docs/api.md
 * "Explorer"): the explorer at /api-explorer fills its forms with them, and
 * test/compat/openapi.test.ts sends every example to the service. The
 * attestation is the OrangeCheck conformance vector tv21
 * (test/vectors/oc-protocol/tv21.json): a real BIP-322 signature that
 * POST /api/verify accepts. The challenge and the codes are well formed but
 * were issued by no host, so a route that checks them answers 401.
 */
const TV21_MESSAGE =
  'orangecheck\nidentities: github:conformance\naddress: bc1q0xcqpzrky6eff2g52qdye53xkk9jxkvrh6yhyw\n' +
  'purpose: portable reputation attestation (non-custodial)\nnonce: 0011223344556677889900aabbccddee\n' +
  'issued_at: 2026-04-22T12:00:00Z\nack: I attest control of this address and bind it to my identities.\n';

export const EXAMPLE = {
  address: 'bc1q0xcqpzrky6eff2g52qdye53xkk9jxkvrh6yhyw',
  attestation: {
    message: TV21_MESSAGE,
    signature:
      'AkcwRAIgDZwjAF3arnstRM+racHU7USgcq0DRZyNugENRAPGQzECIEaey/lWb9/qAvYYEqtk2uguncaCkhKD/VYiOJj9h2faASEDG4TFVnsSZECZXT7VqroFZdceGDRgSBn/nBf16dXdB48=',
    id: 'b854fac83c3ea6f79924cd7b925745826404127f897cc3cfe39cc2d0e356d274',
  },
  nonce: '0011223344556677889900aabbccddee',
  challenge:
    'orangecheck-auth\naddress: bc1q0xcqpzrky6eff2g52qdye53xkk9jxkvrh6yhyw\nnonce: 0011223344556677889900aabbccddee\n' +
    'issued_at: 2026-04-22T12:00:00Z\nexpires_at: 2026-04-22T12:05:00Z\n' +
    'ack: I authorize this session under the OrangeCheck auth challenge.\naudience: https://auth.example.com\npurpose: login\n',
  didOc: 'did:oc:0123456789abcdef0123456789abcdef',
  email: 'alice@example.com',
  code: '123456',
  id: '0123456789abcdef',
  /** A WebAuthn ceremony's token and the browser's response: the shape a browser sends, signed by no key. */
  challengeToken: 'eyJhbGciOiJFZERTQSJ9.example.token',
  credentialId: 'AbCdEfGhIjKlMnOpQrStUv',
  assertion: {
    id: 'AbCdEfGhIjKlMnOpQrStUv',
    rawId: 'AbCdEfGhIjKlMnOpQrStUv',
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0',
      authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4',
      signature: 'MEUCIQDexample',
    },
  },
  registration: {
    id: 'AbCdEfGhIjKlMnOpQrStUv',
    rawId: 'AbCdEfGhIjKlMnOpQrStUv',
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0',
      attestationObject: 'o2NmbXRkbm9uZWdhdHRTdG10oA',
      transports: ['usb'],
    },
  },
} as const;

/** `{ examples: [value] }`: the one example of a schema, in the JSON Schema keyword OpenAPI 3.1 reads. */
export function example(value: unknown): { examples: unknown[] } {
  return { examples: [value] };
}

/**
 * The options of an answer's schema: what the answer means (its description
 * in the OpenAPI document) and its example. src/web/openapi.ts also gives
 * the example to the answer's media type, where every OpenAPI viewer looks.
 */
export function answer(description: string, value: unknown): { description: string; examples: unknown[] } {
  return { description, ...example(value) };
}

/** The session key of the examples: its public half and its kid, the RFC 7638 thumbprint of it. */
const EXAMPLE_KEY = { x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k' } as const;

/** A part of a JWT: the JSON of `value`, base64url. */
function jwtPart(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * The values the answer examples share, consistent with {@link EXAMPLE}: the
 * account of `EXAMPLE.didOc` holds `EXAMPLE.address` and `EXAMPLE.email`; it
 * signed in with the address a minute after `EXAMPLE.challenge` was issued,
 * in the session `EXAMPLE.id`.
 */
export const ANSWER = {
  accountId: EXAMPLE.didOc.slice('did:oc:'.length),
  /** When the account signed in, when the challenge it signed expires, and when the examples are read. */
  signedInAt: '2026-04-22T12:01:00.000Z',
  expiresAt: '2026-04-22T12:05:00.000Z',
  now: '2026-04-22T12:30:00.000Z',
  jwkX: EXAMPLE_KEY.x,
  kid: EXAMPLE_KEY.kid,
  /** The session's JWT: the header and claims of that sign-in (docs/protocol.md §3); the signature is made up. */
  token: [
    jwtPart({ alg: 'EdDSA', typ: 'JWT', kid: EXAMPLE_KEY.kid }),
    jwtPart({
      iss: 'https://auth.example.com',
      sub: EXAMPLE.didOc.slice('did:oc:'.length),
      did_oc: EXAMPLE.didOc,
      jti: EXAMPLE.id,
      iat: Date.parse('2026-04-22T12:01:00Z') / 1000,
      exp: Date.parse('2026-05-22T12:01:00Z') / 1000,
      name: 'Alice',
      primary_btc: EXAMPLE.address,
      display_identity: { kind: 'btc', value: EXAMPLE.address },
      signing_method: 'bip322',
      amr: ['swk'],
    }),
    '5a4RmliZ_2u_eVKIV3Yd5mBeDeWX-Hg5fvhamMl8YuOqFbwECXoyty8QErl5SeYpYH5J5skQeweU3hmdRObCIw',
  ].join('.'),
  /** The session of another browser of the account, which the examples sign out. */
  otherSession: '7c41d9e0b2a85f36e19d0c4b7a2f5e83',
  clientId: 'oc_0123456789abcdef0123456789abcdef',
  /** When the client of {@link EXAMPLE_CLIENT_METADATA} was registered. */
  clientRegisteredAt: '2026-04-22T12:26:00.000Z',
  /** Secrets shown once, of the form the service issues; none is real. */
  apiKey: 'oc_live_Zm9yIHRoZSBleGFtcGxlcyBvbmx5OiBub3QgYSBrZXk',
  clientSecret: 'Zm9yIHRoZSBleGFtcGxlcyBvbmx5OiBub3QgYSBzZWNyZXQgYXQgYWxs',
} as const;

/** The OpenID client of the examples (RFC 7591 metadata): the web site of the Connect app of the examples. */
export const EXAMPLE_CLIENT_METADATA = {
  client_name: 'Example shop',
  redirect_uris: ['https://shop.example.com/oidc/callback'],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: 'openid profile bitcoin',
  logo_uri: 'https://shop.example.com/logo.png',
} as const;

/** The account of {@link EXAMPLE.didOc}, as `Account` gives it. */
export const EXAMPLE_ACCOUNT = {
  id: ANSWER.accountId,
  did_oc: EXAMPLE.didOc,
  kind: 'btc',
  display_name: 'Alice',
  primary_btc: EXAMPLE.address,
  display_identity: { kind: 'btc', value: EXAMPLE.address },
  has_email: true,
  signing_method: 'bip322',
  nostr_npub: null,
  home_federation_slug: null,
  is_owner: false,
} as const;

/** The identities of that account: its address, which it signed in with, and its e-mail, linked later that day. */
export const EXAMPLE_IDENTITIES = [
  { id: EXAMPLE.id, kind: 'btc', value: EXAMPLE.address, verified: true, created_at: ANSWER.signedInAt },
  { id: '89abcdef01234567', kind: 'email', value: EXAMPLE.email, verified: true, created_at: '2026-04-22T12:20:00.000Z' },
] as const;

/** A second account of the same browser (a roster entry): one signed in by e-mail code. */
export const EXAMPLE_OTHER_ACCOUNT = {
  id: 'fedcba9876543210fedcba9876543210',
  did_oc: 'did:oc:fedcba9876543210fedcba9876543210',
  kind: 'federated',
  display_name: null,
  primary_btc: null,
  display_identity: { kind: 'email', value: 'alice.work@example.com' },
  has_email: true,
  signing_method: null,
  nostr_npub: null,
  home_federation_slug: null,
  is_owner: false,
} as const;

/** The answer of every sign-in, switch or re-mint, for the account of {@link EXAMPLE_ACCOUNT}. */
const EXAMPLE_SESSION = { ok: true, account: EXAMPLE_ACCOUNT, token: ANSWER.token } as const;

/** The answer of every successful sign-in, switch or re-mint (docs/protocol.md §3). */
export const SessionIssued = Type.Object(
  {
    ok: Type.Literal(true),
    account: Type.Ref('Account'),
    token: Type.String({ description: 'The JWT also set as the `oc_session` cookie, for callers that cannot read cookies' }),
  },
  answer('The account now signed in and its session token (docs/protocol.md §3)', EXAMPLE_SESSION),
);
