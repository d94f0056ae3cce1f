/**
 * The OpenAPI 3.1 document, generated from the route schemas, at
 * GET /api/openapi (CORS-permissive, cached 5 minutes; docs/api.md
 * "Versioning"). The interactive explorer that reads it is a page of the
 * service (/api-explorer, src/web/pages.ts).
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../platform/config.js';
import { Account, answer, ErrorBody, errorResponses, RosterEntry } from '../platform/http/schemas.js';
import { POLICY } from '../platform/http/policy.js';
import { route } from './route.js';

const OPENAPI_TAGS = [
  { name: 'auth', description: 'Session cookie, JWKS, me, sign-in, logout, switch, account' },
  { name: 'challenge', description: 'Generic BIP-322 signed-challenge primitive' },
  { name: 'webauthn', description: 'Security keys and passkeys: registering, step-up, passkey sign-in' },
  { name: 'email-otp', description: 'E-mail one-time code sign-in' },
  { name: 'handoff', description: 'Signing in on a desktop from a wallet on a phone (QR code)' },
  { name: 'oauth', description: 'External identity provider sign-in' },
  { name: 'connect', description: 'Integrator provisioning' },
  { name: 'public', description: 'Public family-wide statistics' },
  { name: 'forms', description: 'Contact-form relay' },
  { name: 'attestation', description: 'OrangeCheck attestation check, verify and discover' },
  { name: 'ops', description: 'Health and readiness' },
  { name: 'admin', description: 'The operators’ admin API, for an operator’s API token' },
];

/**
 * `getAuthProviderStart` for `GET /api/auth/:provider/start`: the method and
 * the path's words in camel case, so every operation has a stable id that
 * client generators name their functions after.
 */
function operationIdOf(method: string, url: string): string {
  const words = url
    .replace(/^\/api\//, '/')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '');
  return [method.toLowerCase(), ...words.map((word) => word[0]!.toUpperCase() + word.slice(1))].join('');
}

/**
 * The example of an error answer of each status: its most common code
 * (docs/errors.md has them all), so that the explorer shows what a 401 or a
 * 429 of a route looks like. An error answer's schema is a bare `$ref` to
 * `ErrorBody`, which keeps no keyword beside it, so the example is added to
 * the document's media type instead.
 */
const ERROR_EXAMPLES: Readonly<Record<string, readonly [code: string, detail: string]>> = {
  400: ['bad_request', 'body/addr: must NOT have fewer than 1 characters'],
  401: ['not_authenticated', 'session: sign in first'],
  403: ['cross_site', 'request: only this site may post here'],
  404: ['not_found', 'route: no such route'],
  409: ['last_identity', 'unlink: the account would have no way to sign in'],
  410: ['handoff_expired', 'handoff: the sign-in from a phone has expired'],
  413: ['payload_too_large', 'body: larger than 64 KiB'],
  415: ['unsupported_media_type', 'body: send application/json'],
  429: ['rate_limited', 'rate: too many requests'],
  500: ['internal_error', 'request: an unexpected failure'],
  503: ['not_ready', 'storage: not ready'],
};

type Media = { schema?: { $ref?: string; examples?: unknown[] }; example?: unknown };
type Paths = Record<string, Record<string, { responses?: Record<string, { content?: Record<string, Media> }> }>>;

/**
 * Gives every answer its example on the media type, where every OpenAPI
 * viewer looks: an error answer that points at `ErrorBody` the example of its
 * status, any other answer the example of its own schema (`answer()` of
 * src/platform/http/schemas.ts). test/compat/openapi.test.ts checks that every
 * success answer has one and that it matches its schema.
 */
function withAnswerExamples<Document extends { paths?: unknown }>(document: Document): Document {
  for (const item of Object.values((document.paths ?? {}) as Paths)) {
    for (const operation of Object.values(item)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const media = response.content?.['application/json'];
        if (media === undefined || media.example !== undefined) continue;
        const own = media.schema?.examples?.[0];
        if (own !== undefined) {
          media.example = own;
          continue;
        }
        const known = ERROR_EXAMPLES[status];
        if (known === undefined || media.schema?.$ref !== '#/components/schemas/ErrorBody') continue;
        const [code, detail] = known;
        media.example = { ok: false, error: code, reason: code, detail, ...(status === '429' ? { retry_after_seconds: 30 } : {}) };
      }
    }
  }
  return document;
}

export async function registerOpenApi(app: FastifyInstance, config: Config, version: string): Promise<void> {
  // Before any documented route is registered: every operation gets an id,
  // and one that declares no error answer gets the 500 every route can give.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { hide?: boolean; operationId?: string; response?: Record<string, unknown> } | undefined;
    if (schema === undefined || schema.hide === true || route.method === 'HEAD') return;
    const method = [route.method].flat()[0]!;
    schema.operationId ??= operationIdOf(method, route.url);
    schema.response ??= {};
    const response = schema.response;
    if (!Object.keys(response).some((status) => Number(status) >= 400)) Object.assign(response, errorResponses(500));
  });
  app.addSchema(ErrorBody);
  app.addSchema(Account);
  app.addSchema(RosterEntry);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'oc-host',
        version,
        description:
          'Sign-in host and OrangeCheck attestation verifier. Sessions are Ed25519-signed JWTs in the `oc_session` cookie; consumer sites verify them locally against the JWKS.',
      },
      servers: [{ url: config.publicUrl }],
      tags: OPENAPI_TAGS,
      components: {
        securitySchemes: {
          cookieAuth: { type: 'apiKey', in: 'cookie', name: 'oc_session' },
          bearerAuth: { type: 'http', scheme: 'bearer' },
          // The operators' console: the session cookie of an operator's account with a fresh key step-up (docs/operations.md "The console").
          consoleAuth: {
            type: 'apiKey',
            in: 'cookie',
            name: 'oc_session',
            description:
              'The session cookie of an operator’s account, with a security-key or passkey step-up younger than 10 minutes ' +
              '(1 minute for a destructive action); a change must come from this service’s own pages.',
          },
        },
      },
    },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject ? withAnswerExamples(documentObject.openapiObject) : documentObject.swaggerObject,
    refResolver: {
      // Keep `ErrorBody` as its own component name in the document.
      buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
    },
  });

  let document: string | undefined;
  app.get(
    '/api/openapi',
    route(POLICY.publicRead, 'ops', 'This document: OpenAPI 3.1, cached 5 minutes', {
      response: {
        200: {
          type: 'object',
          additionalProperties: true,
          ...answer('An OpenAPI 3.1 document: this one, of which the example shows the start', {
            openapi: '3.1.0',
            info: { title: 'oc-host', version },
            servers: [{ url: config.publicUrl }],
            tags: OPENAPI_TAGS.filter((tag) => tag.name === 'ops'),
            paths: { '/healthz': { get: { operationId: 'getHealthz', tags: ['ops'], summary: 'Process alive' } } },
          }),
        },
        ...errorResponses(429),
      },
    }),
    async (_request, reply) => {
      // Serialised once: the same text each time is also compressed only once (src/platform/http/compression.ts).
      document ??= JSON.stringify(app.swagger());
      return reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8').send(document);
    },
  );
}
