// Issue 20: undo runs units side by side, as the apply does ([nova_reconcile]
// apply_concurrency, default 4), and must stay exact. On MariaDB through the
// built binary (the first case on SQLite too):
//   - units that share a provider (each removal bumps its generation) and a
//     consumer: undo with concurrency > 1 restores every table to its
//     checksum, and every row's changes are undone in exact reverse order of
//     their apply (read off the two journals);
//   - a rebalance of a generated ironic cloud (units of 2-4 changes): the
//     undo really overlaps units at concurrency 4 (its journal interleaves
//     them) and not at 1, and restores every table either way.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { checksumMysqlDatabases, mysqlDatabaseOf } from '../helpers/db-checksum.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, describeEachDialect, type DbName, type TestDeployment } from '../helpers/test-deployment.js';
import { generateCloud } from '../../src/sandbox/scale-cloud.js';
import { libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { insertAllocations, insertConsumer } from '../../src/sandbox/rows.js';

const DBS: readonly DbName[] = ['api', 'cell1', 'cell2', 'placement'];

interface Line {
  readonly type: string;
  readonly seq?: number;
  readonly unit?: string;
  readonly target?: { readonly db: string; readonly cellUuid?: string };
  readonly change?: { readonly kind: string };
  readonly rows?: ReadonlyArray<{ readonly table: string; readonly key: Record<string, unknown> }>;
}

function readLines(path: string): Line[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

function journalPathOf(stderr: string): string {
  const path = /^journal: (.+)$/m.exec(stderr)?.[1];
  if (path === undefined) throw new Error(`no journal: line in ${stderr}`);
  return path;
}

/** How many times the unit of consecutive change entries switches back to a unit seen before. */
function interleavings(lines: readonly Line[]): number {
  const units = lines.filter((l) => l.type === 'change').map((l) => l.unit);
  const finished = new Set<string | undefined>();
  let back = 0;
  for (let i = 1; i < units.length; i += 1) {
    if (units[i] !== units[i - 1]) {
      finished.add(units[i - 1]);
      if (finished.has(units[i])) back += 1;
    }
  }
  return back;
}

/** Per row (database, table, key): the units that wrote it, in journal order. */
function writersPerRow(lines: readonly Line[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const l of lines) {
    if (l.type !== 'change') continue;
    for (const r of l.rows ?? []) {
      const k = `${l.target?.db}:${l.target?.cellUuid ?? ''}|${r.table}|${JSON.stringify(r.key)}`;
      const list = out.get(k);
      if (list === undefined) out.set(k, [l.unit ?? '']);
      else list.push(l.unit ?? '');
    }
  }
  return out;
}

/** The undo journal writes every row in exactly the reverse order the apply wrote it. */
function expectReverseOrderPerRow(apply: readonly Line[], undo: readonly Line[]): void {
  const applied = writersPerRow(apply);
  const undone = writersPerRow(undo);
  expect([...undone.keys()].sort()).toEqual([...applied.keys()].sort());
  for (const [row, units] of applied) expect(undone.get(row), row).toEqual([...units].reverse());
}

/** Every row of the placement tables a delete and its undo touch, in key order. */
async function placementRows(d: TestDeployment): Promise<Record<string, unknown[]>> {
  const placement = d.knex('placement');
  const out: Record<string, unknown[]> = {};
  for (const table of ['allocations', 'consumers', 'resource_providers', 'inventories', 'projects', 'users']) out[table] = await placement(table).select('*').orderBy('id');
  return out;
}

/** The whole deployment on MariaDB (CHECKSUM TABLE), the placement rows on SQLite (its files' bytes move when rows are re-inserted). */
async function stateOf(d: TestDeployment): Promise<unknown> {
  if (d.dialect === 'mysql') return checksumMysqlDatabases(DBS.map((n) => mysqlDatabaseOf(d.url(n))));
  return placementRows(d);
}

describeEachDialect('undo side by side, units sharing a provider', (dialect) => {
  let d: TestDeployment;
  afterEach(async () => {
    await d?.cleanup();
  });

  it('units sharing a provider and a consumer: undo at concurrency 4 restores every row exactly, each row in reverse order', async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'uc');
    const placement = d.knex('placement');
    const providerOf = async (host: string): Promise<number> =>
      Number(((await placement('resource_providers').where('name', libvirtHypervisorHostname(host)).first()) as { id: number }).id);
    const shared = await providerOf('compute-3');
    const others = [await providerOf('compute-1'), await providerOf('compute-2'), await providerOf('compute-4'), await providerOf('compute-5')];
    // 12 orphaned consumers, each on the shared provider and on one of 4 others:
    // every delete bumps a generation another delete bumps too, and each
    // consumer's two deletes (one unit per provider) share its consumer row.
    const consumers: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const uuid = `deadbeef-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
      consumers.push(uuid);
      await insertConsumer(placement, { uuid, projectId: 'p', userId: 'u' });
      await insertAllocations(placement, [
        { providerId: shared, consumerUuid: uuid, resourceClass: 'VCPU', used: 1 },
        { providerId: others[i % others.length] ?? shared, consumerUuid: uuid, resourceClass: 'MEMORY_MB', used: 64 },
      ]);
    }
    const generation = async (id: number): Promise<number> => Number(((await placement('resource_providers').where('id', id).first()) as { generation: number }).generation);
    const sharedBefore = await generation(shared);
    const before = await stateOf(d);
    const rowsBefore = await placementRows(d);

    const journal = join(d.dir, 'delete.jsonl');
    const del = await runBin([...d.args, 'placement', 'audit', '--delete', '--journal', journal]);
    expect(del.code, del.stdout + del.stderr).toBe(4);
    const applied = readLines(journal);
    expect(applied.filter((l) => l.type === 'change')).toHaveLength(24);
    const sharedAfter = await generation(shared);
    expect(sharedAfter).toBeGreaterThanOrEqual(sharedBefore + 12);
    expect(await placement('consumers').whereIn('uuid', consumers)).toEqual([]);
    const appliedState = await stateOf(d);

    // The dry run simulates it all (sequentially, in the same order) and changes nothing.
    const dry = await runBin([...d.args, 'undo', journal]);
    expect(dry.code, dry.stdout + dry.stderr).toBe(3);
    expect(dry.stdout).toContain('24 change(s) would be restored, 0 already restored, 0 would be refused.');

    const undoJournal = join(d.dir, 'undo.jsonl');
    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', undoJournal], { env: { OS_NOVA_RECONCILE__APPLY_CONCURRENCY: '4' } });
    expect(undo.code, undo.stdout + undo.stderr).toBe(4);
    expect(undo.stdout).toContain('24 change(s) restored, 0 already restored, 0 refused.');
    expect(await generation(shared)).toBe(sharedBefore);
    expect(await stateOf(d)).toEqual(before);
    expect(await placementRows(d)).toEqual(rowsBefore);
    const undone = readLines(undoJournal);
    const committed = new Set(undone.filter((l) => l.type === 'commit').map((l) => l.seq));
    expect(undone.filter((l) => l.type === 'change').every((l) => committed.has(l.seq))).toBe(true);
    expectReverseOrderPerRow(applied, undone);

    // The undo is undoable in turn, side by side too, and lands on the applied state again.
    const redo = await runBin([...d.args, 'undo', undoJournal, '--apply']);
    expect(redo.code, redo.stdout + redo.stderr).toBe(4);
    expect(await generation(shared)).toBe(sharedAfter);
    expect(await stateOf(d)).toEqual(appliedState);
  }, 120_000);
});

describeMysql('undo side by side, rebalance [mariadb]', () => {
  let d: TestDeployment;
  afterEach(async () => {
    await d?.cleanup();
  });

  it('rebalance: undo overlaps units at concurrency 4 and not at 1, and restores every table both times', async () => {
    d = await createTestDeployment('mysql', 'empty', 'ucr');
    const names = DBS.map((n) => mysqlDatabaseOf(d.url(n)));
    await generateCloud(
      { api: d.dbs.api, cells: [d.dbs.cells.cell1, d.dbs.cells.cell2], cellIds: [d.dbs.cellIds.cell1, d.dbs.cellIds.cell2], placement: d.dbs.placement },
      { hostsPerCell: 4, nodesPerHost: 15, failedOverFraction: 0.5 },
    );
    const before = await checksumMysqlDatabases(names);
    for (const concurrency of ['1', '4']) {
      const apply = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
      expect(apply.code, apply.stderr).toBe(4);
      const applyPath = journalPathOf(apply.stderr);
      const undo = await runBin([...d.args, 'undo', applyPath, '--apply'], { env: { OS_NOVA_RECONCILE__APPLY_CONCURRENCY: concurrency } });
      expect(undo.code, undo.stdout + undo.stderr).toBe(4);
      expect(undo.stdout).toMatch(/: \d+ change\(s\) restored, 0 already restored, 0 refused\.$/m);
      const undone = readLines(journalPathOf(undo.stderr));
      if (concurrency === '1') expect(interleavings(undone)).toBe(0);
      else expect(interleavings(undone)).toBeGreaterThan(0);
      expectReverseOrderPerRow(readLines(applyPath), undone);
      // Each unit's own changes are undone newest first.
      const applied = readLines(applyPath).filter((l) => l.type === 'change');
      for (const unit of new Set(applied.map((l) => l.unit))) {
        const kinds = applied.filter((l) => l.unit === unit).map((l) => l.change?.kind);
        expect(kinds.length, String(unit)).toBeGreaterThan(1);
        expect(undone.filter((l) => l.type === 'change' && l.unit === unit).map((l) => l.change?.kind), String(unit)).toEqual([...kinds].reverse());
      }
      expect(await checksumMysqlDatabases(names)).toEqual(before);
    }
  }, 240_000);
});
