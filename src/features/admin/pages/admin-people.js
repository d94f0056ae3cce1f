/**
 * The console's people (admin.js): the search by the start of an e-mail,
 * an address, a did:oc or a provider account, and one account as an
 * operator sees it, with what the operator may do to it.
 */
import { api, h, say, t } from './common.js';
import {
  actionButton,
  alertRegion,
  call,
  card,
  describe,
  labelled,
  named,
  navigate,
  reasonedButton,
  reasonField,
  sayDone,
  statusRegion,
  table,
  view,
  viewLink,
  when,
  word,
  WORDS,
} from './admin-kit.js';
// ---- People ----

/** @param {URLSearchParams} query */
export async function peopleView(query) {
  const q = query.get('q') ?? '';
  const field = /** @type {HTMLInputElement} */ (
    h('input', { type: 'search', name: 'q', value: q, maxlength: '200', autocomplete: 'off' })
  );
  const error = alertRegion('people-error');
  const results = h('div', { id: 'people-results' });
  const form = h(
    'form',
    { id: 'people-form', role: 'search', novalidate: true },
    labelled('people-q', t('admin.people_search'), field, t('admin.people_hint')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: t('admin.search') })),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = field.value.trim();
    if (text === '') {
      say(error, t('admin.people_empty_query'));
      field.focus();
      return;
    }
    navigate(`/people?${new URLSearchParams({ q: text })}`);
  });
  view.replaceChildren(card('people', t('admin.nav_people'), form, error, results));
  if (q === '') return;

  /** @type {any[]} */
  const found = [];
  /** @param {string | null} after */
  const page = async (after) => {
    const params = new URLSearchParams({ q });
    if (after) params.set('after', after);
    const result = await call('GET', `/api/admin/accounts?${params}`);
    if (!result.ok) {
      say(error, describe(result));
      return;
    }
    found.push(...result.body.people);
    const rows = found.map((person) => [
      viewLink(`/people/${person.did_oc}`, person.display_name || person.matched?.value || person.did_oc),
      person.matched ? person.matched.value : person.did_oc,
      word(WORDS.status, person.status),
      when(person.created_at),
    ]);
    const more = result.body.next
      ? actionButton(t('admin.more'), error, () => page(result.body.next), { class: 'secondary', id: 'people-more' })
      : null;
    results.replaceChildren(
      h('p', { id: 'people-count', role: 'status', text: t('admin.people_found', { count: found.length }) }),
      table(
        t('admin.people_caption', { query: q }),
        [t('admin.col_account'), t('admin.col_matched'), t('admin.col_status'), t('admin.col_created')],
        rows,
      ),
      more ?? '',
    );
  };
  await page(null);
}

/** @param {string} did */
export async function personView(did) {
  const result = await call('GET', `/api/admin/accounts/${encodeURIComponent(did)}`);
  if (!result.ok) {
    view.replaceChildren(card('person', t('admin.person_title'), h('p', { class: 'form-error', role: 'alert', text: describe(result) })));
    return;
  }
  const person = result.body.account;
  const error = alertRegion('person-error');
  const done = statusRegion('person-done');
  const reason = reasonField('person-reason');
  const refresh = () => personView(did);
  const path = `/api/admin/accounts/${encodeURIComponent(did)}`;

  const identities = table(
    t('admin.identities'),
    [t('admin.col_kind'), t('admin.col_value'), t('admin.col_added')],
    person.identities.map((/** @type {any} */ identity) => [
      identity.kind,
      h('span', { class: 'mono', text: identity.value }),
      when(identity.created_at),
    ]),
  );
  const keys = table(
    t('admin.keys'),
    [t('admin.col_label'), t('admin.col_last_used'), t('admin.col_action')],
    person.keys.map((/** @type {any} */ key) => [
      key.label,
      when(key.last_used_at),
      reasonedButton(
        t('admin.remove_key'),
        reason,
        error,
        async (why) => {
          const removed = await call(
            'POST',
            `${path}/keys/${encodeURIComponent(key.id)}/remove`,
            { reason: why },
            { destructive: true, region: error },
          );
          if (!removed.ok) return say(error, describe(removed));
          await refresh();
          sayDone(t('admin.key_removed', { label: key.label }));
        },
        { class: 'danger small', 'aria-label': named('admin.remove_key', key.label) },
      ),
    ]),
  );
  const signOut = async (/** @type {string | null} */ sessionId) => {
    const why = reason.read(error);
    if (why === null) return;
    const body = sessionId === null ? { reason: why } : { reason: why, session: sessionId };
    const revoked = await call('POST', `${path}/sessions/revoke`, body);
    if (!revoked.ok) return say(error, describe(revoked));
    await refresh();
    sayDone(t('admin.signed_out', { count: revoked.body.revoked_sessions }));
  };
  const sessions = table(
    t('admin.sessions'),
    [t('admin.col_device'), t('admin.col_network'), t('admin.col_last_seen'), t('admin.col_action')],
    person.sessions.map((/** @type {any} */ row) => [
      row.device || t('admin.unknown_device'),
      row.network || '—',
      when(row.last_seen_at),
      actionButton(t('admin.sign_out'), error, () => signOut(row.id), {
        class: 'secondary small',
        'aria-label': named('admin.sign_out', row.device || t('admin.unknown_device')),
      }),
    ]),
  );
  const disabled = person.status === 'disabled';
  const live = person.status === 'active' || disabled;
  const hold = reasonedButton(
    disabled ? t('admin.enable') : t('admin.disable'),
    reason,
    error,
    async (why) => {
      const changed = await call('POST', `${path}/${disabled ? 'enable' : 'disable'}`, { reason: why });
      if (!changed.ok) return say(error, describe(changed));
      await refresh();
      sayDone(disabled ? t('admin.enabled') : t('admin.disabled_now', { count: changed.body.revoked_sessions }));
    },
    { id: 'person-hold', class: disabled ? '' : 'danger' },
  );

  const confirmField = /** @type {HTMLInputElement} */ (h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' }));
  const remove = reasonedButton(
    t('admin.delete'),
    reason,
    error,
    async (why) => {
      if (confirmField.value.trim() !== person.did_oc) {
        confirmField.setAttribute('aria-invalid', 'true');
        say(error, t('admin.delete_confirm_mismatch'));
        confirmField.focus();
        return;
      }
      const deleted = await call('POST', `${path}/delete`, { confirm: person.did_oc, reason: why }, { destructive: true, region: error });
      if (!deleted.ok) return say(error, describe(deleted));
      await refresh();
      sayDone(t('admin.deleted'));
    },
    { id: 'person-delete', class: 'danger' },
  );

  const facts = h(
    'dl',
    { class: 'facts' },
    fact(t('admin.col_status'), h('span', { id: 'person-status', text: word(WORDS.status, person.status) })),
    fact(t('admin.display_name'), person.display_name || '—'),
    fact('did:oc', h('code', { id: 'person-did', text: person.did_oc })),
    fact(t('admin.col_created'), when(person.created_at)),
    person.disabled_at ? fact(t('admin.disabled_at'), when(person.disabled_at)) : null,
  );
  const activity = table(
    t('admin.activity'),
    [t('admin.col_event'), t('admin.col_when')],
    person.activity.map((/** @type {any} */ event) => [h('code', { text: event.kind }), when(event.at)]),
  );
  view.replaceChildren(
    h('p', {}, viewLink('/people', t('admin.back_to_people'))),
    card('person', knownAs(person), facts, done, error),
    card(
      'person-actions',
      t('admin.actions'),
      reason.element,
      live
        ? h(
            'div',
            { class: 'actions' },
            hold,
            person.sessions.length > 0 ? actionButton(t('admin.sign_out_all'), error, () => signOut(null), { class: 'secondary' }) : null,
            h('a', { class: 'button secondary', href: `${path}/export`, download: '', id: 'person-export', text: t('admin.export') }),
          )
        : null,
      live
        ? h(
            'div',
            { class: 'danger-zone' },
            h('h3', { text: t('admin.delete_title') }),
            h('p', { class: 'hint', text: t('admin.delete_hint') }),
            labelled('person-confirm', t('admin.delete_confirm', { did: person.did_oc }), confirmField),
            h('div', { class: 'actions' }, remove),
          )
        : null,
    ),
    card('person-identities', t('admin.identities'), identities),
    card('person-keys', t('admin.keys'), keys),
    card('person-sessions', t('admin.sessions'), sessions),
    card(
      'person-apps',
      t('admin.apps_of_person'),
      h('h3', { text: t('admin.signed_in_apps') }),
      table(
        t('admin.signed_in_apps'),
        [t('admin.col_app')],
        person.signed_in_apps.map((/** @type {any} */ app) => [app.name]),
      ),
      h('h3', { text: t('admin.owned_apps') }),
      table(
        t('admin.owned_apps'),
        [t('admin.col_app')],
        person.connect_apps.map((/** @type {any} */ app) => [viewLink(`/apps/${app.id}`, app.name)]),
      ),
    ),
    card('person-attestation', t('admin.attestation'), attestationOf(person)),
    card('person-activity', t('admin.activity'), activity),
  );
}

/**
 * The account's OrangeCheck attestation: for each of its Bitcoin addresses, a
 * button that asks the public `GET /api/check` (the chain and the relays are
 * asked only when the operator wants it).
 *
 * @param {any} person
 */
function attestationOf(person) {
  const addresses = /** @type {Array<{kind: string, value: string}>} */ (person.identities).filter((one) => one.kind === 'btc');
  if (addresses.length === 0) return h('p', { class: 'hint', text: t('admin.attestation_none') });
  return h(
    'ul',
    { class: 'item-list' },
    ...addresses.map(({ value }) => {
      const answer = statusRegion(`attestation-${value}`);
      const look = actionButton(
        t('admin.attestation_look'),
        answer,
        async () => {
          const result = await api('GET', `/api/check?${new URLSearchParams({ addr: value })}`);
          if (result.ok && result.body.ok) {
            say(answer, t('admin.attestation_found', { sats: result.body.sats, days: result.body.days, score: result.body.score }));
          } else if (result.status === 404) say(answer, t('admin.attestation_missing'));
          else
            say(
              answer,
              t('admin.attestation_failed', { reason: (result.body?.reasons ?? result.body?.codes ?? [result.code]).join(', ') }),
            );
        },
        { class: 'secondary small', 'aria-label': named('admin.attestation_look', value) },
      );
      return h('li', {}, h('span', { class: 'mono small', text: value }), ' ', look, answer);
    }),
  );
}

/**
 * The name an account is known by: its display name, else its first e-mail
 * address, else its first Bitcoin address, else its did:oc.
 *
 * @param {any} person
 */
function knownAs(person) {
  if (person.display_name) return person.display_name;
  const identities = /** @type {Array<{kind: string, value: string}>} */ (person.identities);
  return (identities.find((one) => one.kind === 'email') ?? identities.find((one) => one.kind === 'btc'))?.value ?? person.did_oc;
}

/** @param {string} term @param {Node | string} value */
function fact(term, value) {
  return h('div', {}, h('dt', { text: term }), h('dd', {}, value));
}
