/**
 * The header's account menu (head.html `#account-menu`): a button naming
 * the active account that opens a panel with the browser's other accounts
 * to switch to (POST /api/auth/switch, no new proof), "Add account",
 * "Account", and signing out of the active account or of all of them
 * (POST /api/auth/logout, docs/api.md "Session endpoints").
 *
 * The panel is a disclosure: the button says whether it is open
 * (aria-expanded), Enter and Space toggle it, the arrow keys, Home and End
 * move between its items, Escape closes it and puts focus back on the
 * button, and leaving it (Tab, a click elsewhere) closes it.
 *
 * The scripts of the pages a signed-in browser uses import it, so it is
 * joined into each (docs/architecture.md "Page assets"). The account and
 * step-up pages hand it the GET /api/auth/me answer they load themselves
 * ({@link showAccountMenu}), so it costs them no request; the sign-in and
 * consent pages ask once ({@link startAccountMenu}) and show nothing when the
 * answer is not an account. The explorer and the provider's notices (mostly
 * seen after signing out of an app) have no menu.
 */
import { accountName, api, describeError, h, initialOf, say, shortName, t } from './common.js';

/** @typedef {import('./common.js').AccountSummary} AccountSummary */

/**
 * What the menu's actions do; the account page lends its own, which confirm,
 * update the page and say what happened.
 *
 * @typedef {object} MenuActions
 * @property {(entry: AccountSummary, button: HTMLButtonElement) => Promise<void>} switchTo
 * @property {(scope: 'current' | 'all', button: HTMLButtonElement) => Promise<void>} signOut
 */

const holder = document.getElementById('account-menu');
const button = h('button', {
  type: 'button',
  id: 'account-menu-button',
  class: 'account-menu-button',
  'aria-expanded': 'false',
  'aria-controls': 'account-menu-panel',
});
const panel = h('div', { id: 'account-menu-panel', class: 'account-menu-panel', hidden: true });
const error = h('p', { class: 'form-error', role: 'alert' });

/** The items the arrow keys move between, in order. */
function items() {
  return /** @type {HTMLElement[]} */ ([...panel.querySelectorAll('a[href], button:not([disabled])')]);
}

/** @param {boolean} open */
function setOpen(open) {
  panel.hidden = !open;
  button.setAttribute('aria-expanded', String(open));
}

/** Closes the panel; with `refocus`, focus goes back to the button. @param {boolean} refocus */
function close(refocus) {
  if (panel.hidden) return;
  setOpen(false);
  if (refocus) button.focus();
}

/** @param {'first' | 'last'} which */
function openAt(which) {
  setOpen(true);
  const list = items();
  (which === 'first' ? list[0] : list[list.length - 1])?.focus();
}

button.addEventListener('click', () => {
  if (panel.hidden) setOpen(true);
  else close(true);
});

button.addEventListener('keydown', (event) => {
  if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
    event.preventDefault();
    openAt(event.key === 'ArrowDown' ? 'first' : 'last');
  } else if (event.key === 'Escape') {
    close(true);
  }
});

panel.addEventListener('keydown', (event) => {
  const list = items();
  const at = list.indexOf(/** @type {HTMLElement} */ (document.activeElement));
  /** @type {Record<string, number>} */
  const moves = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: list.length - 1 };
  if (event.key === 'Escape') {
    event.preventDefault();
    close(true);
  } else if (Object.hasOwn(moves, event.key) && list.length > 0) {
    event.preventDefault();
    list[(moves[event.key] + list.length) % list.length]?.focus();
  }
});

/**
 * Whether `node` is out of the menu. A dialog an item opened (the account
 * page asks before signing out of every account) is not: the menu stays
 * open under it, so closing it gives focus back to that item.
 *
 * @param {EventTarget | null} node
 */
function outside(node) {
  if (!(node instanceof Element)) return true;
  return holder !== null && !holder.contains(node) && node.closest('dialog') === null;
}

// Leaving the menu closes it: Tab past its last item, or a click anywhere else.
holder?.addEventListener('focusout', (event) => {
  if (outside(event.relatedTarget)) close(false);
});
document.addEventListener('click', (event) => {
  if (outside(event.target)) close(false);
});

/** @type {MenuActions} */
const plainActions = {
  async switchTo(entry, pressed) {
    const switched = await api('POST', '/api/auth/switch', { did_oc: entry.did_oc });
    if (!switched.ok) {
      say(error, describeError(switched));
      pressed.focus();
      return;
    }
    window.location.reload();
  },
  async signOut(scope, pressed) {
    const answer = await api('POST', `/api/auth/logout?scope=${scope}`);
    if (!answer.ok && answer.status !== 401) {
      say(error, describeError(answer));
      pressed.focus();
      return;
    }
    if (answer.ok && scope === 'current' && answer.body?.switched_to) window.location.reload();
    else window.location.assign('/signin?signed_out=1');
  },
};

/**
 * A button of the panel that runs `work` while it is busy (it cannot be sent twice).
 *
 * @param {Record<string, string>} attributes
 * @param {(pressed: HTMLButtonElement) => Promise<void>} work
 * @param {...(Node | string)} children
 */
function actionButton(attributes, work, ...children) {
  const pressed = h('button', { type: 'button', ...attributes }, ...children);
  pressed.addEventListener('click', async () => {
    // One request at a time: a second press while the first is under way does nothing.
    if (pressed.getAttribute('aria-busy') === 'true') return;
    say(error, '');
    pressed.setAttribute('aria-busy', 'true');
    try {
      await work(pressed);
    } finally {
      pressed.removeAttribute('aria-busy');
    }
  });
  return pressed;
}

/** The round badge with an account's initial. @param {AccountSummary} account */
function avatar(account) {
  return h('span', { class: 'account-avatar', 'aria-hidden': 'true', text: initialOf(accountName(account)) });
}

/**
 * Shows the menu for the browser's accounts: the active one on the button,
 * the others to switch to in the panel. Called again after a change.
 *
 * @param {{account: AccountSummary, roster: AccountSummary[]}} me GET /api/auth/me's answer
 * @param {MenuActions} [actions] what the items do; by default they act and reload the page
 */
export function showAccountMenu(me, actions = plainActions) {
  if (!holder) return;
  const { account, roster } = me;
  const name = accountName(account);
  // Read out as "Account menu: <name>"; a long address is cut in the middle here, and the panel shows it whole.
  button.replaceChildren(
    avatar(account),
    h('span', { class: 'account-menu-name' }, h('span', { class: 'visually-hidden', text: `${t('menu.button')} ` }), shortName(account)),
  );
  const identity = account.display_identity?.value;
  const current = h(
    'div',
    { class: 'account-menu-current' },
    avatar(account),
    h(
      'div',
      { class: 'item-main' },
      h('span', { class: 'item-title', text: name }),
      identity && identity !== name ? h('span', { class: 'item-sub mono', text: identity }) : null,
      h('span', { class: 'item-sub mono', text: account.did_oc }),
    ),
  );
  const others = roster.map((entry) =>
    h(
      'li',
      {},
      // Whole here, wrapping: the panel has the room the header's button lacks.
      actionButton(
        { class: 'account-menu-item' },
        (pressed) => actions.switchTo(entry, pressed),
        avatar(entry),
        h(
          'span',
          { class: 'account-menu-name' },
          h('span', { class: 'visually-hidden', text: `${t('menu.switch_to')} ` }),
          accountName(entry),
        ),
      ),
    ),
  );
  const onAccountPage = window.location.pathname === '/account';
  const switching =
    others.length === 0
      ? []
      : [
          h('p', { id: 'account-menu-switch', class: 'account-menu-heading', text: t('menu.switch') }),
          h('ul', { class: 'account-menu-list', 'aria-labelledby': 'account-menu-switch' }, ...others),
        ];
  panel.replaceChildren(
    current,
    ...switching,
    h(
      'ul',
      { class: 'account-menu-list' },
      h('li', {}, h('a', { class: 'account-menu-item', href: '/signin?add=1&return_to=/account', text: t('menu.add') })),
      h(
        'li',
        {},
        h('a', { class: 'account-menu-item', href: '/account', 'aria-current': onAccountPage ? 'page' : null, text: t('menu.account') }),
      ),
      h(
        'li',
        {},
        actionButton({ class: 'account-menu-item', text: t('account.signout_title') }, (pressed) => actions.signOut('current', pressed)),
      ),
      others.length > 0
        ? h(
            'li',
            {},
            actionButton({ class: 'account-menu-item', text: t('account.logout_all') }, (pressed) => actions.signOut('all', pressed)),
          )
        : null,
    ),
    error,
  );
  holder.replaceChildren(button, panel);
  holder.hidden = false;
}

/**
 * The menu of a page that has not loaded the account itself (sign-in,
 * consent): one GET /api/auth/me, and nothing shown without an account.
 */
export async function startAccountMenu() {
  if (!holder) return;
  const answer = await api('GET', '/api/auth/me');
  if (answer.ok && answer.body?.account) showAccountMenu(summaryOf(answer.body));
}

/**
 * The account and roster of a GET /api/auth/me answer, as the menu takes them.
 *
 * @param {{account: AccountSummary, roster?: unknown}} me
 */
export function summaryOf(me) {
  return { account: me.account, roster: Array.isArray(me.roster) ? me.roster : [] };
}
