/**
 * The API explorer (/api-explorer): reads the service's own OpenAPI 3.1
 * document (GET /api/openapi) and shows every route, grouped by tag, as a
 * disclosure that opens into its description, a form to try it filled with
 * the document's example, the request's URL and curl command, its documented
 * answers with their examples, and the answer of a request sent from here
 * (docs/api.md "Explorer").
 *
 * Requests go same-origin with this browser's cookies, as the pages do, so a
 * route that needs the session works once the person is signed in; a route
 * that takes a Connect API key gets a field for it. Nothing is kept.
 * Descriptions are Markdown, rendered by ./markdown.js, which escapes them
 * first: the document cannot put markup of its own on the page.
 */
import { byId, copyText, h, say, t } from './common.js';
import { curlCommand } from './curl.js';
import { renderInline, renderMarkdown } from './markdown.js';

/**
 * The parts of an OpenAPI 3.1 document this page reads.
 *
 * @typedef {object} Schema a schema, a response or a `$ref` to one
 * @property {string} [$ref]
 * @property {string} [description]
 * @property {string | string[]} [type]
 * @property {string} [format]
 * @property {unknown} [example]
 * @property {unknown[]} [examples]
 * @property {unknown} [default]
 * @property {unknown} [const]
 * @property {unknown[]} [enum]
 * @property {Schema[]} [anyOf]
 * @property {Schema[]} [oneOf]
 * @property {Record<string, Schema>} [properties]
 * @property {string[]} [required]
 * @property {Schema} [items]
 * @property {number} [minimum]
 * @property {string} [pattern]
 * @property {Record<string, Media>} [content] of a response
 *
 * @typedef {object} Media a media type of a body or an answer
 * @property {Schema} [schema]
 * @property {unknown} [example]
 * @property {Record<string, {value?: unknown}>} [examples]
 *
 * @typedef {object} Parameter
 * @property {string} name
 * @property {string} in `path`, `query` or `header`
 * @property {boolean} [required]
 * @property {string} [description]
 * @property {unknown} [example]
 * @property {Schema} [schema]
 *
 * @typedef {object} Operation
 * @property {string} [summary]
 * @property {string} [description]
 * @property {string[]} [tags]
 * @property {Record<string, string[]>[]} [security]
 * @property {Parameter[]} [parameters]
 * @property {{content?: Record<string, Media>}} [requestBody]
 * @property {Record<string, Schema>} [responses]
 *
 * @typedef {object} OpenApi
 * @property {Record<string, Record<string, Operation | undefined>>} [paths]
 * @property {{name: string, description?: string}[]} [tags]
 */

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** The answer headers shown after a request: what says how it was answered, cached or limited. */
const SHOWN_HEADERS = [
  'content-type',
  'cache-control',
  'location',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'www-authenticate',
  'x-request-id',
];
const main = byId('main');
const pageError = byId('page-error');
const pageStatus = byId('page-status');

/** @type {any} the document, walked by the paths of its `$ref`s */
let documentRoot = null;

/**
 * Follows a local `$ref` (`#/components/schemas/Name`).
 *
 * @param {Schema | undefined} schema
 * @returns {Schema}
 */
function resolve(schema) {
  /** @type {any} */
  let current = schema;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 8; hops += 1) {
    const path = current.$ref.replace(/^#\//, '').split('/');
    current = path.reduce((/** @type {any} */ node, /** @type {string} */ key) => (node ? node[key] : undefined), documentRoot);
  }
  return current || {};
}

/** The example a string of `format` starts from. @param {string | undefined} format */
function stringFor(format) {
  switch (format) {
    case 'date-time':
      return new Date().toISOString();
    case 'date':
      return new Date().toISOString().slice(0, 10);
    case 'email':
      return 'alice@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com/';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    default:
      return 'string';
  }
}

/**
 * A value of `schema`'s shape: its own example when it has one, else built
 * from its default, const, enum, format and properties.
 *
 * @param {Schema | undefined} schema
 * @returns {unknown}
 */
function exampleOf(schema, depth = 0) {
  const resolved = resolve(schema);
  if (depth > 6) return null;
  if (Array.isArray(resolved.examples) && resolved.examples.length > 0) return resolved.examples[0];
  if (resolved.example !== undefined) return resolved.example;
  if (resolved.default !== undefined) return resolved.default;
  if (resolved.const !== undefined) return resolved.const;
  if (Array.isArray(resolved.enum) && resolved.enum.length > 0) return resolved.enum.find((value) => value !== null) ?? null;
  const choices = resolved.anyOf || resolved.oneOf;
  if (Array.isArray(choices)) {
    const chosen = choices.map(resolve).find((choice) => choice.type !== 'null') || choices[0];
    return exampleOf(chosen, depth + 1);
  }
  const type = Array.isArray(resolved.type) ? resolved.type.find((name) => name !== 'null') : resolved.type;
  switch (type) {
    case 'object': {
      /** @type {Record<string, unknown>} */
      const out = {};
      const required = new Set(resolved.required || []);
      for (const [name, property] of Object.entries(resolved.properties || {})) {
        if (required.has(name)) out[name] = exampleOf(property, depth + 1);
      }
      return out;
    }
    case 'array':
      return resolved.items ? [exampleOf(resolved.items, depth + 1)] : [];
    case 'integer':
    case 'number':
      return typeof resolved.minimum === 'number' ? resolved.minimum : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return stringFor(resolved.format);
  }
}

/**
 * The example of a body or an answer: the media type's own, else its
 * schema's, else (`build`) one built from the schema; undefined when there
 * is none.
 *
 * @param {Media | undefined} media
 * @param {boolean} build
 * @returns {unknown}
 */
function mediaExample(media, build) {
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const named = Object.values(media.examples || {})[0];
  if (named && named.value !== undefined) return named.value;
  const schema = resolve(media.schema);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  return build && media.schema ? exampleOf(media.schema) : undefined;
}

/** The starting value of a parameter's field: its example, else for a required one a value of its shape. @param {Parameter} parameter */
function parameterExample(parameter) {
  const schema = resolve(parameter.schema);
  const value = parameter.example ?? schema.examples?.[0] ?? schema.example ?? (parameter.required ? exampleOf(schema) : undefined) ?? '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `GET /api/auth/me` → `get-api-auth-me`: ids for anchors and fields. @param {string} text */
function slug(text) {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** @param {Operation} operation */
function describeSecurity(operation) {
  const schemes = (operation.security || []).flatMap((entry) => Object.keys(entry));
  if (schemes.includes('bearerAuth')) return t('explorer.auth_key');
  if (schemes.includes('cookieAuth')) return t('explorer.auth_cookie');
  return t('explorer.auth_public');
}

/** Pretty JSON when the text is JSON, else the text. @param {string} text */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The parsed JSON of `text`, or null. @param {string} text @returns {any} */
function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Markdown as a block of the page. The renderer escapes the text before it
 * writes any tag (./markdown.js), so its HTML holds only its own tags.
 *
 * @param {string} markdown
 * @param {number} headingLevel
 */
function markdownBlock(markdown, headingLevel) {
  const block = h('div', { class: 'markdown' });
  block.innerHTML = renderMarkdown(markdown, { headingLevel });
  return block;
}

/**
 * A line of Markdown (a summary) as a span: escaped before any tag is
 * written, like {@link markdownBlock}.
 *
 * @param {string} markdown
 * @param {string} className
 */
function inlineMarkdown(markdown, className) {
  const span = h('span', { class: className });
  span.innerHTML = renderInline(markdown);
  return span;
}

/** Whether an HTTP status is an error answer. @param {number | string} status */
function isError(status) {
  return Number(status) >= 400;
}

/**
 * The mark of an answer, success or error, said in words and with a sign
 * (not in colour alone).
 *
 * @param {number | string} status
 */
function answerKind(status) {
  const error = isError(status);
  return h(
    'span',
    { class: `answer-kind ${error ? 'is-error' : 'is-ok'}` },
    h('span', { class: 'answer-icon', 'aria-hidden': 'true', text: error ? '✕' : '✓' }),
    ` ${error ? t('explorer.kind_error') : t('explorer.kind_ok')}`,
  );
}

/** A block of JSON, labelled for screen readers and reachable by keyboard when it scrolls. @param {string} text @param {string} label @param {string} className */
function codeBlock(text, label, className) {
  return h('pre', { class: className, tabindex: '0', 'aria-label': label }, h('code', { text }));
}

/**
 * The documented answers of an operation: status, description and example.
 *
 * @param {Operation} operation
 * @param {string} route
 */
function renderResponses(operation, route) {
  const entries = Object.entries(operation.responses || {});
  if (entries.length === 0) return null;
  return h(
    'ul',
    { class: 'responses', 'aria-label': t('explorer.answers_of', { route }) },
    ...entries.map(([status, response]) => {
      const resolved = resolve(response);
      const example = mediaExample(resolved.content?.['application/json'], false);
      return h(
        'li',
        { class: `response ${isError(status) ? 'is-error' : 'is-ok'}` },
        h('p', { class: 'response-status' }, h('code', { text: status }), ' ', answerKind(status)),
        // @fastify/swagger writes "Default Response" for an answer its route left undescribed: that says nothing.
        resolved.description && resolved.description !== 'Default Response' ? markdownBlock(resolved.description, 5) : null,
        example === undefined
          ? null
          : h(
              'details',
              { class: 'response-example' },
              h('summary', { text: t('explorer.example_of', { status }) }),
              codeBlock(JSON.stringify(example, null, 2), t('explorer.example_of', { status }), 'example'),
            ),
      );
    }),
  );
}

/**
 * The answer of a request sent from the form: its status, time, headers
 * worth seeing and body, an error's code and detail in words.
 *
 * @param {{region: HTMLElement, kind: HTMLElement, status: HTMLElement, answer: HTMLElement}} parts
 *   the answer's box, its success or error mark, its live status line and what goes below it
 * @param {Response} response
 * @param {string} text the body
 * @param {number} took milliseconds
 * @param {string} route
 */
function showAnswer({ region, kind, status, answer }, response, text, took, route) {
  const error = isError(response.status);
  region.className = `answer ${error ? 'is-error' : 'is-ok'}`;
  kind.replaceChildren(answerKind(response.status));
  say(
    status,
    `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} · ${took} ms · ${response.headers.get('content-type') || t('explorer.no_type')}`,
  );
  const body = parsed(text);
  const code = error && body && typeof body === 'object' ? body.error || body.reason || body.reasons?.[0] : null;
  const headers = SHOWN_HEADERS.map((name) => [name, response.headers.get(name)]).filter(([, value]) => value !== null);
  answer.replaceChildren(
    ...[
      code
        ? h(
            'p',
            { class: 'answer-error' },
            `${t('explorer.error_code')} `,
            h('code', { text: String(code) }),
            typeof body.detail === 'string' ? ` · ${body.detail}` : '',
          )
        : null,
      headers.length > 0
        ? h(
            'table',
            { class: 'explorer-table answer-headers' },
            h('caption', { text: t('explorer.headers') }),
            h(
              'tbody',
              {},
              ...headers.map(([name, value]) =>
                h('tr', {}, h('th', { scope: 'row' }, h('code', { text: name })), h('td', { text: value })),
              ),
            ),
          )
        : null,
      codeBlock(text === '' ? t('explorer.no_body') : pretty(text), t('explorer.answer_of', { route }), 'answer-body'),
    ].filter((node) => node !== null),
  );
}

/**
 * What a route opens into: its description, the form to try it, the
 * request's URL and curl command, the answer, and the documented answers.
 *
 * @param {string} path
 * @param {string} method
 * @param {Operation} operation
 */
function renderOperationBody(path, method, operation) {
  const id = slug(`${method} ${path}`);
  const route = `${method.toUpperCase()} ${path}`;
  const parameters = (operation.parameters || []).map((parameter) => ({ ...parameter, schema: resolve(parameter.schema) }));
  const bodyMedia = operation.requestBody?.content?.['application/json'];
  const needsKey = (operation.security || []).some((entry) => 'bearerAuth' in entry);
  /** @type {{parameter: Parameter, input: HTMLInputElement}[]} each parameter with its field */
  const fields = [];

  const form = h('form', { novalidate: true, 'aria-label': t('explorer.try', { route }) });
  for (const parameter of parameters) {
    const fieldId = `${id}-${parameter.in}-${slug(parameter.name)}`;
    const hintId = `${fieldId}-hint`;
    const hint = [
      parameter.description || parameter.schema.description,
      parameter.schema.pattern ? t('explorer.pattern', { pattern: parameter.schema.pattern }) : null,
    ]
      .filter(Boolean)
      .join(' · ');
    const input = /** @type {HTMLInputElement} */ (
      h('input', {
        id: fieldId,
        name: parameter.name,
        type: 'text',
        autocomplete: 'off',
        spellcheck: 'false',
        required: parameter.required === true,
        'aria-describedby': hint ? hintId : undefined,
      })
    );
    input.value = parameterExample(parameter);
    fields.push({ parameter, input });
    form.append(
      h(
        'label',
        { for: fieldId },
        h('code', { text: parameter.name }),
        ` ${t('explorer.parameter_where', { in: parameter.in, required: parameter.required ? 'yes' : 'no' })}`,
      ),
      input,
      ...(hint ? [h('p', { id: hintId, class: 'hint', text: hint })] : []),
    );
  }
  /** @type {HTMLInputElement | null} */
  let keyInput = null;
  if (needsKey) {
    keyInput = /** @type {HTMLInputElement} */ (
      h('input', { id: `${id}-key`, type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-key-hint` })
    );
    form.append(
      h('label', { for: `${id}-key`, text: t('explorer.api_key') }),
      keyInput,
      h('p', { id: `${id}-key-hint`, class: 'hint', text: t('explorer.api_key_hint') }),
    );
  }
  /** @type {HTMLTextAreaElement | null} */
  let bodyInput = null;
  const bodyStart = bodyMedia ? JSON.stringify(mediaExample(bodyMedia, true) ?? {}, null, 2) : '';
  const bodyError = h('p', { id: `${id}-body-error`, class: 'form-error', role: 'alert' });
  if (bodyMedia) {
    bodyInput = /** @type {HTMLTextAreaElement} */ (
      h('textarea', {
        id: `${id}-body`,
        rows: String(Math.min(Math.max(bodyStart.split('\n').length, 4), 14)),
        spellcheck: 'false',
        'aria-describedby': `${id}-body-error`,
      })
    );
    bodyInput.value = bodyStart;
    form.append(h('label', { for: `${id}-body`, text: t('explorer.body') }), bodyInput, bodyError);
  }

  const urlText = h('code', { id: `${id}-url`, class: 'request-url' });
  const curlText = h('code', {});
  const curlBlock = h('pre', { class: 'curl', tabindex: '0', 'aria-labelledby': `${id}-curl-title` }, curlText);
  const curlDetails = /** @type {HTMLDetailsElement} */ (
    h('details', { class: 'curl-details' }, h('summary', { id: `${id}-curl-title`, text: t('explorer.curl') }), curlBlock)
  );
  const copyStatus = h('p', { class: 'hint', 'aria-live': 'polite' });
  const send = h('button', { type: 'submit', text: t('explorer.send') });
  const copy = h('button', { type: 'button', class: 'secondary', text: t('explorer.copy_curl') });
  const reset = bodyInput ? h('button', { type: 'button', class: 'secondary', text: t('explorer.reset') }) : null;
  form.append(
    h(
      'p',
      { class: 'request-line' },
      h('span', { class: 'request-label', text: t('explorer.request_url') }),
      ' ',
      h('span', { class: 'method', text: method.toUpperCase() }),
      ' ',
      urlText,
    ),
    h('div', { class: 'actions' }, send, copy, reset),
    copyStatus,
    curlDetails,
  );
  const answerStatus = h('p', { class: 'answer-status', role: 'status', 'aria-live': 'polite' });
  const answerKindSlot = h('span', {});
  const answer = h('div', {});
  const answerRegion = h('div', { class: 'answer' }, h('div', { class: 'answer-head' }, answerKindSlot, answerStatus), answer);
  /** Empties the answer's box: nothing was answered (yet). */
  const clearAnswer = () => {
    answerRegion.className = 'answer';
    answerKindSlot.replaceChildren();
    answer.replaceChildren();
  };

  /**
   * The request the form holds now: its URL (path and query filled in) and
   * body, or what is missing.
   *
   * @returns {{url: string, headers: Record<string, string>, body?: string, missing?: HTMLInputElement, badBody?: boolean}}
   */
  const request = () => {
    let url = path;
    /** @type {HTMLInputElement | undefined} */
    let missing;
    const query = new URLSearchParams();
    for (const { parameter, input } of fields) {
      const value = input.value.trim();
      if (parameter.required && value === '') missing ??= input;
      if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(value));
      if (parameter.in === 'query' && value !== '') query.append(parameter.name, value);
    }
    if ([...query].length > 0) url += `?${query}`;
    /** @type {Record<string, string>} */
    const headers = { accept: 'application/json' };
    /** @type {string | undefined} */
    let body;
    let badBody = false;
    if (bodyInput) {
      headers['content-type'] = 'application/json';
      try {
        body = JSON.stringify(JSON.parse(bodyInput.value));
      } catch {
        badBody = true;
      }
    }
    if (keyInput && keyInput.value.trim() !== '') headers.authorization = `Bearer ${keyInput.value.trim()}`;
    return { url, headers, body, missing, badBody };
  };
  const absolute = (/** @type {string} */ url) => new URL(url, window.location.origin).href;
  const refresh = () => {
    const now = request();
    urlText.textContent = absolute(now.url);
    curlText.textContent = curlCommand({
      method,
      url: absolute(now.url),
      headers: now.headers,
      body: now.body ?? (bodyInput ? bodyInput.value : undefined),
    });
  };
  form.addEventListener('input', refresh);
  refresh();

  reset?.addEventListener('click', () => {
    if (bodyInput) bodyInput.value = bodyStart;
    bodyInput?.setAttribute('aria-invalid', 'false');
    say(bodyError, '');
    refresh();
  });
  copy.addEventListener('click', async () => {
    refresh();
    // The command is shown as it is copied: it is what a refused clipboard leaves selected, too.
    curlDetails.open = true;
    const copied = await copyText(curlText.textContent || '', curlBlock);
    say(copyStatus, copied ? t('explorer.curl_copied') : t('explorer.curl_selected'));
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(bodyError, '');
    say(copyStatus, '');
    const now = request();
    for (const { input } of fields) input.setAttribute('aria-invalid', String(input === now.missing));
    if (now.missing) {
      say(answerStatus, t('explorer.fill_in', { name: now.missing.name }));
      now.missing.focus();
      return;
    }
    if (bodyInput) bodyInput.setAttribute('aria-invalid', String(now.badBody));
    if (now.badBody && bodyInput) {
      say(answerStatus, '');
      clearAnswer();
      say(bodyError, t('explorer.bad_json'));
      bodyInput.focus();
      return;
    }
    send.setAttribute('aria-disabled', 'true');
    say(answerStatus, t('explorer.sending', { route: `${method.toUpperCase()} ${now.url}` }));
    const started = performance.now();
    try {
      const response = await fetch(now.url, {
        method: method.toUpperCase(),
        headers: now.headers,
        body: now.body,
        credentials: 'same-origin',
      });
      const text = await response.text();
      const parts = { region: answerRegion, kind: answerKindSlot, status: answerStatus, answer };
      showAnswer(parts, response, text, Math.round(performance.now() - started), route);
    } catch {
      clearAnswer();
      say(answerStatus, t('explorer.unreachable'));
    } finally {
      send.removeAttribute('aria-disabled');
    }
  });

  return h(
    'div',
    { class: 'operation-body' },
    operation.description ? markdownBlock(operation.description, 4) : null,
    h('p', { class: 'hint', text: describeSecurity(operation) }),
    h('h3', { text: t('explorer.request') }),
    form,
    answerRegion,
    h('h3', { text: t('explorer.responses') }),
    renderResponses(operation, route),
  );
}

/**
 * One route as a disclosure. What it opens into is built the first time it
 * opens: the page lists every route, and most are never opened.
 *
 * @param {string} path
 * @param {string} method
 * @param {Operation} operation
 */
function renderOperation(path, method, operation) {
  const details = /** @type {HTMLDetailsElement} */ (
    h(
      'details',
      { class: 'operation', id: slug(`${method} ${path}`) },
      h(
        'summary',
        {},
        h('span', { class: 'method', text: method.toUpperCase() }),
        h('span', { class: 'operation-path', text: path }),
        inlineMarkdown(operation.summary || '', 'operation-summary'),
      ),
    )
  );
  details.addEventListener('toggle', () => {
    if (details.open && details.childElementCount === 1) details.append(renderOperationBody(path, method, operation));
  });
  details.dataset.search = `${method} ${path} ${operation.summary || ''} ${(operation.tags || []).join(' ')}`.toLowerCase();
  return details;
}

/** @param {OpenApi} openapi */
function render(openapi) {
  documentRoot = openapi;
  const tags = (openapi.tags || []).map((tag) => tag.name);
  /** @type {Map<string, HTMLElement[]>} */
  const byTag = new Map();
  for (const [path, item] of Object.entries(openapi.paths || {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] || 'other';
      const list = byTag.get(tag) ?? [];
      byTag.set(tag, list);
      list.push(renderOperation(path, method, operation));
    }
  }
  const order = [...tags.filter((tag) => byTag.has(tag)), ...[...byTag.keys()].filter((tag) => !tags.includes(tag))];
  const descriptions = new Map((openapi.tags || []).map((tag) => [tag.name, tag.description || '']));
  byId('groups').replaceChildren(...order.map((tag) => h('li', {}, h('a', { href: `#group-${slug(tag)}`, text: tag }))));
  byId('operations').replaceChildren(
    ...order.map((tag) =>
      h(
        'section',
        { class: 'explorer-group', id: `group-${slug(tag)}`, 'aria-labelledby': `group-${slug(tag)}-title` },
        h('h2', { id: `group-${slug(tag)}-title`, text: tag }),
        descriptions.get(tag) ? h('div', { class: 'hint' }, markdownBlock(descriptions.get(tag) || '', 3)) : null,
        ...(byTag.get(tag) ?? []),
      ),
    ),
  );
  const total = [...byTag.values()].reduce((sum, list) => sum + list.length, 0);
  const filter = /** @type {HTMLInputElement} */ (byId('filter'));
  const count = byId('filter-count');
  const applyFilter = () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const section of /** @type {HTMLCollectionOf<HTMLElement>} */ (byId('operations').children)) {
      let inSection = 0;
      for (const operation of section.querySelectorAll('details.operation')) {
        if (!(operation instanceof HTMLDetailsElement)) continue;
        const match = words.every((word) => (operation.dataset.search ?? '').includes(word));
        operation.hidden = !match;
        if (match) inSection += 1;
      }
      section.hidden = inSection === 0;
      shown += inSection;
    }
    count.textContent = words.length === 0 ? t('explorer.count_all', { total }) : t('explorer.count_shown', { shown, total });
  };
  filter.addEventListener('input', applyFilter);
  applyFilter();
  byId('content').hidden = false;
  say(pageStatus, '');
  main.setAttribute('aria-busy', 'false');
  openLinked();
  window.addEventListener('hashchange', openLinked);
}

/** A link to one route (#get-api-challenge), followed from elsewhere or on this page, opens it. */
function openLinked() {
  const target = decodeURIComponent(window.location.hash.slice(1));
  const linked = target ? document.getElementById(target) : null;
  if (linked instanceof HTMLDetailsElement) {
    linked.open = true;
    linked.scrollIntoView();
  }
}

async function load() {
  try {
    const response = await fetch('/api/openapi', { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    render(await response.json());
  } catch {
    say(pageStatus, '');
    say(pageError, t('explorer.load_failed'));
    main.setAttribute('aria-busy', 'false');
  }
}

void load();
