/**
 * What a session row remembers of the browser that signed in (docs/protocol.md
 * §3 "Devices"): a coarse device label from the User-Agent, and a coarse
 * network, never the full address: IPv4 to its /24, IPv6 to its /48. Enough
 * for a person to tell "my phone at home" from "a stranger's laptop", not
 * enough to locate anyone.
 */
import { isIPv4, isIPv6 } from 'node:net';
import Bowser from 'bowser';
import { translator, type Locale } from '../../platform/i18n/index.js';

/** A User-Agent longer than this is not parsed (a browser's is a few hundred characters). */
const MAX_USER_AGENT_LENGTH = 1024;

export interface ClientFacts {
  /** "Chrome 156 on Linux", "Safari 18 on iOS (mobile)", or null when nothing could be read. */
  readonly device: string | null;
  /** "203.0.113.0/24", "2001:db8:1::/48", or null. */
  readonly network: string | null;
  /** The request's language (src/platform/i18n), for what is mailed about this sign-in; not stored. */
  readonly locale?: Locale | undefined;
}

/** One line a person recognises; only names and a major version, at most 64 characters. */
export function deviceLabel(userAgent: string | undefined): string | null {
  if (userAgent === undefined || userAgent.trim() === '' || userAgent.length > MAX_USER_AGENT_LENGTH) return null;
  let parsed: Bowser.Parser.ParsedResult;
  try {
    parsed = Bowser.parse(userAgent);
  } catch {
    return null;
  }
  const clean = (text: string | undefined): string =>
    (text ?? '')
      .replace(/[^\p{L}\p{N} ._-]/gu, '')
      .trim()
      .slice(0, 24);
  const browser = clean(parsed.browser.name);
  const major = clean(parsed.browser.version?.split('.')[0]);
  const os = clean(parsed.os.name);
  const type = parsed.platform.type === 'mobile' || parsed.platform.type === 'tablet' ? parsed.platform.type : null;
  if (browser === '' && os === '') return null;
  const name = browser === '' ? 'A browser' : major === '' ? browser : `${browser} ${major}`;
  return `${name}${os === '' ? '' : ` on ${os}`}${type === null ? '' : ` (${type})`}`;
}

/**
 * A label {@link deviceLabel} made, in `locale`'s words ("Chrome 156 unter
 * Linux (Smartphone)"): the label is stored and answered as made, in English
 * (docs/protocol.md §3 "Devices"); pages and mails say it in their language.
 * A label of another shape is shown as it is.
 */
export function localDeviceLabel(label: string, locale: Locale): string {
  const parts = /^(.+?)(?: on (.+?))?(?: \((mobile|tablet)\))?$/.exec(label);
  if (parts === null) return label;
  const t = translator(locale);
  const browser = parts[1] === 'A browser' ? t('device.some_browser') : (parts[1] as string);
  const device = parts[2] === undefined ? browser : t('device.on', { browser, os: parts[2] });
  const type = parts[3];
  return type === 'mobile' ? t('device.mobile', { device }) : type === 'tablet' ? t('device.tablet', { device }) : device;
}

/** The /24 of an IPv4 address or the /48 of an IPv6 one (IPv4-mapped IPv6 counts as IPv4). */
export function coarseNetwork(address: string | undefined): string | null {
  if (address === undefined) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const v4 = mapped ? mapped[1]! : address;
  if (isIPv4(v4)) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (!isIPv6(address)) return null;
  const groups = expandIPv6(address);
  if (groups === null) return null;
  const prefix = groups.slice(0, 3).map((group) => group.replace(/^0+(?=.)/, ''));
  // Trailing zero groups of the prefix fold into the "::".
  while (prefix.length > 0 && prefix[prefix.length - 1] === '0') prefix.pop();
  return `${prefix.join(':')}::/48`;
}

/** The eight 16-bit groups of an IPv6 address as hex, or null for one with an embedded IPv4 tail. */
function expandIPv6(address: string): string[] | null {
  const bare = address.split('%')[0]!.toLowerCase();
  if (bare.includes('.')) return null;
  const [head, tail] = bare.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  return [...left, ...Array.from({ length: tail === undefined ? 0 : missing }, () => '0'), ...right];
}

export function clientFacts(userAgent: string | undefined, address: string | undefined): ClientFacts {
  return { device: deviceLabel(userAgent), network: coarseNetwork(address) };
}
