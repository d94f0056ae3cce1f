/**
 * The console's apps (admin.js): the OpenID clients (add, edit, hold, a new
 * secret, first-party, delete) and the Connect apps (a new API key on the
 * owner's behalf, the webhook deliveries, a failed one sent again).
 */
import { busy, byId, h, say, t } from './common.js';
import {
  actionButton,
  alertRegion,
  call,
  card,
  describe,
  labelled,
  named,
  reasonedButton,
  reasonField,
  sayDone,
  shownOnce,
  statusRegion,
  table,
  view,
  viewLink,
  when,
  word,
  WORDS,
} from './admin-kit.js';
// ---- Apps ----

export async function appsView() {
  const error = alertRegion('apps-error');
  const [clients, apps] = await Promise.all([call('GET', '/api/admin/clients'), call('GET', '/api/admin/apps')]);
  if (!clients.ok || !apps.ok) {
    view.replaceChildren(
      card('apps', t('admin.nav_apps'), h('p', { class: 'form-error', role: 'alert', text: describe(clients.ok ? apps : clients) })),
    );
    return;
  }
  const reason = reasonField('apps-reason');
  const done = statusRegion('apps-done');
  const revealed = h('div', { id: 'apps-revealed', 'data-revealed': '' });
  const editor = h('div', { id: 'client-edit' });
  const clientRows = clients.body.clients.map((/** @type {any} */ client) => {
    const name = client.metadata.client_name || client.client_id;
    const path = `/api/admin/clients/${encodeURIComponent(client.client_id)}`;
    const confidential = client.metadata.token_endpoint_auth_method !== 'none';
    return [
      h('span', {}, h('strong', { text: name }), h('br'), h('code', { class: 'small', text: client.client_id })),
      (client.metadata.redirect_uris || []).join(' '),
      client.owner_app_id ? viewLink(`/apps/${client.owner_app_id}`, t('admin.connect_app')) : t('admin.operator_owned'),
      client.first_party ? t('admin.yes') : t('admin.no'),
      client.disabled_at ? h('span', { class: 'state-bad', text: t('admin.client_held') }) : t('admin.status_active'),
      h(
        'div',
        { class: 'row-actions' },
        actionButton(t('admin.edit'), error, async () => showClientEdit(client, editor, error), {
          class: 'secondary small',
          'aria-label': named('admin.edit', name),
          'aria-controls': 'client-edit',
        }),
        actionButton(
          client.disabled_at ? t('admin.client_enable') : t('admin.client_disable'),
          error,
          async () => {
            const why = client.disabled_at ? reason.field.value.trim() : reason.read(error);
            if (why === null) return;
            const body = why === '' ? {} : { reason: why };
            const changed = await call('POST', `${path}/${client.disabled_at ? 'enable' : 'disable'}`, body);
            if (!changed.ok) return say(error, describe(changed));
            await appsView();
            sayDone(client.disabled_at ? t('admin.client_enabled_now', { name }) : t('admin.client_disabled_now', { name }));
          },
          {
            class: 'secondary small',
            'aria-label': named(client.disabled_at ? 'admin.client_enable' : 'admin.client_disable', name),
          },
        ),
        confidential
          ? reasonedButton(
              t('admin.rotate_secret'),
              reason,
              error,
              async (why) => {
                const rotated = await call('POST', `${path}/rotate`, { reason: why }, { destructive: true, region: error });
                if (!rotated.ok) return say(error, describe(rotated));
                revealed.replaceChildren(shownOnce(t('admin.new_secret', { name }), rotated.body.client.client_secret));
                say(done, t('admin.secret_rotated', { name }));
              },
              { class: 'secondary small', 'aria-label': named('admin.rotate_secret', name) },
            )
          : null,
        actionButton(
          client.first_party ? t('admin.first_party_off') : t('admin.first_party_on'),
          error,
          async () => {
            const changed = await call('POST', `${path}/first-party`, { first_party: !client.first_party });
            if (!changed.ok) return say(error, describe(changed));
            await appsView();
          },
          {
            class: 'secondary small',
            'aria-label': named(client.first_party ? 'admin.first_party_off' : 'admin.first_party_on', name),
          },
        ),
        reasonedButton(
          t('admin.delete'),
          reason,
          error,
          async (why) => {
            const removed = await call('POST', `${path}/delete`, { reason: why }, { destructive: true, region: error });
            if (!removed.ok) return say(error, describe(removed));
            await appsView();
            sayDone(t('admin.client_deleted', { name }));
          },
          { class: 'danger small', 'aria-label': named('admin.delete', name) },
        ),
      ),
    ];
  });
  const appRows = apps.body.apps.map((/** @type {any} */ app) => [
    viewLink(`/apps/${app.id}`, app.name),
    viewLink(`/people/${app.owner}`, app.owner, { class: 'mono small' }),
    app.webhook_url ? h('span', { class: 'mono small', text: app.webhook_url }) : '—',
    reasonedButton(
      t('admin.rotate_api_key'),
      reason,
      error,
      async (why) => {
        const rotated = await call(
          'POST',
          `/api/admin/apps/${encodeURIComponent(app.id)}/rotate-key`,
          { reason: why },
          { destructive: true, region: error },
        );
        if (!rotated.ok) return say(error, describe(rotated));
        revealed.replaceChildren(shownOnce(t('admin.new_api_key', { name: app.name }), rotated.body.api_key));
        say(done, t('admin.api_key_rotated', { name: app.name }));
      },
      { class: 'secondary small', 'aria-label': named('admin.rotate_api_key', app.name) },
    ),
  ]);
  view.replaceChildren(
    card('apps', t('admin.nav_apps'), reason.element, done, error, revealed),
    card(
      'clients',
      t('admin.clients'),
      table(
        t('admin.clients'),
        [
          t('admin.col_app'),
          t('admin.col_redirects'),
          t('admin.col_owner'),
          t('admin.col_first_party'),
          t('admin.col_status'),
          t('admin.col_action'),
        ],
        clientRows,
      ),
      editor,
      createClientForm(),
    ),
    card(
      'connect-apps',
      t('admin.connect_apps'),
      table(t('admin.connect_apps'), [t('admin.col_app'), t('admin.col_owner'), t('admin.col_webhook'), t('admin.col_action')], appRows),
    ),
  );
}

/**
 * The form that changes a client's name, redirect addresses, logo and
 * back-channel logout address, in `holder` under the table; an emptied
 * address is removed.
 *
 * @param {any} client
 * @param {HTMLElement} holder
 * @param {HTMLElement} error
 */
function showClientEdit(client, holder, error) {
  const meta = client.metadata;
  const name = /** @type {HTMLInputElement} */ (
    h('input', { type: 'text', maxlength: '100', value: meta.client_name ?? '', autocomplete: 'off' })
  );
  const uris = /** @type {HTMLTextAreaElement} */ (h('textarea', { rows: '2', spellcheck: 'false' }));
  uris.value = (meta.redirect_uris ?? []).join('\n');
  const logo = /** @type {HTMLInputElement} */ (h('input', { type: 'url', value: meta.logo_uri ?? '', autocomplete: 'off' }));
  const logout = /** @type {HTMLInputElement} */ (
    h('input', { type: 'url', value: meta.backchannel_logout_uri ?? '', autocomplete: 'off' })
  );
  const title = t('admin.edit_client', { name: meta.client_name || client.client_id });
  const submit = /** @type {HTMLButtonElement} */ (h('button', { type: 'submit', text: t('admin.save') }));
  const form = h(
    'form',
    { id: 'client-edit-form', novalidate: true, class: 'disclosed', 'aria-label': title },
    h('h3', { id: 'client-edit-title', tabindex: '-1', text: title }),
    labelled('edit-name', t('admin.client_name'), name),
    labelled('edit-uris', t('admin.client_redirects'), uris, t('admin.client_redirects_hint')),
    labelled('edit-logo', t('admin.client_logo'), logo),
    labelled('edit-logout', t('admin.client_backchannel'), logout, t('admin.client_backchannel_hint')),
    h(
      'div',
      { class: 'actions' },
      submit,
      h('button', { type: 'button', class: 'link', text: t('admin.cancel'), onclick: () => holder.replaceChildren() }),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    /** @param {HTMLInputElement} field */
    const uriOrNull = (field) => (field.value.trim() === '' ? null : field.value.trim());
    const body = {
      client_name: name.value.trim(),
      redirect_uris: uris.value.split(/\s+/).filter(Boolean),
      logo_uri: uriOrNull(logo),
      backchannel_logout_uri: uriOrNull(logout),
    };
    await busy(submit, async () => {
      const saved = await call('POST', `/api/admin/clients/${encodeURIComponent(client.client_id)}/edit`, body);
      if (!saved.ok) return say(error, describe(saved));
      await appsView();
      sayDone(t('admin.client_saved', { name: body.client_name }));
    });
  });
  holder.replaceChildren(form);
  byId('client-edit-title').focus();
}

/** The form that registers one of the operator's own OpenID clients; its secret is shown once. */
function createClientForm() {
  const name = /** @type {HTMLInputElement} */ (h('input', { type: 'text', maxlength: '100', autocomplete: 'off' }));
  const uris = /** @type {HTMLTextAreaElement} */ (h('textarea', { rows: '2', spellcheck: 'false' }));
  const method = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      {},
      h('option', { value: 'client_secret_basic', text: t('admin.client_confidential') }),
      h('option', { value: 'none', text: t('admin.client_public') }),
    )
  );
  const firstParty = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', id: 'client-first-party' }));
  const error = alertRegion('client-error');
  const submit = h('button', { type: 'submit', text: t('admin.create_client') });
  const form = h(
    'form',
    { id: 'client-form', novalidate: true, class: 'disclosed' },
    h('h3', { text: t('admin.create_client') }),
    labelled('client-name', t('admin.client_name'), name),
    labelled('client-uris', t('admin.client_redirects'), uris, t('admin.client_redirects_hint')),
    labelled('client-method', t('admin.client_kind'), method),
    h('div', { class: 'check' }, firstParty, h('label', { for: 'client-first-party', text: t('admin.client_first_party') })),
    h('div', { class: 'actions' }, submit),
    error,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    const redirects = uris.value.split(/\s+/).filter(Boolean);
    if (name.value.trim() === '' || redirects.length === 0) {
      say(error, t('admin.client_incomplete'));
      (name.value.trim() === '' ? name : uris).focus();
      return;
    }
    await busy(/** @type {HTMLButtonElement} */ (submit), async () => {
      const body = {
        client_name: name.value.trim(),
        redirect_uris: redirects,
        token_endpoint_auth_method: method.value,
        first_party: firstParty.checked,
      };
      const created = await call('POST', '/api/admin/clients', body);
      if (!created.ok) return say(error, describe(created));
      await appsView();
      const secret = created.body.client.client_secret;
      const shown = /** @type {HTMLElement} */ (view.querySelector('[data-revealed]'));
      shown.replaceChildren(
        h('p', { text: t('admin.client_created', { name: body.client_name, id: created.body.client.client_id }) }),
        secret ? shownOnce(t('admin.new_secret', { name: body.client_name }), secret) : '',
      );
      sayDone(t('admin.client_created', { name: body.client_name, id: created.body.client.client_id }));
    });
  });
  return form;
}

/** One Connect app's webhook deliveries, with "send again" for a failed one. @param {string} appId */
export async function deliveriesView(appId) {
  const result = await call('GET', `/api/admin/apps/${encodeURIComponent(appId)}/deliveries`);
  const error = alertRegion('deliveries-error');
  const done = statusRegion('deliveries-done');
  if (!result.ok) {
    view.replaceChildren(card('deliveries', t('admin.deliveries'), h('p', { class: 'form-error', role: 'alert', text: describe(result) })));
    return;
  }
  const rows = result.body.deliveries.map((/** @type {any} */ delivery) => [
    h('code', { text: delivery.type }),
    word(WORDS.delivery, delivery.state),
    String(delivery.attempts),
    delivery.last_error ? h('span', { class: 'mono small', text: `${delivery.last_status ?? ''} ${delivery.last_error}`.trim() }) : '—',
    when(delivery.last_attempt_at ?? delivery.created_at),
    delivery.state === 'failed'
      ? actionButton(
          t('admin.resend'),
          error,
          async () => {
            const sent = await call(
              'POST',
              `/api/admin/apps/${encodeURIComponent(appId)}/deliveries/${encodeURIComponent(delivery.id)}/resend`,
              {},
            );
            if (!sent.ok) return say(error, describe(sent));
            await deliveriesView(appId);
            sayDone(t('admin.resent'));
          },
          { class: 'secondary small', 'aria-label': named('admin.resend', delivery.type) },
        )
      : '',
  ]);
  view.replaceChildren(
    h('p', {}, viewLink('/apps', t('admin.back_to_apps'))),
    card(
      'deliveries',
      t('admin.deliveries'),
      done,
      error,
      table(
        t('admin.deliveries'),
        [
          t('admin.col_event'),
          t('admin.col_status'),
          t('admin.col_attempts'),
          t('admin.col_last_error'),
          t('admin.col_when'),
          t('admin.col_action'),
        ],
        rows,
        t('admin.no_deliveries'),
      ),
    ),
  );
}
