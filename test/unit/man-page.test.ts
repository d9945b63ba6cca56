// The committed man page is generated from the command specs; this fails
// when a command, option or exit code changed without `node scripts/gen-man.mjs`.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { renderManPage } from '../../src/cli/man-page.js';
import { COMMANDS } from '../../src/dispatch/registry.js';
import { VERSION } from '../../src/cli/version.js';

it('man/nova-reconcile.1 is up to date (run `npm run build && node scripts/gen-man.mjs`)', () => {
  const committed = readFileSync(new URL('../../man/nova-reconcile.1', import.meta.url), 'utf8');
  expect(committed).toBe(renderManPage(COMMANDS, VERSION));
});

it('covers every command and every exit code', () => {
  const page = renderManPage(COMMANDS, VERSION);
  for (const c of COMMANDS) {
    expect(page).toContain(c.path.join(' ').replace(/-/g, '\\-'));
    for (const [code] of c.exitCodes) expect(page).toContain(`.B ${code}`);
  }
});

it('the version matches package.json', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  expect(VERSION).toBe(pkg.version);
});

// groff's special characters: `\(xx` takes exactly two characters, so
// `\(u2026` is `\(u2` (unknown: man prints "can't find special character
// 'u2'") followed by "026"; a Unicode code point is `\[u2026]`.
const GLYPHS_2 = new Set(['bu', 'em', 'en', 'lq', 'rq', 'aq', 'dq', 'co', 'mu', 'de', 'ti', 'ha']);

it("uses only special characters groff knows: two-letter names after \\(, Unicode as \\[uXXXX]", () => {
  const page = renderManPage(COMMANDS, VERSION);
  const twoLetter = [...page.matchAll(/\\\((..)/g)].map((m) => m[1]);
  expect(twoLetter.filter((g) => !GLYPHS_2.has(g!))).toEqual([]);
  expect(page).not.toMatch(/\\\(u[0-9A-Fa-f]/);
  const bracketed = [...page.matchAll(/\\\[([^\]]*)\]/g)].map((m) => m[1]);
  expect(bracketed.filter((g) => !/^u[0-9A-F]{4,6}$/.test(g!) && !GLYPHS_2.has(g!))).toEqual([]);
});

const groff = spawnSync('groff', ['--version'], { encoding: 'utf8' });
const haveGroff = groff.error === undefined && groff.status === 0;
if (!haveGroff) console.warn('man-page.test: groff not found, the rendering check at 80 columns is skipped');

it.skipIf(!haveGroff)('renders at 80 columns without a groff warning (as man -l does: preconv, -man, utf8)', () => {
  const r = spawnSync('groff', ['-k', '-man', '-Tutf8', '-ww', '-z', '-rLL=80n'], {
    input: renderManPage(COMMANDS, VERSION),
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  expect(r.stderr).toBe('');
});
