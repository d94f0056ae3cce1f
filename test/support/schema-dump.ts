/**
 * The schema a database holds, as plain data to compare: on SQLite every
 * entry of sqlite_master; on PostgreSQL the columns, indexes and constraints
 * of the current schema, with the schema's own name taken out (each test
 * database has its own). Plus the migration versions recorded, by name.
 */
import { sql } from 'kysely';
import { openDatabase } from '../../src/platform/storage/database.js';

export interface SchemaDump {
  readonly migrations: ReadonlyArray<{ version: number; name: string }>;
  readonly objects: readonly unknown[];
}

export async function dumpSchema(url: string): Promise<SchemaDump> {
  const database = await openDatabase(url);
  try {
    const db = database.db;
    const migrations = (await db.selectFrom('schema_migrations').select(['version', 'name']).orderBy('version').execute()).map((row) => ({
      version: Number(row.version),
      name: row.name,
    }));
    if (database.engine === 'sqlite') {
      const { rows } = await sql<{ type: string; name: string; tbl_name: string; sql: string | null }>`
        SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, tbl_name, name`.execute(db);
      return { migrations, objects: rows.map((row) => ({ ...row })) };
    }
    const schema = (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]!.schema;
    const anonymous = (text: string | null) => (text === null ? null : text.split(`${schema}.`).join('SCHEMA.'));
    const columns = await sql<Record<string, unknown>>`
      SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema = current_schema()
      ORDER BY table_name, ordinal_position`.execute(db);
    const indexes = await sql<{ tablename: string; indexname: string; indexdef: string }>`
      SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
      ORDER BY tablename, indexname`.execute(db);
    const constraints = await sql<{ table_name: string; name: string; type: string; definition: string }>`
      SELECT c.relname AS table_name, k.conname AS name, k.contype AS type, pg_get_constraintdef(k.oid) AS definition
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
      WHERE k.connamespace = current_schema()::regnamespace
      ORDER BY c.relname, k.conname`.execute(db);
    return {
      migrations,
      objects: [
        ...columns.rows.map((row) => ({ kind: 'column', ...row, ordinal_position: Number(row.ordinal_position) })),
        ...indexes.rows.map((row) => ({ kind: 'index', ...row, indexdef: anonymous(row.indexdef) })),
        ...constraints.rows.map((row) => ({ kind: 'constraint', ...row, definition: anonymous(row.definition) })),
      ],
    };
  } finally {
    await database.close();
  }
}
