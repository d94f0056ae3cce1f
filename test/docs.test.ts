/**
 * The repository explains itself: every document a comment, test or page
 * cites is in `docs/`, every cited section and quoted heading exists there,
 * every link in the README and the docs resolves, and docs/architecture.md
 * names only paths that exist. No file refers to a
 * document outside the repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((path) => path !== '' && /\.(ts|js|mjs|md|json|html|css|sh|service|yml|yaml)$|^Dockerfile$|^\.ci\/run$/.test(path))
  .filter((path) => !path.startsWith('node_modules/') && existsSync(join(root, path)));
const texts = new Map(tracked.map((path) => [path, readFileSync(join(root, path), 'utf8')]));

/** GitHub's heading anchors: lowercased, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function headingsOf(markdown: string): string[] {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return [...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((match) => match[1]!.trim());
}

describe('documents cited by the code', () => {
  it('never names a document that is not in the repository', () => {
    const outside = /\b(?:PROTOCOL|INTERFACE|PERFORMANCE|STYLE)\.md\b|\.\.\/shared\//;
    const self = 'test/docs.test.ts';
    expect(tracked.filter((path) => path !== self && outside.test(texts.get(path)!))).toEqual([]);
  });

  it('cites only docs that exist, by sections and headings they have', () => {
    const problems: string[] = [];
    const citation = /docs\/([a-z-]+\.md)(?:,? ?§(\d+))?(?: "([^"\n]+)")?/g;
    for (const [path, text] of texts) {
      for (const match of text.matchAll(citation)) {
        const [whole, name, section, quoted] = match;
        const doc = texts.get(`docs/${name}`);
        if (doc === undefined) {
          problems.push(`${path}: ${whole} (no such document)`);
          continue;
        }
        if (section !== undefined && !new RegExp(`^## ${section}\\. `, 'm').test(doc))
          problems.push(`${path}: ${whole} (no section ${section})`);
        if (quoted !== undefined && !doc.toLowerCase().includes(quoted.toLowerCase()))
          problems.push(`${path}: ${whole} (not in the document)`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  it('names only files and folders that exist', () => {
    const text = texts.get('docs/architecture.md')!;
    const named = text.matchAll(/(?<![\w./-])((?:src|test|scripts|docs|bench|deploy|packages|types|\.ci)\/[\w./<>*{}-]*)/g);
    const missing = new Set<string>();
    for (const [, raw] of named) {
      const path = raw!.replace(/[.,;:]+$/, '');
      // A pattern or a placeholder (`src/pages/*.js`, `messages-<lang>.js`) names no one file.
      if (/[<>*{}]/.test(path)) continue;
      if (!existsSync(join(root, path))) missing.add(path);
    }
    expect([...missing]).toEqual([]);
  });
});

describe('links in the README and the docs', () => {
  const documents = tracked.filter(
    (path) => path === 'README.md' || /^docs\/.*\.md$/.test(path) || /^packages\/[^/]+\/README\.md$/.test(path),
  );

  it('finds the documents', () => {
    expect(documents).toEqual(
      expect.arrayContaining(['README.md', 'docs/protocol.md', 'docs/api.md', 'docs/architecture.md', 'docs/errors.md']),
    );
  });

  it('resolves every relative link and anchor', () => {
    const problems: string[] = [];
    for (const path of documents) {
      const text = texts.get(path)!.replace(/^```[\s\S]*?^```/gm, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const resolved = file === '' ? path : normalize(join(dirname(path), file));
        if (!existsSync(join(root, resolved))) {
          problems.push(`${path}: ${target} (no file)`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md')) {
          const anchors = headingsOf(readFileSync(join(root, resolved), 'utf8')).map(slug);
          if (!anchors.includes(anchor)) problems.push(`${path}: ${target} (no heading)`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
