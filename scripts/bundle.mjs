// Bundles the compiled CLI (dist/src, from tsc) into one ES module,
// dist/src/bundle/nova-reconcile.mjs, which bin/nova-reconcile loads.
//
// Why: most of a short run's start-up was Node resolving and loading about a
// hundred small modules (issue 20: --version took ~0.28 s of CPU, ~0.1 s of
// it `node -e 0`). One file loads in one step. Packages stay external (they
// are installed beside it, and knex loads its driver by name at run time);
// only the project's own modules are joined.
//
// The bundle sits two folders below dist/ on purpose: src/db/migrate.ts finds
// the compiled migrations two folders up from its own module URL, then
// migrations/. Unbundled that URL is in dist/src/db/, bundled in
// dist/src/bundle/: both lead to dist/migrations.
import { build } from 'esbuild';

await build({
  entryPoints: ['dist/src/main.js'],
  outfile: 'dist/src/bundle/nova-reconcile.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
  legalComments: 'none',
});
