/**
 * Attestation look-up and publishing routes (docs/api.md "Attestation
 * routes", docs/protocol.md §7 "Relay envelopes"): GET /api/check, GET
 * /api/discover and POST /api/attestations. Thin: a schema, one domain call
 * (src/features/attestations/lookup.ts, src/features/attestations/publish.ts), a reply.
 *
 * Query values arrive as strings: Ajv type coercion is off in this app, so
 * integers are matched by pattern and converted here.
 */
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  checkResultBody,
  parseSubject,
  DISCOVER_DEFAULT_LIMIT,
  DISCOVER_MAX_LIMIT,
  type CheckSubject,
  type SubjectQuery,
} from './lookup.js';
import type { Thresholds } from './verify.js';
import { OcError } from '../../platform/errors.js';
import { attestationId } from '../../format/index.js';
import type { PublishAttestationInput } from './publish.js';
import { ATTESTATION_EXAMPLE, ATTESTATION_FIELDS, MAX_MESSAGE, MAX_SIGNATURE, VERIFIED_EXAMPLE } from './routes.js';
import type { AttestationLookupService } from './lookup.js';
import type { AttestationPublisher } from './publish.js';
import type { EventCounter } from '../stats/counter.js';
import { sendError } from '../../platform/http/errors.js';
import { answer, EXAMPLE, errorResponses, example, Identity } from '../../platform/http/schemas.js';
import { POLICY } from '../../platform/http/policy.js';
import type { TypedApp } from '../../platform/http/schema-types.js';
import { route } from '../../web/route.js';

const SUBJECT_FIELDS = {
  addr: Type.Optional(Type.String({ maxLength: 128, description: 'Bitcoin address (any network)', ...example(EXAMPLE.address) })),
  id: Type.Optional(Type.String({ maxLength: 64, description: 'Attestation id: 64 hex characters, sha256 of the message' })),
  identity: Type.Optional(Type.String({ maxLength: 512, description: '`<protocol>:<identifier>`, e.g. `github:alice`' })),
};

// Non-negative integers written in decimal; 20 digits is beyond any sats amount.
const NON_NEGATIVE_INTEGER = '^[0-9]{1,20}$';

const CheckQuery = Type.Object({
  ...SUBJECT_FIELDS,
  min_sats: Type.Optional(
    Type.String({ pattern: NON_NEGATIVE_INTEGER, description: 'Minimum confirmed sats bonded; integer ≥ 0, default 0' }),
  ),
  min_days: Type.Optional(Type.String({ pattern: NON_NEGATIVE_INTEGER, description: 'Minimum age in days; integer ≥ 0, default 0' })),
});

const DiscoverQuery = Type.Object({
  ...SUBJECT_FIELDS,
  limit: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,3}$',
      description: `Most envelopes returned: 1 to ${DISCOVER_MAX_LIMIT}, default ${DISCOVER_DEFAULT_LIMIT}`,
    }),
  ),
});

const PublishBody = Type.Object(ATTESTATION_FIELDS, example(ATTESTATION_EXAMPLE));

/** An attestation envelope as publishers send it, or the {addr, msg, sig} body; other envelope fields are allowed and ignored. */
const PublishEnvelopeBody = Type.Object(
  {
    address: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    message: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_MESSAGE })),
    signature: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SIGNATURE })),
    attestation_id: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
    addr: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    msg: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_MESSAGE })),
    sig: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SIGNATURE })),
    scheme: Type.Optional(Type.String({ maxLength: 32 })),
  },
  {
    additionalProperties: true,
    ...example({
      address: EXAMPLE.address,
      message: EXAMPLE.attestation.message,
      signature: EXAMPLE.attestation.signature,
      scheme: 'bip322',
      attestation_id: EXAMPLE.attestation.id,
    }),
  },
);

const CheckResult = Type.Object(
  {
    ok: Type.Boolean({ description: 'True when the attestation verifies and every threshold is met' }),
    sats: Type.Integer({ description: 'Confirmed sats bonded' }),
    days: Type.Integer({ description: 'Age in days' }),
    score: Type.Number(),
    attestation_id: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    address: Type.String(),
    identities: Type.Array(Identity),
    network: Type.String(),
    codes: Type.Array(Type.String(), { description: 'Status codes of the verification (as /api/verify)' }),
    issued_at: Type.Optional(Type.String()),
    expires_at: Type.Optional(Type.String()),
    reasons: Type.Optional(
      Type.Array(Type.String(), { description: 'When ok is false: `below_min_sats` and/or `below_min_days`, or `chain_unavailable`' }),
    ),
  },
  answer('Check result (docs/api.md): the newest attestation of the subject that verifies, measured against the thresholds', {
    ok: true,
    sats: VERIFIED_EXAMPLE.sats,
    days: VERIFIED_EXAMPLE.days,
    score: VERIFIED_EXAMPLE.score,
    attestation_id: VERIFIED_EXAMPLE.attestation_id,
    address: VERIFIED_EXAMPLE.address,
    identities: VERIFIED_EXAMPLE.identities,
    network: VERIFIED_EXAMPLE.network,
    codes: VERIFIED_EXAMPLE.codes,
    issued_at: VERIFIED_EXAMPLE.issued_at,
  }),
);

const CheckNotFound = Type.Object(
  {
    ok: Type.Literal(false),
    reasons: Type.Array(Type.String(), { description: '`["not_found"]`' }),
    rejected: Type.Optional(
      Type.Array(Type.Object({ attestation_id: Type.String(), address: Type.String(), codes: Type.Array(Type.String()) }), {
        description: 'Attestations found on the relays that did not verify, newest first, with their codes (at most 10)',
      }),
    ),
  },
  answer('No attestation of the subject verifies', { ok: false, reasons: ['not_found'] }),
);

const Envelope = Type.Object(
  {
    attestation_id: Type.String(),
    scheme: Type.String(),
    address: Type.String(),
    identities: Type.Array(Identity),
    message: Type.String(),
    message_b64url: Type.String(),
    signature: Type.String(),
    issued_at: Type.String(),
    expires_at: Type.Optional(Type.String()),
    relay_hints: Type.Optional(Type.Array(Type.String())),
    verification_url: Type.Optional(
      Type.String({ description: "Where a person can check it: the publisher's, else this service's `/api/check?id=`" }),
    ),
    publish_targets: Type.Optional(Type.Array(Type.String(), { description: "The publisher's, passed on as it came" })),
    event_id: Type.String({ description: 'Id of the Nostr event kept for this attestation (the newest copy)' }),
    created_at: Type.Integer({ description: "That event's created_at, unix seconds" }),
    relays: Type.Array(Type.String(), { description: 'Configured relays that served it' }),
  },
  {
    description:
      'Attestation envelope (docs/protocol.md §7 "Relay envelopes"). Every other field the publisher put in the ' +
      "event's content is passed on as it came: it is not signed, so nothing vouches for it",
    additionalProperties: true,
  },
);

/** The relays of the answers' examples. */
const EXAMPLE_RELAYS = ['wss://relay.example.com', 'wss://nostr.example.org'];
/** The id of the Nostr event that carries the example attestation. */
const EXAMPLE_EVENT_ID = '5c2e7d9a41f08b63e1d4c7a2b9f05e18d3a6c4b7e2f91d08a5c3b6e4f7a20d19';

const DiscoverResult = Type.Object(
  {
    count: Type.Integer(),
    total: Type.Integer({ description: 'Distinct attestations found (up to 500 per relay)' }),
    attestations: Type.Array(Envelope, { description: 'Newest issued_at first' }),
    relays_answered: Type.Integer(),
    relays_queried: Type.Integer(),
    warnings: Type.Optional(Type.Array(Type.String(), { description: '`relays_unavailable` when no relay answered' })),
  },
  answer('The envelopes the relays hold for the subject, and how many relays answered', {
    count: 1,
    total: 1,
    attestations: [
      {
        attestation_id: EXAMPLE.attestation.id,
        scheme: 'bip322',
        address: EXAMPLE.address,
        identities: VERIFIED_EXAMPLE.identities,
        message: EXAMPLE.attestation.message,
        message_b64url: Buffer.from(EXAMPLE.attestation.message).toString('base64url'),
        signature: EXAMPLE.attestation.signature,
        issued_at: VERIFIED_EXAMPLE.issued_at,
        verification_url: `https://auth.example.com/api/check?id=${EXAMPLE.attestation.id}`,
        event_id: EXAMPLE_EVENT_ID,
        created_at: 1776859230,
        relays: EXAMPLE_RELAYS,
      },
    ],
    relays_answered: 2,
    relays_queried: 2,
  }),
);

const PublishResult = Type.Object(
  {
    ok: Type.Boolean({ description: 'True when the attestation verified and at least one relay accepted it' }),
    attestation_id: Type.String(),
    codes: Type.Array(Type.String(), { description: 'Verification codes; the chain is not consulted' }),
    event_id: Type.Optional(Type.String()),
    published: Type.Array(Type.String(), { description: 'Relays that accepted the event' }),
    failed: Type.Array(Type.String(), { description: 'Relays that refused it or could not be reached' }),
  },
  answer('Published: the relays that took the event, and those that did not', {
    ok: true,
    attestation_id: EXAMPLE.attestation.id,
    codes: ['sig_ok_bip322'],
    event_id: EXAMPLE_EVENT_ID,
    published: EXAMPLE_RELAYS,
    failed: [],
  }),
);

const NOT_FOUND_BODY = Object.freeze({ ok: false, reasons: Object.freeze(['not_found']) });

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The JSON of a check result, kept per cached outcome and reasons: a cache
 * hit then costs no serialisation (docs/performance.md "HTTP": the hit path is
 * a map look-up). There are at most four variants per outcome (no reason,
 * either threshold, both), and the memory goes with the outcome when the
 * cache drops it (WeakMap). The body holds exactly the fields of
 * {@link CheckResult}, which the OpenAPI document describes.
 */
function createResultSerializer(): (outcome: Parameters<typeof checkResultBody>[0], thresholds: Thresholds) => string {
  const serialized = new WeakMap<object, Map<string, string>>();
  return (outcome, thresholds) => {
    const body = checkResultBody(outcome, thresholds);
    const variant = body.reasons === undefined ? '' : body.reasons.join(',');
    let variants = serialized.get(outcome);
    if (variants === undefined) {
      variants = new Map();
      serialized.set(outcome, variants);
    }
    let json = variants.get(variant);
    if (json === undefined) {
      json = JSON.stringify(body);
      variants.set(variant, json);
    }
    return json;
  };
}

const MAX_DECODED_ADDRESSES = 4096;

/**
 * Reads the subject, or answers 400 `bad_request` naming the field.
 * Addresses already decoded are remembered, so that a cache hit does not pay
 * for Bech32 or Base58Check decoding again (docs/performance.md "HTTP": the hit
 * path should be little more than a map look-up). Only valid addresses are
 * kept; the map starts over when full, which bounds it without bookkeeping.
 */
function createSubjectReader(): (query: SubjectQuery) => CheckSubject {
  const decodedAddresses = new Map<string, CheckSubject>();
  return (query) => {
    const onlyAddress = query.addr !== undefined && query.id === undefined && query.identity === undefined;
    if (onlyAddress) {
      const known = decodedAddresses.get(query.addr!);
      if (known !== undefined) return known;
    }
    const parsed = parseSubject(query);
    if (!parsed.ok) throw new OcError('bad_request', parsed.detail);
    if (onlyAddress) {
      if (decodedAddresses.size >= MAX_DECODED_ADDRESSES) decodedAddresses.clear();
      decodedAddresses.set(query.addr!, parsed.subject);
    }
    return parsed.subject;
  };
}

/** What /api/check, /api/discover and publishing use. */
export interface LookupRoutes {
  readonly attestationLookup: AttestationLookupService;
  readonly attestationPublisher: AttestationPublisher;
  readonly attestCounter: EventCounter;
  readonly now: () => Date;
}

export function registerLookupRoutes(app: TypedApp, deps: LookupRoutes): void {
  const lookup = deps.attestationLookup;
  const publisher = deps.attestationPublisher;
  const subjectOf = createSubjectReader();
  const serializedCheckResult = createResultSerializer();

  app.get(
    '/api/check',
    route(
      POLICY.attestationRead,
      'attestation',
      'Check a subject against thresholds (newest verifying attestation on the relays; cached)',
      {
        description:
          'Exactly one of `addr`, `id`, `identity`. Takes the newest attestation that verifies (signature and chain ' +
          'metrics), caches that result per subject (`CHECK_CACHE_SECONDS`, default 60 s; other outcomes 5 s) and ' +
          "applies `min_sats`/`min_days` after the cache. `Cache-Control` gives the entry's remaining lifetime and " +
          '`x-cache` says hit or miss. When the chain is unavailable: 200, ok false, reasons `["chain_unavailable"]`. ' +
          'When no relay answered: 503 `relays_unavailable`.',
        querystring: CheckQuery,
        response: { 200: CheckResult, 404: CheckNotFound, ...errorResponses(400, 429, 503) },
      },
    ),
    async (request, reply) => {
      const query = request.query;
      const subject = subjectOf(query);
      const thresholds = {
        minSats: query.min_sats === undefined ? 0 : Number(query.min_sats),
        minDays: query.min_days === undefined ? 0 : Number(query.min_days),
      };
      const answer = await lookup.check(subject);
      // /api/family-stats counts these (docs/protocol.md §6); counted in memory, written in batches.
      deps.attestCounter.count('check');
      reply.header('x-cache', answer.cache);
      const outcome = answer.outcome;
      if (outcome.status === 'relays_unavailable') {
        // The body docs/api.md's attestation routes use: error, reason and reasons all carry the code.
        return sendError(request, reply, new OcError('relays_unavailable'));
      }
      // The entry's remaining lifetime, so that no HTTP cache keeps it longer than we do.
      const maxAge = Math.max(0, Math.floor((answer.expiresAtMs - deps.now().getTime()) / 1000));
      reply.header('cache-control', `public, max-age=${maxAge}`);
      if (outcome.status === 'not_found') {
        return reply
          .code(404)
          .send(outcome.rejected.length > 0 ? { ok: false, reasons: ['not_found'], rejected: outcome.rejected } : NOT_FOUND_BODY);
      }
      return reply.type(JSON_TYPE).send(serializedCheckResult(outcome, thresholds));
    },
  );

  app.get(
    '/api/discover',
    route(POLICY.attestationRead, 'attestation', 'List the attestation envelopes of a subject found on the relays (not cached)', {
      description:
        'Exactly one of `addr`, `id`, `identity`. Reads the relays on every call. Envelopes passed the relay-level ' +
        'checks (sha256 binding, address, Nostr signature); their Bitcoin signatures are judged by /api/check and ' +
        '/api/verify. When no relay answered: 200 with count 0 and `warnings: ["relays_unavailable"]`.',
      querystring: DiscoverQuery,
      response: { 200: DiscoverResult, ...errorResponses(400, 429) },
    }),
    async (request, reply) => {
      const query = request.query;
      const subject = subjectOf(query);
      const limit = query.limit === undefined ? DISCOVER_DEFAULT_LIMIT : Number(query.limit);
      if (limit < 1 || limit > DISCOVER_MAX_LIMIT) {
        throw new OcError('bad_request', `query.limit: must be an integer from 1 to ${DISCOVER_MAX_LIMIT}`);
      }
      const answer = await lookup.discover(subject, limit);
      reply.header('cache-control', 'no-store');
      return answer;
    },
  );

  /** Publishes and answers: the same operation behind both publish paths. */
  async function publishAndAnswer(request: FastifyRequest, reply: FastifyReply, input: PublishAttestationInput) {
    const outcome = await publisher.publish(input);
    reply.header('cache-control', 'no-store');
    switch (outcome.status) {
      case 'rejected':
        return { ok: false, attestation_id: outcome.attestation_id, codes: outcome.codes, published: [], failed: [] };
      case 'relays_unavailable':
        return sendError(
          request,
          reply,
          new OcError('relays_unavailable', `publish: no relay accepted the event (${outcome.failed.length} tried)`),
        );
      case 'published':
        return {
          ok: true,
          attestation_id: outcome.attestation_id,
          codes: outcome.codes,
          event_id: outcome.event_id,
          published: outcome.published,
          failed: outcome.failed,
        };
    }
  }

  const PUBLISH_DESCRIPTION =
    'Verifies the message and signature (not the chain: bonds are measured when read), wraps the envelope in a ' +
    "kind-30078 event signed with the service's Nostr key and sends it to every configured relay. An attestation " +
    'that does not verify answers 200 with ok false and its codes, like /api/verify. When no relay accepts the ' +
    'event: 503 `relays_unavailable`.';

  app.post(
    '/api/attestations',
    route(POLICY.attestationWrite, 'attestation', 'Publish a wallet-signed attestation to the relays', {
      description: PUBLISH_DESCRIPTION,
      body: PublishBody,
      response: { 200: PublishResult, ...errorResponses(400, 413, 415, 429, 503) },
    }),
    async (request, reply) => publishAndAnswer(request, reply, request.body),
  );

  app.post(
    '/api/publish-attestation',
    route(
      POLICY.attestationWrite,
      'attestation',
      'Publish an attestation envelope to the relays (the path the OrangeCheck documents name)',
      {
        description: `The same operation as POST /api/attestations. ${PUBLISH_DESCRIPTION} Takes an attestation envelope ({address, message, signature, scheme, attestation_id?, …}) or the {addr, msg, sig, scheme} body; a given attestation_id must be the SHA-256 of the message.`,
        body: PublishEnvelopeBody,
        response: { 200: PublishResult, ...errorResponses(400, 413, 415, 429, 503) },
      },
    ),
    async (request, reply) => {
      const body = request.body;
      const addr = body.address ?? body.addr;
      const msg = body.message ?? body.msg;
      const sig = body.signature ?? body.sig;
      if (addr === undefined) throw new OcError('bad_request', 'body.address: required (or addr)');
      if (msg === undefined) throw new OcError('bad_request', 'body.message: required (or msg)');
      if (sig === undefined) throw new OcError('bad_request', 'body.signature: required (or sig)');
      if (body.attestation_id !== undefined && body.attestation_id.toLowerCase() !== attestationId(msg)) {
        reply.header('cache-control', 'no-store');
        return { ok: false, attestation_id: attestationId(msg), codes: ['invalid_attestation_id'], published: [], failed: [] };
      }
      return publishAndAnswer(request, reply, { addr, msg, sig, scheme: body.scheme });
    },
  );
}
