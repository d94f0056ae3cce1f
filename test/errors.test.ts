import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERIFY_CODES } from '../src/features/attestations/codes.js';
import { ERROR_CODES, OcError } from '../src/platform/errors.js';
import { OAUTH_REDIRECT_CODES, PROVIDER_ERROR_CODES } from '../src/features/providers/oauth-errors.js';
import { CHALLENGE_CODES } from '../src/identity/signin/challenge.js';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');

function tableRows(heading: string): Array<[string, string]> {
  const section = doc.split(/^## /m).find((part) => part.startsWith(heading));
  if (!section) throw new Error(`docs/errors.md has no section ${heading}`);
  return [...section.matchAll(/^\| `([a-z0-9_]+)` \| ([a-z0-9]+) \|/gm)].map((match) => [match[1]!, match[2]!]);
}

describe('docs/errors.md agrees with the code', () => {
  it('lists every HTTP error code with its status, and nothing else', () => {
    const documented = Object.fromEntries(tableRows('HTTP error codes'));
    const inCode = Object.fromEntries(Object.entries(ERROR_CODES).map(([code, status]) => [code, String(status)]));
    expect(documented).toEqual(inCode);
  });

  it('lists every verification status code with its severity, and nothing else', () => {
    const documented = Object.fromEntries(tableRows('Verification status codes'));
    expect(documented).toEqual({ ...VERIFY_CODES });
  });
});

describe('OcError', () => {
  it('carries the code in both error and reason', () => {
    const error = new OcError('not_in_roster', 'switch: target not in this browser');
    expect(error.status).toBe(403);
    expect(error.toBody()).toEqual({
      ok: false,
      error: 'not_in_roster',
      reason: 'not_in_roster',
      detail: 'switch: target not in this browser',
    });
    expect(new OcError('bad_request').toBody()).toEqual({ ok: false, error: 'bad_request', reason: 'bad_request' });
  });
});

describe('every error family is listed with its codes', () => {
  const sourceFiles = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
      const path = join(folder, entry.name);
      return entry.isDirectory() ? sourceFiles(path) : /\.(ts|js)$/.test(entry.name) ? [path] : [];
    });
  const src = fileURLToPath(new URL('../src', import.meta.url));
  const sources = sourceFiles(src).map((path) => ({ path, text: readFileSync(path, 'utf8') }));

  function internalRows(): Map<string, string> {
    const section = doc.split(/^## /m).find((part) => part.startsWith('Internal errors'))!;
    return new Map(
      [...section.matchAll(/^\| `(\w+)` \| (`[a-z_]+`|\([^)]*\)) \|/gm)].map((match) => [match[1]!, match[2]!.replace(/`/g, '')]),
    );
  }

  it('lists every error class in src/ with the code it carries', () => {
    const classes = new Map<string, string>();
    for (const { text } of sources) {
      for (const match of text.matchAll(/class (\w+) extends Error \{([\s\S]*?)\n\}/g)) {
        const code = /^ {2}(?:readonly )?code = '([a-z_]+)'/m.exec(match[2]!)?.[1];
        classes.set(match[1]!, code ?? '(several)');
      }
    }
    const documented = internalRows();
    expect([...classes.keys()].sort()).toEqual([...documented.keys()].sort());
    for (const [name, code] of classes) {
      if (code === '(several)') expect(documented.get(name)).toMatch(/^\(/);
      else expect(documented.get(name)).toBe(code);
    }
  });

  const common = readFileSync(new URL('../src/pages/common.js', import.meta.url), 'utf8');
  const keysOf = (name: string) => {
    const block = /\{([\s\S]*?)\n\};/.exec(common.slice(common.indexOf(`const ${name} = {`)))![1]!;
    return [...block.matchAll(/^ {2}([a-z_]+):/gm)].map((match) => match[1]!);
  };

  it('lists every oauth_error code, and the sign-in page has a sentence for each', () => {
    expect(Object.fromEntries(tableRowsOf('Provider sign-in codes'))).toEqual(
      Object.fromEntries(OAUTH_REDIRECT_CODES.map((code) => [code, true])),
    );
    expect(keysOf('OAUTH_ERROR_MESSAGES').sort()).toEqual([...OAUTH_REDIRECT_CODES].sort());
    expect(PROVIDER_ERROR_CODES.every((code) => (OAUTH_REDIRECT_CODES as readonly string[]).includes(code))).toBe(true);
  });

  it('gives the pages sentences only for codes that exist', () => {
    const messages = keysOf('MESSAGES');
    expect(messages.filter((code) => code !== 'network' && !(code in ERROR_CODES))).toEqual([]);
    const challenge = keysOf('CHALLENGE_MESSAGES');
    expect(challenge.filter((code) => !(code in VERIFY_CODES) && !CHALLENGE_CODES.includes(code))).toEqual([]);
  });

  it('never branches on the text of an error message', () => {
    // An error's message or a body's detail compared, matched or searched.
    const suspicious =
      /\b(?:error|err|cause|reason)\.message\)?\s*(?:\.(?:startsWith|endsWith|includes|match)\(|[!=]==\s*['"`])|\.test\(\s*(?:error|err|cause)\.message\b|\.test\([^)]*\.detail\b/;
    // A type check (`typeof error.message === 'string'`) reads no text.
    const found = sources
      .filter(({ text }) => text.split('\n').some((line) => suspicious.test(line.replace(/typeof \S+\s*[!=]==/g, ''))))
      .map(({ path }) => path.slice(src.length + 1));
    expect(found).toEqual([]);
  });

  it('names the verification code of a refused proof in codes, not only in detail', () => {
    const error = new OcError('invalid_challenge', 'challenge: expired', { codes: ['expired'] });
    expect(error.toBody()).toEqual({
      ok: false,
      error: 'invalid_challenge',
      reason: 'invalid_challenge',
      detail: 'challenge: expired',
      codes: ['expired'],
    });
  });
});

function tableRowsOf(heading: string): Array<[string, true]> {
  const section = doc.split(/^## /m).find((part) => part.startsWith(heading));
  if (!section) throw new Error(`docs/errors.md has no section ${heading}`);
  return [...section.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((match) => [match[1]!, true]);
}
