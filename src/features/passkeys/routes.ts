/**
 * Security keys and passkeys (docs/protocol.md §6, docs/api.md "Security keys
 * and passkeys"): the routes the OrangeCheck client's WebAuthn hooks call,
 * with the body shapes they send and read (options under `options`, a
 * `challenge_token` to send back, errors with `reason`), and the passkey
 * sign-in. Thin: a schema, one call to src/features/passkeys, a reply.
 */
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { WebAuthnService } from './service.js';
import {
  ANSWER,
  answer,
  EXAMPLE,
  EXAMPLE_ACCOUNT,
  errorResponses,
  example,
  NullableString,
  StringEnum,
} from '../../platform/http/schemas.js';
import { noStore, signedIn, sessionBody, wantsAdd, type SessionDoor } from '../../web/session.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route, sessionRoute, signInRoute } from '../../web/route.js';

/** Base64url of at most 1023 bytes (WebAuthn Level 3: credential ids are at most 1023 bytes). */
const CREDENTIAL_ID = Type.String({
  minLength: 1,
  maxLength: 1400,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'The credential id, base64url',
  ...example(EXAMPLE.credentialId),
});
const B64URL = (maxLength: number, description?: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+={0,2}$', ...(description === undefined ? {} : { description }) });

const CHALLENGE_TOKEN = Type.String({ minLength: 1, maxLength: 2048, description: 'The `challenge_token` the options route answered' });
const LABEL = Type.String({ maxLength: 256, description: '1 to 64 characters after trimming' });

const Extensions = Type.Object({}, { additionalProperties: true, description: 'clientExtensionResults, as the browser returned them' });

/** What a registration and an authentication response share, before their `response`. */
const CREDENTIAL_FIELDS = {
  id: CREDENTIAL_ID,
  rawId: CREDENTIAL_ID,
  type: Type.Literal('public-key'),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  clientExtensionResults: Extensions,
};

const RegistrationResponse = Type.Object(
  {
    ...CREDENTIAL_FIELDS,
    response: Type.Object(
      {
        clientDataJSON: B64URL(8192),
        attestationObject: B64URL(49152),
        transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
      },
      { additionalProperties: true },
    ),
  },
  {
    additionalProperties: true,
    description: 'The RegistrationResponseJSON of navigator.credentials.create (or @simplewebauthn/browser startRegistration)',
  },
);

const AuthenticationResponse = Type.Object(
  {
    ...CREDENTIAL_FIELDS,
    response: Type.Object(
      {
        clientDataJSON: B64URL(8192),
        authenticatorData: B64URL(8192),
        signature: B64URL(2048),
        userHandle: Type.Optional(Type.String({ maxLength: 128 })),
      },
      { additionalProperties: true },
    ),
  },
  {
    additionalProperties: true,
    description: 'The AuthenticationResponseJSON of navigator.credentials.get (or @simplewebauthn/browser startAuthentication)',
  },
);

const Credential = Type.Object({
  id: Type.String({ description: 'The credential id, base64url' }),
  label: Type.String(),
  authenticator_type: StringEnum(['platform', 'cross-platform', 'unknown'] as const),
  transports: Type.Array(Type.String()),
  user_verified: Type.Boolean({ description: 'The authenticator verified the person (PIN, biometrics) when the key was added' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  last_used_at: NullableString({ description: 'ISO 8601 UTC; null until first used' }),
  sign_in: Type.Boolean({ description: 'A sign-in passkey; otherwise the key only steps up a signed-in account' }),
  multi_device: Type.Boolean({ description: 'Backup eligible: the credential may be synced to other devices' }),
  backed_up: Type.Boolean({ description: 'Backed up when last seen' }),
});

/** The key of the examples, as the routes of the account's keys answer it. */
const EXAMPLE_CREDENTIAL = {
  id: EXAMPLE.credentialId,
  label: 'Office security key',
  authenticator_type: 'cross-platform',
  transports: ['usb'],
  user_verified: false,
  created_at: '2026-04-22T12:29:00.000Z',
  last_used_at: null,
  sign_in: false,
  multi_device: false,
  backed_up: false,
} as const;

/** The WebAuthn challenge of the examples: 32 bytes, base64url. */
const EXAMPLE_WEBAUTHN_CHALLENGE = 'dGhlIGNoYWxsZW5nZSBvZiB0aGUgZXhhbXBsZXMhISE';

/** The request options of an assertion: `allowCredentials` lists the account's keys, or nothing for a passkey sign-in. */
const requestOptions = (allowCredentials: unknown[]) => ({
  challenge: EXAMPLE_WEBAUTHN_CHALLENGE,
  timeout: 300000,
  rpId: 'auth.example.com',
  allowCredentials,
  userVerification: allowCredentials.length === 0 ? 'required' : 'preferred',
});

const CeremonyOptions = (optionsDescription: string, description: string, options: unknown) =>
  Type.Object(
    {
      ok: Type.Literal(true),
      options: Type.Object({}, { additionalProperties: true, description: optionsDescription }),
      challenge_token: Type.String({ description: 'Send it back with the response; single use, valid 5 minutes' }),
    },
    answer(description, { ok: true, options, challenge_token: EXAMPLE.challengeToken }),
  );

const RegisterOptionsBody = Type.Object(
  {
    label: Type.Optional(LABEL),
    sign_in: Type.Optional(Type.Boolean({ description: 'true: a sign-in passkey (discoverable, user-verifying); default: a step-up key' })),
  },
  example({ label: 'Office security key', sign_in: false }),
);
const RegisterVerifyBody = Type.Object(
  { challenge_token: CHALLENGE_TOKEN, response: RegistrationResponse, label: Type.Optional(LABEL) },
  example({ challenge_token: EXAMPLE.challengeToken, response: EXAMPLE.registration, label: 'Office security key' }),
);
const AssertionOptionsBody = Type.Object(
  {
    purpose: Type.Optional(
      Type.String({ maxLength: 64, description: "What the step-up is for (shown to no one; accepted for the client's shape)" }),
    ),
  },
  example({ purpose: 'sudo' }),
);
/** An assertion as the browser sends it: the example of every body that carries one. */
const ASSERTION_EXAMPLE = example({ challenge_token: EXAMPLE.challengeToken, response: EXAMPLE.assertion });
const AssertionVerifyBody = Type.Object({ challenge_token: CHALLENGE_TOKEN, response: AuthenticationResponse }, ASSERTION_EXAMPLE);
const PasskeySignInBody = Type.Object(
  {
    challenge_token: CHALLENGE_TOKEN,
    response: AuthenticationResponse,
    add: Type.Optional(Type.Boolean({ description: 'Same as `?add=1`' })),
  },
  ASSERTION_EXAMPLE,
);
/** The answer of a registration or an edit: the key as it is now. */
const CredentialAnswer = (description: string, credential: unknown) =>
  Type.Object({ ok: Type.Literal(true), credential: Credential }, answer(description, { ok: true, credential }));
const CredentialParams = Type.Object({ id: CREDENTIAL_ID });
const CredentialPatch = Type.Object(
  {
    label: Type.Optional(LABEL),
    sign_in: Type.Optional(
      Type.Boolean({ description: 'false keeps a passkey for step-up only; true is refused (register the key as a passkey instead)' }),
    ),
  },
  example({ label: 'Office security key' }),
);

/** Bodiless posts (the options routes) mean `{}`. */
async function emptyBodyIsObject(request: { body: unknown }): Promise<void> {
  if (request.body === undefined) request.body = {};
}

/** The schema types carry the fields the checks rely on; the library's types carry the rest. */
function asRegistration(response: unknown): RegistrationResponseJSON {
  return response as RegistrationResponseJSON;
}
export function asAuthentication(response: unknown): AuthenticationResponseJSON {
  return response as AuthenticationResponseJSON;
}

/** The answer of a registration or an edit, which no cache keeps: the key as it is now. */
function credentialAnswer<C>(reply: FastifyReply, credential: C): { ok: true; credential: C } {
  noStore(reply);
  return { ok: true, credential };
}

export const WEBAUTHN_ASSERTION_FIELDS = { challenge_token: CHALLENGE_TOKEN, response: AuthenticationResponse };

/** What the security-key and passkey routes use. */
export interface WebAuthnRoutes {
  readonly door: SessionDoor;
  readonly webauthn: WebAuthnService;
}

export function registerWebAuthnRoutes(app: TypedApp, deps: WebAuthnRoutes): void {
  const webauthn = deps.webauthn;

  app.post(
    '/api/auth/webauthn/register/options',
    {
      ...sessionRoute(
        POLICY.family,
        'webauthn',
        'Start adding a security key or passkey to the active account; needs a step-up younger than 5 minutes',
        {
          description:
            'Answers PublicKeyCredentialCreationOptionsJSON under `options` for navigator.credentials.create, with the relying-party id ' +
            "of docs/protocol.md §6, the account's keys excluded, and a `challenge_token`. 401 `sudo_required` without a fresh `sudo_at` " +
            '(POST /api/auth/sudo).',
          body: RegisterOptionsBody,
          response: {
            200: CeremonyOptions(
              'PublicKeyCredentialCreationOptionsJSON',
              'The options for navigator.credentials.create, and the token to send back with its response',
              {
                rp: { name: 'oc-host', id: 'auth.example.com' },
                user: { id: 'r3Kq9vT2mXw8LpZ0aYc1Ng', name: EXAMPLE_ACCOUNT.display_name, displayName: EXAMPLE_ACCOUNT.display_name },
                challenge: EXAMPLE_WEBAUTHN_CHALLENGE,
                pubKeyCredParams: [
                  { alg: -8, type: 'public-key' },
                  { alg: -7, type: 'public-key' },
                  { alg: -257, type: 'public-key' },
                ],
                timeout: 300000,
                attestation: 'none',
                excludeCredentials: [],
                authenticatorSelection: { residentKey: 'discouraged', userVerification: 'preferred', requireResidentKey: false },
              },
            ),
            ...errorResponses(400, 401, 403, 413, 415, 429, 503),
          },
        },
        { fresh: { need: 'sudo', what: 'step-up' } },
      ),
      preValidation: emptyBodyIsObject,
    },
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, ...(await webauthn.registrationOptions(current, request.body)) };
    },
  );

  app.post(
    '/api/auth/webauthn/register/verify',
    sessionRoute(POLICY.familyCredential, 'webauthn', 'Finish adding a key: check the attestation and store the credential', {
      description:
        "The `response` of navigator.credentials.create with the options' `challenge_token`. 400 `webauthn_origin_mismatch` or " +
        '`webauthn_rp_id_mismatch` when the ceremony ran elsewhere, 401 `invalid_challenge` or `nonce_reused` for a foreign, expired ' +
        'or used challenge, 401 `verify_failed` for an attestation that does not verify, 409 `credential_exists` for a key registered ' +
        'already.',
      body: RegisterVerifyBody,
      response: {
        200: CredentialAnswer('The key is added to the account', EXAMPLE_CREDENTIAL),
        ...errorResponses(400, 401, 403, 409, 413, 415, 429, 503),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      const body = request.body;
      const credential = await webauthn.register(current, {
        challenge_token: body.challenge_token,
        response: asRegistration(body.response),
        label: body.label,
      });
      return credentialAnswer(reply, credential);
    },
  );

  app.get(
    '/api/auth/webauthn/credentials',
    sessionRoute(POLICY.familyRead, 'webauthn', 'The security keys and passkeys of the active account, oldest first', {
      response: {
        200: Type.Object(
          { ok: Type.Literal(true), credentials: Type.Array(Credential) },
          answer('The keys of the account, oldest first', { ok: true, credentials: [EXAMPLE_CREDENTIAL] }),
        ),
        ...errorResponses(401, 429),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, credentials: await webauthn.list(current.account.id) };
    },
  );

  app.patch(
    '/api/auth/webauthn/credentials/:id',
    sessionRoute(POLICY.family, 'webauthn', 'Rename a key, or keep a passkey for step-up only', {
      params: CredentialParams,
      body: CredentialPatch,
      response: {
        200: CredentialAnswer('The key as it is now', EXAMPLE_CREDENTIAL),
        ...errorResponses(400, 401, 403, 404, 413, 415, 429),
      },
    }),
    async (request, reply) => {
      const current = signedIn(request);
      return credentialAnswer(reply, await webauthn.update(current.account.id, request.params.id, request.body));
    },
  );

  app.delete(
    '/api/auth/webauthn/credentials/:id',
    sessionRoute(
      POLICY.family,
      'webauthn',
      'Remove a key; needs `sudo_at` or `step_up_at` younger than 5 minutes',
      {
        params: CredentialParams,
        response: {
          200: Type.Object({ ok: Type.Literal(true) }, answer('The key is removed', { ok: true })),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
      { fresh: { need: 'step-up', what: 'webauthn: removing a key' } },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      await webauthn.remove(current, request.params.id);
      noStore(reply);
      return { ok: true as const };
    },
  );

  app.post(
    '/api/auth/webauthn/assertion/options',
    {
      ...sessionRoute(POLICY.family, 'webauthn', 'Start a step-up with a key of the active account', {
        description:
          "Answers PublicKeyCredentialRequestOptionsJSON under `options` (the account's keys allowed) and a `challenge_token`. " +
          '409 `no_credentials_registered` when the account has none.',
        body: AssertionOptionsBody,
        response: {
          200: CeremonyOptions(
            'PublicKeyCredentialRequestOptionsJSON',
            "The options for navigator.credentials.get, the account's keys allowed, and the token to send back",
            requestOptions([{ id: EXAMPLE.credentialId, type: 'public-key', transports: ['usb'] }]),
          ),
          ...errorResponses(400, 401, 403, 409, 413, 415, 429, 503),
        },
      }),
      preValidation: emptyBodyIsObject,
    },
    async (request, reply) => {
      const current = signedIn(request);
      noStore(reply);
      return { ok: true, ...(await webauthn.assertionOptions(current)) };
    },
  );

  app.post(
    '/api/auth/webauthn/assertion/verify',
    sessionRoute(
      POLICY.familyCredential,
      'webauthn',
      "Finish a step-up: sets `step_up_at` on this account's session and re-mints the cookie",
      {
        description:
          'The only route that sets `step_up_at` (docs/protocol.md §3). Freshness is per account: after a switch the other account ' +
          'needs its own. 401 `credential_outside_allowlist` for a key of another account or a removed one, `cloned_authenticator` ' +
          'when the signature counter did not grow, `verify_failed` when the assertion does not verify.',
        body: AssertionVerifyBody,
        response: {
          200: Type.Object(
            {
              ok: Type.Literal(true),
              account: Type.Ref('Account'),
              token: Type.String({ description: 'The re-minted JWT, also set as the `oc_session` cookie' }),
              step_up_at: Type.Integer({ description: 'Unix seconds, as the JWT claim' }),
            },
            answer('Stepped up: the session is re-minted with `step_up_at`', {
              ok: true,
              account: EXAMPLE_ACCOUNT,
              token: ANSWER.token,
              step_up_at: Date.parse(ANSWER.now) / 1000,
            }),
          ),
          ...errorResponses(400, 401, 403, 413, 415, 429, 503),
        },
      },
    ),
    async (request, reply) => {
      const current = signedIn(request);
      const body = request.body;
      const issued = await webauthn.stepUp(
        current,
        { challenge_token: body.challenge_token, response: asAuthentication(body.response) },
        'step_up_at',
      );
      deps.door.setCookie(reply, issued);
      return { ...sessionBody(issued), step_up_at: Math.floor((issued.freshness.step_up_at ?? 0) / 1000) };
    },
  );

  app.post(
    '/api/auth/passkey/options',
    {
      ...route(POLICY.family, 'webauthn', 'Start a passkey sign-in: a challenge any sign-in passkey of this host may answer', {
        description:
          "No session needed; `allowCredentials` is empty, so the browser offers the person's passkeys (conditional UI included).",
        response: {
          200: CeremonyOptions(
            'PublicKeyCredentialRequestOptionsJSON',
            'The options for navigator.credentials.get, no key named so the browser offers its passkeys, and the token to send back',
            requestOptions([]),
          ),
          ...errorResponses(403, 413, 415, 429, 503),
        },
      }),
      preValidation: emptyBodyIsObject,
    },
    async (_request, reply) => {
      noStore(reply);
      return { ok: true, ...(await webauthn.signInOptions()) };
    },
  );

  app.post(
    '/api/auth/passkey/signin',
    signInRoute(
      'webauthn',
      "Sign in with a passkey (the session row's method `passkey`, the JWT's amr `hwk`, `user`); add=1 keeps the caller's roster",
      PasskeySignInBody,
      'Ends like every other sign-in: the account the passkey belongs to gets a session, the cookie is set. A key added for ' +
        'step-up only is refused with 401 `credential_outside_allowlist`.',
    ),
    async (request, reply) => {
      const body = request.body;
      const target = await deps.door.signInTarget(request, wantsAdd(request.query, body.add));
      const issued = await webauthn.signIn({ challenge_token: body.challenge_token, response: asAuthentication(body.response) }, target);
      return deps.door.answerIssued(reply, issued);
    },
  );
}
