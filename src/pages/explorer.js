/**
 * The API explorer (/api-explorer): reads the service's own OpenAPI 3.1
 * document (GET /api/openapi) and shows every route, grouped by tag, as a
 * disclosure that opens into its description, its parameters and body as a
 * form, its documented answers, and the answer of a request sent from here.
 *
 * Requests go same-origin with this browser's cookies, as the pages do, so a
 * route that needs the session works once the person is signed in; a route
 * that takes a Connect API key gets a field for it. Nothing is kept.
 */
import { byId, h, say, t } from './common.js';

/**
 * The parts of an OpenAPI 3.1 document this page reads.
 *
 * @typedef {object} Schema a schema, a response or a `$ref` to one
 * @property {string} [$ref]
 * @property {string} [description]
 * @property {string | string[]} [type]
 * @property {unknown} [example]
 * @property {unknown} [const]
 * @property {unknown[]} [enum]
 * @property {Schema[]} [anyOf]
 * @property {Schema[]} [oneOf]
 * @property {Record<string, Schema>} [properties]
 * @property {string[]} [required]
 * @property {Schema} [items]
 * @property {number} [minimum]
 * @property {string} [pattern]
 *
 * @typedef {object} Parameter
 * @property {string} name
 * @property {string} in `path`, `query` or `header`
 * @property {boolean} [required]
 * @property {string} [description]
 * @property {Schema} [schema]
 *
 * @typedef {object} Operation
 * @property {string} [summary]
 * @property {string} [description]
 * @property {string[]} [tags]
 * @property {Record<string, string[]>[]} [security]
 * @property {Parameter[]} [parameters]
 * @property {{content?: Record<string, {schema?: Schema}>}} [requestBody]
 * @property {Record<string, Schema>} [responses]
 *
 * @typedef {object} OpenApi
 * @property {Record<string, Record<string, Operation | undefined>>} [paths]
 * @property {{name: string, description?: string}[]} [tags]
 */

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
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

/**
 * A value of `schema`'s shape to start a request body from.
 *
 * @param {Schema | undefined} schema
 * @returns {unknown}
 */
function exampleOf(schema, depth = 0) {
  const resolved = resolve(schema);
  if (depth > 5) return null;
  if (resolved.example !== undefined) return resolved.example;
  if (resolved.const !== undefined) return resolved.const;
  if (Array.isArray(resolved.enum) && resolved.enum.length > 0) return resolved.enum[0];
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
      const properties = resolved.properties || {};
      const required = new Set(resolved.required || []);
      const names = Object.keys(properties);
      for (const name of names) {
        if (required.has(name) || names.length <= 4) out[name] = exampleOf(properties[name], depth + 1);
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
      return '';
  }
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

/**
 * @param {string} path
 * @param {string} method
 * @param {Operation} operation
 */
function renderOperation(path, method, operation) {
  const id = slug(`${method} ${path}`);
  const parameters = (operation.parameters || []).map((parameter) => ({ ...parameter, schema: resolve(parameter.schema) }));
  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  const needsKey = (operation.security || []).some((entry) => 'bearerAuth' in entry);
  /** @type {{parameter: Parameter, input: HTMLInputElement}[]} each parameter with its field */
  const fields = [];

  const form = h('form', { novalidate: true, 'aria-label': t('explorer.try', { route: `${method.toUpperCase()} ${path}` }) });
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
  let keyInput = null;
  if (needsKey) {
    keyInput = /** @type {HTMLInputElement} */ (
      h('input', { id: `${id}-key`, type: 'password', autocomplete: 'off', spellcheck: 'false' })
    );
    form.append(h('label', { for: `${id}-key`, text: t('explorer.api_key') }), keyInput);
  }
  let bodyInput = null;
  const bodyError = h('p', { id: `${id}-body-error`, class: 'form-error', role: 'alert' });
  if (bodySchema) {
    bodyInput = /** @type {HTMLTextAreaElement} */ (
      h('textarea', { id: `${id}-body`, rows: '8', spellcheck: 'false', 'aria-describedby': `${id}-body-error` })
    );
    bodyInput.value = JSON.stringify(exampleOf(bodySchema), null, 2);
    form.append(h('label', { for: `${id}-body`, text: t('explorer.body') }), bodyInput, bodyError);
  }
  const send = h('button', { type: 'submit', text: t('explorer.send') });
  form.append(h('div', { class: 'actions' }, send));
  const answerStatus = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const answerBody = h('pre', {
    tabindex: '0',
    'aria-label': t('explorer.answer_of', { route: `${method.toUpperCase()} ${path}` }),
    hidden: true,
  });
  const answer = h('div', { class: 'answer' }, answerStatus, answerBody);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(bodyError, '');
    let url = path;
    for (const { parameter, input } of fields) {
      const value = input.value.trim();
      input.setAttribute('aria-invalid', String(parameter.required === true && value === ''));
      if (parameter.required && value === '') {
        say(answerStatus, t('explorer.fill_in', { name: parameter.name }));
        input.focus();
        return;
      }
      if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(value));
    }
    const query = new URLSearchParams();
    for (const { parameter, input } of fields) {
      const value = input.value.trim();
      if (parameter.in === 'query' && value !== '') query.append(parameter.name, value);
    }
    if ([...query].length > 0) url += `?${query}`;
    /** @type {Record<string, string>} */
    const headers = { accept: 'application/json' };
    let body;
    if (bodyInput) {
      try {
        body = JSON.stringify(JSON.parse(bodyInput.value));
        bodyInput.setAttribute('aria-invalid', 'false');
      } catch {
        bodyInput.setAttribute('aria-invalid', 'true');
        say(answerStatus, '');
        answerBody.hidden = true;
        say(bodyError, t('explorer.bad_json'));
        bodyInput.focus();
        return;
      }
      headers['content-type'] = 'application/json';
    }
    if (keyInput && keyInput.value.trim() !== '') headers.authorization = `Bearer ${keyInput.value.trim()}`;
    send.setAttribute('aria-disabled', 'true');
    say(answerStatus, `Sending ${method.toUpperCase()} ${url}…`);
    const started = performance.now();
    try {
      const response = await fetch(url, { method: method.toUpperCase(), headers, body, credentials: 'same-origin' });
      const text = await response.text();
      const took = Math.round(performance.now() - started);
      say(
        answerStatus,
        `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} · ${took} ms · ${response.headers.get('content-type') || t('explorer.no_type')}`,
      );
      answerBody.textContent = text === '' ? t('explorer.no_body') : pretty(text);
      answerBody.hidden = false;
    } catch {
      say(answerStatus, t('explorer.unreachable'));
      answerBody.hidden = true;
    } finally {
      send.removeAttribute('aria-disabled');
    }
  });

  const responses = Object.entries(operation.responses || {}).map(([status, response]) =>
    h('tr', {}, h('td', {}, h('code', { text: status })), h('td', { text: resolve(response).description || '' })),
  );
  const details = h(
    'details',
    { class: 'operation', id },
    h(
      'summary',
      {},
      h('span', { class: 'method', text: method.toUpperCase() }),
      h('span', { class: 'operation-path', text: path }),
      h('span', { class: 'operation-summary', text: operation.summary || '' }),
    ),
    h(
      'div',
      { class: 'operation-body' },
      operation.description ? h('p', { text: operation.description }) : null,
      h('p', { class: 'hint', text: describeSecurity(operation) }),
      responses.length > 0
        ? h(
            'table',
            { class: 'explorer-table' },
            h('caption', { class: 'visually-hidden', text: t('explorer.answers_of', { route: `${method.toUpperCase()} ${path}` }) }),
            h(
              'thead',
              {},
              h('tr', {}, h('th', { scope: 'col', text: t('explorer.status') }), h('th', { scope: 'col', text: t('explorer.meaning') })),
            ),
            h('tbody', {}, ...responses),
          )
        : null,
      form,
      answer,
    ),
  );
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
        descriptions.get(tag) ? h('p', { class: 'hint', text: descriptions.get(tag) }) : null,
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
  // A link to one route (#get-api-challenge) opens it.
  const target = window.location.hash.slice(1);
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
