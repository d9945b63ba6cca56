// Bundles the compiled CLI (dist/src, from tsc) into one ES module,
// dist/src/bundle/nova-reconcile.mjs, which bin/nova-reconcile loads.
//
// Why: most of a short run's start-up was Node resolving and loading about a
// hundred small modules (issue 20: --version took ~0.28 s of CPU, ~0.1 s of
// it `node -e 0`). One file loads in one step. Packages stay external (they
// are installed beside it, and knex loads its driver by name at run time);
// only the project's own modules are joined.
//
// Two files, not one (issue 20): the entry (main.ts, the process boundary)
// and one chunk with the rest, which main.ts imports only when a command
// runs. `--version` is answered by the entry alone, without loading the
// dispatcher, commander or chalk.
//
// The bundle sits two folders below dist/ on purpose: src/db/migrate.ts finds
// the compiled migrations two folders up from its own module URL, then
// migrations/. Unbundled that URL is in dist/src/db/, bundled in
// dist/src/bundle/: both lead to dist/migrations.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

// No chunk of an earlier build may stay behind (npm pack ships the folder).
rmSync('dist/src/bundle', { recursive: true, force: true });
await build({
  entryPoints: { 'nova-reconcile': 'dist/src/main.js' },
  outdir: 'dist/src/bundle',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
  legalComments: 'none',
});
