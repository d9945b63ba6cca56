// The package an operator installs (issue 12): HEAD exported alone, packed
// with `npm pack` (prepack builds it), installed from the tarball into
// temporary prefixes, and run from there as an operator runs it.
//
// Two installs, because npm ignores --omit=optional for a global install of a
// tarball (npm/cli#8284, open):
// - global (`npm install -g --prefix G`), the operator's path: the bin on
//   PATH, the man page under G/share/man. --ignore-scripts keeps better-sqlite3
//   from compiling for minutes here, so it is present but unbuilt, as after a
//   Node.js upgrade: the SQLite commands must say so in one line.
// - local with --omit=optional (`npm install --prefix L`), where npm does
//   omit it: no better-sqlite3 at all, and every MySQL command still works.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/cli/version.js';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { exportHead, linkNodeModules, npmEnv, REPO, run, type Export, type Run } from '../helpers/repo-export.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';

let ex: Export;
let tarball: string;
let packedFiles: string[];
let globalPrefix: string;
let localPrefix: string;

const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

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
  const g = run('npm', ['install', '-g', '--prefix', globalPrefix, '--omit=optional', '--ignore-scripts', ...NPM_FLAGS, tarball], { cwd: ex.root, env: npmEnv() });
  if (g.code !== 0) throw new Error(`npm install -g failed (${g.code}): ${g.stderr}`);

  localPrefix = join(ex.root, 'local');
  mkdirSync(localPrefix);
  const l = run('npm', ['install', '--prefix', localPrefix, '--omit=optional', '--no-save', ...NPM_FLAGS, tarball], { cwd: localPrefix, env: npmEnv() });
  if (l.code !== 0) throw new Error(`npm install --omit=optional failed (${l.code}): ${l.stderr}`);
}, 600_000);

afterAll(() => {
  if (ex !== undefined) rmSync(ex.root, { recursive: true, force: true });
});

const globalBin = (): string => join(globalPrefix, 'bin', 'nova-reconcile');
const localBin = (): string => join(localPrefix, 'node_modules', '.bin', 'nova-reconcile');

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

  it('sandbox create with an unbuilt better-sqlite3 fails in one line, exit 2, DIR untouched', () => {
    const dir = join(ex.root, 'sbx-global');
    const r = installed(globalBin(), ['sandbox', 'create', dir]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^nova-reconcile: error: sandbox create needs the SQLite driver better-sqlite3, which is installed but cannot be loaded: .*npm rebuild better-sqlite3.*\)\n$/);
    expect(existsSync(dir)).toBe(false);
  });
});

// knex, mysql2 and their dependencies are in dist/src/bundle/db-drivers.cjs:
// installing them again would only add some 75 packages nothing loads.
describe('the packages the bundle holds', () => {
  const BUNDLED = ['knex', 'mysql2', 'lodash', 'iconv-lite'];
  it('are not installed by either install', () => {
    const trees = [join(globalPrefix, 'lib', 'node_modules'), join(globalPrefix, 'lib', 'node_modules', 'nova-reconcile', 'node_modules'), join(localPrefix, 'node_modules')];
    for (const tree of trees) for (const name of BUNDLED) expect(existsSync(join(tree, name)), join(tree, name)).toBe(false);
  });

  it('are not dependencies of the packed package.json', () => {
    const pkg = JSON.parse(readFileSync(join(globalPrefix, 'lib', 'node_modules', 'nova-reconcile', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['chalk', 'commander']);
  });
});

describe('npm install --omit=optional of the tarball', () => {
  it('installs no better-sqlite3', () => {
    expect(readdirSync(join(localPrefix, 'node_modules'))).toContain('commander');
    expect(existsSync(join(localPrefix, 'node_modules', 'better-sqlite3'))).toBe(false);
    expect(installed(localBin(), ['--version']).stdout).toBe(`${VERSION}\n`);
  });

  it('sandbox create says in one line what to install, exit 2, and leaves DIR untouched', () => {
    const dir = join(ex.root, 'sbx-local');
    const r = installed(localBin(), ['sandbox', 'create', dir]);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'nova-reconcile: error: sandbox create needs the SQLite driver better-sqlite3, an optional dependency that is not installed ' +
        '(install it with `npm install -g better-sqlite3` (it compiles a native module: a C++ toolchain and the Node.js headers), ' +
        'or reinstall nova-reconcile without --omit=optional)\n',
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('a sqlite:// URL fails as nova-manage fails (An error has occurred, exit 255), naming the driver', () => {
    const conf = join(ex.root, 'sqlite-nova.conf');
    writeFileSync(conf, `[api_database]\nconnection = sqlite:///${join(ex.root, 'api.sqlite')}\n`);
    const r = installed(localBin(), ['--config-file', conf, 'cell_v2', 'list_cells']);
    expect(r.code).toBe(255);
    expect(r.stdout).toMatch(/^An error has occurred:\nthe API database sqlite:\/\/\/.* needs the SQLite driver better-sqlite3, an optional dependency that is not installed\n$/);
  });

  // The checkout's compiled better-sqlite3 stands in for `npm install better-sqlite3`
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
  it.runIf(devDriverLoads)('with better-sqlite3 added beside it, sandbox create works (it is loaded only when needed)', () => {
    const link = join(localPrefix, 'node_modules', 'better-sqlite3');
    symlinkSync(join(REPO, 'node_modules', 'better-sqlite3'), link);
    try {
      const dir = join(ex.root, 'sbx-after');
      const r = installed(localBin(), ['sandbox', 'create', dir, '--scenario', 'empty']);
      expect(r.stderr).not.toContain('error');
      expect(r.code).toBe(0);
      expect(existsSync(join(dir, 'nova.conf'))).toBe(true);
    } finally {
      rmSync(link);
    }
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

  it('cell_v2 list_cells from both installs prints what the checkout prints, without better-sqlite3 loaded', async () => {
    const expected = await runBin([...d.args, 'cell_v2', 'list_cells']);
    expect(expected.code).toBe(0);
    expect(expected.stdout).toContain('cell1');
    for (const bin of [globalBin(), localBin()]) {
      expect(installed(bin, [...d.args, 'cell_v2', 'list_cells'])).toEqual({ code: 0, stdout: expected.stdout, stderr: '' });
    }
  });

  it('a reconciliation command (audit) runs from the --omit=optional install', async () => {
    const expected = await runBin([...d.args, 'audit', '--format', 'json']);
    const r = installed(localBin(), [...d.args, 'audit', '--format', 'json']);
    expect(r.code).toBe(expected.code);
    expect(r.stdout).toBe(expected.stdout);
  });
});
