/**
 * The OpenID provider's pages in the host's look and the person's language
 * (docs/protocol.md §8 "Consent"): the consent page, and the pages the
 * provider library draws itself (an error, the sign-out question and its
 * answer, the device verification page of RFC 8628 and its answers), from
 * the templates `consent.html` and `notice.html`. Every dynamic word goes
 * through `formatHtml` or `escapeHtml`, which escape it: the device's own
 * description comes from its User-Agent, which anyone can write.
 *
 * The consent page's policy is the pages' own with two additions: its form
 * may lead on to the app's redirect URI (browsers apply `form-action` to
 * the redirects that follow a form), and its logo may come from the
 * client's `logo_uri` origin.
 */
import type { IncomingMessage } from 'node:http';
import type { Brand } from '../../platform/config.js';
import { escapeHtml, formatHtml, isLocale, type Locale, type PageMessageKey } from '../../platform/i18n/index.js';
import { cspSourceOf } from './clients.js';
import type { DeviceCodeProblem, DeviceQuestion, LogoutQuestion, OidcPages } from './provider.js';
import { localDeviceLabel } from '../../identity/session/index.js';
import { requestLocale } from '../../web/locale.js';
import { allowingImagesFrom, loadPageFiles, localizedPages, renderTemplate, type PageFiles } from '../../web/pages.js';

/** What the consent page shows. */
interface ConsentView {
  readonly uid: string;
  readonly clientName: string;
  readonly logoUri: string | undefined;
  /** How the account is named to its person (display name or display identity). */
  readonly accountName: string;
  /** The scopes asked for that the person has not granted yet, in the order the page lists them. */
  readonly scopes: readonly string[];
  /** The APIs the app asks to use for the person, each with the scopes not granted yet (docs/protocol.md §8 "APIs"). */
  readonly apis?: ReadonlyArray<{ readonly name: string; readonly scopes: readonly string[] }>;
  /** Where the app gets the answer; none for a device's sign-in (RFC 8628), whose device gets it. */
  readonly redirectUri: string | undefined;
}

/** The scopes the page names, each with its sentence. */
const SCOPE_MESSAGES: Readonly<Record<string, PageMessageKey>> = {
  openid: 'consent.scope_openid',
  profile: 'consent.scope_profile',
  email: 'consent.scope_email',
  bitcoin: 'consent.scope_bitcoin',
  orangecheck: 'consent.scope_orangecheck',
  offline_access: 'consent.scope_offline_access',
};

const BOLD = { b: '<strong>' };

/** The verification URI's path (src/features/oidc/provider.ts). */
const OIDC_DEVICE_PATH = '/oidc/device';

function originOf(url: string | undefined): string | null {
  if (url === undefined) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

/**
 * A page's policy `csp`, with `form-action` allowing the redirect to
 * `redirectUri` that follows the page's form. Only a scheme, host and port of
 * the policy grammar is ever written (`cspSourceOf`, docs/protocol.md §8
 * "Clients"): an http(s) URI whose host is not one adds nothing.
 */
function cspLeadingTo(csp: string, redirectUri: string | undefined): string {
  if (redirectUri === undefined) return csp;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(redirectUri)?.[0]?.toLowerCase();
  // A native app's custom scheme (`com.example.app:/cb`) is allowed by its scheme.
  const target = scheme === 'http:' || scheme === 'https:' ? cspSourceOf(redirectUri) : (scheme ?? null);
  return target === null ? csp : csp.replace("form-action 'self'", `form-action 'self' ${target}`);
}

/** The consent page's policy `csp` with its additions: the redirect URI, and the logo's https origin. */
function consentCsp(csp: string, redirectUri: string | undefined, logoUri: string | undefined): string {
  const logo = cspSourceOf(logoUri, ['https:']);
  const leading = cspLeadingTo(csp, redirectUri);
  return logo === null ? leading : allowingImagesFrom(leading, logo);
}

function queryLocale(url: string | undefined): Locale | undefined {
  const asked = new URL(url ?? '/', 'http://host.invalid').searchParams.get('lang') ?? undefined;
  return isLocale(asked) ? asked : undefined;
}

/** The sign-out question, with how it names the account that signed in to the app (when this browser shows it). */
interface LogoutView extends Omit<LogoutQuestion, 'accountId'> {
  readonly accountName: string | undefined;
}

export interface OidcPageRenderer {
  /** The sign-out question (docs/protocol.md §8 "Logout"). */
  logout(request: IncomingMessage, form: string, view: LogoutView): string;
  /** The consent page and its policy. */
  consent(request: IncomingMessage, view: ConsentView): { readonly html: string; readonly csp: string; readonly locale: Locale };
  /**
   * The verification page past its network's budget of codes, or while the
   * budget's count cannot be read (`retryAfterSeconds` undefined: the limit
   * store is away), docs/protocol.md §8 "Devices".
   */
  deviceLimited(request: IncomingMessage, retryAfterSeconds: number | undefined): string;
  /** The pages the provider library draws. */
  readonly library: OidcPages;
}

/** What the code entry says after each problem. */
const DEVICE_PROBLEMS: Readonly<Record<DeviceCodeProblem, PageMessageKey>> = {
  wrong: 'oidc.device_wrong',
  expired: 'oidc.device_expired',
  used: 'oidc.device_used',
  denied: 'oidc.device_denied',
  failed: 'oidc.device_failed',
};

/** The scopes as the consent page lists them, each once, in the order asked. */
function scopeItems(locale: Locale, scopes: readonly string[]): string {
  return [...new Set(scopes)]
    .filter((scope) => Object.hasOwn(SCOPE_MESSAGES, scope))
    .map((scope) => `<li>${formatHtml(locale, SCOPE_MESSAGES[scope] as PageMessageKey)}</li>`)
    .join('');
}

export function oidcPageRenderer(brandOf: Brand, loaded: PageFiles = loadPageFiles()): OidcPageRenderer {
  const { templates, csp } = localizedPages(loaded, brandOf);
  const brand = brandOf.name ?? 'oc-host';
  const localeOf = (request: IncomingMessage): Locale => queryLocale(request.url) ?? requestLocale(request);

  function notice(request: IncomingMessage, heading: string, text: string, body = ''): string {
    const locale = localeOf(request);
    return templates[locale].notice
      .replace('<!--notice-heading-->', () => heading)
      .replace('<!--notice-text-->', () => text)
      .replace('<!--notice-body-->', () => body);
  }

  function logout(request: IncomingMessage, form: string, question: LogoutView): string {
    const locale = localeOf(request);
    const app = question.clientName ?? formatHtml(locale, 'oidc.an_app');
    // The library's form is hidden markup with its own anti-forgery value; these buttons submit it.
    // Without `logout`, the library ends the app's part of its session only (which needs the app named);
    // `logout=host` ends all of it, and the host session of that account in this browser too (src/features/oidc/provider.ts).
    const appOnly = question.hasClient ? '' : ' name="logout" value="yes"';
    const buttons =
      `${form}<div class="actions">` +
      `<button type="submit" form="op.logoutForm"${appOnly} autofocus>${formatHtml(locale, 'oidc.logout_app_only', { app })}</button>` +
      `<button type="submit" form="op.logoutForm" name="logout" value="host" class="secondary">${formatHtml(locale, 'oidc.logout_host', { brand })}</button></div>`;
    const account =
      question.accountName === undefined
        ? ''
        : ` ${formatHtml(locale, 'oidc.logout_account', { app, account: question.accountName }, BOLD)}`;
    return notice(
      request,
      formatHtml(locale, 'oidc.logout_heading', { app }),
      `${formatHtml(locale, 'oidc.logout_text', { app, brand })}${account}`,
      buttons,
    );
  }

  const library: OidcPages = {
    // The library's pages are all the notice page: its policy.
    csp: csp.notice,
    cspLeadingTo: (redirectUri) => cspLeadingTo(csp.notice, redirectUri),
    error(request, error) {
      const locale = localeOf(request);
      const expired = error.code === 'invalid_request' && /interaction|session/i.test(error.description);
      return notice(
        request,
        formatHtml(locale, 'oidc.error_heading'),
        expired ? formatHtml(locale, 'oidc.expired_text') : formatHtml(locale, 'oidc.error_text', { code: error.code }),
      );
    },
    logout: async (request, form, question) => logout(request, form, { ...question, accountName: undefined }),
    loggedOut(request, clientName) {
      const locale = localeOf(request);
      const app = clientName ?? formatHtml(locale, 'oidc.an_app');
      return notice(request, formatHtml(locale, 'oidc.logged_out_heading'), formatHtml(locale, 'oidc.logged_out_text', { app }));
    },
    deviceEntry(request, entry) {
      const locale = localeOf(request);
      const problem =
        entry.problem === undefined ? '' : `<p class="notice error" role="alert">${formatHtml(locale, DEVICE_PROBLEMS[entry.problem])}</p>`;
      // A code that was wrong is shown again to be corrected; after any other problem the field starts empty.
      const value = entry.problem === 'wrong' && entry.code !== undefined ? ` value="${escapeHtml(entry.code)}"` : '';
      const invalid = entry.problem === 'wrong' ? ' aria-invalid="true"' : '';
      const form =
        `${problem}<form method="post" action="${escapeHtml(entry.action)}" id="device-form">` +
        `<input type="hidden" name="xsrf" value="${escapeHtml(entry.xsrf)}">` +
        `<label for="user-code">${formatHtml(locale, 'oidc.device_code_label')}</label>` +
        `<input id="user-code" name="user_code" class="code-input device-code" type="text"${value}${invalid} required maxlength="32" ` +
        'autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" autofocus aria-describedby="user-code-hint">' +
        `<p class="hint" id="user-code-hint">${formatHtml(locale, 'oidc.device_code_hint')}</p>` +
        `<div class="actions"><button type="submit">${formatHtml(locale, 'oidc.device_continue')}</button></div></form>`;
      return notice(request, formatHtml(locale, 'oidc.device_heading'), formatHtml(locale, 'oidc.device_entry_text', { brand }), form);
    },
    deviceQuestion(request, question) {
      return deviceQuestion(request, question);
    },
    deviceDone(request, clientName) {
      const locale = localeOf(request);
      const app = clientName ?? formatHtml(locale, 'oidc.an_app');
      return notice(request, formatHtml(locale, 'oidc.device_done_heading'), formatHtml(locale, 'oidc.device_done_text', { app }));
    },
  };

  /** "Is this your device?": the app, the device, the code to compare and what the app gets, then Continue or Deny. */
  function deviceQuestion(request: IncomingMessage, question: DeviceQuestion): { html: string; csp: string } {
    const locale = localeOf(request);
    const app = question.clientName;
    const unknown = formatHtml(locale, 'oidc.device_unknown');
    const logo = cspSourceOf(question.logoUri, ['https:']) === null ? undefined : question.logoUri;
    const row = (label: PageMessageKey, value: string) => `<dt>${formatHtml(locale, label)}</dt><dd>${value}</dd>`;
    const domain = question.domain === undefined ? '' : ` <span class="hint">${escapeHtml(question.domain)}</span>`;
    const device = question.device.device === null ? unknown : escapeHtml(localDeviceLabel(question.device.device, locale));
    const scopes = scopeItems(locale, question.scopes);
    const body =
      (logo === undefined ? '' : `<img class="app-logo-small" src="${escapeHtml(logo)}" alt="" width="40" height="40">`) +
      '<dl class="device-facts">' +
      row('oidc.device_app', `<strong>${escapeHtml(app)}</strong>${domain}`) +
      row('oidc.device_device', device) +
      row('oidc.device_network', question.device.network === null ? unknown : escapeHtml(question.device.network)) +
      row('oidc.device_code', `<code class="device-code">${escapeHtml(question.userCode)}</code>`) +
      '</dl>' +
      `<p class="hint">${formatHtml(locale, 'oidc.device_compare')}</p>` +
      (scopes === ''
        ? ''
        : `<h2 class="consent-intro">${formatHtml(locale, 'oidc.device_intro', { app })}</h2><ul class="scope-list">${scopes}</ul>`) +
      `<p class="notice">${formatHtml(locale, 'oidc.device_warning')}</p>` +
      `<form method="post" action="${escapeHtml(question.action)}" id="device-form">` +
      `<input type="hidden" name="xsrf" value="${escapeHtml(question.xsrf)}">` +
      `<input type="hidden" name="user_code" value="${escapeHtml(question.userCode)}">` +
      '<div class="actions">' +
      `<button type="submit" name="confirm" value="yes" autofocus>${formatHtml(locale, 'oidc.device_confirm')}</button>` +
      `<button type="submit" name="abort" value="yes" class="secondary">${formatHtml(locale, 'oidc.device_deny')}</button>` +
      '</div></form>';
    const html = notice(
      request,
      formatHtml(locale, 'oidc.device_question_heading'),
      formatHtml(locale, 'oidc.device_question_text', { app, brand }, BOLD),
      body,
    );
    return { html, csp: logo === undefined ? csp.notice : allowingImagesFrom(csp.notice, cspSourceOf(logo, ['https:']) as string) };
  }

  return {
    library,
    logout,
    deviceLimited(request, retryAfterSeconds) {
      const locale = localeOf(request);
      const back = `<p><a class="link" href="${OIDC_DEVICE_PATH}">${formatHtml(locale, 'oidc.device_try_again')}</a></p>`;
      if (retryAfterSeconds === undefined) {
        return notice(
          request,
          formatHtml(locale, 'oidc.device_unavailable_heading'),
          formatHtml(locale, 'oidc.device_unavailable_text'),
          back,
        );
      }
      const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
      return notice(
        request,
        formatHtml(locale, 'oidc.device_limited_heading'),
        formatHtml(locale, 'oidc.device_limited_text', { minutes }),
        back,
      );
    },
    consent(request, view) {
      const locale = localeOf(request);
      const app = view.clientName;
      const scopes = [scopeItems(locale, view.scopes)]
        .concat(
          (view.apis ?? []).map(
            (api) => `<li>${formatHtml(locale, 'consent.scope_api', { api: api.name, scopes: api.scopes.join(', ') }, BOLD)}</li>`,
          ),
        )
        .join('');
      const back = `/oidc/interaction/${encodeURIComponent(view.uid)}`;
      const host = view.redirectUri === undefined ? undefined : (originOf(view.redirectUri) ?? view.redirectUri);
      const html = renderTemplate(
        templates[locale].consent
          .replace('<!--consent-heading-->', () => formatHtml(locale, 'consent.heading', { app, brand }, BOLD))
          .replace('<!--consent-account-->', () => formatHtml(locale, 'consent.account', { account: view.accountName }, BOLD))
          .replace('<!--consent-intro-->', () => formatHtml(locale, 'consent.intro', { app }))
          .replace('<!--consent-scopes-->', () => scopes)
          .replace('<!--consent-return-->', () =>
            host === undefined ? formatHtml(locale, 'consent.return_device') : formatHtml(locale, 'consent.return', { host }, BOLD),
          ),
        {
          logo_uri: view.logoUri ?? '',
          confirm_action: `${back}/confirm`,
          abort_action: `${back}/abort`,
          switch_href: `/signin?add=1&return_to=${encodeURIComponent(back)}`,
        },
      );
      return { html, csp: consentCsp(csp.consent, view.redirectUri, view.logoUri), locale };
    },
  };
}
