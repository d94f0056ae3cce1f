/**
 * The operator's brand in the e-mails (README "Your brand"): the name the
 * mails use for the service (BRAND_NAME, else the host of PUBLIC_URL, as
 * before any brand was set) and a support line when BRAND_SUPPORT_URL is set,
 * in the mail's language (src/i18n).
 */
import type { Brand } from '../config.js';
import { translator, type Locale } from '../i18n/index.js';
import { escapeHtml } from './html.js';

export interface MailBrand {
  /** How the mails name the service. */
  readonly name: string;
  readonly supportUrl: string | undefined;
}

export function mailBrandOf(brand: Brand | undefined, publicUrl: string): MailBrand {
  return { name: brand?.name ?? new URL(publicUrl).host, supportUrl: brand?.supportUrl };
}

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
  const html = [
    '<!doctype html>',
    `<html lang="${locale}"><body style="font-family: sans-serif; line-height: 1.5">`,
    ...body.html,
    supportHtml(brand, locale),
    `<p style="color: #666">${escapeHtml(publicUrl)}</p>`,
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
