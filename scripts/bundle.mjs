// Bundles the compiled CLI (dist/src, from tsc) into one ES module,
// dist/src/bundle/nova-reconcile.mjs, which bin/nova-reconcile loads.
//
// Why: most of a short run's start-up was Node resolving and loading about a
// hundred small modules (issue 20: --version took ~0.28 s of CPU, ~0.1 s of
// it `node -e 0`). One file loads in one step. Packages stay external in it
// (commander and chalk are loaded lazily, and are one file or a few); knex
// and mysql2 get a bundle of their own, below.
//
// Chunks, not one file (issue 20): the entry (main.ts, the process
// boundary), the dispatcher (imported by main.ts unless it answers
// `--version` itself), and one chunk per command module with the chunks the
// commands share, of which the dispatcher imports only the command it found
// (src/dispatch/command-modules.ts): `help` and the dispatcher's errors use
// the command index written in below.
//
// knex and mysql2 are bundled too, into a CommonJS file of their own,
// dist/src/bundle/db-drivers.cjs, which src/db/knex-factory.ts requires on
// the first connection (issue 20). Loaded from node_modules they are about 420
// small CommonJS files (252 of them lodash's), and resolving and reading
// them was the largest part of a short database run's fixed cost. Of knex's
// dialects only the ones nova-reconcile opens are bundled (mysql2 and
// better-sqlite3, with the mysql and sqlite3 dialects they extend); the others
// are replaced by a module that throws, so that no driver we never load is
// looked for. better-sqlite3 stays external: it is a native module, and
// optional.
// The drivers' file is compiled from a V8 code cache written at the end of
// this build (src/db/code-cache.ts; bench/README.md has what it saves and
// when it is not used).
//
// The bundle sits two folders below dist/ on purpose: src/db/migrate.ts finds
// the compiled migrations two folders up from its own module URL, then
// migrations/. Unbundled that URL is in dist/src/db/, bundled in
// dist/src/bundle/: both lead to dist/migrations.
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'esbuild';

// The dispatcher's command index (src/dispatch/command-index.ts), computed
// from tsc's output of the registry and written into the bundle as a
// constant, so that `help` and the dispatcher's errors do not load the
// commands (issue 20).
const { COMMANDS } = await import('../dist/src/dispatch/registry.js');
const { commandIndex } = await import('../dist/src/dispatch/command-index.js');
const COMMAND_INDEX = JSON.stringify(commandIndex(COMMANDS));

// No chunk of an earlier build may stay behind (npm pack ships the folder).
rmSync('dist/src/bundle', { recursive: true, force: true });
const USED_DIALECTS = new Set(['mysql2', 'mysql', 'better-sqlite3', 'sqlite3']);
await build({
  stdin: { contents: "module.exports = require('knex');", resolveDir: process.cwd(), sourcefile: 'db-drivers.cjs', loader: 'js' },
  outfile: 'dist/src/bundle/db-drivers.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // mysql and sqlite3 are the drivers of the base dialects: never loaded,
  // because mysql2 and better-sqlite3 override the driver they require.
  external: ['better-sqlite3', 'mysql', 'sqlite3'],
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  logLevel: 'warning',
  legalComments: 'none',
  plugins: [
    {
      name: 'unused-knex-dialects',
      setup(b) {
        b.onResolve({ filter: /^\.\/[a-z0-9-]+$/ }, (args) => {
          if (!args.importer.replaceAll('\\', '/').endsWith('/knex/lib/dialects/index.js')) return undefined;
          const dialect = args.path.slice(2);
          return USED_DIALECTS.has(dialect) ? undefined : { path: dialect, namespace: 'unused-knex-dialect' };
        });
        b.onLoad({ filter: /.*/, namespace: 'unused-knex-dialect' }, (args) => ({
          contents: `throw new Error(${JSON.stringify(`knex's ${args.path} dialect is not part of nova-reconcile`)});`,
          loader: 'js',
        }));
      },
    },
  ],
});
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
  // knex-factory.ts requires this file instead of the knex package.
  define: { __NOVA_RECONCILE_KNEX_MODULE__: JSON.stringify('./db-drivers.cjs'), __NOVA_RECONCILE_COMMAND_INDEX__: COMMAND_INDEX },
  logLevel: 'warning',
  legalComments: 'none',
});

// The drivers' V8 code cache (src/db/code-cache.ts), written after running
// what every database command runs first: knex with the mysql2 dialect, and
// a query built. A run with another Node.js compiles the file as before.
const { writeCodeCache } = await import('../dist/src/db/code-cache.js');
const { CODE_CACHE_SUFFIX } = await import('../dist/src/db/knex-factory.js');
const DRIVERS = resolve('dist/src/bundle/db-drivers.cjs');
writeCodeCache(DRIVERS, `${DRIVERS}${CODE_CACHE_SUFFIX}`, (knex) => {
  const db = knex({ client: 'mysql2', connection: { host: '127.0.0.1' }, pool: { min: 0, max: 1 } });
  db('compute_nodes').select('id', 'host').where('deleted', 0).whereIn('id', [1, 2]).orderBy('id').limit(10).toSQL();
  db('host_mappings').insert([{ host: 'a', cell_id: 1 }]).toSQL();
  void db.destroy();
});
