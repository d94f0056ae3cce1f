/**
 * Attestation routes (docs/api.md "Attestation routes"). Thin: a schema, one
 * domain call, a reply.
 */
import { Type } from 'typebox';
import { verifyAttestation } from './verify.js';
import type { ChainSource } from '../../chain/index.js';
import type { SignatureVerdicts } from './verify.js';
import type { EventCounter } from '../stats/counter.js';
import type { BitcoinNetwork } from '../../platform/config.js';
import { answer, EXAMPLE, errorResponses, example, Identity } from '../../platform/http/schemas.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';

export const MAX_MESSAGE = 16_384;
export const MAX_SIGNATURE = 8_192;

/** The {addr, msg, sig, scheme} of an attestation, as /api/verify and /api/publish take it. */
export const ATTESTATION_FIELDS = {
  addr: Type.String({ minLength: 1, maxLength: 128, description: 'Bitcoin address the attestation binds' }),
  msg: Type.String({ minLength: 1, maxLength: MAX_MESSAGE, description: 'Canonical attestation message (docs/protocol.md §7)' }),
  sig: Type.String({ minLength: 1, maxLength: MAX_SIGNATURE, description: 'Signature, base64 (or hex for BIP-322)' }),
  scheme: Type.Optional(Type.String({ maxLength: 32, description: '`bip322` or `legacy`; when absent, detected (docs/protocol.md §7)' })),
};

/** The attestation of {@link EXAMPLE}, as /api/verify and /api/publish take it. */
export const ATTESTATION_EXAMPLE = {
  addr: EXAMPLE.address,
  msg: EXAMPLE.attestation.message,
  sig: EXAMPLE.attestation.signature,
  scheme: 'bip322',
};

const VerifyBody = Type.Object(
  {
    ...ATTESTATION_FIELDS,
    attestation_id: Type.Optional(Type.String({ maxLength: 128, description: 'Claimed id; must equal sha256 of msg' })),
  },
  example(ATTESTATION_EXAMPLE),
);

/** What the attestation of {@link ATTESTATION_EXAMPLE} verifies to once its bond is on the chain: the answers' examples. */
export const VERIFIED_EXAMPLE = {
  codes: ['sig_ok_bip322', 'bond_confirmed'],
  address: EXAMPLE.address,
  attestation_id: EXAMPLE.attestation.id,
  identities: [{ protocol: 'github', identifier: 'conformance' }],
  network: 'mainnet',
  sats: 250000,
  days: 45,
  score: 42.7,
  issued_at: '2026-04-22T12:00:00Z',
} as const;

const VerifyResult = Type.Object(
  {
    ok: Type.Boolean(),
    codes: Type.Array(Type.String(), { description: 'Status codes (docs/api.md "Verification status codes")' }),
    address: Type.String(),
    attestation_id: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    identities: Type.Array(Identity),
    network: Type.String(),
    sats: Type.Integer(),
    days: Type.Integer(),
    score: Type.Number(),
    metrics: Type.Object({ sats_bonded: Type.Integer(), days_unspent: Type.Integer(), score: Type.Number() }),
    issued_at: Type.Optional(Type.String()),
    expires_at: Type.Optional(Type.String()),
  },
  answer('The verification: `ok` when the signature verifies and the bond is confirmed; `codes` say what was found', {
    ok: true,
    codes: VERIFIED_EXAMPLE.codes,
    address: VERIFIED_EXAMPLE.address,
    attestation_id: VERIFIED_EXAMPLE.attestation_id,
    identities: VERIFIED_EXAMPLE.identities,
    network: VERIFIED_EXAMPLE.network,
    sats: VERIFIED_EXAMPLE.sats,
    days: VERIFIED_EXAMPLE.days,
    score: VERIFIED_EXAMPLE.score,
    metrics: { sats_bonded: VERIFIED_EXAMPLE.sats, days_unspent: VERIFIED_EXAMPLE.days, score: VERIFIED_EXAMPLE.score },
    issued_at: VERIFIED_EXAMPLE.issued_at,
  }),
);

/** What the attestation verifier's route uses. */
export interface AttestationRoutes {
  readonly chain: ChainSource;
  /** Verdicts of the signatures already checked. */
  readonly signatureVerdicts: SignatureVerdicts;
  /** Counts calls for /api/family-stats. */
  readonly attestCounter: EventCounter;
  readonly network: BitcoinNetwork;
  readonly minConfirmations: number;
  readonly now: () => Date;
}

export function registerAttestationRoutes(app: TypedApp, deps: AttestationRoutes): void {
  app.post(
    '/api/verify',
    route(POLICY.attestationRead, 'attestation', 'Verify an attestation (raw: no relay look-up, no thresholds, not cached)', {
      body: VerifyBody,
      response: { 200: VerifyResult, ...errorResponses(400, 413, 415, 429) },
    }),
    async (request, reply) => {
      const body = request.body;
      const result = await verifyAttestation(
        { addr: body.addr, msg: body.msg, sig: body.sig, scheme: body.scheme, attestationId: body.attestation_id },
        {
          chain: deps.chain,
          network: deps.network,
          minConfirmations: deps.minConfirmations,
          now: deps.now,
          signatures: deps.signatureVerdicts,
        },
      );
      // /api/family-stats counts these (docs/protocol.md §6); counted in memory, written in batches.
      deps.attestCounter.count('verify');
      reply.header('cache-control', 'no-store');
      return result;
    },
  );
}
