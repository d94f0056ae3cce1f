/**
 * Short texts that people give and other people see: an account's display
 * name (PATCH /api/auth/account) and a Connect app's name (POST
 * /api/connect/apps). One rule for both, so that nothing shown in a sign-in
 * UI or a JWT `name` claim can break a layout or spoof what sits beside it.
 *
 * Decisions where docs/protocol.md §6 is silent:
 * - Unicode NFC first, so that one name has one stored spelling; then trimmed;
 *   then 1 to `max` characters counted in code points (an emoji is one).
 * - Refused, not stripped (stripping would silently change what the user
 *   typed): control characters (C0, DEL, C1), line and paragraph separators,
 *   the bidirectional overrides and isolates that can make a name render as
 *   something else (U+200E/F, U+202A–U+202E, U+2066–U+2069, the "Trojan
 *   Source" characters), U+FEFF, and unpaired surrogates (no UTF-8 spelling:
 *   PostgreSQL would reject them). Zero-width joiners stay allowed: emoji
 *   sequences need them.
 */
import { OcError } from '../../platform/errors.js';

const FORBIDDEN = /[\p{Cc}\p{Cs}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u;

/** Characters as people count them: code points. */
export function codePointLength(text: string): number {
  return Array.from(text).length;
}

/**
 * The cleaned text, or 400 `bad_request` whose detail names `field`
 * (docs/protocol.md §4: "`detail` naming the field").
 */
export function cleanDisplayText(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string') throw new OcError('bad_request', `${field}: must be a string`);
  // Checked before trimming, which would quietly drop a trailing control character.
  if (FORBIDDEN.test(value)) {
    throw new OcError('bad_request', `${field}: must not hold control, line-break or bidirectional-override characters`);
  }
  const cleaned = value.normalize('NFC').trim();
  const length = codePointLength(cleaned);
  if (length < 1 || length > max) throw new OcError('bad_request', `${field}: must be 1 to ${max} characters after trimming`);
  return cleaned;
}
