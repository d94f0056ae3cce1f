/**
 * The schema a fresh database gets is exactly the one the single list of
 * migrations produced before each owner contributed its own parts
 * (docs/architecture.md "A storage area"): the fixtures were taken from that
 * list, on each engine, and every table, column, index and constraint must
 * match them, as must the versions recorded and their names. A migration
 * added since adds what it creates to them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate } from '../src/store.js';
import { createTestDatabase, testEngines } from './support/databases.js';
import { dumpSchema } from './support/schema-dump.js';

for (const { engine, skipReason } of await testEngines()) {
  describe.skipIf(skipReason !== undefined)(`the schema of a fresh database on ${engine}`, () => {
    it('is the one the single migration list produced', async () => {
      const expected = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', `storage-schema.${engine}.json`), 'utf8'));
      const database = await createTestDatabase(engine);
      try {
        await migrate(database.url);
        expect(await dumpSchema(database.url)).toEqual(expected);
      } finally {
        await database.cleanup();
      }
    });
  });
}
