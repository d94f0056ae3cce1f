/**
 * ICU MessageFormat as far as the page catalogs (src/platform/i18n/pages/) use it:
 * `{name}`, `{n, plural, one {…} other {…}}` with `#` and `=N`, and
 * `{kind, select, a {…} other {…}}`, with ICU's apostrophe quoting. It
 * formats every catalog message exactly as intl-messageformat does with
 * `ignoreTag` (test/message-format.test.ts checks each message in the four
 * languages against it), at a twentieth of its size: the pages load it
 * instead of the library (docs/performance.md "Page weight"). The server
 * keeps the library (src/platform/i18n/index.ts). A message using anything else
 * (a number or date style, `offset:`, `selectordinal`) is refused with an
 * error naming it, so a new kind of message fails its test instead of
 * formatting differently.
 */

/**
 * A parsed message: text, a value (`arg`), the number of a plural (`#`), or
 * a plural or select with its options.
 *
 * @typedef {string | {arg: string} | {pound: true} | {arg: string, plural: boolean, options: Record<string, Part[]>}} Part
 */

/**
 * @param {string} source
 * @returns {Part[]}
 */
export function parseMessage(source) {
  let at = 0;
  const fail = (/** @type {string} */ why) => new Error(`message-format: ${why} at ${at} in ${JSON.stringify(source)}`);
  const skipSpace = () => {
    while (at < source.length && /\s/.test(source.charAt(at))) at += 1;
  };
  const word = () => {
    const match = /^[^\s,{}#]+/.exec(source.slice(at));
    if (match === null) throw fail('a name expected');
    at += match[0].length;
    return match[0];
  };
  /** The parts up to the end, or up to the `}` closing an option. @param {boolean} inPlural @param {boolean} nested @returns {Part[]} */
  const parts = (inPlural, nested) => {
    /** @type {Part[]} */
    const out = [];
    let text = '';
    const flush = () => {
      if (text !== '') out.push(text);
      text = '';
    };
    while (at < source.length) {
      const char = source.charAt(at);
      if (char === "'") {
        const next = source.charAt(at + 1);
        if (next === "'") {
          text += "'";
          at += 2;
        } else if ('{}<>'.includes(next) || (inPlural && next === '#')) {
          // Quoted text up to the next lone apostrophe; a doubled one inside stands for itself.
          at += 1;
          while (at < source.length) {
            if (source.charAt(at) === "'") {
              if (source.charAt(at + 1) !== "'") {
                at += 1;
                break;
              }
              at += 1;
            }
            text += source.charAt(at);
            at += 1;
          }
        } else {
          text += char;
          at += 1;
        }
      } else if (char === '{') {
        flush();
        out.push(argument());
      } else if (char === '}') {
        if (!nested) throw fail('an unmatched }');
        break;
      } else if (char === '#' && inPlural) {
        flush();
        out.push({ pound: true });
        at += 1;
      } else {
        text += char;
        at += 1;
      }
    }
    flush();
    return out;
  };
  /** `{name}`, `{name, plural, …}` or `{name, select, …}`, at its `{`. @returns {Part} */
  const argument = () => {
    at += 1;
    skipSpace();
    const arg = word();
    skipSpace();
    if (source.charAt(at) === '}') {
      at += 1;
      return { arg };
    }
    if (source.charAt(at) !== ',') throw fail('a , or } expected');
    at += 1;
    skipSpace();
    const kind = word();
    if (kind !== 'plural' && kind !== 'select') throw fail(`{${arg}, ${kind}} is not supported`);
    skipSpace();
    if (source.charAt(at) !== ',') throw fail('options expected');
    at += 1;
    /** @type {Record<string, Part[]>} */
    const options = {};
    for (;;) {
      skipSpace();
      if (source.charAt(at) === '}') break;
      const key = word();
      if (key.startsWith('offset:')) throw fail('offset: is not supported');
      skipSpace();
      if (source.charAt(at) !== '{') throw fail('an option { expected');
      at += 1;
      options[key] = parts(kind === 'plural', true);
      if (source.charAt(at) !== '}') throw fail('an option } expected');
      at += 1;
    }
    at += 1;
    if (!Object.hasOwn(options, 'other')) throw fail(`{${arg}} has no other option`);
    return { arg, plural: kind === 'plural', options };
  };
  const parsed = parts(false, false);
  if (at < source.length) throw fail('an unmatched }');
  return parsed;
}

/**
 * @template {object} T
 * @typedef {string | number | T} Value
 */

/**
 * A parsed message with `values`: a string, or, when a value is not text
 * (a node), the parts in order with neighbouring text joined.
 *
 * @template {object} T
 * @param {Part[]} message
 * @param {string} locale
 * @param {Readonly<Record<string, Value<T>>>} [values]
 * @returns {string | Array<string | T>}
 */
export function formatMessage(message, locale, values = {}) {
  /** @type {Array<string | T>} */
  const out = [];
  const push = (/** @type {string | T} */ part) => {
    const last = out.length - 1;
    if (typeof part === 'string' && typeof out[last] === 'string') out[last] += part;
    else out.push(part);
  };
  /** @param {string} name */
  const valueNamed = (name) => {
    if (!Object.hasOwn(values, name)) throw new Error(`message-format: no value for {${name}}`);
    return /** @type {Value<T>} */ (values[name]);
  };
  /** @param {Part[]} parts @param {number | undefined} count */
  const walk = (parts, count) => {
    for (const part of parts) {
      if (typeof part === 'string') push(part);
      else if ('pound' in part) push(numberFormat(locale).format(/** @type {number} */ (count)));
      else if (!('options' in part)) {
        const value = valueNamed(part.arg);
        push(typeof value === 'string' || typeof value === 'number' ? String(value) : value);
      } else {
        const value = valueNamed(part.arg);
        const { options } = part;
        if (part.plural) {
          const amount = Number(value);
          const exact = `=${amount}`;
          const key = Object.hasOwn(options, exact) ? exact : pluralRules(locale).select(amount);
          walk(options[Object.hasOwn(options, key) ? key : 'other'] ?? [], amount);
        } else {
          const key = String(value);
          walk(options[Object.hasOwn(options, key) ? key : 'other'] ?? [], count);
        }
      }
    }
  };
  walk(message, undefined);
  if (out.every((part) => typeof part === 'string')) return out.join('');
  return out;
}

/** @type {Map<string, Intl.PluralRules>} */
const pluralCache = new Map();
/** @type {Map<string, Intl.NumberFormat>} */
const numberCache = new Map();

/** @param {string} locale */
function pluralRules(locale) {
  const rules = pluralCache.get(locale) ?? new Intl.PluralRules(locale);
  pluralCache.set(locale, rules);
  return rules;
}

/** @param {string} locale */
function numberFormat(locale) {
  const format = numberCache.get(locale) ?? new Intl.NumberFormat(locale);
  numberCache.set(locale, format);
  return format;
}
