/**
 * Compressed answers (docs/operations.md "Compression"): brotli, else gzip,
 * as the request's Accept-Encoding allows, with `Vary: Accept-Encoding`.
 *
 * - The page assets are compressed once at start at the best levels and
 *   served from memory (src/web/pages.ts, {@link compressAsset}).
 * - The pages that carry their styles and script inline come compressed
 *   from src/web/pages.ts (src/platform/http/page-gzip.ts), with their
 *   Content-Encoding set, which this hook leaves alone.
 * - Other answers of a compressible type (HTML, JSON, scripts, styles, SVG)
 *   of at least {@link DYNAMIC_MIN_BYTES} are compressed as they are sent at a
 *   cheap level (brotli 4, gzip 1: about 1 ms for the 130 KB OpenAPI
 *   document, docs/performance.md "Compression").
 * - Never compressed, against BREACH (a secret in a compressed answer that
 *   also reflects what an attacker chose leaks through the answer's length):
 *   anything under `/oidc` (the provider's pages and answers carry codes,
 *   tokens and anti-forgery values beside request parameters such as
 *   `state`), every `Cache-Control: no-store` answer, which is how the
 *   service marks an answer that carries a session, a token, a code or an
 *   account's data, and every answer that sets a cookie.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export type Encoding = 'br' | 'gzip';

/** Below this, an answer fits a packet or two anyway and compressing it saves next to nothing. */
export const DYNAMIC_MIN_BYTES = 1024;

const COMPRESSIBLE = /^(?:text\/(?:html|css|javascript|plain)|application\/(?:[a-z.+-]*\+)?json|image\/svg\+xml)\b/;

/**
 * The encoding to answer with: the first of `offered` (brotli, then gzip)
 * the request accepts, else none (RFC 9110 §12.5.3; `q=0` refuses).
 */
export function chooseEncoding(
  acceptEncoding: string | string[] | undefined,
  offered: readonly Encoding[] = ['br', 'gzip'],
): Encoding | null {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : (acceptEncoding ?? '');
  const accepted = new Set<string>();
  const refused = new Set<string>();
  for (const part of header.split(',')) {
    const [rawName = '', ...parameters] = part.trim().toLowerCase().split(';');
    const name = rawName.trim() === 'x-gzip' ? 'gzip' : rawName.trim();
    const zero = parameters.some((parameter) => /^\s*q\s*=\s*0(?:\.0{0,3})?\s*$/.test(parameter));
    (zero ? refused : accepted).add(name);
  }
  // `*` accepts every encoding the header does not name with q=0.
  return offered.find((encoding) => accepted.has(encoding) || (accepted.has('*') && !refused.has(encoding))) ?? null;
}

/** Whether a Content-Type is worth compressing. */
export function isCompressible(contentType: string | undefined): boolean {
  return contentType !== undefined && COMPRESSIBLE.test(contentType);
}

/** Adds `Accept-Encoding` to the answer's Vary, keeping what is there. */
export function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const current = typeof vary === 'string' ? vary : Array.isArray(vary) ? vary.join(', ') : '';
  if (/(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i.test(current)) return;
  reply.header('vary', current === '' ? 'Accept-Encoding' : `${current}, Accept-Encoding`);
}

/** An asset's brotli (best quality) and gzip (level 9) forms, each kept only when smaller. */
export function compressAsset(body: Buffer): Partial<Record<Encoding, Buffer>> {
  const br = brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
  const gzip = gzipSync(body, { level: 9 });
  return { ...(br.length < body.length ? { br } : {}), ...(gzip.length < body.length ? { gzip } : {}) };
}

/** An answer compressed on the fly: cheap levels, the CPU cost stays near a millisecond for the largest answer. */
export function compressDynamic(body: Buffer, encoding: Encoding): Buffer {
  if (encoding === 'gzip') return gzipSync(body, { level: 1 });
  return brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
}

function mayCompress(request: FastifyRequest, reply: FastifyReply): boolean {
  if (reply.hasHeader('content-encoding')) return false;
  if (reply.statusCode === 204 || reply.statusCode === 304) return false;
  if (request.url === '/oidc' || request.url.startsWith('/oidc/') || request.url.startsWith('/oidc?')) return false;
  const cacheControl = reply.getHeader('cache-control');
  if (typeof cacheControl === 'string' && /\bno-store\b/i.test(cacheControl)) return false;
  // An answer that sets a cookie carries a session or a binding: never compressed, whatever its Cache-Control says.
  if (reply.hasHeader('set-cookie')) return false;
  return isCompressible(reply.getHeader('content-type') as string | undefined);
}

/** Answers kept compressed, per encoding: the same text sent again (the OpenAPI document, a page's HTML) is not compressed again. */
const RECENT_ANSWERS = 8;

/** The last few answers compressed and their compressed forms, per encoding, least recently used first. */
class RecentlyCompressed {
  readonly #entries: Record<Encoding, Map<string, Buffer>> = { br: new Map(), gzip: new Map() };

  get(encoding: Encoding, text: string): Buffer | undefined {
    const entries = this.#entries[encoding];
    const found = entries.get(text);
    if (found !== undefined) {
      entries.delete(text);
      entries.set(text, found);
    }
    return found;
  }

  set(encoding: Encoding, text: string, body: Buffer): void {
    const entries = this.#entries[encoding];
    entries.set(text, body);
    if (entries.size > RECENT_ANSWERS) entries.delete(entries.keys().next().value as string);
  }
}

/** Compresses the app's eligible answers as they are sent (see the module comment). */
export function registerCompression(app: FastifyInstance): void {
  const recent = new RecentlyCompressed();
  app.addHook('onSend', (request, reply, payload, done) => {
    if ((typeof payload !== 'string' && !Buffer.isBuffer(payload)) || !mayCompress(request, reply)) {
      done(null, payload);
      return;
    }
    // A string has at least as many bytes as characters: only a short one is measured.
    const short = payload.length < DYNAMIC_MIN_BYTES;
    if (short && (typeof payload !== 'string' || Buffer.byteLength(payload, 'utf8') < DYNAMIC_MIN_BYTES)) {
      done(null, payload);
      return;
    }
    varyOnEncoding(reply);
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    if (encoding === null) {
      done(null, payload);
      return;
    }
    reply.header('content-encoding', encoding).removeHeader('content-length');
    // Looked up before the text is copied into bytes: an answer sent again (the OpenAPI document) needs no copy.
    const text = typeof payload === 'string' ? payload : undefined;
    const known = text === undefined ? undefined : recent.get(encoding, text);
    if (known !== undefined) {
      done(null, known);
      return;
    }
    const compressed = compressDynamic(typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload, encoding);
    if (text !== undefined) recent.set(encoding, text, compressed);
    done(null, compressed);
  });
}
