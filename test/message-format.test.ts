/**
 * The pages' message formatter (src/pages/message-format.js) against
 * intl-messageformat, which it replaces in the browser: every message of
 * the four page catalogs, with every option of its selects and plurals
 * taken in turn, formats to the same text (and the same parts when a value
 * is a node, as tNodes passes them).
 */
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { LOCALES, PAGE_CATALOGS } from '../src/platform/i18n/index.js';
// Every feature's page words, joined to the shared ones (src/page-words.ts).
import '../src/page-words.js';

type Sample = Record<string, string | number | object>;

// A page script (plain JavaScript, checked by tsconfig.pages.json): loaded by a path the service's tsconfig does not follow.
const { formatMessage, parseMessage } = (await import('../src/pages/message-format.js' as string)) as {
  parseMessage(source: string): unknown;
  formatMessage(message: unknown, locale: string, values?: Sample): string | Array<string | object>;
};

/** The values a message takes (intl-messageformat's AST: 1 argument, 5 select, 6 plural) and the choices worth trying for each. */
function choicesOf(message: string, locale: string): Map<string, Array<string | number | object>> {
  const choices = new Map<string, Array<string | number | object>>();
  const add = (name: string, values: Array<string | number | object>) => choices.set(name, [...(choices.get(name) ?? []), ...values]);
  const walk = (elements: any[]): void => {
    for (const element of elements) {
      if (element.type === 1) add(element.value, ['Ada', { node: element.value }]);
      if (element.type === 5) add(element.value, [...Object.keys(element.options), 'unlisted']);
      if (element.type === 6) add(element.value, [0, 1, 2, 3, 5, 11, 21, 1000, 1234567, 1.5]);
      if (element.type === 5 || element.type === 6) for (const option of Object.values(element.options) as any[]) walk(option.value);
    }
  };
  walk(new IntlMessageFormat(message, locale, undefined, { ignoreTag: true }).getAst() as any[]);
  return choices;
}

/** A sample with each value's first choice, then one sample per other choice of one value. */
function samplesOf(choices: Map<string, Array<string | number | object>>): Sample[] {
  const base: Sample = Object.fromEntries([...choices].map(([name, values]) => [name, values[0]!]));
  const samples = [base];
  for (const [name, values] of choices) for (const value of values.slice(1)) samples.push({ ...base, [name]: value });
  return samples;
}

describe('the pages’ message formatter', () => {
  it.each(LOCALES)('formats every %s page message as intl-messageformat does', (locale) => {
    let checked = 0;
    for (const [key, message] of Object.entries(PAGE_CATALOGS[locale])) {
      const reference = new IntlMessageFormat(message, locale, undefined, { ignoreTag: true });
      const parsed = parseMessage(message);
      for (const sample of samplesOf(choicesOf(message, locale))) {
        const expected = reference.format(sample);
        expect(formatMessage(parsed, locale, sample), `${locale} ${key} ${JSON.stringify(sample)}`).toEqual(expected);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(Object.keys(PAGE_CATALOGS.en).length);
  });

  it('keeps ICU quoting and refuses what it does not implement', () => {
    expect(formatMessage(parseMessage("It''s '{literal}' {n, plural, one {# '#' item} other {# items}}"), 'en', { n: 1 })).toBe(
      "It's {literal} 1 # item",
    );
    expect(() => parseMessage('{n, number}')).toThrow(/not supported/);
    expect(() => parseMessage('{n, plural, offset:1 other {#}}')).toThrow(/not supported/);
    expect(() => parseMessage('{n, selectordinal, other {#}}')).toThrow(/not supported/);
    expect(() => formatMessage(parseMessage('{name}'), 'en', {})).toThrow(/no value/);
  });
});
