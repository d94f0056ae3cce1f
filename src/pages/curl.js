/**
 * "Copy as curl" of the API explorer (./explorer.js): a request as one POSIX
 * shell command. Every argument is single-quoted, the one quoting in which
 * the shell reads nothing (no `$`, no backslash, no backtick); a single quote
 * inside is closed, escaped and reopened (`'\''`). An API key is never
 * written out: the command reads it from `$OC_API_KEY`, so a copied or shown
 * command gives no secret away.
 */

/** `value` as one single-quoted shell word. @param {string} value */
export function shellQuote(value) {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** The name of the variable the command reads an API key from. */
export const API_KEY_VARIABLE = 'OC_API_KEY';

/**
 * The curl command of a request. `headers` are sent as given, except
 * `authorization`, which becomes a reference to {@link API_KEY_VARIABLE}
 * (double-quoted, so the shell expands it, and nothing else in it).
 *
 * @param {{method: string, url: string, headers: Record<string, string>, body?: string}} request
 * @returns {string}
 */
export function curlCommand({ method, url, headers, body }) {
  const upper = method.toUpperCase();
  const words = ['curl'];
  // curl sends GET, or POST with a body, by itself; it is told any other method.
  if (!(upper === 'GET' || (upper === 'POST' && body !== undefined))) words.push('-X', upper);
  words.push(shellQuote(url));
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'authorization') words.push('-H', `"authorization: Bearer $${API_KEY_VARIABLE}"`);
    else words.push('-H', shellQuote(`${name}: ${value}`));
  }
  if (body !== undefined) words.push('--data-raw', shellQuote(body));
  return words.join(' ');
}
