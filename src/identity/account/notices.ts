/**
 * The new sign-in notice (docs/protocol.md §6 "New sign-in notice"): when an
 * account is signed in from a device and network it has not signed in from
 * before, its verified e-mail addresses get a short mail saying so, with a
 * link to the account page to sign every other browser out.
 *
 * - "Before" is the account's recorded `signin` events (the activity log, so
 *   within `ACTIVITY_RETENTION_DAYS`): the same device label and network as
 *   one of the last {@link HISTORY_EVENTS} events means a known place.
 * - An account created in the last {@link NEW_ACCOUNT_MS} gets no notice: its
 *   first sign-in is the person creating it.
 * - At most {@link MAX_RECIPIENTS} addresses, the oldest linked first. The
 *   mail goes out after the response (never delaying the sign-in), and a
 *   failure is reported to `onError` by its code only: an SMTP reply can
 *   name the recipient.
 */
import type { Mailer } from '../../platform/mail/index.js';
import { escapeHtml, frameMail, mailBrandOf, type MailBrand } from '../../platform/mail/index.js';
import type { Brand } from '../../platform/config.js';
import { formatUtc, translator, type Locale } from '../../platform/i18n/index.js';
import { localDeviceLabel, type SigningMethod } from '../session/index.js';
import type { ActivityStore, AccountStore } from '../../platform/storage/index.js';

const HISTORY_EVENTS = 200;
const NEW_ACCOUNT_MS = 60_000;
const MAX_RECIPIENTS = 3;

export interface SignInFacts {
  readonly method: SigningMethod;
  readonly device: string | null;
  readonly network: string | null;
  /** The language of the sign-in's request: the notice's language. Not part of what makes a place known. */
  readonly locale?: Locale | undefined;
}

export interface SignInNoticeDeps {
  readonly store: Pick<AccountStore, 'findAccount' | 'listIdentities'> & Pick<ActivityStore, 'listActivity'>;
  readonly mailer: Mailer;
  readonly publicUrl: string;
  /** The operator's brand (BRAND_NAME, BRAND_SUPPORT_URL). */
  readonly brand?: Brand | undefined;
  readonly now: () => Date;
  readonly onError: (error: unknown) => void;
}

/** What a notice will say, decided before the sign-in is recorded. */
export interface PendingNotice {
  readonly accountId: string;
  readonly facts: SignInFacts;
  readonly at: Date;
}

function methodName(method: SigningMethod, t: ReturnType<typeof translator>): string {
  if (method === 'bip322') return t('notice.method_bip322');
  if (method === 'email_otp') return t('notice.method_email_otp');
  if (method === 'passkey') return t('notice.method_passkey');
  return t('notice.method_provider', { provider: method.slice('oauth:'.length) });
}

export function composeSignInNotice(
  facts: SignInFacts,
  at: Date,
  publicUrl: string,
  brand: MailBrand = mailBrandOf(undefined, publicUrl),
): { subject: string; text: string; html: string } {
  const locale = facts.locale ?? 'en';
  const t = translator(locale);
  const name = brand.name;
  const accountUrl = new URL('/account', publicUrl).toString();
  const rows: Array<[string, string]> = [
    [t('notice.device'), facts.device === null ? t('notice.unknown_device') : localDeviceLabel(facts.device, locale)],
    [t('notice.network'), facts.network ?? t('notice.unknown')],
    [t('notice.time'), formatUtc(at, locale)],
    [t('notice.method'), methodName(facts.method, t)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const { text, html } = frameMail(brand, locale, publicUrl, {
    text: [
      t('notice.intro', { name }),
      '',
      ...rows.map(([label, value]) => `    ${`${label}:`.padEnd(width)} ${value}`),
      '',
      t('notice.fine'),
      '',
      t('notice.not_you'),
      '',
      `    ${accountUrl}`,
      '',
    ],
    html: [
      `<p>${escapeHtml(t('notice.intro', { name }))}</p>`,
      '<table style="border-collapse: collapse">',
      ...rows.map(
        ([label, value]) =>
          `<tr><th style="text-align: left; padding-right: 1em">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
      ),
      '</table>',
      `<p>${escapeHtml(t('notice.fine'))}</p>`,
      `<p>${escapeHtml(t('notice.not_you'))} <a href="${escapeHtml(accountUrl)}">${escapeHtml(t('notice.account_page'))}</a></p>`,
    ],
  });
  return { subject: t('notice.subject', { name }), text, html };
}

export class SignInNotices {
  readonly #deps: SignInNoticeDeps;
  /** Notices being mailed after their responses: {@link settle} waits for them. */
  readonly #pending = new Set<Promise<unknown>>();

  constructor(deps: SignInNoticeDeps) {
    new URL(deps.publicUrl);
    this.#deps = deps;
  }

  /**
   * Decides, before this sign-in's own event is recorded, whether it comes
   * from a new place. Null when no notice is due; never throws (a failure to
   * read is reported and sends nothing).
   */
  async assess(accountId: string, facts: SignInFacts): Promise<PendingNotice | null> {
    try {
      const at = this.#deps.now();
      const account = await this.#deps.store.findAccount(accountId);
      if (account === null || account.created_at > at.getTime() - NEW_ACCOUNT_MS) return null;
      const history = await this.#deps.store.listActivity(accountId, { limit: HISTORY_EVENTS });
      const known = history.some(
        (event) =>
          event.kind === 'signin' && (event.detail.device ?? null) === facts.device && (event.detail.network ?? null) === facts.network,
      );
      return known ? null : { accountId, facts, at };
    } catch (error) {
      this.#deps.onError(error);
      return null;
    }
  }

  /** Mails the notice in the background, after the response; {@link settle} waits for every one under way. */
  dispatch(notice: PendingNotice): void {
    const sending = this.send(notice).finally(() => this.#pending.delete(sending));
    this.#pending.add(sending);
  }

  /** Resolves once every dispatched notice is sent or has failed (at shutdown). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }

  /** Mails the notice to the account's verified addresses; resolves when done, never throws. */
  async send(notice: PendingNotice): Promise<number> {
    try {
      const identities = await this.#deps.store.listIdentities(notice.accountId);
      const recipients = identities.filter((identity) => identity.kind === 'email').slice(0, MAX_RECIPIENTS);
      const mail = composeSignInNotice(notice.facts, notice.at, this.#deps.publicUrl, mailBrandOf(this.#deps.brand, this.#deps.publicUrl));
      let sent = 0;
      for (const identity of recipients) {
        try {
          await this.#deps.mailer.send({ to: identity.value, ...mail });
          sent += 1;
        } catch (error) {
          this.#deps.onError(error);
        }
      }
      return sent;
    } catch (error) {
      this.#deps.onError(error);
      return 0;
    }
  }
}
