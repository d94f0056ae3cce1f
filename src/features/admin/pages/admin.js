/**
 * The operators' console (ADMIN_PATH, docs/operations.md "The console"): one
 * page whose views are paths under the console's own (`/admin` the
 * dashboard, `/admin/people`,
 * `/admin/people/<did:oc>`, `/admin/apps`, `/admin/apps/<app id>`,
 * `/admin/service`, `/admin/audit`), so a link, a reload and the browser's
 * back button keep the view. Every view reads and acts through the admin API
 * (docs/api.md "Admin") with the session cookie; the service lets it in
 * with a security-key or passkey step-up younger than 10 minutes, and one
 * younger than a minute for a destructive action, so the console asks for
 * the key when it starts, when the step-up has gone stale (401
 * `step_up_required`), and again just before a destructive action. Every
 * action carries the operator's reason, which the audit log keeps.
 */
import { say } from './common.js';
import { startAccountMenu } from './account-menu.js';
import {
  askForKey,
  base,
  consoleRoot,
  currentSession,
  loadSession,
  main,
  pageError,
  pageStatus,
  setOpener,
  showFreshness,
  stillAhead,
  view,
} from './admin-kit.js';
import { appsView, deliveriesView } from './admin-apps.js';
import { peopleView, personView } from './admin-people.js';
import { auditView, dashboardView, serviceView } from './admin-service.js';

// ---- routing ----

/** The view of the address: its name, what it names and the query. */
function route() {
  const rest = window.location.pathname.startsWith(base) ? window.location.pathname.slice(base.length) : '';
  const [name = 'dashboard', id = ''] = rest.split('/').filter(Boolean).map(decodeURIComponent);
  return { name, id, query: new URLSearchParams(window.location.search) };
}

async function render() {
  const { name, id, query } = route();
  for (const link of consoleRoot.querySelectorAll('.account-nav a')) {
    if (link.getAttribute('data-view') === name) link.setAttribute('aria-current', 'true');
    else link.removeAttribute('aria-current');
  }
  say(pageError, '');
  main.setAttribute('aria-busy', 'true');
  if (name === 'people' && id !== '') await personView(id);
  else if (name === 'apps' && id !== '') await deliveriesView(id);
  else if (name === 'apps') await appsView();
  else if (name === 'service') await serviceView();
  else if (name === 'audit') await auditView(query);
  else if (name === 'people') await peopleView(query);
  else await dashboardView();
  main.setAttribute('aria-busy', 'false');
  showFreshness();
  const first = view.querySelector('h2');
  if (first instanceof HTMLElement && navigated) first.focus();
}

/** Whether a view was opened by the operator (focus goes to its heading), not by the page's load. */
let navigated = false;

/** @param {string} path under the console */
function navigate(path) {
  history.pushState(null, '', `${base}${path}`);
  navigated = true;
  void render();
}
setOpener(navigate);

document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-nav], .account-nav a') : null;
  if (!(link instanceof HTMLAnchorElement) || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  event.preventDefault();
  navigate(link.pathname.slice(base.length) + link.search);
});

window.addEventListener('popstate', () => {
  navigated = true;
  void render();
});

async function start() {
  void startAccountMenu();
  if (!(await loadSession())) {
    say(pageStatus, '');
    main.setAttribute('aria-busy', 'false');
    return;
  }
  if (!stillAhead(currentSession().step_up?.fresh_until)) await askForKey('');
  consoleRoot.hidden = false;
  say(pageStatus, '');
  await render();
}

void start();
