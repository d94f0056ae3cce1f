/**
 * GET /api/openapi is a valid OpenAPI 3.1 document that a client generator
 * can use (oc-docs `api-reference/auth-host.mdx`: "Generate clients with
 * openapi-generator-cli generate -i …/api/openapi"): it passes a maintained
 * validator, every `$ref` resolves, every operation has a unique
 * `operationId` and its error answers, and every API route is in it.
 */
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { testApp } from '../support/app.js';

const app = await testApp({ OAUTH_GITHUB_CLIENT_ID: 'id', OAUTH_GITHUB_CLIENT_SECRET: 'secret' });
afterAll(() => app.close());
const document = (await app.inject({ method: 'GET', url: '/api/openapi' })).json();

type Operation = { operationId?: string; responses?: Record<string, unknown> };
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
