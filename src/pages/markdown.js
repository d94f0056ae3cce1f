/**
 * A small Markdown renderer for the descriptions of the OpenAPI document,
 * which the API explorer shows (./explorer.js). It knows paragraphs,
 * headings, lists, fenced code blocks, inline code, bold, italic and links.
 *
 * Safe by construction: the whole text is escaped before anything else, so
 * no tag or attribute of the input survives as markup; the only tags in the
 * answer are the ones this file writes. A link keeps its target only when it
 * is http(s) or relative (`/path`, `#anchor`, `docs/api.md`): any other
 * scheme (`javascript:`, `data:`, …) leaves its text alone. No build step,
 * no dependency.
 */

/** @type {Record<string, string>} */
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` with every character that HTML reads as markup escaped. @param {string} text */
export function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character);
}

/** The escaped form of `&`, which an escaped URL carries in place of it. */
const AMPERSAND = /&amp;/g;

/**
 * Whether a link target (escaped) may be written as an `href`: http(s), or
 * relative. Browsers drop tabs, line breaks and leading control characters
 * from a URL before they read its scheme, so this does too.
 *
 * @param {string} escapedUrl
 */
export function isSafeHref(escapedUrl) {
  const url = escapedUrl.replace(AMPERSAND, '&').replace(/[\u0000-\u0020\u007f]/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url);
  if (scheme === null) return !url.startsWith('\\') && !url.startsWith('/\\');
  return /^https?$/i.test(scheme[1] ?? '');
}

/**
 * The inline parts of one escaped line or paragraph: code spans first (their
 * content is left as it is), then links, then bold and italic. What is done
 * is kept aside under a placeholder so that no later rule reaches into it.
 *
 * @param {string} escaped
 */
function inline(escaped) {
  /** @type {string[]} */
  const kept = [];
  const keep = (/** @type {string} */ html) => `\u0000${kept.push(html) - 1}\u0000`;
  let text = escaped.replace(/`([^`]+)`/g, (_whole, code) => keep(`<code>${code}</code>`));
  text = text.replace(/\[([^\]\n]+)\]\(([^()\s]+)\)/g, (_whole, label, url) =>
    keep(isSafeHref(url) ? `<a href="${url}">${emphasis(label)}</a>` : emphasis(label)),
  );
  text = emphasis(text);
  // A link's label may hold a code span: restore until nothing is left.
  for (let round = 0; round < 3 && text.includes('\u0000'); round += 1) {
    text = text.replace(/\u0000(\d+)\u0000/g, (_whole, index) => kept[Number(index)] ?? '');
  }
  return text;
}

/** Bold (`**x**`, `__x__`) and italic (`*x*`, `_x_`) in escaped text. @param {string} text */
function emphasis(text) {
  return text
    .replace(/\*\*(?=\S)([^*]*\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([^_]*\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^\w*])\*(?=\S)([^*]*\S)\*(?![\w*])/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_(?=\S)([^_]*\S)_(?!\w)/g, '$1<em>$2</em>');
}

/** One line of Markdown with its inline parts only (code, links, bold, italic): a summary or a label. @param {string} markdown */
export function renderInline(markdown) {
  return inline(
    escapeHtml(
      markdown
        .replace(/\u0000/g, '\ufffd')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}

const FENCE = /^\s*(```|~~~)/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/;

/**
 * `markdown` as HTML: escaped first, then its blocks and inline parts.
 * `headingLevel` is the level a `#` heading becomes (`##` one deeper, at
 * most 6), so that a description's headings sit below the page's own.
 *
 * @param {string} markdown
 * @param {{headingLevel?: number}} [options]
 * @returns {string}
 */
export function renderMarkdown(markdown, options = {}) {
  const top = Math.min(Math.max(options.headingLevel ?? 1, 1), 6);
  // A NUL would collide with the placeholders of `inline`.
  const lines = escapeHtml(markdown.replace(/\u0000/g, '\ufffd'))
    .replace(/\r\n?/g, '\n')
    .split('\n');
  /** @type {string[]} */
  const out = [];
  /** @type {string[]} */
  let paragraph = [];
  /** @type {{tag: 'ul' | 'ol', items: string[]} | null} */
  let list = null;
  const flush = () => {
    if (paragraph.length > 0) out.push(`<p>${inline(paragraph.join(' '))}</p>`);
    paragraph = [];
    if (list !== null) out.push(`<${list.tag}>${list.items.map((item) => `<li>${inline(item)}</li>`).join('')}</${list.tag}>`);
    list = null;
  };
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      /** @type {string[]} */
      const code = [];
      index += 1;
      while (index < lines.length && !(lines[index] ?? '').trimStart().startsWith(fence[1] ?? '```')) {
        code.push(lines[index] ?? '');
        index += 1;
      }
      out.push(`<pre><code>${code.join('\n')}</code></pre>`);
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const level = Math.min(top + (heading[1] ?? '#').length - 1, 6);
      out.push(`<h${level}>${inline(heading[2] ?? '')}</h${level}>`);
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    const item = bullet ?? numbered;
    if (item) {
      const tag = bullet ? 'ul' : 'ol';
      if (paragraph.length > 0 || (list !== null && list.tag !== tag)) flush();
      list ??= { tag, items: [] };
      list.items.push(item[1] ?? '');
      continue;
    }
    if (list !== null && /^\s+\S/.test(line)) {
      // An indented line goes on with the list item above it.
      list.items[list.items.length - 1] += ` ${line.trim()}`;
      continue;
    }
    if (list !== null) flush();
    paragraph.push(line.trim());
  }
  flush();
  return out.join('\n');
}
