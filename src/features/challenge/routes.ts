/**
 * The generic signed-challenge primitive (docs/api.md "Signed challenge",
 * docs/protocol.md §5). It creates no session and touches no account; the caller
 * must prevent nonce replay.
 */
import { Type } from 'typebox';
import { addressMatchesNetwork, tryDecodeAddress, verifySignature } from '../../bitcoin/index.js';
import { OcError } from '../../platform/errors.js';
import {
  checkChallenge,
  DEFAULT_CHALLENGE_PURPOSE,
  expectedField,
  issueChallenge,
  MAX_CHALLENGE_FIELD_LENGTH,
  parseChallengeMessage,
} from '../../identity/signin/index.js';
import type { BitcoinNetwork } from '../../platform/config.js';
import { ANSWER, answer, EXAMPLE, errorResponses, example } from '../../platform/http/schemas.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';

const ChallengeQuery = Type.Object({
  addr: Type.String({
    minLength: 1,
    maxLength: 128,
    description: 'Bitcoin address of the configured network',
    ...example(EXAMPLE.address),
  }),
  audience: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_CHALLENGE_FIELD_LENGTH,
      description: 'Where the proof will be used, e.g. a URL; `PUBLIC_URL` when absent',
    }),
  ),
  purpose: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_CHALLENGE_FIELD_LENGTH,
      description: '`login` for sign-in, and when absent; name your own for any other use',
    }),
  ),
  ttl: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$', description: 'Time to live in seconds, 30 to 3600 (default 300)' })),
});

const Challenge = Type.Object(
  {
    message: Type.String({ description: 'Text the user signs' }),
    nonce: Type.String({ pattern: '^[0-9a-f]{32}$' }),
    expiresAt: Type.String({ description: 'ISO 8601 UTC with milliseconds' }),
    expiresAtMs: Type.Integer({ description: 'The same instant in milliseconds since the epoch, for clients that read a number' }),
  },
  answer('The message to sign with the address, valid 5 minutes unless `ttl` says otherwise', {
    message: EXAMPLE.challenge,
    nonce: EXAMPLE.nonce,
    expiresAt: ANSWER.expiresAt,
    expiresAtMs: Date.parse(ANSWER.expiresAt),
  }),
);

const ChallengeProof = Type.Object(
  {
    message: Type.String({ maxLength: 4096 }),
    signature: Type.String({ maxLength: 8192 }),
    expectedNonce: Type.Optional(
      Type.String({ maxLength: 64, description: 'When absent, not compared (the nonce must still be one this service issued)' }),
    ),
    expectedAudience: Type.Optional(
      Type.String({
        maxLength: MAX_CHALLENGE_FIELD_LENGTH,
        description: 'When absent, not compared; empty means what a challenge asked without one carries: `PUBLIC_URL`, or no line',
      }),
    ),
    expectedPurpose: Type.Optional(
      Type.String({
        maxLength: MAX_CHALLENGE_FIELD_LENGTH,
        description: 'When absent, not compared; empty means what a challenge asked without one carries: `login`, or no line',
      }),
    ),
    scheme: Type.Optional(Type.String({ maxLength: 16, description: '`bip322` or `legacy`; detected when absent' })),
  },
  example({
    message: EXAMPLE.challenge,
    signature: EXAMPLE.attestation.signature,
    expectedNonce: EXAMPLE.nonce,
    expectedAudience: 'https://auth.example.com',
    expectedPurpose: 'login',
  }),
);

const ChallengeOutcome = Type.Union(
  [
    Type.Object({
      ok: Type.Literal(true),
      address: Type.String(),
      nonce: Type.String(),
      expiresAt: Type.Integer({ description: 'Expiry of the challenge in milliseconds since the epoch' }),
      expiresAtIso: Type.String({ description: 'The same instant, ISO 8601 UTC' }),
      audience: Type.Optional(Type.String()),
      purpose: Type.Optional(Type.String()),
    }),
    Type.Object({
      ok: Type.Literal(false),
      reason: Type.Literal('invalid_challenge'),
      codes: Type.Array(Type.String(), {
        description: 'decode_error, nonce_mismatch, expired, aud_mismatch, purpose_mismatch, sig_invalid or sig_unsupported_script',
      }),
    }),
  ],
  answer('The proof holds (`ok` true, with what the message says), or `ok` false with the codes of what failed', {
    ok: true,
    address: EXAMPLE.address,
    nonce: EXAMPLE.nonce,
    expiresAt: Date.parse(ANSWER.expiresAt),
    expiresAtIso: ANSWER.expiresAt,
    audience: 'https://auth.example.com',
    purpose: 'login',
  }),
);

/** What the signed-challenge primitive uses: the secret that keys its nonces, and nothing of any account. */
export interface ChallengeRoutes {
  readonly serverSecret: Uint8Array;
  readonly network: BitcoinNetwork;
  /** The default audience. */
  readonly publicUrl: string;
  readonly now: () => Date;
}

export function registerChallengeRoutes(app: TypedApp, deps: ChallengeRoutes): void {
  app.get(
    '/api/challenge',
    route(POLICY.publicRead, 'challenge', 'Issue a challenge message to sign (stateless: the nonce is a MAC)', {
      querystring: ChallengeQuery,
      response: { 200: Challenge, ...errorResponses(400, 429) },
    }),
    async (request, reply) => {
      const query = request.query;
      const decoded = tryDecodeAddress(query.addr);
      if (!decoded || !addressMatchesNetwork(decoded, deps.network)) {
        throw new OcError('bad_request', `addr: not a valid ${deps.network} Bitcoin address`);
      }
      const ttlSeconds = query.ttl === undefined ? undefined : Number(query.ttl);
      if (ttlSeconds !== undefined && (ttlSeconds < 30 || ttlSeconds > 3600))
        throw new OcError('bad_request', 'ttl: must be 30 to 3600 seconds');
      // Field shapes the schema cannot express (line breaks) are refused there with bad_request.
      // Both lines are always written (docs/protocol.md §5): a challenge asked
      // without them is a sign-in proof for this service, as the sign-in
      // walk-through asks for it by address alone. An explicit empty value is
      // refused by the schema, so no message leaves here without them.
      const challenge = issueChallenge(
        {
          address: query.addr,
          audience: query.audience ?? deps.publicUrl,
          purpose: query.purpose ?? DEFAULT_CHALLENGE_PURPOSE,
          ttlSeconds,
        },
        { secret: deps.serverSecret, now: deps.now() },
      );
      reply.header('cache-control', 'no-store');
      return { ...challenge, expiresAtMs: Date.parse(challenge.expiresAt) };
    },
  );

  app.post(
    '/api/challenge',
    route(POLICY.publicWrite, 'challenge', 'Verify a signed challenge; sets no cookie and touches no account', {
      body: ChallengeProof,
      response: { 200: ChallengeOutcome, ...errorResponses(400, 413, 429) },
    }),
    async (request, reply) => {
      const body = request.body;
      reply.header('cache-control', 'no-store');
      // An expectation the caller did not send is not compared (the rule of
      // the OrangeCheck SDKs): the message's own value stands in for it. The
      // nonce must still carry this service's MAC. An empty one expects what
      // a challenge asked without the field carries: the default, or no line
      // in a message issued before every message had one (docs/protocol.md §5).
      const parsed = parseChallengeMessage(body.message);
      const checked = checkChallenge(
        {
          message: body.message,
          expectedNonce: body.expectedNonce ?? parsed?.nonce,
          expectedAudience: expectedField(body.expectedAudience, parsed?.audience, deps.publicUrl),
          expectedPurpose: expectedField(body.expectedPurpose, parsed?.purpose, DEFAULT_CHALLENGE_PURPOSE),
        },
        { secret: deps.serverSecret, now: deps.now() },
      );
      if (!checked.ok) return { ok: false, reason: 'invalid_challenge', codes: [checked.code] };
      const scheme = body.scheme;
      if (scheme !== undefined && scheme !== 'bip322' && scheme !== 'legacy')
        return { ok: false, reason: 'invalid_challenge', codes: ['invalid_scheme'] };
      const code = verifySignature({ address: checked.address, message: body.message, signature: body.signature, scheme });
      if (code !== 'sig_ok_bip322' && code !== 'sig_ok_legacy') return { ok: false, reason: 'invalid_challenge', codes: [code] };
      return {
        ok: true,
        address: checked.address,
        nonce: checked.nonce,
        expiresAt: checked.expiresAt.getTime(),
        expiresAtIso: checked.expiresAt.toISOString(),
        ...(parsed?.audience === undefined ? {} : { audience: parsed.audience }),
        ...(parsed?.purpose === undefined ? {} : { purpose: parsed.purpose }),
      };
    },
  );
}
