// The committed man page is generated from the command specs; this fails
// when a command, option or exit code changed without `node scripts/gen-man.mjs`.
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
