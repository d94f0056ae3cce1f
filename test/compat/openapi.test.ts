/**
 * GET /api/openapi is a valid OpenAPI 3.1 document that a client generator
 * can use (oc-docs `api-reference/auth-host.mdx`: "Generate clients with
 * openapi-generator-cli generate -i …/api/openapi"): it passes a maintained
 * validator, every `$ref` resolves, every operation has a unique
 * `operationId` and its error answers, and every API route is in it. Every
 * request example in it (the explorer's starting values) is one the service
 * accepts: it matches its schema, and sent as it is it gets no 400. Every
 * JSON answer of success carries a description and an example that matches
 * its own schema.
 */
import { readFile } from 'node:fs/promises';
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { testApp } from '../support/app.js';

const app = await testApp({ OAUTH_GITHUB_CLIENT_ID: 'id', OAUTH_GITHUB_CLIENT_SECRET: 'secret' });
afterAll(() => app.close());
const document = (await app.inject({ method: 'GET', url: '/api/openapi' })).json();
/** The address and the attestation of the request examples (src/platform/http/schemas.ts `EXAMPLE`). */
const EXAMPLE_ADDRESS = 'bc1q0xcqpzrky6eff2g52qdye53xkk9jxkvrh6yhyw';
const ATTESTATION_ID = 'b854fac83c3ea6f79924cd7b925745826404127f897cc3cfe39cc2d0e356d274';

type Parameter = { name: string; in: string; required?: boolean; example?: unknown; schema?: unknown };
type Answer = { description?: string; content?: Record<string, { schema?: object; example?: unknown }> };
type Operation = {
  operationId?: string;
  responses?: Record<string, Answer>;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: object; example?: unknown; examples?: Record<string, { value: unknown }> }> };
};
const operations: Array<[string, string, Operation]> = Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(
  ([path, methods]) => Object.entries(methods).map(([method, operation]) => [method, path, operation] as [string, string, Operation]),
);

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 for @readme/openapi-parser', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document));
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('resolves every $ref', async () => {
    const resolved = await dereference(structuredClone(document));
    expect(JSON.stringify(resolved)).not.toContain('"$ref"');
  });

  it('gives every operation a unique operationId and at least one error answer', () => {
    const ids = operations.map(([, , operation]) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const withoutErrors = operations.filter(
      ([, , operation]) => !Object.keys(operation.responses ?? {}).some((status) => Number(status) >= 400),
    );
    expect(withoutErrors.map(([method, path]) => `${method} ${path}`)).toEqual([]);
    expect(operations.find(([method, path]) => method === 'get' && path === '/api/auth/me')?.[2].operationId).toBe('getAuthMe');
  });

  it('describes every API route the service serves', () => {
    const documented = new Set(operations.map(([method, path]) => `${method.toUpperCase()} ${path}`));
    const served = app.routePolicies
      .routes()
      .filter(
        ({ method, url }) =>
          method !== 'HEAD' &&
          method !== 'OPTIONS' &&
          // The admin catch-all answers what an unknown path does (src/features/admin/console-routes.ts).
          !url.endsWith('/*') &&
          (url.startsWith('/api/') || url.startsWith('/.well-known/') || url === '/healthz' || url === '/readyz'),
      )
      .map(({ method, url }) => `${method} ${url.replace(/:(\w+)/g, '{$1}')}`);
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
  });

  it('documents the provider callback query as named parameters, not a schema type', () => {
    const callback = document.paths['/api/auth/{provider}/callback'].get;
    const names = (callback.parameters as Array<{ name: string; in: string; schema: unknown }>)
      .filter((parameter) => parameter.in === 'query')
      .map((parameter) => parameter.name);
    expect(names).toEqual(expect.arrayContaining(['code', 'state', 'error']));
    for (const parameter of callback.parameters) expect(typeof parameter.schema).toBe('object');
  });
});

/** The examples of a request body: `example`, or each of `examples` (@fastify/swagger writes one or the other). */
function bodyExamples(operation: Operation): unknown[] {
  const media = operation.requestBody?.content['application/json'];
  if (media === undefined) return [];
  if (media.example !== undefined) return [media.example];
  return Object.values(media.examples ?? {}).map((named) => named.value);
}

/** The path of `operation` with its path parameters' examples, and its query with those of the required ones. */
function exampleUrl(path: string, operation: Operation): string {
  const parameters = operation.parameters ?? [];
  let url = path;
  for (const parameter of parameters.filter((one) => one.in === 'path'))
    url = url.replace(`{${parameter.name}}`, encodeURIComponent(String(parameter.example)));
  const query = new URLSearchParams(
    parameters.filter((one) => one.in === 'query' && one.required === true).map((one): [string, string] => [one.name, String(one.example)]),
  );
  return query.size > 0 ? `${url}?${query}` : url;
}

describe('the request examples of the OpenAPI document', () => {
  const withBody = operations.filter(([, , operation]) => operation.requestBody !== undefined);

  it('give every body and every required parameter an example', () => {
    expect(withBody.filter(([, , operation]) => bodyExamples(operation).length === 0).map(([method, path]) => `${method} ${path}`)).toEqual(
      [],
    );
    const missing = operations.flatMap(([method, path, operation]) =>
      (operation.parameters ?? [])
        .filter((parameter) => parameter.required === true && parameter.example === undefined)
        .map((parameter) => `${method} ${path} ${parameter.in} ${parameter.name}`),
    );
    expect(missing).toEqual([]);
  });

  it('match their own schemas', async () => {
    const resolved = (await dereference(structuredClone(document))) as { paths: Record<string, Record<string, Operation>> };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const failures: string[] = [];
    for (const [method, path] of withBody) {
      const operation = resolved.paths[path]![method]!;
      const validate = ajv.compile(operation.requestBody!.content['application/json']!.schema);
      for (const value of bodyExamples(operation))
        if (!validate(value)) failures.push(`${method} ${path}: ${ajv.errorsText(validate.errors)}`);
      for (const parameter of operation.parameters ?? []) {
        if (parameter.example === undefined) continue;
        const validateParameter = ajv.compile(parameter.schema as object);
        if (!validateParameter(parameter.example))
          failures.push(`${method} ${path} ${parameter.name}: ${ajv.errorsText(validateParameter.errors)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('pass the validation of the service itself: sent as they are, none is answered 400', async () => {
    const refused: string[] = [];
    for (const [method, path, operation] of withBody) {
      for (const payload of bodyExamples(operation)) {
        const response = await app.inject({
          method: method.toUpperCase() as 'POST',
          url: exampleUrl(path, operation),
          payload: payload as object,
        });
        // 401, 404, 503 and the like are the service judging a well-formed request.
        if (response.statusCode === 400) refused.push(`${method} ${path}: ${response.body}`);
      }
    }
    expect(refused).toEqual([]);
  });

  it('give every error answer of the shape ErrorBody an example with a code of docs/errors.md', async () => {
    const codes = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    type Media = { schema?: { $ref?: string }; example?: { ok?: boolean; error?: string } };
    const errorBodies = operations.flatMap(([method, path, operation]) =>
      Object.entries(operation.responses ?? {}).flatMap(([status, response]) => {
        const media = (response as { content?: Record<string, Media> }).content?.['application/json'];
        return media?.schema?.$ref === '#/components/schemas/ErrorBody' ? [{ at: `${method} ${path} ${status}`, media }] : [];
      }),
    );
    expect(errorBodies.length).toBeGreaterThan(100);
    const wrong = errorBodies.filter(({ media }) => media.example?.ok !== false || !codes.includes(`| \`${media.example.error}\` | `));
    expect(wrong.map(({ at }) => at)).toEqual([]);
  });

  it('POST /api/verify: the example is a real attestation whose signature verifies', async () => {
    const [payload] = bodyExamples(document.paths['/api/verify'].post);
    const response = await app.inject({ method: 'POST', url: '/api/verify', payload: payload as object });
    expect(response.statusCode).toBe(200);
    // No chain here (ESPLORA_URLS is a closed port): the signature is good, the bond unknown.
    expect(response.json().codes).toContain('sig_ok_bip322');
    expect(response.json().attestation_id).toBe(ATTESTATION_ID);
  });
});

/** `schema` with `additionalProperties: false` on every object schema that says nothing of other properties. */
function closed(schema: unknown): object {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema as object;
  const copy: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value)]));
  if (copy.properties !== undefined && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

describe('the answer examples of the OpenAPI document', () => {
  /** Every JSON answer of success (a redirect, a 204 or a page has no JSON to show), as `get /api/auth/me 200`. */
  const successes = operations.flatMap(([method, path, operation]) =>
    Object.entries(operation.responses ?? {})
      .filter(([status, answer]) => /^2\d\d$/.test(status) && answer.content?.['application/json'] !== undefined)
      .map(([status, answer]) => ({ at: `${method} ${path} ${status}`, method, path, status, answer })),
  );

  it('give every JSON answer of success an example and a description of its own', () => {
    expect(successes.length).toBeGreaterThan(60);
    expect(successes.filter(({ answer }) => answer.content!['application/json']!.example === undefined).map(({ at }) => at)).toEqual([]);
    // @fastify/swagger writes "Default Response" for an answer its route left undescribed.
    expect(successes.filter(({ answer }) => !answer.description || answer.description === 'Default Response').map(({ at }) => at)).toEqual(
      [],
    );
  });

  it('match their own schemas, with no field the service would leave out', async () => {
    const resolved = (await dereference(structuredClone(document))) as { paths: Record<string, Record<string, Operation>> };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const failures: string[] = [];
    for (const { at, method, path, status } of successes) {
      const media = resolved.paths[path]![method]!.responses![status]!.content!['application/json']!;
      // The answer's serializer drops what an object's schema does not name, unless it allows more: so may the example not.
      const validate = ajv.compile(closed(media.schema));
      if (!validate(media.example)) failures.push(`${at}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(failures).toEqual([]);
  });

  it('share the values of the request examples: the same address, account and attestation', () => {
    const example = (path: string, method: string) => document.paths[path][method].responses['200'].content['application/json'].example;
    const me = example('/api/auth/me', 'get');
    expect(me.account).toMatchObject({ did_oc: 'did:oc:0123456789abcdef0123456789abcdef', primary_btc: EXAMPLE_ADDRESS });
    expect(me.account.id).toBe(me.account.did_oc.slice('did:oc:'.length));
    expect(example('/api/auth/signin', 'post').account).toEqual(me.account);
    expect(example('/api/check', 'get')).toMatchObject({ address: EXAMPLE_ADDRESS, attestation_id: ATTESTATION_ID });
    expect(example('/api/challenge', 'get').message).toContain(`address: ${EXAMPLE_ADDRESS}\n`);
  });
});
