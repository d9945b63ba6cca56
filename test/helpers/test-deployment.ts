// A complete test deployment (API, cell0, cell1, cell2, placement) with a
// nova.conf, on SQLite or on MariaDB, populated with a sandbox scenario. The
// same scenario builders serve the sandbox, these tests and the conformance
// tier.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { migrateSchema, type SchemaKind } from '../../src/db/migrate.js';
import { mapSandboxCells } from '../../src/sandbox/create-sandbox.js';
import { findScenario, type ScenarioDatabases } from '../../src/sandbox/scenarios.js';
import { afterAll, describe } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { withDeployment, type Deployment } from '../../src/db/deployment-databases.js';
import { generateCloud, type CloudOptions, type CloudResult } from '../../src/sandbox/scale-cloud.js';
import { createScratchDatabases, describeMysql } from './mysql.js';
import { createSqliteDatabases } from './sqlite.js';

export type TestDialect = 'sqlite' | 'mysql';
export type DbName = 'api' | 'cell0' | 'cell1' | 'cell2' | 'placement';

export interface TestDeployment {
  readonly dialect: TestDialect;
  readonly dir: string;
  readonly confPath: string;
  /** `--config-file <confPath>` */
  readonly args: readonly string[];
  readonly dbs: ScenarioDatabases;
  knex(name: DbName): Knex;
  url(name: DbName): string;
  cleanup(): Promise<void>;
}

// Deployments a test file created and did not clean up itself (one made per
// test, or a failing beforeAll): removed when the file ends, so nothing is
// left in the temporary directory or on the MariaDB server.
const open = new Set<TestDeployment>();
afterAll(async () => {
  for (const d of [...open]) await d.cleanup();
});

const NAMES: readonly DbName[] = ['api', 'cell0', 'cell1', 'cell2', 'placement'];
const KIND: Readonly<Record<DbName, SchemaKind>> = { api: 'api', cell0: 'cell', cell1: 'cell', cell2: 'cell', placement: 'placement' };

export async function createTestDeployment(dialect: TestDialect, scenarioName = 'empty', prefix = 't'): Promise<TestDeployment> {
  const scenario = findScenario(scenarioName);
  if (scenario === undefined) throw new Error(`unknown scenario ${scenarioName}`);
  const dir = mkdtempSync(join(tmpdir(), 'nova-reconcile-test-'));
  const store =
    dialect === 'sqlite'
      ? (() => {
          const s = createSqliteDatabases(NAMES);
          return { knex: (n: DbName) => s.knex(n), url: (n: DbName) => s.url(n), cleanup: () => s.cleanup() };
        })()
      : await (async () => {
          const s = await createScratchDatabases(prefix, NAMES);
          return { knex: (n: DbName) => s.knex(n), url: (n: DbName) => s.url(n), cleanup: () => s.drop() };
        })();
  try {
    for (const name of NAMES) await migrateSchema(store.knex(name), KIND[name]);
    const ids = await mapSandboxCells(store.knex('api'), { cell0: store.url('cell0'), cell1: store.url('cell1'), cell2: store.url('cell2') });
    const dbs: ScenarioDatabases = {
      api: store.knex('api'),
      cells: { cell1: store.knex('cell1'), cell2: store.knex('cell2') },
      placement: store.knex('placement'),
      ...ids,
    };
    await scenario.populate(dbs);
    const confPath = join(dir, 'nova.conf');
    writeFileSync(
      confPath,
      [
        '[DEFAULT]',
        'transport_url = rabbit://guest:guest@127.0.0.1:5672/',
        '[api_database]',
        `connection = ${store.url('api')}`,
        '[database]',
        `connection = ${store.url('cell1')}`,
        '[placement_database]',
        `connection = ${store.url('placement')}`,
        '[nova_reconcile]',
        `journal_dir = ${join(dir, 'journal')}`,
        '',
      ].join('\n'),
    );
    const deployment: TestDeployment = {
      dialect,
      dir,
      confPath,
      args: ['--config-file', confPath],
      dbs,
      knex: store.knex,
      url: store.url,
      cleanup: async () => {
        if (!open.delete(deployment)) return;
        try {
          await store.cleanup();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
    open.add(deployment);
    return deployment;
  } catch (err) {
    await store.cleanup().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Host mappings as [host, cell uuid], sorted by host. */
export async function hostMappings(d: TestDeployment): Promise<Array<[string, string]>> {
  const rows: Array<{ host: string; uuid: string }> = await d
    .knex('api')('host_mappings as hm')
    .join('cell_mappings as cm', 'cm.id', 'hm.cell_id')
    .select('hm.host', 'cm.uuid')
    .orderBy('hm.host');
  return rows.map((r) => [r.host, r.uuid]);
}

/** compute_nodes as [host, uuid, mapped] for live rows, by id. */
export async function nodeFlags(d: TestDeployment, cell: 'cell1' | 'cell2'): Promise<Array<[string, string, number]>> {
  const rows: Array<{ host: string; uuid: string; mapped: number }> = await d.knex(cell)('compute_nodes').select('host', 'uuid', 'mapped').where('deleted', 0).orderBy('id');
  return rows.map((r) => [r.host, r.uuid, Number(r.mapped)]);
}

/** Run the same suite on SQLite (always) and MariaDB (when it answers; required with CI=true). */
export function describeEachDialect(name: string, fn: (dialect: TestDialect) => void): void {
  describe(`${name} [sqlite]`, () => fn('sqlite'));
  describeMysql(`${name} [mariadb]`, () => fn('mysql'));
}

/** The test deployment opened as the commands open it (its nova.conf alone, no environment). */
export function useDeployment<T>(d: TestDeployment, fn: (dep: Deployment) => Promise<T>): Promise<T> {
  const config = loadConfig({ sources: [{ kind: 'file', path: d.confPath }], env: {}, home: d.dir, searchRoots: [], isWritableDir: () => false });
  return withDeployment(config, {}, fn);
}

/** A generated cloud (src/sandbox/scale-cloud.ts) in the deployment's cell1 and cell2 and placement. */
export function generateTestCloud(d: TestDeployment, options: CloudOptions): Promise<CloudResult> {
  return generateCloud({ api: d.dbs.api, cells: [d.dbs.cells.cell1, d.dbs.cells.cell2], cellIds: [d.dbs.cellIds.cell1, d.dbs.cellIds.cell2], placement: d.dbs.placement }, options);
}

/** Every row of each table, as sorted JSON lines with values as strings (the same on SQLite and MariaDB): for "nothing else changed" checks. */
export async function dumpTables(k: Knex, tables: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows: Array<Record<string, unknown>> = await k(t).select('*');
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  }
  return out;
}
