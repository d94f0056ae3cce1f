/**
 * The page modules of the API explorer: the Markdown renderer
 * (src/pages/markdown.js), what it knows, and that no description, however
 * written, puts markup of its own or a script link on the page; and the curl
 * command (src/pages/curl.js), whose quoting the shell reads back word for
 * word (test/explorer-pages.test.ts runs it).
 */
import { describe, expect, it } from 'vitest';

/** The module's exports, as its JSDoc types them (tsconfig.pages.json checks the page scripts; this suite's config does not read JavaScript). */
interface MarkdownModule {
  escapeHtml(text: string): string;
  isSafeHref(escapedUrl: string): boolean;
  renderMarkdown(markdown: string, options?: { headingLevel?: number }): string;
  renderInline(markdown: string): string;
}
interface CurlModule {
  shellQuote(value: string): string;
  curlCommand(request: { method: string; url: string; headers: Record<string, string>; body?: string }): string;
}
const MARKDOWN = '../src/pages/markdown.js';
const CURL = '../src/pages/curl.js';
const { escapeHtml, isSafeHref, renderInline, renderMarkdown } = (await import(MARKDOWN)) as MarkdownModule;
const { curlCommand, shellQuote } = (await import(CURL)) as CurlModule;

describe('renderMarkdown', () => {
  it('renders paragraphs, headings, lists, code, bold, italic and links', () => {
    const html = renderMarkdown(
      [
        '# Title',
        '',
        'A **bold** and *italic* and _also italic_ word, `code <b>` and [the docs](docs/api.md).',
        'Same paragraph, [site](https://example.com/a?b=1&c=2).',
        '',
        '- one',
        '- two with `x`',
        '',
        '1. first',
        '2. second',
        '',
        '```',
        'curl -d \'{"a": 1}\' <url>',
        '**not bold**',
        '```',
        '### Deeper',
      ].join('\n'),
      { headingLevel: 3 },
    );
    expect(html).toBe(
      [
        '<h3>Title</h3>',
        '<p>A <strong>bold</strong> and <em>italic</em> and <em>also italic</em> word, <code>code &lt;b&gt;</code> and ' +
          '<a href="docs/api.md">the docs</a>. Same paragraph, <a href="https://example.com/a?b=1&amp;c=2">site</a>.</p>',
        '<ul><li>one</li><li>two with <code>x</code></li></ul>',
        '<ol><li>first</li><li>second</li></ol>',
        '<pre><code>curl -d &#39;{&quot;a&quot;: 1}&#39; &lt;url&gt;\n**not bold**</code></pre>',
        '<h5>Deeper</h5>',
      ].join('\n'),
    );
  });

  it('leaves snake_case names and lone stars alone', () => {
    expect(renderMarkdown('did_oc and step_up_at, 2 * 3 * 4')).toBe('<p>did_oc and step_up_at, 2 * 3 * 4</p>');
  });

  it('escapes every tag and attribute of the input', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror="alert(1)">',
      '**<svg onload=alert(1)>**',
      '`</code><script>x</script>`',
      '# <iframe src="https://evil.example">',
      '- <a href="javascript:alert(1)">x</a>',
      '```',
      '</code></pre><script>x</script>',
      '```',
      '[x" onmouseover="alert(1)](https://example.com/" onmouseover="alert(1))',
      '\u0000',
      '\u00000\u0000',
    ].join('\n');
    const html = renderMarkdown(hostile);
    // The only tags are the renderer's own.
    const tags = [...html.matchAll(/<\/?([a-z0-9]+)/g)].map((match) => match[1]);
    expect(new Set(tags)).toEqual(new Set(['p', 'strong', 'code', 'h1', 'ul', 'li', 'pre']));
    expect(html).not.toMatch(/<(script|img|svg|iframe)/i);
    expect(html).not.toMatch(/\son\w+="/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('\u0000');
  });

  it('keeps a link only for http(s) and relative targets', () => {
    const links = (markdown: string) => [...renderMarkdown(markdown).matchAll(/href="([^"]*)"/g)].map((match) => match[1]);
    expect(links('[a](https://example.com) [b](http://example.com) [c](/api/openapi) [d](#get-api-challenge) [e](docs/errors.md)')).toEqual(
      ['https://example.com', 'http://example.com', '/api/openapi', '#get-api-challenge', 'docs/errors.md'],
    );
    for (const target of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:text/html,x', 'vbscript:x', 'java\tscript:alert(1)']) {
      const html = renderMarkdown(`[click](${target})`);
      expect(html, target).not.toContain('href');
      expect(html, target).toContain('click');
    }
    expect(renderMarkdown('[x](javascript&#58;alert(1))')).not.toContain('javascript:');
  });

  it('checks targets as a browser reads them', () => {
    expect(isSafeHref('https://example.com')).toBe(true);
    expect(isSafeHref('./a')).toBe(true);
    expect(isSafeHref('\u0001javascript:alert(1)')).toBe(false);
    expect(isSafeHref('java\nscript:alert(1)')).toBe(false);
    expect(isSafeHref('mailto:a@example.com')).toBe(false);
    expect(isSafeHref('\\\\evil.example')).toBe(false);
  });

  it('renders a summary inline: code and emphasis, no block, no markup of its own', () => {
    expect(renderInline('Finish a step-up: sets `step_up_at` on **this**\n# session <b>')).toBe(
      'Finish a step-up: sets <code>step_up_at</code> on <strong>this</strong> # session &lt;b&gt;',
    );
  });

  it('escapes the five characters HTML reads as markup', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

describe('curlCommand', () => {
  it('single-quotes every word, a quote inside included', () => {
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('$HOME `id` \\ "q"\n')).toBe(`'$HOME \`id\` \\ "q"\n'`);
  });

  it('names the method only when curl would not infer it, and never writes the API key', () => {
    const headers = { accept: 'application/json' };
    expect(curlCommand({ method: 'get', url: 'https://a.example/x?y=1&z=2', headers })).toBe(
      "curl 'https://a.example/x?y=1&z=2' -H 'accept: application/json'",
    );
    expect(curlCommand({ method: 'post', url: 'https://a.example/x', headers, body: '{"a":1}' })).toBe(
      `curl 'https://a.example/x' -H 'accept: application/json' --data-raw '{"a":1}'`,
    );
    expect(curlCommand({ method: 'delete', url: 'https://a.example/x', headers: { authorization: 'Bearer secret' } })).toBe(
      `curl -X DELETE 'https://a.example/x' -H "authorization: Bearer $OC_API_KEY"`,
    );
  });
});
