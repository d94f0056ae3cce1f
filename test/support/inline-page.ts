/**
 * What a page carries inline (src/web/pages.ts `inlineHead`,
 * docs/architecture.md "Page assets"): its one style, its catalog's JSON
 * data block and its one module script, read back out of the HTML, and the
 * policy that allows exactly those by their hashes.
 */
import { createHash } from 'node:crypto';
// Every feature's page words, joined to the shared ones (src/page-words.ts), as the app does at start.
import '../../src/page-words.js';
import { PAGE_CSP } from '../../src/web/pages.js';

export interface InlineParts {
  readonly style: string;
  readonly script: string;
  /** The catalog's messages, or undefined for a page whose script says nothing in words. */
  readonly messages: Readonly<Record<string, string>> | undefined;
  /** The raw text of the catalog's data block. */
  readonly data: string | undefined;
}

/** The inline parts of `html`; throws unless it holds one style and one inline module script. */
export function inlineParts(html: string): InlineParts {
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1] as string);
  const scripts = [...html.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)].map((match) => match[1] as string);
  if (styles.length !== 1 || scripts.length !== 1) throw new Error(`inline-page: ${styles.length} styles, ${scripts.length} scripts`);
  const data = /<script type="application\/json" id="page-messages">([\s\S]*?)<\/script>/.exec(html)?.[1];
  return {
    style: styles[0] as string,
    script: scripts[0] as string,
    data,
    messages: data === undefined ? undefined : (JSON.parse(data) as Record<string, string>),
  };
}

function hash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The policy a page with `html`'s inline parts must be answered with. */
export function inlinePolicy(html: string): string {
  const { style, script } = inlineParts(html);
  return PAGE_CSP.replace("script-src 'self'", `script-src 'self' ${hash(script)}`).replace(
    "style-src 'self'",
    `style-src 'self' ${hash(style)}`,
  );
}
