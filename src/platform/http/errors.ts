/**
 * Maps every failure to the documented status and a stable code; never a
 * stack trace in a response (docs/architecture.md "Errors").
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OcError, type ErrorCode } from '../errors.js';
import { policyOf } from './policy.js';

function bodyFor(request: FastifyRequest, error: OcError): Record<string, unknown> {
  const body: Record<string, unknown> = { ...error.toBody() };
  // Attestation routes also carry `reasons`, the shape docs/api.md uses there.
  if (policyOf(request).errors === 'attestation') body.reasons = [error.code];
  return body;
}

/** `extra` adds documented fields to the body, e.g. `retry_after_seconds` of a 429 (docs/protocol.md §4). */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: OcError, extra?: Record<string, unknown>): FastifyReply {
  const body = bodyFor(request, error);
  return reply
    .code(error.status)
    .header('cache-control', 'no-store')
    .send(extra === undefined ? body : { ...body, ...extra });
}

function fromFrameworkError(error: FastifyError): OcError | undefined {
  if (error.validation) {
    const where = error.validationContext ?? 'body';
    const first = error.validation[0];
    const path = first?.instancePath ? first.instancePath.replace(/^\//, '').replace(/\//g, '.') : '';
    const missing = (first?.params as { missingProperty?: string } | undefined)?.missingProperty;
    const field = [where, path, missing].filter(Boolean).join('.');
    return new OcError('bad_request', `${field}: ${first?.message ?? 'invalid'}`);
  }
  const byCode: Partial<Record<string, [ErrorCode, string]>> = {
    FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'body: larger than 64 KiB'],
    FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'body: send application/json'],
    FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'body: malformed JSON'],
    FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 'body: empty JSON body'],
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'body: content length does not match'],
  };
  const mapped = byCode[error.code];
  if (mapped) return new OcError(mapped[0], mapped[1]);
  if (error instanceof SyntaxError || error.statusCode === 400) return new OcError('bad_request', 'body: malformed JSON');
  if (error.statusCode === 413) return new OcError('payload_too_large', 'body: larger than 64 KiB');
  if (error.statusCode === 415) return new OcError('unsupported_media_type', 'body: send application/json');
  if (error.statusCode === 404) return new OcError('not_found');
  return undefined;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = error instanceof OcError ? error : fromFrameworkError(error);
    if (known) return sendError(request, reply, known);
    request.log.error({ err: error }, 'http: unhandled error');
    return sendError(request, reply, new OcError('internal_error'));
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new OcError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
