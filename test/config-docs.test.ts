/**
 * The configuration reference (docs/configuration.md "Configuration") is the
 * settings `src/platform/config.ts` reads, no more and no fewer: every variable the
 * code reads has a row with its default, every row names a variable the code
 * reads, and a default written as a plain value is the one the code uses
 * (setting the variable to it changes nothing).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/platform/config.js';

const doc = readFileSync(fileURLToPath(new URL('../docs/configuration.md', import.meta.url)), 'utf8');

interface Row {
  readonly variables: string[];
  readonly defaults: string;
}

/** The table's rows: the variables of the first cell (`OAUTH_<NAME>_CLIENT_ID`, `_CLIENT_SECRET` spelled out) and the default cell. */
const rows: Row[] = doc
  .split('\n')
  .filter((line) => /^\| `[A-Z]/.test(line))
  .map((line) => {
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    const names = [...cells[1]!.matchAll(/`([A-Z_<>]+)`/g)].map((match) => match[1]!);
    const variables: string[] = [];
    for (const name of names) {
      if (name.startsWith('_')) variables.push(`${variables[0]!.replace(/_CLIENT_ID$/, '')}${name}`);
      else variables.push(name);
    }
    return { variables, defaults: cells[2]! };
  });

/** Every variable `loadConfig` looks at, with the provider names read as `<NAME>`. */
function variablesRead(): Set<string> {
  const seen = new Set<string>();
  const tracing = (given: Record<string, string>) =>
    new Proxy(given, {
      get(target, key) {
        if (typeof key === 'string') seen.add(key.replace(/^OAUTH_EXAMPLE_/, 'OAUTH_<NAME>_'));
        return Reflect.get(target, key);
      },
    });
  loadConfig(tracing({}));
  loadConfig(tracing({ SMTP_URL: 'smtp://127.0.0.1:2525', COOKIE_DOMAIN: '.example.com', REDIS_URL: 'redis://127.0.0.1:6379' }));
  loadConfig(
    tracing({
      OAUTH_EXAMPLE_CLIENT_ID: 'id',
      OAUTH_EXAMPLE_CLIENT_SECRET: 'secret',
      OAUTH_EXAMPLE_ISSUER: 'https://id.example.com',
    }),
  );
  return seen;
}

describe('docs/configuration.md', () => {
  it('lists every setting the code reads and only those', () => {
    const documented = rows.flatMap((row) => row.variables).sort();
    expect(documented.length).toBeGreaterThan(30);
    expect(documented).toEqual([...variablesRead()].sort());
  });

  it('gives every setting a default', () => {
    expect(rows.filter((row) => row.defaults === '').map((row) => row.variables.join(', '))).toEqual([]);
  });

  it('writes each plain default as the value the code uses', () => {
    // The values in force; what was given (`environment`, `defaulted`) says which variables were set, so it differs.
    const inForce = (env: Record<string, string>) => JSON.stringify({ ...loadConfig(env), environment: null, defaulted: null });
    const baseline = inForce({});
    let checked = 0;
    const differing: string[] = [];
    for (const row of rows) {
      // A default cell of plain values, one per variable: `8787` / `127.0.0.1`, or `10`, `32`.
      const values = [...row.defaults.matchAll(/`([^`]*)`/g)].map((match) => match[1]!);
      const rest = row.defaults.replace(/`[^`]*`/g, '').replace(/[\s,/]|\(per network\)/g, '');
      if (rest !== '' || values.length !== row.variables.length || values.some((value) => value.includes('$'))) continue;
      for (const [index, variable] of row.variables.entries()) {
        checked += 1;
        if (inForce({ [variable]: values[index]! }) !== baseline) differing.push(`${variable}=${values[index]}`);
      }
    }
    expect(differing).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });
});
