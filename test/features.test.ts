/**
 * The one list of the features (src/feature-list.ts, docs/architecture.md
 * "Features"): every folder of src/features/ is on it, and it names no
 * folder that is not there, so a feature cannot be added without its routes
 * being registered, nor registered from anywhere else.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FEATURE_ROUTES } from '../src/feature-list.js';

const FEATURES_DIR = join(import.meta.dirname, '..', 'src', 'features');
const folders = readdirSync(FEATURES_DIR).filter((name) => statSync(join(FEATURES_DIR, name)).isDirectory());

describe('the list of features', () => {
  it('names every folder of src/features/ and no other', () => {
    expect([...new Set(FEATURE_ROUTES.map((entry) => entry.feature))].sort()).toEqual([...folders].sort());
  });

  it('is where every feature route file is registered: app.ts registers none of them itself', () => {
    const app = readFileSync(join(import.meta.dirname, '..', 'src', 'app.ts'), 'utf8');
    const named = [...app.matchAll(/from '\.\/features\/([a-z-]+)\//g)].map((match) => match[1]);
    // The metrics listener is the operator's port, not a route of the app: app.ts starts it beside the others.
    expect(named).toEqual(['operations']);
    expect(app).toContain('FEATURE_ROUTES');
  });
});
