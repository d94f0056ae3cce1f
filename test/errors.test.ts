import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERIFY_CODES } from '../src/attest/codes.js';
import { ERROR_CODES, OcError } from '../src/errors.js';

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
