/**
 * The one list of the features (src/feature-list.ts, docs/architecture.md
 * "Features"): every folder of src/features/ is on it once, and it names no
 * folder that is not there; a folder with tables brings them on its entry,
 * a folder with page words brings them; and the composition root registers
 * no feature's routes, tables or words itself, so a feature cannot be added
 * without its entry nor wired from anywhere else.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FEATURES } from '../src/feature-list.js';
import { composeStore, joinStoreHooks, type StoreExecutor, type TableOwner } from '../src/platform/storage/index.js';

const SRC = join(import.meta.dirname, '..', 'src');
const FEATURES_DIR = join(SRC, 'features');
const folders = readdirSync(FEATURES_DIR).filter((name) => statSync(join(FEATURES_DIR, name)).isDirectory());

function featuresNamedBy(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  return [...new Set([...text.matchAll(/from '\.\/features\/([a-z-]+)\//g)].map((match) => match[1]!))].sort();
}

describe('the list of features', () => {
  it('names every folder of src/features/ once and no other', () => {
    const names = FEATURES.map((entry) => entry.feature);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual([...folders].sort());
  });

  it('carries the tables of every folder that has them, and the words of every folder that has pages', () => {
    for (const entry of FEATURES) {
      const folder = join(FEATURES_DIR, entry.feature);
      expect(entry.tables !== undefined, `${entry.feature}: tables`).toBe(existsSync(join(folder, 'store-schema.ts')));
      expect(entry.words !== undefined, `${entry.feature}: words`).toBe(existsSync(join(folder, 'messages')));
    }
  });

  it('is where every feature is wired: the app, the store and the page words name no feature folder themselves', () => {
    // The metrics listener is the operator's port, not a route of the app: app.ts starts it beside the others.
    expect(featuresNamedBy('app.ts')).toEqual(['operations']);
    // The services name the operator's metrics, which the platform's parts report to.
    expect(featuresNamedBy('services.ts')).toEqual(['operations']);
    expect(featuresNamedBy('store.ts')).toEqual([]);
    expect(featuresNamedBy('page-words.ts')).toEqual([]);
    expect(readFileSync(join(SRC, 'app.ts'), 'utf8')).toContain('FEATURES');
  });
});

describe('joining the owners of tables', () => {
  it('refuses a hook two owners fill, and leaves a hook no owner fills doing nothing', async () => {
    const forget = async () => {};
    expect(() => joinStoreHooks([{ forgetEmails: forget }, { forgetEmails: forget }])).toThrow(
      'storage: the hook forgetEmails is filled by two owners of tables',
    );
    const hooks = joinStoreHooks([{ forgetEmails: forget }, undefined]);
    expect(hooks.forgetEmails).toBe(forget);
    expect(await hooks.keys.list(undefined as never, 'a'.repeat(32))).toEqual([]);
    expect(await hooks.apps.removeOwnedBy(undefined as never, ['a'.repeat(32)])).toBe(0);
  });

  it('refuses two areas with a method of the same name', () => {
    class One {
      count() {
        return 1;
      }
    }
    class Other {
      count() {
        return 2;
      }
    }
    const executor = { engine: 'sqlite', db: {}, database: { close: async () => {} } } as unknown as StoreExecutor;
    const owner = (area: object): TableOwner => ({ migrations: [], open: () => ({ areas: [area] }) });
    expect(() => composeStore(executor, [owner(new One()), owner(new Other())])).toThrow(
      'storage: two areas of the store both have a method count',
    );
  });
});
