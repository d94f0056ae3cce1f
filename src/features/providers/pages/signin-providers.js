/**
 * Signing in with an identity provider (src/pages/signin.js): a button per
 * provider the service offers (GET /api/auth/providers), each starting its
 * redirect with this page's `return_to` and `add`.
 */
import { api, byId, h, initialOf, t } from './common.js';
import { isAdding, lastWay, markLastUsed, remember, returnTo } from './signin-state.js';

/** Providers with a logo of their own among the assets; the others show their initial. */
const PROVIDER_LOGOS = new Set(['github', 'google']);

/** @type {Array<{id: string, label: string}>} */
let providers = [];

/** The providers' buttons, with `add` as it is now ("Use another account" turns it on). */
export function renderProviders() {
  const last = lastWay();
  const list = byId('provider-list');
  list.replaceChildren(
    ...providers.map((provider) => {
      const query = new URLSearchParams({ return_to: returnTo });
      if (isAdding()) query.set('add', '1');
      const logo = PROVIDER_LOGOS.has(provider.id)
        ? h('img', { class: 'way-logo', src: `/assets/${provider.id}.svg`, alt: '', width: '24', height: '24' })
        : h('span', { class: 'way-logo way-initial', 'aria-hidden': 'true', text: initialOf(provider.label) });
      const link = h(
        'a',
        { class: 'button secondary way', href: `/api/auth/${provider.id}/start?${query}` },
        logo,
        h('span', { class: 'way-name', text: t('signin.continue_with', { provider: provider.label }) }),
      );
      link.addEventListener('click', () => remember(`provider:${provider.id}`));
      if (last === `provider:${provider.id}`) markLastUsed(link);
      return h('li', {}, link);
    }),
  );
  byId('providers').hidden = providers.length === 0;
}

export async function showProviders() {
  const listed = await api('GET', '/api/auth/providers');
  if (!listed.ok || !listed.body || !Array.isArray(listed.body.providers)) return;
  providers = listed.body.providers.filter(
    /** @param {any} provider */
    (provider) => typeof provider.id === 'string' && /^[a-z0-9][a-z0-9-]{0,31}$/.test(provider.id) && typeof provider.label === 'string',
  );
  renderProviders();
}
