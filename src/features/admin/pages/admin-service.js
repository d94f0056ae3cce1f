/**
 * The console's views of the service as a whole (admin.js): the dashboard,
 * the health of the dependencies with the signing keys and the settings,
 * and the audit log.
 */
import { h, say, t } from './common.js';
import {
  actionButton,
  alertRegion,
  call,
  card,
  describe,
  labelled,
  navigate,
  reasonedButton,
  reasonField,
  sayDone,
  statusRegion,
  table,
  view,
  when,
  word,
  WORDS,
} from './admin-kit.js';
// ---- The dashboard ----

/** A way in as people say it: a Bitcoin wallet, an e-mail code, a passkey, or the provider's name. @param {string} way */
function wayName(way) {
  return way.startsWith('oauth:') ? way.slice('oauth:'.length) : word(WORDS.way, way);
}

/** The dashboard: the last 14 days of sign-ins, refusals, OpenID sign-ins, check and verify, and the sessions live now. */
export async function dashboardView() {
  const result = await call('GET', '/api/admin/dashboard?days=14');
  if (!result.ok) {
    view.replaceChildren(
      card('dashboard', t('admin.nav_dashboard'), h('p', { class: 'form-error', role: 'alert', text: describe(result) })),
    );
    return;
  }
  const { days, active_sessions: active, clients } = result.body;
  /** @param {Record<string, number>} counts */
  const total = (counts) => Object.values(counts).reduce((sum, count) => sum + count, 0);
  /** The names used on any day of `pick`, sorted. @param {(day: any) => Record<string, number>} pick */
  const namesOf = (pick) => [...new Set(days.flatMap((/** @type {any} */ day) => Object.keys(pick(day))))].sort();
  const recent = [...days].reverse();
  const ways = namesOf((day) => day.signins);
  const signins = table(
    t('admin.signins_per_day'),
    [t('admin.col_day'), ...ways.map(wayName), t('admin.col_total'), t('admin.col_new_accounts')],
    recent.map((/** @type {any} */ day) => [
      day.day,
      ...ways.map((way) => String(day.signins[way] ?? 0)),
      String(total(day.signins)),
      String(day.new_accounts),
    ]),
  );
  const reasons = namesOf((day) => day.failures);
  const failures = table(
    t('admin.failures'),
    [t('admin.col_way_reason'), t('admin.col_last_14'), t('admin.col_today')],
    reasons.map((reason) => [
      h('span', {}, `${wayName(reason.split(' ')[0] ?? '')}: `, h('code', { text: reason.split(' ')[1] ?? '' })),
      String(days.reduce((/** @type {number} */ sum, /** @type {any} */ day) => sum + (day.failures[reason] ?? 0), 0)),
      String(days.at(-1)?.failures[reason] ?? 0),
    ]),
    t('admin.no_failures'),
  );
  const oidc = table(
    t('admin.oidc_per_client'),
    [t('admin.col_app'), t('admin.col_last_14'), t('admin.col_today'), t('admin.col_consents')],
    clients.map((/** @type {any} */ client) => [
      client.name,
      String(days.reduce((/** @type {number} */ sum, /** @type {any} */ day) => sum + (day.oidc[client.client_id] ?? 0), 0)),
      String(days.at(-1)?.oidc[client.client_id] ?? 0),
      String(client.consents),
    ]),
  );
  // Each app's sign-ins per day: the apps that signed anyone in over these days, as columns.
  const signedIn = clients.filter((/** @type {any} */ client) =>
    days.some((/** @type {any} */ day) => (day.oidc[client.client_id] ?? 0) > 0),
  );
  const oidcDays =
    signedIn.length === 0
      ? null
      : table(
          t('admin.oidc_per_day'),
          [t('admin.col_day'), ...signedIn.map((/** @type {any} */ client) => client.name)],
          recent.map((/** @type {any} */ day) => [
            day.day,
            ...signedIn.map((/** @type {any} */ client) => String(day.oidc[client.client_id] ?? 0)),
          ]),
        );
  /** @param {number} hit @param {number} miss */
  const ratio = (hit, miss) => (hit + miss === 0 ? '—' : t('admin.percent', { value: Math.round((hit / (hit + miss)) * 100) }));
  const attestations = table(
    t('admin.attestations'),
    [t('admin.col_day'), t('admin.col_check'), t('admin.col_cache_hits'), t('admin.col_verify'), t('admin.col_verify_refused')],
    recent.map((/** @type {any} */ day) => [
      day.day,
      String(day.check.hit + day.check.miss),
      ratio(day.check.hit, day.check.miss),
      String(day.verify.ok + day.verify.refused),
      String(day.verify.refused),
    ]),
  );
  view.replaceChildren(
    card(
      'dashboard',
      t('admin.nav_dashboard'),
      h('p', { id: 'active-sessions', text: t('admin.active_sessions', { count: active }) }),
      h('p', { class: 'hint', text: t('admin.dashboard_hint') }),
    ),
    card('dashboard-signins', t('admin.signins_per_day'), signins),
    card('dashboard-failures', t('admin.failures'), failures),
    card(
      'dashboard-oidc',
      t('admin.oidc_per_client'),
      oidc,
      oidcDays === null ? null : h('h3', { text: t('admin.oidc_per_day') }),
      oidcDays,
    ),
    card('dashboard-attestations', t('admin.attestations'), attestations),
  );
}

// ---- The service ----

export async function serviceView() {
  const [health, keys, settings] = await Promise.all([
    call('GET', '/api/admin/health'),
    call('GET', '/api/admin/keys'),
    call('GET', '/api/admin/settings'),
  ]);
  const failed = [health, keys, settings].find((result) => !result.ok);
  if (failed) {
    view.replaceChildren(card('service', t('admin.nav_service'), h('p', { class: 'form-error', role: 'alert', text: describe(failed) })));
    return;
  }
  const error = alertRegion('keys-error');
  const done = statusRegion('keys-done');
  const reason = reasonField('keys-reason');
  const deps = [health.body.database, health.body.redis, ...health.body.esplora, ...health.body.relays, health.body.keys].filter(Boolean);
  const dependencyRows = deps.map((/** @type {any} */ dep) => [
    h('span', { class: 'mono small', text: dep.name }),
    h('span', { class: dep.ok ? 'state-ok' : 'state-bad', text: dep.ok ? t('admin.up') : t('admin.down') }),
    dep.ms === null ? '—' : t('admin.ms', { ms: dep.ms }),
    dep.error || '—',
  ]);
  const rotate = (/** @type {'session' | 'oidc' | 'webhook'} */ use) =>
    reasonedButton(
      t(WORDS.rotate[use]),
      reason,
      error,
      async (why) => {
        const rotated = await call('POST', `/api/admin/keys/${use}/rotate`, { reason: why }, { destructive: true, region: error });
        if (!rotated.ok) return say(error, describe(rotated));
        await serviceView();
        sayDone(t('admin.key_rotated'));
      },
      { class: 'secondary', id: `rotate-${use}` },
    );
  const keyRows = keys.body.keys.map((/** @type {any} */ key) => [
    word(WORDS.keyUse, key.use),
    h('code', { class: 'small', text: key.kid }),
    key.alg,
    word(WORDS.keyState, key.state),
    when(key.created_at),
  ]);
  const settingRows = settings.body.set.map((/** @type {any} */ setting) => [
    h('code', { text: setting.name }),
    setting.secret ? h('em', { text: t('admin.secret_hidden') }) : h('span', { class: 'mono small', text: setting.value }),
  ]);
  view.replaceChildren(
    card(
      'health',
      t('admin.health'),
      table(
        t('admin.health'),
        [t('admin.col_dependency'), t('admin.col_status'), t('admin.col_latency'), t('admin.col_last_error')],
        dependencyRows,
      ),
    ),
    card(
      'signing-keys',
      t('admin.signing_keys'),
      table(
        t('admin.signing_keys'),
        [t('admin.col_use'), t('admin.col_kid'), t('admin.col_alg'), t('admin.col_state'), t('admin.col_created')],
        keyRows,
      ),
      reason.element,
      h('div', { class: 'actions' }, rotate('session'), rotate('oidc'), rotate('webhook')),
      done,
      error,
    ),
    card(
      'settings',
      t('admin.settings'),
      table(t('admin.settings'), [t('admin.col_setting'), t('admin.col_value')], settingRows),
      h('p', { class: 'hint', text: t('admin.defaulted', { names: settings.body.defaulted.join(', ') }) }),
    ),
  );
}

// ---- The audit log ----

/** @param {URLSearchParams} query */
export async function auditView(query) {
  const filters = ['actor', 'action', 'target'];
  const fields = Object.fromEntries(
    filters.map((name) => [
      name,
      /** @type {HTMLInputElement} */ (h('input', { type: 'text', name, value: query.get(name) ?? '', autocomplete: 'off' })),
    ]),
  );
  const error = alertRegion('audit-error');
  const results = h('div', { id: 'audit-results' });
  const oldestFirst = query.get('order') === 'oldest';
  const order = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { name: 'order' },
      h('option', { value: 'newest', text: t('admin.newest_first'), selected: !oldestFirst }),
      h('option', { value: 'oldest', text: t('admin.oldest_first'), selected: oldestFirst }),
    )
  );
  const form = h(
    'form',
    { id: 'audit-form', novalidate: true, class: 'filters' },
    ...filters.map((name) => labelled(`audit-${name}`, word(WORDS.filter, name), fields[name])),
    labelled('audit-order', t('admin.order'), order),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: t('admin.filter') })),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const name of filters) if (fields[name].value.trim() !== '') params.set(name, fields[name].value.trim());
    if (order.value === 'oldest') params.set('order', 'oldest');
    navigate(`/audit${params.size > 0 ? `?${params}` : ''}`);
  });
  const exportLink = h('a', {
    class: 'button secondary',
    href: '/api/admin/audit/export',
    download: 'audit.jsonl',
    id: 'audit-export',
    text: t('admin.audit_export'),
  });
  view.replaceChildren(card('audit', t('admin.nav_audit'), form, h('div', { class: 'actions' }, exportLink), error, results));

  /** @type {any[]} */
  const entries = [];
  /** @param {string | null} before */
  const page = async (before) => {
    const params = new URLSearchParams();
    for (const name of filters) if (query.get(name)) params.set(name, /** @type {string} */ (query.get(name)));
    if (oldestFirst) params.set('order', 'oldest');
    params.set('limit', '50');
    if (before) params.set('before', before);
    const result = await call('GET', `/api/admin/audit?${params}`);
    if (!result.ok) return say(error, describe(result));
    entries.push(...result.body.entries);
    const rows = entries.map((entry) => [
      when(entry.at),
      h('span', { class: 'mono small', text: entry.actor }),
      h('code', { text: entry.action }),
      entry.target ? h('span', { class: 'mono small', text: entry.target }) : '—',
      entry.reason || '—',
      `${entry.via}${entry.network ? ` · ${entry.network}` : ''}`,
    ]);
    const more = result.body.next
      ? actionButton(oldestFirst ? t('admin.more') : t('admin.older'), error, () => page(result.body.next), {
          class: 'secondary',
          id: 'audit-more',
        })
      : null;
    results.replaceChildren(
      table(
        t('admin.nav_audit'),
        [
          t('admin.col_when'),
          t('admin.col_actor'),
          t('admin.col_action_name'),
          t('admin.col_target'),
          t('admin.col_reason'),
          t('admin.col_via'),
        ],
        rows,
        t('admin.audit_empty'),
      ),
      more ?? '',
    );
  };
  await page(null);
}
