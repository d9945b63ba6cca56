// The package an operator installs (issue 12): HEAD exported alone, packed
// with `npm pack` (prepack builds it), installed from the tarball with
// `npm install -g --prefix G`, the operator's path (the bin on PATH, the man
// page under G/share/man), and run from there as an operator runs it.
//
// The tarball depends on nothing with an install script (issue 38): npm
// installs it without a warning, and without better-sqlite3. SQLite (the
// sandbox, sqlite:// URLs) then runs on Node's built-in SQLite where this
// Node.js has it (22.16 and later: the LTS step of .ci/run), and says in one
// line what to do where it has not (Node.js 20); better-sqlite3 installed
// beside it, as `npm install -g better-sqlite3` puts it, serves too.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/cli/version.js';
import { loadNodeSqlite } from '../../src/db/node-sqlite.js';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { exportHead, linkNodeModules, npmEnv, REPO, run, type Export, type Run } from '../helpers/repo-export.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';

let ex: Export;
let tarball: string;
let packedFiles: string[];
let globalPrefix: string;
let globalInstall: Run;

beforeAll(() => {
  ex = exportHead('pack');
  linkNodeModules(ex.repo);
  const pack = run('npm', ['pack', '--json', '--pack-destination', ex.root], { cwd: ex.repo, env: npmEnv() });
  if (pack.code !== 0) throw new Error(`npm pack failed (${pack.code}): ${pack.stderr}`);
  // prepack's build prints on stdout before the JSON document.
  const report = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('\n[') + 1)) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const first = report[0];
  if (first === undefined) throw new Error(`npm pack reported nothing: ${pack.stdout}`);
  tarball = join(ex.root, first.filename);
  packedFiles = first.files.map((f) => f.path).sort();

  globalPrefix = join(ex.root, 'global');
  // --loglevel=warn: what an operator sees of npm's warnings (the default shows them too).
  globalInstall = run('npm', ['install', '-g', '--prefix', globalPrefix, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=warn', tarball], { cwd: ex.root, env: npmEnv() });
  if (globalInstall.code !== 0) throw new Error(`npm install -g failed (${globalInstall.code}): ${globalInstall.stderr}`);
}, 600_000);

afterAll(() => {
  if (ex !== undefined) rmSync(ex.root, { recursive: true, force: true });
});

const globalBin = (): string => join(globalPrefix, 'bin', 'nova-reconcile');
/** Where `npm install -g` puts packages: nova-reconcile, and better-sqlite3 when an operator adds it. */
const globalModules = (): string => join(globalPrefix, 'lib', 'node_modules');
/** This Node.js has a built-in SQLite the tool can use (Node.js 22.16 and later). */
const BUILTIN_SQLITE = 'module' in loadNodeSqlite();

/** Run an installed nova-reconcile through its own shebang, with this test's Node.js first on PATH. */
function installed(bin: string, args: readonly string[], extraEnv: Record<string, string> = {}): Run {
  return run(bin, args, {
    cwd: ex.root,
    env: { PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`, HOME: '/nonexistent-home', ...extraEnv },
    timeoutMs: 60_000,
  });
}

describe('npm pack', () => {
  it('ships the CLI, its JS migrations, the man page, the JSON schemas, README with the operations pages it links to, LICENSE and package.json, and nothing else', () => {
    const allowed = /^(bin\/nova-reconcile|dist\/src\/.+\.js|dist\/src\/bundle\/(nova-reconcile|chunk-[A-Za-z0-9]+)\.mjs|dist\/src\/bundle\/db-drivers\.cjs(\.v8-cache|\.LICENSES\.txt)?|dist\/migrations\/.+\.js|man\/nova-reconcile\.1|schemas\/[a-z0-9_-]+\.schema\.json|docs\/operations\/[a-z]+\.md|README\.md|LICENSE|package\.json)$/;
    expect(packedFiles.filter((f) => !allowed.test(f))).toEqual([]);
    for (const f of [
      'bin/nova-reconcile',
      'dist/src/main.js',
      'dist/src/bundle/nova-reconcile.mjs',
      'dist/src/bundle/db-drivers.cjs',
      'dist/src/bundle/db-drivers.cjs.v8-cache',
      'dist/src/bundle/db-drivers.cjs.LICENSES.txt',
      'dist/migrations/ddl.js',
      'dist/migrations/api/0001_nova_api_zed.js',
      'dist/migrations/cell/0001_nova_cell_zed.js',
      'dist/migrations/placement/0001_placement_8.js',
      'man/nova-reconcile.1',
      'schemas/plan.schema.json',
      'schemas/error.schema.json',
      'README.md',
      'docs/operations/safety.md',
      'LICENSE',
      'package.json',
    ]) {
      expect(packedFiles).toContain(f);
    }
    expect(packedFiles.some((f) => f.startsWith('dist/bench/'))).toBe(false);
    // The README's pages for operators go with it, so its links work where it is installed.
    const pages = [...readFileSync(join(ex.repo, 'README.md'), 'utf8').matchAll(/\]\((docs\/operations\/[^)#]+)/g)].map((m) => m[1]);
    expect(pages.length).toBeGreaterThan(5);
    for (const page of pages) expect(packedFiles).toContain(page);
  });

  it('the packed JS names no source map (none is shipped)', () => {
    const root = join(globalPrefix, 'lib', 'node_modules', 'nova-reconcile');
    const js = packedFiles.filter((f) => f.endsWith('.js'));
    expect(js.length).toBeGreaterThan(50);
    for (const f of js) expect(readFileSync(join(root, f), 'utf8')).not.toContain('sourceMappingURL');
  });

  it('LICENSE is the Apache License 2.0, as package.json says', () => {
    const text = readFileSync(join(ex.repo, 'LICENSE'), 'utf8');
    expect(text).toContain('Apache License');
    expect(text).toContain('Version 2.0, January 2004');
    expect(text).toContain('END OF TERMS AND CONDITIONS');
    expect((JSON.parse(readFileSync(join(ex.repo, 'package.json'), 'utf8')) as { license: string }).license).toBe('Apache-2.0');
  });
});

// Without man (a minimal container) the page is still installed; only its
// rendering is not checked. CI installs man, so there a missing one fails.
const skipMan = spawnSync('man', ['--version']).error !== undefined && process.env['CI'] !== 'true';
if (skipMan) console.warn('pack-install.test: man is not installed, the man page rendering check is skipped');

describe('npm install -g of the tarball', () => {
  it('puts a working nova-reconcile in PREFIX/bin: --version and help', async () => {
    expect(installed(globalBin(), ['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    const help = installed(globalBin(), ['help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe((await runBin(['help'])).stdout);
    expect(help.stdout).toContain('Usage: nova-reconcile');
  });

  it.skipIf(skipMan)('installs the man page: `man -l` renders it, and `man nova-reconcile` finds it under PREFIX/share/man', () => {
    const page = join(globalPrefix, 'share', 'man', 'man1', 'nova-reconcile.1');
    expect(existsSync(page)).toBe(true);
    const env = { MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '100', LANG: 'C.UTF-8' };
    const byFile = installed('man', ['-l', page], env);
    expect(byFile.code).toBe(0);
    expect(byFile.stdout).toContain('NOVA-RECONCILE(1)');
    expect(byFile.stdout).toContain('cell_v2 discover_hosts');
    const byName = installed('man', ['nova-reconcile'], { ...env, MANPATH: join(globalPrefix, 'share', 'man') });
    expect(byName.code).toBe(0);
    expect(byName.stdout).toBe(byFile.stdout);
  });

  it('installs without a warning, and installs nothing that runs an install script (no better-sqlite3)', () => {
    expect(globalInstall.stderr).toBe('');
    expect(readdirSync(globalModules()).filter((n) => !n.startsWith('.'))).toEqual(['nova-reconcile']);
    const tree = join(globalModules(), 'nova-reconcile', 'node_modules');
    const installedPackages = readdirSync(tree).filter((n) => !n.startsWith('.'));
    expect(installedPackages).toContain('commander');
    expect(installedPackages).not.toContain('better-sqlite3');
    for (const name of installedPackages) {
      const pkg = JSON.parse(readFileSync(join(tree, name, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
      for (const hook of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts?.[hook], `${name} ${hook}`).toBeUndefined();
      expect(existsSync(join(tree, name, 'binding.gyp')), `${name} binding.gyp`).toBe(false);
    }
  });
});

describe('SQLite from the installed package, without better-sqlite3', () => {
  it.runIf(BUILTIN_SQLITE)('sandbox create and audit run on Node.js\'s built-in SQLite', () => {
    const dir = join(ex.root, 'sbx-builtin');
    const created = installed(globalBin(), ['sandbox', 'create', dir, '--scenario', 'deleted-ironic-node']);
    expect(created.stderr).not.toMatch(/error|warning/i);
    expect(created.code).toBe(0);
    const audit = installed(globalBin(), ['--config-file', join(dir, 'nova.conf'), 'audit', '--ironic-nodes', join(dir, 'ironic-nodes.json'), '--format', 'json']);
    expect(audit.stderr).toBe('');
    expect(audit.code).toBe(3);
    expect((JSON.parse(audit.stdout) as { findings: Array<{ kind: string }> }).findings.map((f) => f.kind).sort()).toEqual(['orphan-node-ironic-deleted', 'orphan-node-service-deleted']);
  });

  it.skipIf(BUILTIN_SQLITE)('sandbox create says in one line what to do, exit 2, and leaves DIR untouched', () => {
    const dir = join(ex.root, 'sbx-none');
    const r = installed(globalBin(), ['sandbox', 'create', dir]);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'nova-reconcile: error: sandbox create needs an SQLite driver, and there is none: this Node.js has no built-in SQLite (node:sqlite came in Node.js 22), ' +
        'and better-sqlite3 is not installed (run it with Node.js 22.16 or later, or install better-sqlite3 beside it with ' +
        '`npm install -g better-sqlite3` (it compiles a native module: a C++ toolchain and the Node.js headers))\n',
    });
    expect(existsSync(dir)).toBe(false);
  });

  it.skipIf(BUILTIN_SQLITE)('a sqlite:// URL fails as nova-manage fails (An error has occurred, exit 255), naming what is missing', () => {
    const conf = join(ex.root, 'sqlite-nova.conf');
    writeFileSync(conf, `[api_database]\nconnection = sqlite:///${join(ex.root, 'api.sqlite')}\n`);
    const r = installed(globalBin(), ['--config-file', conf, 'cell_v2', 'list_cells']);
    expect(r.code).toBe(255);
    expect(r.stdout).toMatch(/^An error has occurred:\nthe API database sqlite:\/\/\/.* needs an SQLite driver, and there is none: .* better-sqlite3 is not installed\n$/);
  });

  // The checkout's compiled better-sqlite3 stands in for `npm install -g better-sqlite3`
  // (a real one compiles for minutes); it only loads in the Node.js it was built for.
  const devDriverLoads = ((): boolean => {
    try {
      const Driver = createRequire(join(REPO, 'package.json'))('better-sqlite3') as new (f: string) => { close(): void };
      new Driver(':memory:').close();
      return true;
    } catch {
      return false;
    }
  })();
  it.runIf(devDriverLoads)('with better-sqlite3 installed beside it (a global sibling), sandbox create runs on it', () => {
    const link = join(globalModules(), 'better-sqlite3');
    symlinkSync(join(REPO, 'node_modules', 'better-sqlite3'), link);
    try {
      const dir = join(ex.root, 'sbx-after');
      const r = installed(globalBin(), ['sandbox', 'create', dir, '--scenario', 'empty'], { NOVA_RECONCILE_SQLITE_DRIVER: 'better-sqlite3' });
      expect(r.stderr).not.toContain('error');
      expect(r.code).toBe(0);
      expect(existsSync(join(dir, 'nova.conf'))).toBe(true);
    } finally {
      rmSync(link);
    }
  });
});

// knex, mysql2 and their dependencies are in dist/src/bundle/db-drivers.cjs:
// installing them again would only add some 75 packages nothing loads.
describe('the packages the bundle holds', () => {
  const BUNDLED = ['knex', 'mysql2', 'lodash', 'iconv-lite'];
  it('are not installed', () => {
    const trees = [globalModules(), join(globalModules(), 'nova-reconcile', 'node_modules')];
    for (const tree of trees) for (const name of BUNDLED) expect(existsSync(join(tree, name)), join(tree, name)).toBe(false);
  });

  it('are not dependencies of the packed package.json', () => {
    const pkg = JSON.parse(readFileSync(join(globalPrefix, 'lib', 'node_modules', 'nova-reconcile', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['chalk', 'commander']);
  });
});

describeMysql('the installed CLI against MariaDB', () => {
  let d: TestDeployment;
  beforeAll(async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'pkg');
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('cell_v2 list_cells prints what the checkout prints', async () => {
    const expected = await runBin([...d.args, 'cell_v2', 'list_cells']);
    expect(expected.code).toBe(0);
    expect(expected.stdout).toContain('cell1');
    expect(installed(globalBin(), [...d.args, 'cell_v2', 'list_cells'])).toEqual({ code: 0, stdout: expected.stdout, stderr: '' });
  });

  it('a reconciliation command (audit) prints what the checkout prints', async () => {
    const expected = await runBin([...d.args, 'audit', '--format', 'json']);
    const r = installed(globalBin(), [...d.args, 'audit', '--format', 'json']);
    expect(r.code).toBe(expected.code);
    expect(r.stdout).toBe(expected.stdout);
  });
});
