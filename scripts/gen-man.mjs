#!/usr/bin/env node
// Regenerate man/nova-reconcile.1 from the command specs (run after `npm run build`).
import { writeFileSync } from 'node:fs';
const { COMMANDS } = await import('../dist/src/dispatch/registry.js');
const { renderManPage } = await import('../dist/src/cli/man-page.js');
const { VERSION } = await import('../dist/src/cli/version.js');
writeFileSync(new URL('../man/nova-reconcile.1', import.meta.url), renderManPage(COMMANDS, VERSION));
console.log('wrote man/nova-reconcile.1');
