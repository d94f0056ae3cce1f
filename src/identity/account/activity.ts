/**
 * The account's security events (docs/protocol.md §6 "Activity"): what
 * happened to it, when, from which device and network, for the person to
 * read on the account page and take with them in an export.
 *
 * - The kinds are a fixed list ({@link ACTIVITY_KINDS}); each event's detail
 *   is a small flat object. It never holds a secret, a code, a token or a
 *   full IP address: the network is the /24 or /48 the session row keeps.
 * - Recording is best effort: a failure is reported to `onError` (the log)
 *   and never fails the action it describes, which has already happened.
 * - Pages are newest first, at most 100 events; the cursor is opaque to the
 *   client (base64url of the last event's time and id).
 */
import { OcError } from '../../platform/errors.js';
import type { ActivityRecord, ActivityStore, ActivityValue } from '../../platform/storage/index.js';

export const ACTIVITY_KINDS = [
  'signin',
  'sudo',
  'sudo_failed',
  'step_up',
  'step_up_failed',
  'identity_linked',
  'identity_unlinked',
  'account_merged',
  'account_edited',
  'key_added',
  'key_removed',
  'sessions_revoked',
  'tab_pinned',
  'connect_app_created',
  'connect_app_rotated',
  'connect_app_deleted',
  'connect_app_webhook',
  'account_exported',
  'account_deleted',
  'account_disabled',
  'account_enabled',
] as const;

export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

export type ActivityDetail = Readonly<Record<string, ActivityValue | undefined>>;

export const DEFAULT_ACTIVITY_PAGE = 50;
export const MAX_ACTIVITY_PAGE = 100;

/** The longest string a detail keeps; longer ones are cut (labels and names are at most 64 already). */
const MAX_DETAIL_STRING = 200;

export interface ActivityView {
  readonly id: string;
  readonly at: string;
  readonly kind: string;
  readonly detail: Readonly<Record<string, ActivityValue>>;
}

export interface ActivityPage {
  readonly events: ActivityView[];
  /** Pass as `before` for the next, older page; null when this was the last. */
  readonly next: string | null;
}

export interface ActivityLogDeps {
  readonly store: ActivityStore;
  readonly now: () => Date;
  readonly onError: (error: unknown, kind: ActivityKind) => void;
}

function cleanDetail(detail: ActivityDetail): Record<string, ActivityValue> {
  const out: Record<string, ActivityValue> = {};
  for (const [key, value] of Object.entries(detail)) {
    if (value === undefined) continue;
    if (typeof value === 'string') out[key] = value.slice(0, MAX_DETAIL_STRING);
    else if (Array.isArray(value)) out[key] = value.slice(0, 16).map((item) => String(item).slice(0, MAX_DETAIL_STRING));
    else out[key] = value as ActivityValue;
  }
  return out;
}

export function activityView(record: ActivityRecord): ActivityView {
  return { id: record.id, at: new Date(record.at).toISOString(), kind: record.kind, detail: record.detail };
}

function encodeCursor(record: ActivityRecord): string {
  return Buffer.from(`${record.at}.${record.id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { at: number; id: string } {
  const match = /^(\d{1,16})\.([0-9a-f]{32})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null) throw new OcError('bad_request', 'before: not a cursor this service answered');
  return { at: Number(match[1]), id: match[2]! };
}

export class ActivityLog {
  readonly #deps: ActivityLogDeps;

  constructor(deps: ActivityLogDeps) {
    this.#deps = deps;
  }

  /** Records one event for `accountId` now; never throws. */
  async record(accountId: string, kind: ActivityKind, detail: ActivityDetail = {}): Promise<void> {
    try {
      await this.#deps.store.recordActivity({ account_id: accountId, at: this.#deps.now().getTime(), kind, detail: cleanDetail(detail) });
    } catch (error) {
      this.#deps.onError(error, kind);
    }
  }

  /** GET /api/auth/activity: a page of the account's events, newest first. */
  async page(accountId: string, options: { before?: string | undefined; limit?: number | undefined }): Promise<ActivityPage> {
    const limit = options.limit ?? DEFAULT_ACTIVITY_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_ACTIVITY_PAGE)
      throw new OcError('bad_request', `limit: 1 to ${MAX_ACTIVITY_PAGE}`);
    const before = options.before === undefined ? undefined : decodeCursor(options.before);
    // One more than asked tells whether an older page exists.
    const records = await this.#deps.store.listActivity(accountId, { limit: limit + 1, ...(before === undefined ? {} : { before }) });
    const shown = records.slice(0, limit);
    return { events: shown.map(activityView), next: records.length > limit ? encodeCursor(shown.at(-1)!) : null };
  }
}
