/**
 * The outboxes (docs/protocol.md §6 "Webhooks", §8 "Logout"): rows a change
 * writes in its own transaction, which workers on every instance claim by a
 * compare-and-set on a lease (one worker holds a row at a time; a worker
 * that died loses its rows when the lease runs out), attempt, and finish as
 * delivered, failed or to be retried. Any table with the outbox columns
 * is one (the webhook deliveries of Connect and the back-channel logouts of
 * the OpenID provider are); its owner declares it in the schema.
 */
import type { Kysely } from 'kysely';
import { rowsAffected } from './executor.js';
import type { DatabaseSchema, OutboxColumns } from './schema.js';
import type { OutboxState, WebhookAttempt } from './records.js';

/** The tables of the schema whose rows are outbox rows: an id, a creation time and the outbox columns. */
export type OutboxTable = {
  [Table in keyof DatabaseSchema]: DatabaseSchema[Table] extends OutboxColumns & { id: string; created_at: number } ? Table : never;
}[keyof DatabaseSchema];

type OutboxDatabase = Record<OutboxTable, OutboxColumns & { id: string }>;

/** What every outbox row tells of its attempts, as the records give it. */
interface OutboxRow {
  readonly state: string;
  readonly attempts: number | string;
  readonly next_attempt_at: number | string;
  readonly last_attempt_at: number | string | null;
  readonly last_status: number | string | null;
  readonly last_error: string | null;
  readonly delivered_at: number | string | null;
}

function outbox(db: Kysely<DatabaseSchema>): Kysely<OutboxDatabase> {
  // Both tables hold the outbox columns; Kysely cannot type a table chosen at run time.
  return db as unknown as Kysely<OutboxDatabase>;
}

const numberOrNull = (value: number | string | null): number | null => (value === null ? null : Number(value));

/** The attempt fields of a row (the drivers answer numbers or numeric strings). */
function outboxState(row: OutboxRow): OutboxState {
  return {
    state: row.state as OutboxState['state'],
    attempts: Number(row.attempts),
    next_attempt_at: Number(row.next_attempt_at),
    last_attempt_at: numberOrNull(row.last_attempt_at),
    last_status: numberOrNull(row.last_status),
    last_error: row.last_error,
    delivered_at: numberOrNull(row.delivered_at),
  };
}

/** The outbox columns of a row queued at `now`: pending, due at once, never attempted, free. */
export function newOutboxRow(now: number): OutboxColumns {
  return {
    state: 'pending',
    attempts: 0,
    next_attempt_at: now,
    lease_owner: null,
    lease_until: null,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    delivered_at: null,
  };
}

/**
 * A row as its record: the lease left out (it is the workers' business), the
 * times and counts as numbers (the drivers answer numbers or numeric strings).
 */
export function outboxRecord<Row extends OutboxColumns & { readonly created_at: number }>(
  row: Row,
): Omit<Row, keyof OutboxColumns | 'created_at'> & OutboxState & { readonly created_at: number } {
  const { lease_owner: _owner, lease_until: _until, ...rest } = row;
  // The spread's later members replace the row's own; TypeScript cannot follow that through a generic row.
  return { ...rest, created_at: Number(row.created_at), ...outboxState(row) } as Omit<Row, keyof OutboxColumns | 'created_at'> &
    OutboxState & { readonly created_at: number };
}

/** The rows of one app's or client's outbox, newest first (ties by id), at most `limit`: its log. */
export async function outboxLog<Table extends OutboxTable>(
  db: Kysely<DatabaseSchema>,
  table: Table,
  of: { readonly column: string; readonly value: string },
  limit: number,
): Promise<DatabaseSchema[Table][]> {
  // Each table names its owner in a column of its own; Kysely cannot type a table or column chosen at run time.
  const tables = db as unknown as Kysely<Record<OutboxTable, { id: string; created_at: number; owner: string }>>;
  const name: OutboxTable = table;
  const rows = await tables
    .selectFrom(name)
    .selectAll()
    .where(of.column as 'owner', '=', of.value)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows as unknown as DatabaseSchema[Table][];
}

/**
 * Leases due rows of `table` to `owner` and reads each it got with `read`
 * (which may leave out one that went meanwhile), oldest due first.
 */
export async function claimRows<Claimed>(
  db: Kysely<DatabaseSchema>,
  table: OutboxTable,
  lease: { readonly owner: string; readonly now: number; readonly leaseMs: number; readonly limit: number },
  read: (id: string) => Promise<Claimed | undefined>,
): Promise<Claimed[]> {
  const claimed: Claimed[] = [];
  for (const id of await claimDue(db, table, lease.owner, lease.now, lease.leaseMs, lease.limit)) {
    const row = await read(id);
    if (row !== undefined) claimed.push(row);
  }
  return claimed;
}

/** Leases up to `limit` due rows of `table` to `owner` until `now + leaseMs`; the ids it got, oldest due first. */
async function claimDue(
  db: Kysely<DatabaseSchema>,
  table: OutboxTable,
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<string[]> {
  const rows = outbox(db);
  const due = await rows
    .selectFrom(table)
    .select('id')
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  const claimed: string[] = [];
  for (const { id } of due) {
    // The compare-and-set: only one worker's update finds the lease free.
    const taken = await rows
      .updateTable(table)
      .set({ lease_owner: owner, lease_until: now + leaseMs })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .executeTakeFirst();
    if (rowsAffected(taken.numUpdatedRows) > 0) claimed.push(id);
  }
  return claimed;
}

/** Records an attempt of a row `owner` holds and frees its lease; false when the lease was lost (another worker has it). */
export async function finishAttempt(
  db: Kysely<DatabaseSchema>,
  table: OutboxTable,
  id: string,
  owner: string,
  attempt: WebhookAttempt,
): Promise<boolean> {
  const result = await outbox(db)
    .updateTable(table)
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      state: attempt.outcome === 'retry' ? 'pending' : attempt.outcome,
      next_attempt_at: attempt.outcome === 'retry' ? (attempt.next_attempt_at ?? attempt.at) : attempt.at,
      last_attempt_at: attempt.at,
      last_status: attempt.status,
      last_error: attempt.error,
      delivered_at: attempt.outcome === 'delivered' ? attempt.at : null,
      lease_owner: null,
      lease_until: null,
    }))
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return rowsAffected(result.numUpdatedRows) > 0;
}
