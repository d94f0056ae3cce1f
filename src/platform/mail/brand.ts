/**
 * The operator's brand in the e-mails (docs/pages.md "Your brand"): the name the
 * mails use for the service (BRAND_NAME, else the host of PUBLIC_URL, as
 * before any brand was set), a support line when BRAND_SUPPORT_URL is set,
 * in the mail's language (src/platform/i18n), and the HTML part in the brand's
 * colours (BRAND_ACCENT, else the pages' own accent) beside the text part.
 */
import { fillAccent } from '../colour.js';
import type { Brand } from '../config.js';
import { translator, type Locale } from '../i18n/index.js';
import { escapeHtml } from './html.js';

export interface MailBrand {
  /** How the mails name the service. */
  readonly name: string;
  readonly supportUrl: string | undefined;
  /** The HTML part's header: a fill and the text on it, at least 4.5:1 apart. */
  readonly fill: string;
  readonly onFill: string;
}

/** The pages' own accent (src/pages/app.css), for mails without BRAND_ACCENT. */
const DEFAULT_ACCENT = '#a94300';

export function mailBrandOf(brand: Brand | undefined, publicUrl: string): MailBrand {
  const { fill, text } = fillAccent(brand?.accent ?? DEFAULT_ACCENT);
  return { name: brand?.name ?? new URL(publicUrl).host, supportUrl: brand?.supportUrl, fill, onFill: text };
}

/** The HTML part's neutral colours, those of the pages' light theme. */
const PAGE = '#f6f5f2';
const CARD = '#ffffff';
const INK = '#1c1b19';
const MUTED = '#5f5b55';
const RULE = '#e4e1da';

/**
 * The frame every mail of the service shares around its own lines: the
 * support line when one is set and the service's address at the foot, in a
 * text part and an HTML part (whose body lines the caller escaped).
 */
export function frameMail(
  brand: MailBrand,
  locale: Locale,
  publicUrl: string,
  body: { readonly text: readonly string[]; readonly html: readonly string[] },
): { text: string; html: string } {
  const text = [...body.text, ...supportTextLines(brand, locale), `-- ${publicUrl}`, ''].join('\n');
  // Mail clients drop stylesheets: inline styles on a table layout, one column at most 560 px wide.
  const html = [
    '<!doctype html>',
    `<html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>`,
    `<body style="margin: 0; padding: 0; background: ${PAGE}; color: ${INK}; font-family: -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif; line-height: 1.5">`,
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background: ${PAGE}"><tr><td align="center" style="padding: 24px 12px">`,
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width: 560px; background: ${CARD}; border: 1px solid ${RULE}; border-radius: 8px">`,
    `<tr><td style="background: ${brand.fill}; color: ${brand.onFill}; padding: 14px 24px; font-size: 18px; font-weight: 700; border-radius: 8px 8px 0 0">${escapeHtml(brand.name)}</td></tr>`,
    '<tr><td style="padding: 8px 24px 16px">',
    ...body.html,
    supportHtml(brand, locale),
    '</td></tr>',
    `<tr><td style="padding: 12px 24px; border-top: 1px solid ${RULE}; color: ${MUTED}; font-size: 13px">${escapeHtml(publicUrl)}</td></tr>`,
    '</table>',
    '</td></tr></table>',
    '</body></html>',
    '',
  ].join('\n');
  return { text, html };
}

/** Lines for the text part: empty without a support link. */
function supportTextLines(brand: MailBrand, locale: Locale = 'en'): string[] {
  if (brand.supportUrl === undefined) return [];
  return [translator(locale)('mail.support', { name: brand.name, contact: brand.supportUrl.replace(/^mailto:/, '') }), ''];
}

/** A paragraph for the HTML part: empty without a support link. */
function supportHtml(brand: MailBrand, locale: Locale = 'en'): string {
  if (brand.supportUrl === undefined) return '';
  const label = translator(locale)('mail.support_link', { name: brand.name });
  return `<p><a href="${escapeHtml(brand.supportUrl)}">${escapeHtml(label)}</a></p>`;
}
