/**
 * Security events per account (docs/protocol.md §6 "Activity"), newest first,
 * paged by (at, id).
 */
import { randomBytes } from 'node:crypto';
import type { StoreExecutor } from './executor.js';
import type { ActivityCursor, ActivityRecord, ActivityStore, ActivityValue } from './store.js';

function toRecord(row: { id: string; account_id: string; at: number | string; kind: string; detail: string }): ActivityRecord {
  return {
    id: row.id,
    account_id: row.account_id,
    at: Number(row.at),
    kind: row.kind,
    detail: JSON.parse(row.detail) as Record<string, ActivityValue>,
  };
}

/** Events recorded by this process so far: orders events of one millisecond. */
let sequence = 0;

/**
 * 32 hex that sort as the events happened: the time (12 hex of
 * milliseconds), this process's sequence (4 hex), then 16 random hex, so
 * events of one instance in one millisecond keep their order and ids of
 * different instances never collide.
 */
function eventId(at: number): string {
  sequence = (sequence + 1) % 0x10000;
  return `${Math.max(0, at).toString(16).padStart(12, '0').slice(-12)}${sequence.toString(16).padStart(4, '0')}${randomBytes(8).toString('hex')}`;
}

export class ActivityArea implements ActivityStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async recordActivity(event: {
    readonly id?: string;
    readonly account_id: string;
    readonly at: number;
    readonly kind: string;
    readonly detail: Readonly<Record<string, ActivityValue>>;
  }): Promise<ActivityRecord> {
    const row = {
      id: event.id ?? eventId(event.at),
      account_id: event.account_id,
      at: event.at,
      kind: event.kind,
      detail: JSON.stringify(event.detail),
    };
    await this.#x.db.insertInto('activity').values(row).execute();
    return toRecord(row);
  }

  async listActivity(accountId: string, options: { readonly before?: ActivityCursor; readonly limit: number }): Promise<ActivityRecord[]> {
    let query = this.#x.db.selectFrom('activity').selectAll().where('account_id', '=', accountId);
    const before = options.before;
    if (before !== undefined) {
      query = query.where((eb) => eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]));
    }
    const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
    return rows.map(toRecord);
  }
}
