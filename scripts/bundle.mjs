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
// looked for. better-sqlite3 stays external: it is a native module, not a
// dependency of the package, and src/db/knex-factory.ts hands the dialect the
// driver src/db/sqlite-driver.ts chose (better-sqlite3 or node:sqlite).
// The drivers' file is compiled from a V8 code cache written at the end of
// this build (src/db/code-cache.ts; bench/README.md has what it saves and
// when it is not used).
//
// The bundle sits two folders below dist/ on purpose: src/db/migrate.ts finds
// the compiled migrations two folders up from its own module URL, then
// migrations/. Unbundled that URL is in dist/src/db/, bundled in
// dist/src/bundle/: both lead to dist/migrations.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

// db-drivers.cjs holds other projects' code (knex, mysql2, lodash and the
// rest of their dependencies), whose licenses ask that their notices go
// with every copy: the build writes them beside it, one section per
// package, from each package's own LICENSE file, and fails when a bundled
// package has none (test/cli/bundled-drivers.test.ts compares the file
// with the packages the bundle names; test/package/pack-install.test.ts
// checks that npm pack ships it).
function bundledPackages(metafile) {
  const roots = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input.replaceAll('\\', '/'));
    if (m !== null) roots.add(m[1]);
  }
  return [...roots].sort();
}

function writeLicenses(metafile, outfile) {
  const sections = bundledPackages(metafile).map((root) => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const file = readdirSync(root).find((f) => /^licen[cs]e(\.(md|txt|markdown))?$/i.test(f));
    if (file === undefined) throw new Error(`bundle: ${pkg.name} ${pkg.version} (${root}) has no LICENSE file to ship with db-drivers.cjs`);
    const license = typeof pkg.license === 'string' ? pkg.license : 'see below';
    // An Apache-2.0 package's NOTICE file goes with it too (none of today's has one).
    const notice = readdirSync(root).find((f) => /^notice(\.(md|txt))?$/i.test(f));
    const texts = [file, ...(notice === undefined ? [] : [notice])].map((f) => readFileSync(join(root, f), 'utf8').trim());
    return `== ${pkg.name} ${pkg.version} (${license}) ==\n\n${texts.join('\n\n')}\n`;
  });
  writeFileSync(
    outfile,
    `db-drivers.cjs, beside this file, bundles the code of the packages below (minified, with the\n` +
      `database dialects nova-reconcile does not open left out). Each package's license follows.\n\n${sections.join('\n')}`,
  );
}

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
const drivers = await build({
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
  // The licenses of the bundled packages are written beside the file instead
  // (writeLicenses below): most of them carry no legal comment to keep.
  legalComments: 'none',
  metafile: true,
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
writeLicenses(drivers.metafile, 'dist/src/bundle/db-drivers.cjs.LICENSES.txt');
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
