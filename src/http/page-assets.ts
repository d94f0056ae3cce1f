/**
 * The page assets as the pages load them (docs/architecture.md "Page
 * assets"), made once at start from the plain files of `src/pages/`; no
 * build step, the files keep their names:
 *
 * - Every asset is served under its plain name (`/assets/app.css`, cached
 *   five minutes, so a page cached before a deploy still loads) and under a
 *   content-hashed name (`/assets/app.<hash>.css`, cached for a year,
 *   immutable), which is what the pages reference. A module's hash covers
 *   the hashed names of what it imports, so a change anywhere in its graph
 *   renames it.
 * - Each page script is joined with every module it imports into one module,
 *   `<script>-page.js` ({@link joinModules}): the account page's graph is
 *   eleven modules, and one request instead of a wave of them is what keeps
 *   a first visit within its request budget (docs/performance.md "Page weight").
 * - Each page script gets its own catalog per language,
 *   `messages-<script>-<lang>.js`, holding only the messages its graph
 *   names (a quoted key, the rule test/i18n.test.ts holds the scripts to);
 *   the language's whole catalog stays at `messages-<lang>.js`.
 * - Scripts, styles and SVG are compressed once, brotli and gzip at their
 *   best levels (src/http/compression.ts), and served from memory.
 */
import { createHash } from 'node:crypto';
import type { Locale } from '../i18n/index.js';
import { compressAsset, type Encoding, isCompressible } from './compression.js';

export interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
  /** The compressed forms that came out smaller, each with its own entity tag. */
  readonly encoded: Readonly<Partial<Record<Encoding, { readonly body: Buffer; readonly etag: string }>>>;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** A plain asset name: lowercase, one dot, a known extension. */
export const PLAIN_ASSET_NAME = /^([a-z0-9][a-z0-9-]*)(\.(?:css|js|svg|png|ico))$/;
/** A hashed asset name: the plain name with 16 hex digits of the content's SHA-256 before the extension. */
export const HASHED_ASSET_NAME = /^[a-z0-9][a-z0-9-]*\.[0-9a-f]{16}\.(?:css|js|svg|png|ico)$/;

function digest(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('base64url');
}

function etagOf(body: Buffer | string): string {
  return `"${digest(body).slice(0, 22)}"`;
}

/**
 * An asset of `name`'s type, with its compressed forms: made now for what the
 * pages load, on first use for what only an older page would (brotli at its
 * best quality costs about a second per megabyte, and the start should not
 * pay it for files hardly ever asked for).
 */
export function assetOf(name: string, body: Buffer, compress: 'now' | 'on first use' = 'now'): Asset {
  const contentType = CONTENT_TYPES[PLAIN_ASSET_NAME.exec(name)?.[2] ?? ''] ?? 'application/octet-stream';
  const etag = etagOf(body);
  let encoded: Asset['encoded'] | undefined;
  const encode = (): Asset['encoded'] => {
    encoded ??= Object.fromEntries(
      Object.entries(isCompressible(contentType) ? compressAsset(body) : {}).map(([encoding, encodedBody]) => [
        encoding,
        { body: encodedBody, etag: `${etag.slice(0, -1)}-${encoding}"` },
      ]),
    );
    return encoded;
  };
  if (compress === 'now') encode();
  return {
    body,
    contentType,
    etag,
    get encoded() {
      return encode();
    },
  };
}

/** `name.css` → `name.<hash>.css`. */
export function hashedName(name: string, body: Buffer | string): string {
  const [, stem, extension] = PLAIN_ASSET_NAME.exec(name) ?? [];
  if (stem === undefined) throw new Error(`pages: ${name} is no asset name`);
  return `${stem}.${createHash('sha256').update(body).digest('hex').slice(0, 16)}${extension}`;
}

/**
 * A static import or re-export of a sibling module: `import { a, b as c }
 * from './x.js';`, `import './x.js';` or `export { a } from './x.js';`, at
 * the start of a line. Other forms (a default or namespace import, an
 * import from elsewhere) are refused at start by {@link joinModules}.
 */
const STATIC_IMPORT = /^(import|export)\s*(?:\{([^}]*)\}\s*from\s*)?'\.\/([a-z0-9-]+\.js)';[ \t]*$/gm;
/** `export function f`, `export async function f`, `export const x`, `export class C`. */
const EXPORT_DECLARATION = /^export\s+((?:async\s+)?function\*?|const|class)\s+([A-Za-z_$][\w$]*)/gm;
/** `export { a, b as c };` */
const EXPORT_LIST = /^export\s*\{([^}]*)\};?[ \t]*$/gm;

/** The modules `source` imports, in the order it names them. */
function importsOf(source: string): string[] {
  return [...source.matchAll(STATIC_IMPORT)].map((match) => match[3] as string);
}

/** `a, b as c` → [{imported: 'a', local: 'a'}, {imported: 'b', local: 'c'}]. */
function bindingsOf(list: string): Array<{ imported: string; local: string }> {
  return list
    .split(',')
    .map((binding) => binding.trim())
    .filter(Boolean)
    .map((binding) => {
      const [imported = '', local = imported] = binding.split(/\s+as\s+/);
      return { imported, local };
    });
}

/** `name` and the modules it imports, each after what it imports (the order ES modules run in); a cycle is refused. */
export function moduleGraph(name: string, sources: ReadonlyMap<string, string>): string[] {
  const order: string[] = [];
  const visit = (current: string, path: readonly string[]): void => {
    if (order.includes(current)) return;
    if (path.includes(current)) throw new Error(`pages: an import cycle ${[...path, current].join(' → ')}`);
    const source = sources.get(current);
    if (source === undefined) throw new Error(`pages: ${path.at(-1) ?? 'a page'} imports ./${current}, which is not in src/pages`);
    for (const dependency of importsOf(source)) visit(dependency, [...path, current]);
    order.push(current);
  };
  visit(name, []);
  return order;
}

/**
 * The hashed name of every module, and its text with its imports renamed to
 * their hashed names: each module after its imports, so the hash covers them.
 */
export function hashModules(sources: ReadonlyMap<string, string>): Map<string, { readonly name: string; readonly text: string }> {
  const hashed = new Map<string, { name: string; text: string }>();
  for (const entry of sources.keys()) {
    for (const name of moduleGraph(entry, sources)) {
      if (hashed.has(name)) continue;
      const text = (sources.get(name) as string).replace(STATIC_IMPORT, (statement, _keyword, _list, specifier: string) =>
        statement.replace(`'./${specifier}'`, `'./${hashed.get(specifier)?.name}'`),
      );
      hashed.set(name, { name: hashedName(name, text), text });
    }
  }
  return hashed;
}

/**
 * `entry` and every module it imports joined into one module: each module's
 * body runs in its own async function, in the order the browser would run
 * them, its imports turned into constants read from the object its
 * dependency answered and its exports into that object. What the pages'
 * modules write (named imports and exports of functions, constants and
 * classes, top-level await) keeps its meaning; anything else (a default or
 * namespace import, an exported `let`, whose later changes an object could
 * not carry) stops the start with the module's name. Once all have run,
 * it sets the User Timing mark {@link PAGE_READY_MARK}, which tests and
 * benchmarks wait for without depending on any page's markup.
 */
export function joinModules(entry: string, sources: ReadonlyMap<string, string>): string {
  const order = moduleGraph(entry, sources);
  const ids = new Map(order.map((name, index) => [name, `__page_module_${index}`]));
  const parts = order.map((name) => {
    const exported: string[] = [];
    const body = (sources.get(name) as string)
      .replace(STATIC_IMPORT, (_statement, keyword: string, list: string | undefined, specifier: string) => {
        const id = ids.get(specifier) as string;
        const bindings = bindingsOf(list ?? '');
        if (keyword === 'export') {
          exported.push(...bindings.map(({ imported, local }) => `${local}: ${id}.${imported}`));
          return '';
        }
        if (bindings.length === 0) return '';
        return `const { ${bindings.map(({ imported, local }) => (imported === local ? local : `${imported}: ${local}`)).join(', ')} } = ${id};`;
      })
      .replace(EXPORT_LIST, (_statement, list: string) => {
        exported.push(...bindingsOf(list).map(({ imported, local }) => `${local}: ${imported}`));
        return '';
      })
      .replace(EXPORT_DECLARATION, (declaration, _kind, binding: string) => {
        exported.push(binding);
        return declaration.slice('export'.length).trimStart();
      });
    const left = /^(?:import|export)\b.*$/m.exec(body);
    if (left !== null) throw new Error(`pages: ${name}: cannot join "${left[0]}" (named imports and exports of sibling modules only)`);
    return `const ${ids.get(name)} = await (async () => {\n${body}\nreturn { ${exported.join(', ')} };\n})();\n`;
  });
  // Every module has run, top-level awaits included: the page is usable (test/page-budget.test.ts, bench/pages.bench.ts).
  return withoutComments(`${parts.join('')}performance.mark('${PAGE_READY_MARK}');\n`);
}

/** What may end the code right before a `/` that starts a regular expression rather than a division. */
const BEFORE_REGEX = /(?:[(,=:[!&|?{};+\-*%<>~^}]|\b(?:return|typeof|instanceof|in|of|new|delete|void|throw|case|do|else|yield|await))$/;

/** How much of the output's end {@link regexMayStart} reads: a line's worth of blanks, then `instanceof` and the character before it. */
const TAIL_LENGTH = 64;

/**
 * Whether a `/` after the output whose last characters are `tail` starts a
 * regular expression. A tail of blanks only is the start of the script, as
 * far as a regular expression can tell: no division follows blanks alone.
 */
function regexMayStart(tail: string): boolean {
  const code = tail.trimEnd();
  return code === '' || BEFORE_REGEX.test(code.slice(-12));
}

/**
 * `source` without its comments and without the indentation of its lines:
 * a joined page script is mostly JSDoc, which the browser would fetch and
 * scan for nothing (the signin page's script is 43% smaller with brotli
 * without them). Strings, template literals and regular expressions are
 * copied as they are, line breaks are kept (so semicolon insertion reads
 * the code as before), and a comment that spans lines leaves a line break.
 * The result must parse as the original did (V8 is asked, strict); if it
 * does not, the original is kept.
 */
export function withoutComments(source: string): string {
  // The output in pieces, and its last characters apart: appending to one
  // string and reading its end after each piece would flatten it every time.
  const pieces: string[] = [];
  let tail = '';
  const emit = (text: string): void => {
    pieces.push(text);
    tail = text.length >= TAIL_LENGTH ? text.slice(-TAIL_LENGTH) : (tail + text).slice(-TAIL_LENGTH);
  };
  let at = 0;
  /** For each open `${` of a template literal, the brace depth it opened at. */
  const templates: number[] = [];
  let depth = 0;
  const copyQuoted = (end: string): void => {
    let index = at + 1;
    while (index < source.length && source.charAt(index) !== end) index += source.charAt(index) === '\\' ? 2 : 1;
    emit(source.slice(at, index + 1));
    at = index + 1;
  };
  /** From a template literal's backtick or its `}` closing a `${`: up to its closing backtick or its next `${`. */
  const copyTemplate = (): void => {
    let index = at + 1;
    for (;;) {
      const char = source.charAt(index);
      if (char === '' || char === '`') break;
      if (char === '\\') index += 2;
      else if (char === '$' && source.charAt(index + 1) === '{') {
        templates.push(depth);
        index += 1;
        break;
      } else index += 1;
    }
    emit(source.slice(at, index + 1));
    at = index + 1;
  };
  while (at < source.length) {
    const char = source.charAt(at);
    const next = source.charAt(at + 1);
    if (char === '/' && next === '/') {
      while (at < source.length && source.charAt(at) !== '\n') at += 1;
    } else if (char === '/' && next === '*') {
      const end = source.indexOf('*/', at + 2);
      const comment = source.slice(at, end === -1 ? source.length : end + 2);
      emit(comment.includes('\n') ? '\n' : ' ');
      at += comment.length;
    } else if (char === "'" || char === '"') copyQuoted(char);
    else if (char === '`') copyTemplate();
    else if (char === '}' && templates.at(-1) === depth) {
      templates.pop();
      copyTemplate();
    } else if (char === '/' && regexMayStart(tail)) {
      let index = at + 1;
      let inClass = false;
      while (index < source.length && (inClass || source.charAt(index) !== '/')) {
        const inner = source.charAt(index);
        if (inner === '\\') index += 1;
        else if (inner === '[') inClass = true;
        else if (inner === ']') inClass = false;
        index += 1;
      }
      emit(source.slice(at, index + 1));
      at = index + 1;
    } else if (char === '\n') {
      // A line break, then the next line without its indentation; blank lines go.
      if (!tail.endsWith('\n')) emit('\n');
      at += 1;
      while (/[ \t]/.test(source.charAt(at))) at += 1;
    } else {
      if (char === '{') depth += 1;
      if (char === '}') depth -= 1;
      emit(char);
      at += 1;
    }
  }
  const out = pieces.join('');
  try {
    // Parsed, never run: the joined script is the body of an async function (top-level await, no import or export).
    new AsyncFunction(`'use strict';\n${out}`);
    return out;
  } catch {
    return source;
  }
}

const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (body: string) => unknown;

/** The User Timing mark a joined page script sets once all its modules have run. */
export const PAGE_READY_MARK = 'oc-page-ready';

/** A quoted message key in a script: the way test/i18n.test.ts requires every key a script uses to be written. */
const QUOTED_KEY = /'([a-z0-9_]+(?:\.[a-z0-9_]+)+)'|"([a-z0-9_]+(?:\.[a-z0-9_]+)+)"/g;

/** The messages of `catalog` that the modules `sources` holds name, in the catalog's order. */
export function pageMessages(catalog: Readonly<Record<string, string>>, sources: readonly string[]): Record<string, string> {
  const named = new Set<string>();
  for (const source of sources) for (const match of source.matchAll(QUOTED_KEY)) named.add((match[1] ?? match[2]) as string);
  return Object.fromEntries(Object.entries(catalog).filter(([key]) => named.has(key)));
}

/** Messages as a module, the form a page catalog is served in under `/assets/`. */
export function catalogModule(messages: Readonly<Record<string, string>>): string {
  return `export const messages = ${JSON.stringify(messages)};\n`;
}

/** The plain name of a page script's own catalog in `locale`. */
export function pageCatalogName(script: string, locale: Locale | '{{lang}}'): string {
  return `messages-${script.replace(/\.js$/, '')}-${locale}.js`;
}

/** The plain name of a page script joined with its imports. */
export function pageModuleName(script: string): string {
  return script.replace(/\.js$/, '-page.js');
}
