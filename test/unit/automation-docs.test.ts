// The automation pages (docs/operations/automation.md and monitoring.md)
// quote the files in contrib/ instead of carrying copies of their own: each
// quoted block must equal its file, byte for byte, so an edit to one without
// the other fails here. The clients tier (npm run test:clients) runs the
// files themselves.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The files the pages quote whole, with the fence's language. */
const QUOTED: ReadonlyArray<readonly [string, string]> = [
  ['contrib/puppet/nova_reconcile/manifests/discover_hosts.pp', 'puppet'],
  ['contrib/cron/nova-reconcile', 'cron'],
  ['contrib/systemd/nova-reconcile-audit.service', 'ini'],
  ['contrib/systemd/nova-reconcile-audit.timer', 'ini'],
  ['contrib/systemd/nova-reconcile-discover-hosts.service', 'ini'],
  ['contrib/systemd/nova-reconcile-discover-hosts.timer', 'ini'],
  ['contrib/prometheus/nova-reconcile.rules.yml', 'yaml'],
];

/** The automation pages, as one text. */
function automationSection(): string {
  return ['docs/operations/automation.md', 'docs/operations/monitoring.md'].map((p) => readFileSync(join(REPO, p), 'utf8')).join('\n');
}

function fencedBlocks(markdown: string): Array<{ lang: string; body: string }> {
  return [...markdown.matchAll(/^```([^\n`]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: (m[1] ?? '').trim(), body: m[2] ?? '' }));
}

/** Whether the section holds a block in `lang` equal to `content`. */
function quotes(section: string, lang: string, content: string): boolean {
  return fencedBlocks(section).some((b) => b.lang === lang && b.body === content);
}

describe('the automation pages quote contrib/', () => {
  const section = automationSection();

  it.each(QUOTED)('%s is quoted whole, as a %s block', (path, lang) => {
    const content = readFileSync(join(REPO, path), 'utf8');
    expect(content.endsWith('\n')).toBe(true);
    expect(quotes(section, lang, content)).toBe(true);
  });

  it('the check fails on a quote that differs from its file by one character', () => {
    const content = readFileSync(join(REPO, 'contrib/cron/nova-reconcile'), 'utf8');
    expect(quotes(section, 'cron', content.replace('*/10', '*/11'))).toBe(false);
  });

  it('every contrib/ path the section names exists', () => {
    const named = [...section.matchAll(/`(contrib\/[^`\s]*)/g)].map((m) => (m[1] ?? '').replace(/\*$/, ''));
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((p) => !existsSync(join(REPO, p)))).toEqual([]);
  });

  it('carries no unit, cron line or alert rule of its own: every ini, cron and rules block is a contrib/ file', () => {
    const files = QUOTED.map(([path]) => readFileSync(join(REPO, path), 'utf8'));
    const own = fencedBlocks(section).filter((b) => ['ini', 'cron', 'puppet'].includes(b.lang) || (b.lang === 'yaml' && b.body.startsWith('groups:')));
    expect(own.filter((b) => !files.includes(b.body)).map((b) => b.body.slice(0, 80))).toEqual([]);
  });
});
