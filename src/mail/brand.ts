/**
 * The operator's brand in the e-mails (README "Your brand"): the name the
 * mails use for the service (BRAND_NAME, else the host of PUBLIC_URL, as
 * before any brand was set) and a support line when BRAND_SUPPORT_URL is set.
 */
import type { Brand } from '../config.js';
import { escapeHtml } from './html.js';

export interface MailBrand {
  /** How the mails name the service. */
  readonly name: string;
  readonly supportUrl: string | undefined;
}

export function mailBrandOf(brand: Brand | undefined, publicUrl: string): MailBrand {
  return { name: brand?.name ?? new URL(publicUrl).host, supportUrl: brand?.supportUrl };
}

/** Lines for the text part: empty without a support link. */
export function supportTextLines(brand: MailBrand): string[] {
  if (brand.supportUrl === undefined) return [];
  return [`Need help? Contact ${brand.name} support: ${brand.supportUrl.replace(/^mailto:/, '')}`, ''];
}

/** A paragraph for the HTML part: empty without a support link. */
export function supportHtml(brand: MailBrand): string {
  if (brand.supportUrl === undefined) return '';
  return `<p>Need help? <a href="${escapeHtml(brand.supportUrl)}">Contact ${escapeHtml(brand.name)} support</a>.</p>`;
}
