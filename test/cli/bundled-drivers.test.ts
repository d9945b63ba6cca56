// The built CLI loads knex and mysql2 from dist/src/bundle/db-drivers.cjs
// (scripts/bundle.mjs), not as the ~420 files they are in node_modules (issue
// 20: start-up). A run records every CommonJS module it loaded, through a
// --require hook that writes require.cache's keys when the process exits.
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
  "process.on('exit', () => require('node:fs').writeFileSync(process.env.RECORD_MODULES_TO, Object.keys(require.cache).join('\\n')));\n",
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loadedModules(args: readonly string[]): Promise<{ code: number; modules: string[] }> {
  const out = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
  const r = await runBin(args, { env: { NODE_OPTIONS: `--require ${HOOK}`, RECORD_MODULES_TO: out } });
  expect(r.stderr).toBe('');
  return { code: r.code, modules: readFileSync(out, 'utf8').split('\n') };
}

describeEachDialect('the bundled database drivers', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'bd');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('a database run loads knex (and mysql2) from db-drivers.cjs, no file of either package', async () => {
    const { code, modules } = await loadedModules([...d.args, 'cell_v2', 'list_hosts']);
    expect(code).toBe(0);
    expect(modules).toContain(DRIVERS);
    expect(modules.filter((m) => /[\\/]node_modules[\\/](knex|mysql2|lodash|tarn)[\\/]/.test(m))).toEqual([]);
    // better-sqlite3 is a native module: it stays outside the bundle, loaded only for SQLite.
    expect(modules.some((m) => /[\\/]node_modules[\\/]better-sqlite3[\\/]/.test(m))).toBe(dialect === 'sqlite');
  });
});

describe('db-drivers.cjs', () => {
  it('--version and help load no database driver at all', async () => {
    for (const args of [['--version'], ['help']]) {
      const { code, modules } = await loadedModules(args);
      expect(code).toBe(0);
      expect(modules.filter((m) => m === DRIVERS || /[\\/]node_modules[\\/]/.test(m))).toEqual([]);
    }
  });

  it('holds the dialects nova-reconcile opens; any other says it is not part of it', () => {
    const knex = createRequire(import.meta.url)(DRIVERS) as (config: object) => { destroy(): Promise<void> };
    expect(() => knex({ client: 'pg' })).toThrow("knex's postgres dialect is not part of nova-reconcile");
    expect(() => knex({ client: 'oracledb' })).toThrow("knex's oracledb dialect is not part of nova-reconcile");
    const mysql = knex({ client: 'mysql2', connection: { host: '127.0.0.1' } });
    void mysql.destroy();
  });
});
