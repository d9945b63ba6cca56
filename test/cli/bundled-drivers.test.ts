// The built CLI loads knex and mysql2 from dist/src/bundle/db-drivers.cjs
// (scripts/bundle.mjs), not as the ~420 files they are in node_modules (issue
// 20: start-up), and compiles that file from the V8 code cache the build
// wrote beside it (src/db/code-cache.ts). A run records every CommonJS module
// it required and every script it compiled through node:vm, through a
// --require hook that writes them when the process exits.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';

const DRIVERS = fileURLToPath(new URL('../../dist/src/bundle/db-drivers.cjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'nova-reconcile-modules-'));
const HOOK = join(dir, 'record-modules.cjs');
writeFileSync(
  HOOK,
  [
    "const vm = require('node:vm');",
    'const scripts = [];',
    'const Script = vm.Script;',
    'vm.Script = class extends Script {',
    '  constructor(source, options) {',
    '    super(source, options);',
    '    scripts.push({ file: options && options.filename, withCache: options !== undefined && options.cachedData !== undefined, rejected: this.cachedDataRejected === true });',
    '  }',
    '};',
    "process.on('exit', () => require('node:fs').writeFileSync(process.env.RECORD_MODULES_TO, JSON.stringify({ modules: Object.keys(require.cache), scripts })));",
    '',
  ].join('\n'),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Loaded {
  readonly code: number;
  readonly modules: string[];
  readonly scripts: Array<{ file: string; withCache: boolean; rejected: boolean }>;
}

async function loadedModules(args: readonly string[]): Promise<Loaded> {
  const out = join(dir, `modules-${Math.random().toString(36).slice(2)}.json`);
  const r = await runBin(args, { env: { NODE_OPTIONS: `--require ${HOOK}`, RECORD_MODULES_TO: out } });
  expect(r.stderr).toBe('');
  return { code: r.code, ...(JSON.parse(readFileSync(out, 'utf8')) as Omit<Loaded, 'code'>) };
}

describeEachDialect('the bundled database drivers', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'bd');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('a database run loads knex (and mysql2) from db-drivers.cjs, compiled from its code cache, and no file of either package', async () => {
    const { code, modules, scripts } = await loadedModules([...d.args, 'cell_v2', 'list_hosts']);
    expect(code).toBe(0);
    expect(scripts).toEqual([{ file: DRIVERS, withCache: true, rejected: false }]);
    expect(modules.filter((m) => /[\\/]node_modules[\\/](knex|mysql2|lodash|tarn)[\\/]/.test(m))).toEqual([]);
    // better-sqlite3 is a native module: it stays outside the bundle, loaded only for SQLite.
    expect(modules.some((m) => /[\\/]node_modules[\\/]better-sqlite3[\\/]/.test(m))).toBe(dialect === 'sqlite');
  });
});

describe('db-drivers.cjs', () => {
  it('--version and help load no database driver at all', async () => {
    for (const args of [['--version'], ['help']]) {
      const { code, modules, scripts } = await loadedModules(args);
      expect(code).toBe(0);
      expect(scripts).toEqual([]);
      expect(modules.filter((m) => m === DRIVERS || /[\\/]node_modules[\\/]/.test(m))).toEqual([]);
    }
  });

  it('ships with the license of every package whose code it holds', () => {
    // The bundle names each module it holds by its path in node_modules.
    const held = new Set<string>();
    for (const m of readFileSync(DRIVERS, 'utf8').matchAll(/"node_modules\/([^"]+)"/g)) {
      const last = (m[1] as string).split('/node_modules/').pop() as string;
      const parts = last.split('/');
      held.add(last.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string));
    }
    expect([...held]).toEqual(expect.arrayContaining(['knex', 'mysql2', 'lodash', 'iconv-lite', 'tarn']));
    const notices = readFileSync(`${DRIVERS}.LICENSES.txt`, 'utf8');
    const sections = new Map([...notices.matchAll(/^== (\S+) \S+ \(([^)]+)\) ==\n\n([\s\S]*?)(?=\n== |(?![\s\S]))/gm)].map((m) => [m[1] as string, m[3] as string]));
    expect([...sections.keys()].sort()).toEqual([...held].sort());
    for (const [name, text] of sections) expect(text, name).toMatch(/Permission is hereby granted|Apache License|ISC License|BSD/);
  });

  it('holds the dialects nova-reconcile opens; any other says it is not part of it', () => {
    const knex = createRequire(import.meta.url)(DRIVERS) as (config: object) => { destroy(): Promise<void> };
    expect(() => knex({ client: 'pg' })).toThrow("knex's postgres dialect is not part of nova-reconcile");
    expect(() => knex({ client: 'oracledb' })).toThrow("knex's oracledb dialect is not part of nova-reconcile");
    const mysql = knex({ client: 'mysql2', connection: { host: '127.0.0.1' } });
    void mysql.destroy();
  });
});
