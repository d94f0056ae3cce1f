/**
 * The signed-in account managing itself (docs/protocol.md §6 "Step-up", linking,
 * "Account edit"): POST /api/auth/sudo, GET and DELETE /api/auth/identities,
 * POST /api/auth/link/btc, POST /api/auth/link/email, PATCH
 * /api/auth/account. Thin: a schema, the domain call (src/identity/account), a reply.
 * Every answer carries the session, so none is cached (docs/protocol.md §4).
 * A key's assertion, one of the re-proofs POST /api/auth/sudo takes, is
 * checked by src/features/passkeys.
 */
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { proofFromFields, type AccountChange, type TransferAcceptance } from '../../identity/account/index.js';
import type { AccountService } from '../../identity/account/index.js';
import type { WebAuthnService } from '../passkeys/index.js';
import {
  ANSWER,
  answer,
  EXAMPLE,
  EXAMPLE_ACCOUNT,
  EXAMPLE_IDENTITIES,
  errorResponses,
  example,
  NullableString,
  SessionIssued,
} from '../../platform/http/schemas.js';
import { noStore, signedIn, sessionBody, type SessionDoor } from '../../web/session.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { sessionRoute } from '../../web/route.js';
import { asAuthentication, WEBAUTHN_ASSERTION_FIELDS } from '../passkeys/index.js';
import { OcError } from '../../platform/errors.js';

const CHALLENGE_FIELDS = {
  message: Type.String({ minLength: 1, maxLength: 4096, description: 'The challenge message from GET /api/challenge' }),
  signature: Type.String({
    minLength: 1,
    maxLength: 8192,
    description: 'BIP-322 signature (base64 or hex), or legacy signmessage for P2PKH',
  }),
  nonce: Type.String({ minLength: 1, maxLength: 64 }),
  address: Type.Optional(Type.String({ maxLength: 128, description: 'When given, must equal the address in the message' })),
  scheme: Type.Optional(Type.String({ maxLength: 16, description: '`bip322` or `legacy`; detected when absent' })),
};
const EMAIL_FIELDS = {
  email: Type.String({ minLength: 3, maxLength: 254 }),
  code: Type.String({ maxLength: 16, description: 'The 6-digit code mailed by POST /api/auth/email-otp/start' }),
  token: Type.Optional(Type.String({ maxLength: 128, description: 'The `token` that start answered' })),
};
const HeldIds = (what: string) => Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100, description: what });
const CONFIRM_TRANSFER = Type.Optional(
  Type.Union(
    [
      Type.Boolean(),
      Type.Object(
        {
          identities: Type.Optional(
            HeldIds('Ids of further identities of the other account to move (from `holder.identities` of the 409)'),
          ),
          apps: Type.Optional(HeldIds('Ids of Connect apps of the other account to move (from `holder.apps` of the 409)')),
        },
        { additionalProperties: false },
      ),
    ],
    {
      description:
        'When the identity belongs to another account, merges that account into this one (docs/protocol.md §2 "Merging"): ' +
        '`true` moves the proven identity alone; an object also moves the identities and apps it names by id. Whatever ' +
        'else the other account holds is removed, its security keys always. Absent or false: 409 listing what it holds',
    },
  ),
);

/** The acceptance a `confirm_transfer` field gives (docs/protocol.md §2 "Merging"), or null for none. */
function transferOf(
  confirm: boolean | { identities?: string[] | undefined; apps?: string[] | undefined } | undefined,
): TransferAcceptance | null {
  if (confirm === undefined || confirm === false) return null;
  if (confirm === true) return { identities: [], apps: [] };
  return { identities: confirm.identities ?? [], apps: confirm.apps ?? [] };
}

const SudoBody = Type.Object(
  {
    message: Type.Optional(CHALLENGE_FIELDS.message),
    signature: Type.Optional(CHALLENGE_FIELDS.signature),
    nonce: Type.Optional(CHALLENGE_FIELDS.nonce),
    address: CHALLENGE_FIELDS.address,
    scheme: CHALLENGE_FIELDS.scheme,
    email: Type.Optional(EMAIL_FIELDS.email),
    code: Type.Optional(EMAIL_FIELDS.code),
    token: EMAIL_FIELDS.token,
    challenge_token: Type.Optional(WEBAUTHN_ASSERTION_FIELDS.challenge_token),
    response: Type.Optional(WEBAUTHN_ASSERTION_FIELDS.response),
  },
  {
    description:
      'Either `{message, signature, nonce}`: a challenge with `purpose=sudo` for an address of the active account; ' +
      'or `{email, code, token?}`: an e-mail code for an e-mail of the active account; ' +
      'or `{challenge_token, response}`: an assertion by a key of the active account (POST /api/auth/webauthn/assertion/options)',
    ...example({ email: EXAMPLE.email, code: EXAMPLE.code }),
  },
);
const LinkBtcBody = Type.Object(
  {
    ...CHALLENGE_FIELDS,
    nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "When absent, the message's own nonce" })),
    confirm_transfer: CONFIRM_TRANSFER,
  },
  {
    description:
      'A challenge with `purpose=link` signed by the address to link; its audience may be a family origin or the did of the ' +
      'active account. A 409 leaves the challenge unused: send the same message and signature again with confirm_transfer',
    ...example({ message: EXAMPLE.challenge, signature: EXAMPLE.attestation.signature, nonce: EXAMPLE.nonce }),
  },
);
const LinkEmailBody = Type.Object(
  { ...EMAIL_FIELDS, confirm_transfer: CONFIRM_TRANSFER },
  { description: 'An e-mail code for the address to link', ...example({ email: EXAMPLE.email, code: EXAMPLE.code }) },
);
const UnlinkQuery = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The identity id from GET /api/auth/identities', ...example(EXAMPLE.id) }),
});
const AccountEditBody = Type.Object(
  {
    display_name: Type.Optional(
      Type.Union([Type.String({ maxLength: 256 }), Type.Null()], {
        description: '1 to 64 characters after trimming, no control characters; null clears it',
      }),
    ),
    display_identity: Type.Optional(
      Type.Union([Type.String({ enum: ['btc', 'email', 'did', 'nostr'] }), Type.Null()], {
        description: 'A kind the account holds; null returns to the default (address, else e-mail, else did)',
      }),
    ),
  },
  example({ display_name: 'Alice' }),
);

const IdentityView = Type.Object({
  id: Type.String(),
  kind: Type.String({ enum: ['btc', 'email', 'oauth', 'connect'] }),
  value: Type.String({ description: 'Address, lowercased e-mail, `<provider>:<sub>` or `<app_id>:<user_id>`' }),
  verified: Type.Boolean(),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
});
const NamedItem = Type.Object({ id: Type.String(), name: Type.String() });
const LinkedIdentity = Type.Object({
  id: Type.String(),
  kind: Type.String({ enum: ['btc', 'email', 'oauth', 'connect'] }),
  value: Type.String(),
  verified_at: NullableString({ description: 'ISO 8601 UTC; null for an unverified hint' }),
  verification_method: Type.Unsafe<string | null>({ type: ['string', 'null'], enum: ['bip322', 'email-otp', 'oauth', null] }),
  is_primary: Type.Boolean({ description: 'The primary address, or the first e-mail' }),
});
const MergedFrom = Type.Object({
  did_oc: Type.String(),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  last_signed_in_at: NullableString({ description: 'ISO 8601 UTC; null when no session of it is left' }),
});

const IdentitiesBody = Type.Object(
  {
    ok: Type.Literal(true),
    identities: Type.Array(IdentityView),
    linked: Type.Array(LinkedIdentity, { description: 'The same identities as the OrangeCheck account components read them' }),
    account_id: Type.String(),
    did_oc: Type.String(),
    merged_from: Type.Array(MergedFrom, { description: 'Accounts merged into this one' }),
  },
  answer('The identities of the active account, two ways, and the accounts merged into it', {
    ok: true,
    identities: EXAMPLE_IDENTITIES,
    linked: [
      {
        id: EXAMPLE.id,
        kind: 'btc',
        value: EXAMPLE.address,
        verified_at: ANSWER.signedInAt,
        verification_method: 'bip322',
        is_primary: true,
      },
      {
        id: EXAMPLE_IDENTITIES[1].id,
        kind: 'email',
        value: EXAMPLE.email,
        verified_at: EXAMPLE_IDENTITIES[1].created_at,
        verification_method: 'email-otp',
        is_primary: true,
      },
    ],
    account_id: ANSWER.accountId,
    did_oc: EXAMPLE.didOc,
    merged_from: [],
  }),
);
const AccountWithIdentities = Type.Object(
  {
    ok: Type.Literal(true),
    account: Type.Ref('Account'),
    identities: Type.Array(IdentityView),
    merged: Type.Optional(
      Type.Object(
        {
          did_oc: Type.String(),
          moved: Type.Object(
            { identities: Type.Array(IdentityView), apps: Type.Array(NamedItem) },
            { description: 'What arrived in this account' },
          ),
          removed: Type.Object(
            { identities: Type.Array(IdentityView), security_keys: Type.Array(NamedItem), apps: Type.Array(NamedItem) },
            { description: 'What the merged account held and the transfer removed' },
          ),
        },
        { description: 'The account merged into this one by the transfer' },
      ),
    ),
    token: Type.String({ description: 'The re-minted JWT, also set as the `oc_session` cookie' }),
  },
  answer('The account with its identities as they are now, and its re-minted session token', {
    ok: true,
    account: EXAMPLE_ACCOUNT,
    identities: EXAMPLE_IDENTITIES,
    token: ANSWER.token,
  }),
);

/** What the account's own routes use (link, step-up, overview, unlink, edit). */
export interface AccountRoutes {
  readonly door: SessionDoor;
  readonly accounts: AccountService;
  readonly webauthn: WebAuthnService;
}

export function registerAccountRoutes(app: TypedApp, deps: AccountRoutes): void {
  /** Sets the re-minted cookie and answers with the identities (and the merged account, after a transfer). */
  function changed(change: AccountChange, reply: FastifyReply) {
    deps.door.setCookie(reply, change.issued);
    return { ...sessionBody(change.issued), identities: change.identities, ...(change.merged ? { merged: change.merged } : {}) };
  }
  /** Links the identity `proof` proves to the signed-in account, with the transfer `confirm` accepts. */
  async function linked(
    request: FastifyRequest,
    reply: FastifyReply,
    proof: Parameters<AccountService['link']>[1],
    confirm: Parameters<typeof transferOf>[0],
  ) {
    const current = signedIn(request);
    return changed(await deps.accounts.link(current, proof, transferOf(confirm)), reply);
  }

  app.post(
    '/api/auth/sudo',
    sessionRoute(
      POLICY.familyCredential,
      'auth',
      'Step up: prove the active account again (needed within 5 minutes before linking, unlinking or adding a key)',
      {
        description:
          "Sets `sudo_at` of this account's session to now and re-mints the cookie. The proof must be for an " +
          'address or e-mail linked to the active account, else 401 `identity_not_linked`, or by one of its keys, else 401 ' +
          '`credential_outside_allowlist`. Freshness is per account: after a ' +
          'switch the other account needs its own step-up.',
        body: SudoBody,
        response: { 200: SessionIssued, ...errorResponses(400, 401, 403, 413, 429, 503) },
      },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      const { challenge_token: challengeToken, response, ...fields } = request.body;
      let issued;
      if (challengeToken === undefined && response === undefined) {
        issued = await deps.accounts.stepUp(current, proofFromFields(fields));
      } else {
        // A key: the assertion is the re-proof; it sets `sudo_at` like the other two.
        if (challengeToken === undefined || response === undefined || Object.values(fields).some((value) => value !== undefined)) {
          throw new OcError('bad_request', 'body: a key re-proof is {challenge_token, response} and nothing else');
        }
        issued = await deps.webauthn.stepUp(current, { challenge_token: challengeToken, response: asAuthentication(response) }, 'sudo_at');
      }
      return deps.door.answerIssued(reply, issued);
    },
  );

  app.get(
    '/api/auth/identities',
    sessionRoute(POLICY.family, 'auth', 'The identities linked to the active account, oldest first', {
      response: { 200: IdentitiesBody, ...errorResponses(401, 429) },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, ...(await deps.accounts.overview(current.account)) };
    },
  );

  app.post(
    '/api/auth/link/btc',
    sessionRoute(
      POLICY.familyCredential,
      'auth',
      'Link a Bitcoin address (a challenge with purpose=link); needs a step-up, or a sign-in in this browser, younger than 5 minutes',
      {
        description:
          'A free address is linked (and becomes the primary address when the account has none); an address already on ' +
          'this account is a no-op; an address of another account is 409 `address_linked_elsewhere`, listing what that ' +
          'account holds, unless `confirm_transfer` accepts the merge: that account is merged into this one (its sessions ' +
          'end; the proven address and what confirm_transfer names move, the rest of it is removed, its security keys ' +
          'always). An account disabled by the operator takes part in no merge: 403 `account_disabled`. A 409 leaves the ' +
          'proof unused, so the same message and signature can be sent again with confirm_transfer.',
        body: LinkBtcBody,
        response: { 200: AccountWithIdentities, ...errorResponses(400, 401, 403, 409, 413, 429, 503) },
      },
      { fresh: { need: 'link', what: 'link' } },
    ),
    async (request, reply) => {
      const body = request.body;
      const proof = {
        kind: 'btc',
        message: body.message,
        signature: body.signature,
        nonce: body.nonce,
        address: body.address,
        scheme: body.scheme,
      } as const;
      return linked(request, reply, proof, body.confirm_transfer);
    },
  );

  app.post(
    '/api/auth/link/email',
    sessionRoute(
      POLICY.familyCredential,
      'auth',
      'Link an e-mail address (a code from POST /api/auth/email-otp/start); needs a step-up, or a sign-in in this browser, younger than 5 minutes',
      {
        description:
          'As /api/auth/link/btc, with 409 `email_linked_elsewhere` for an e-mail of another account; the code stays usable after a 409.',
        body: LinkEmailBody,
        response: { 200: AccountWithIdentities, ...errorResponses(400, 401, 403, 409, 413, 429, 503) },
      },
      { fresh: { need: 'link', what: 'link' } },
    ),
    async (request, reply) => {
      const body = request.body;
      const proof = { kind: 'email', email: body.email, code: body.code, token: body.token } as const;
      return linked(request, reply, proof, body.confirm_transfer);
    },
  );

  app.delete(
    '/api/auth/identities',
    sessionRoute(
      POLICY.family,
      'auth',
      'Unlink an identity; needs a step-up younger than 5 minutes',
      {
        description:
          '404 `not_found` for an id that is not on this account; 409 `last_identity` when none would remain. 401 `sudo_required` ' +
          'without a fresh `sudo_at` (POST /api/auth/sudo).',
        querystring: UnlinkQuery,
        response: { 200: AccountWithIdentities, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
      { fresh: { need: 'sudo', what: 'step-up' } },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      return changed(await deps.accounts.unlink(current, request.query.id), reply);
    },
  );

  app.patch(
    '/api/auth/account',
    sessionRoute(POLICY.family, 'auth', 'Edit the active account: display name and display identity', {
      description: 'Re-mints the cookie so the JWT carries the new `name` and `display_identity`.',
      body: AccountEditBody,
      response: { 200: SessionIssued, ...errorResponses(400, 401, 403, 413, 415, 429) },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      const issued = await deps.accounts.edit(current, request.body);
      return deps.door.answerIssued(reply, issued);
    },
  );
}
