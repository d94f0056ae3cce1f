/**
 * The operator's brand in the pages (docs/pages.md "Your brand"): the name and logo
 * in the header and the titles, a support link in the footer, and the accent
 * colour as styles (inline in the pages that carry their styles, else
 * `/assets/brand.css`; src/web/pages.ts), adjusted per theme for contrast
 * (src/platform/colour.ts).
 */
import { fillAccent, themeAccent } from '../colour.js';
import type { Brand } from '../config.js';
import { escapeHtml, formatHtml, type Locale } from '../i18n/index.js';

const DEFAULT_BRAND_NAME = 'oc-host';

/** /assets/brand.css: empty (a comment) without an accent. */
export function brandCss(brand: Brand): string {
  if (brand.accent === undefined) return '/* no BRAND_ACCENT: the default colours of app.css apply */\n';
  const light = themeAccent(brand.accent, 'light');
  const dark = themeAccent(brand.accent, 'dark');
  // Filled buttons keep the colour as asked whenever their text reads on it at 4.5:1 (src/platform/colour.ts).
  const fill = fillAccent(brand.accent);
  const fills = `--accent-fill: ${fill.fill}; --accent-fill-hover: ${fill.hover}; --accent-fill-text: ${fill.text};`;
  return [
    `/* BRAND_ACCENT ${brand.accent}: links adjusted per theme for 4.5:1 contrast, fills kept where their text reads */`,
    `:root { --accent: ${light.accent}; --accent-hover: ${light.hover}; --accent-text: ${light.text}; ${fills} }`,
    '@media (prefers-color-scheme: dark) {',
    `  :root { --accent: ${dark.accent}; --accent-hover: ${dark.hover}; --accent-text: ${dark.text}; ${fills} }`,
    '}',
    '',
  ].join('\n');
}

/** The pages' icon: the brand's logo when one is set (a data: URL names its type), else the service's own. */
function faviconLink(logoUrl: string | undefined): string {
  if (logoUrl === undefined) return '<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">';
  const type = /^data:(image\/[a-z+]+)[;,]/.exec(logoUrl)?.[1];
  return `<link rel="icon" href="${escapeHtml(logoUrl)}"${type === undefined ? '' : ` type="${type}"`}>`;
}

/**
 * Fills the brand markers of a page template (done once per language, at
 * start): `<!--brand-->` (the header link), `<!--brand-name-->` (titles and
 * `data-brand`), `<!--support-line-->` (a sentence in the footer, in the
 * page's language) and `<!--favicon-->` (the icon: BRAND_LOGO_URL, else the
 * service's own).
 */
export function applyBrand(template: string, brand: Brand, locale: Locale = 'en'): string {
  const name = escapeHtml(brand.name ?? DEFAULT_BRAND_NAME);
  const logo =
    brand.logoUrl === undefined ? '' : `<img class="brand-logo" src="${escapeHtml(brand.logoUrl)}" alt="" width="28" height="28">`;
  const header = `<a class="brand${logo === '' ? '' : ' has-logo'}" href="/account">${logo}${name}</a>`;
  const support =
    brand.supportUrl === undefined
      ? ''
      : `<p class="support">${formatHtml(locale, 'page.support', { name: brand.name ?? DEFAULT_BRAND_NAME }, { link: `<a href="${escapeHtml(brand.supportUrl)}" rel="noopener">` })}</p>`;
  return template
    .replaceAll('<!--brand-->', header)
    .replaceAll('<!--brand-name-->', name)
    .replaceAll('<!--support-line-->', support)
    .replaceAll('<!--favicon-->', faviconLink(brand.logoUrl));
}
