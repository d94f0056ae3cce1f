/**
 * A page template compressed once, filled per request without compressing
 * the page again (docs/architecture.md "Page assets"). A page that carries
 * its styles, catalog and script inline is 50 to 140 KB of text, all of it
 * the same at every request but a few `{{placeholder}}` values in its
 * `<body>` tag; compressing it whole per request costs about 1.3 ms of CPU
 * with brotli 4 and would be paid again for every distinct `return_to`.
 *
 * DEFLATE (RFC 1951) allows it: the template's fixed parts are each
 * compressed once, at the best level, as a run of non-final blocks ending on
 * a byte boundary (a sync flush); a request compresses only its escaped
 * values the same way, and the answer is the parts in order, one final
 * empty block, and the gzip frame (RFC 1952: a fixed header, then the CRC-32
 * and length of the whole text). Each part's compressor starts afresh, so no
 * part refers back into another; the decoder reads them as one stream.
 */
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { escapeHtml } from '../i18n/index.js';

/** `1f 8b`, deflate, no flags, no time, no extra flags, unknown system (RFC 1952 §2.3). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);
/** A final, empty block with fixed codes: ends the DEFLATE stream after the sync-flushed parts. */
const FINAL_BLOCK = deflateRawSync(Buffer.alloc(0));

/** `text` as non-final DEFLATE blocks ending on a byte boundary, ready to be followed by more. */
function openDeflate(text: Buffer, level: number): Buffer {
  return deflateRawSync(text, { level, finishFlush: constants.Z_SYNC_FLUSH });
}

const PLACEHOLDER = /\{\{([a-z_]+)\}\}/g;

export interface GzipTemplate {
  /** The template filled with `values` (escaped), gzip-encoded; an unknown placeholder is a programming error. */
  fill(values: Readonly<Record<string, string>>): Buffer;
}

export function gzipTemplate(template: string): GzipTemplate {
  const texts: Buffer[] = [];
  const names: string[] = [];
  let at = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    texts.push(Buffer.from(template.slice(at, match.index), 'utf8'));
    names.push(match[1] as string);
    at = match.index + match[0].length;
  }
  texts.push(Buffer.from(template.slice(at), 'utf8'));
  const compressed = texts.map((text) => (text.length === 0 ? text : openDeflate(text, 9)));
  return {
    fill(values) {
      const parts: Buffer[] = [GZIP_HEADER];
      let crc = 0;
      let length = texts[0]!.length;
      crc = crc32(texts[0]!, crc);
      parts.push(compressed[0]!);
      names.forEach((name, index) => {
        const value = values[name];
        if (value === undefined) throw new Error(`pages: no value for {{${name}}}`);
        const text = Buffer.from(escapeHtml(value), 'utf8');
        if (text.length > 0) parts.push(openDeflate(text, 1));
        const next = texts[index + 1]!;
        crc = crc32(next, crc32(text, crc));
        length += text.length + next.length;
        parts.push(compressed[index + 1]!);
      });
      const trailer = Buffer.alloc(8);
      trailer.writeUInt32LE(crc >>> 0, 0);
      trailer.writeUInt32LE(length % 2 ** 32, 4);
      parts.push(FINAL_BLOCK, trailer);
      return Buffer.concat(parts);
    },
  };
}
