// Every relative link of the documentation resolves: README.md,
// CONTRIBUTING.md and docs/ link to files of the repository, and a link's
// #anchor to a heading of its target, as GitHub renders them.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir)).flatMap((name) => {
    const rel = join(dir, name);
    return statSync(join(REPO, rel)).isDirectory() ? markdownFiles(rel) : rel.endsWith('.md') ? [rel] : [];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; a repeated one gets -1, -2... */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = markdown.replace(/^```[\s\S]*?^```$/gm, '');
  for (const m of text.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = (m[1] ?? '')
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of a Markdown text (inline links and images), outside code. */
function links(markdown: string): string[] {
  const text = markdown.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? '').filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l));
}

const FILES = ['README.md', 'CONTRIBUTING.md', ...markdownFiles('docs')];

describe('the documentation links', () => {
  it('covers the README, CONTRIBUTING and every page of docs/', () => {
    expect(FILES).toContain('docs/operations/safety.md');
    expect(FILES.flatMap((f) => links(readFileSync(join(REPO, f), 'utf8'))).length).toBeGreaterThan(20);
  });

  it.each(FILES)('%s: every relative link names a file of the repository, and its #anchor a heading there', (file) => {
    const broken: string[] = [];
    for (const link of links(readFileSync(join(REPO, file), 'utf8'))) {
      const [path = '', anchor] = link.split('#', 2);
      const target = path === '' ? join(REPO, file) : join(REPO, dirname(file), decodeURIComponent(path));
      if (relative(REPO, target).startsWith('..') || !existsSync(target)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor !== undefined && !(statSync(target).isFile() && anchors(readFileSync(target, 'utf8')).has(anchor))) broken.push(`${link}: no heading #${anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it("computes GitHub's anchors", () => {
    expect([...anchors("# Logging (oslo.log's options)\n## Output: tables, JSON and colour\n## `--cell` option\n## Output: tables, JSON and colour\n")]).toEqual([
      'logging-oslologs-options',
      'output-tables-json-and-colour',
      '--cell-option',
      'output-tables-json-and-colour-1',
    ]);
  });
});
