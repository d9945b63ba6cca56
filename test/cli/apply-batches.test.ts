// Apply batches (issue 20; src/operations/apply-batches.ts), through the
// built binary on MariaDB, on a generated cloud with orphan compute nodes
// (each unit: delete the provider, then soft-delete the node, held): the
// batched apply journals and writes exactly what one unit at a time does, in
// a fraction of the round trips, and undo of either restores every table; a
// node taken over while the batch waits for its row makes the batch fall
// back to unit by unit, which skips that one unit and applies the rest; a
// deadlock in the placement transaction, or in the held cell transaction
// after placement committed, is re-run unit by unit and loses nothing.
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { checksumMysqlDatabases, mysqlDatabaseOf, type Snapshot } from '../helpers/db-checksum.js';
import { describeMysql, waitForLockWait } from '../helpers/mysql.js';
import { createTestDeployment, type DbName, type TestDeployment } from '../helpers/test-deployment.js';
import { generateCloud, type CloudOptions, type CloudResult } from '../../src/sandbox/scale-cloud.js';

const DBS: readonly DbName[] = ['api', 'cell1', 'placement'];
const ORPHANS = 12;

interface Line {
  readonly type: string;
  readonly seq: number;
  readonly unit?: string;
  readonly change?: { readonly kind: string };
  readonly rows?: ReadonlyArray<{ table: string; key: unknown; before: Record<string, unknown> | null; after: Record<string, unknown> | null }>;
}

function journalOf(stderr: string): { path: string; lines: Line[] } {
  const path = /^journal: (.+)$/m.exec(stderr)?.[1];
  if (path === undefined) throw new Error(`no journal: line in ${stderr}`);
  const lines = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
  return { path, lines };
}

function roundTrips(stderr: string): number {
  const n = /round_trips=(\d+)/.exec(stderr)?.[1];
  if (n === undefined) throw new Error(`no stats line in ${stderr}`);
  return Number(n);
}

/** Each journaled change as text, without the columns that hold the time of the run, sorted. */
function changesOf(lines: readonly Line[]): string[] {
  const timeless = (row: Record<string, unknown> | null): unknown => (row === null ? null : Object.fromEntries(Object.entries(row).filter(([c]) => c !== 'deleted_at' && c !== 'updated_at')));
  return lines
    .filter((l) => l.type === 'change')
    .map((l) => `${l.unit} ${l.change?.kind} ${JSON.stringify((l.rows ?? []).map((r) => ({ ...r, before: timeless(r.before), after: timeless(r.after) })))}`)
    .sort();
}

/** The kinds of the journaled changes, in journal order. */
function kindsOf(lines: readonly Line[]): string[] {
  return lines.filter((l) => l.type === 'change').map((l) => l.change?.kind ?? '');
}

/** One unit at a time: each unit's provider, then its node. Batched: every unit's provider in one transaction, then every node in the held one. */
const SERIAL_KINDS = Array.from({ length: ORPHANS }, () => ['delete-provider', 'soft-delete-compute-node']).flat();
const BATCHED_KINDS = [...Array<string>(ORPHANS).fill('delete-provider'), ...Array<string>(ORPHANS).fill('soft-delete-compute-node')];

/** The run of one unit at a time: exit 4, every change committed once, each unit's provider then its node. */
function expectSerial(serial: { code: number | null; stderr: string }): ReturnType<typeof journalOf> {
  expect(serial.code, serial.stderr).toBe(4);
  const journal = journalOf(serial.stderr);
  expectAllCommitted(journal.lines);
  expect(kindsOf(journal.lines)).toEqual(SERIAL_KINDS);
  return journal;
}

/** The batched run: exit 4, the serial run's report and row images, every change committed once, in the batch's order. */
function expectSameAsSerial(batched: { code: number | null; stdout: string; stderr: string }, serial: { stdout: string }, serialJournal: ReturnType<typeof journalOf>): ReturnType<typeof journalOf> {
  expect(batched.code, batched.stderr).toBe(4);
  expect(batched.stdout).toBe(serial.stdout);
  const journal = journalOf(batched.stderr);
  expectAllCommitted(journal.lines);
  expect(kindsOf(journal.lines)).toEqual(BATCHED_KINDS);
  expect(changesOf(journal.lines)).toEqual(changesOf(serialJournal.lines));
  return journal;
}

/** Every change committed exactly once, none rolled back or left without its marker. */
function expectAllCommitted(lines: readonly Line[]): void {
  const changes = lines.filter((l) => l.type === 'change').map((l) => l.seq);
  const committed = lines.filter((l) => l.type === 'commit').map((l) => l.seq);
  expect(new Set(changes).size).toBe(changes.length);
  expect([...committed].sort((a, b) => a - b)).toEqual([...changes].sort((a, b) => a - b));
}

describe('apply batches [sqlite]', () => {
  let d: TestDeployment;
  afterEach(async () => {
    await d?.cleanup();
  });

  /** Every row of the tables the cleanup writes, as text, sorted (SQLite files are compared by content, not bytes). */
  async function rows(): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const [db, tables] of [
      ['cell1', ['compute_nodes']],
      ['placement', ['resource_providers', 'inventories', 'resource_provider_traits', 'resource_provider_aggregates', 'allocations', 'consumers']],
    ] as const) {
      for (const t of tables) out[`${db}.${t}`] = ((await d.knex(db)(t).select('*')) as unknown[]).map((r) => JSON.stringify(r)).sort();
    }
    return out;
  }

  it('writes and journals what one unit at a time does; undo of either restores every row', async () => {
    d = await createTestDeployment('sqlite', 'empty', 'bat');
    const cloud = await generateCloud(
      { api: d.dbs.api, cells: [d.dbs.cells.cell1], cellIds: [d.dbs.cellIds.cell1], placement: d.dbs.placement },
      { hostsPerCell: 4 * ORPHANS, instancesPerCell: 2 * ORPHANS, orphanFraction: 0.25 },
    );
    expect(cloud.orphanNodes).toBe(ORPHANS);
    const before = await rows();
    const apply = (env: Record<string, string>): ReturnType<typeof runBin> => runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply'], { env });

    const serial = await apply({ OS_NOVA_RECONCILE__APPLY_BATCH_UNITS: '1', OS_NOVA_RECONCILE__APPLY_CONCURRENCY: '1' });
    const serialJournal = expectSerial(serial);
    expect((await runBin([...d.args, 'undo', serialJournal.path, '--apply'], { env: { OS_NOVA_RECONCILE__APPLY_BATCH_UNITS: '1' } })).code).toBe(4);
    expect(await rows()).toEqual(before);

    const journal = expectSameAsSerial(await apply({}), serial, serialJournal);
    expect((await runBin([...d.args, 'compute_node', 'cleanup_orphans'])).code).toBe(0);
    const undo = await runBin([...d.args, 'undo', journal.path, '--apply']);
    expect(undo.code, undo.stderr).toBe(4);
    expect(undo.stdout).toContain(`${2 * ORPHANS} change(s) restored, 0 already restored, 0 refused.`);
    expect(await rows()).toEqual(before);
  }, 120_000);
});

/** A MariaDB deployment whose cell1 holds 4 × `units` hosts and 2 × `units` instances, broken as `broken` says. */
async function createBatchCloud(prefix: string, units: number, broken: Partial<CloudOptions>): Promise<{ d: TestDeployment; names: string[]; cloud: CloudResult }> {
  const d = await createTestDeployment('mysql', 'empty', prefix);
  const names = DBS.map((n) => mysqlDatabaseOf(d.url(n)));
  const cloud = await generateCloud(
    { api: d.dbs.api, cells: [d.dbs.cells.cell1], cellIds: [d.dbs.cellIds.cell1], placement: d.dbs.placement },
    { hostsPerCell: 4 * units, instancesPerCell: 2 * units, ...broken },
  );
  return { d, names, cloud };
}

describeMysql('apply batches [mariadb]', () => {
  let d: TestDeployment;
  let names: string[];
  let before: Snapshot;
  const checksum = (): Promise<Snapshot> => checksumMysqlDatabases(names);
  const cleanup = (env: Record<string, string> = {}, extra: readonly string[] = []): ReturnType<typeof runBin> =>
    runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--stats', ...extra], { env });

  beforeEach(async () => {
    let cloud: CloudResult;
    ({ d, names, cloud } = await createBatchCloud('bat', ORPHANS, { orphanFraction: 0.25 }));
    expect(cloud.orphanNodes).toBe(ORPHANS);
    before = await checksum();
  }, 120_000);
  afterEach(async () => {
    await d?.cleanup();
  });

  it('writes and journals what one unit at a time does, in a fraction of the round trips; undo of either restores every table', async () => {
    // One unit at a time, one after the other (apply_concurrency 1: side by side, their journal lines would interleave).
    const serial = await cleanup({ OS_NOVA_RECONCILE__APPLY_BATCH_UNITS: '1', OS_NOVA_RECONCILE__APPLY_CONCURRENCY: '1' });
    const serialJournal = expectSerial(serial);
    const serialUndo = await runBin([...d.args, 'undo', serialJournal.path, '--apply', '--stats'], { env: { OS_NOVA_RECONCILE__APPLY_BATCH_UNITS: '1' } });
    expect(serialUndo.code, serialUndo.stderr).toBe(4);
    expect(await checksum()).toEqual(before);

    // The default: the 12 units in one batch (apply_batch_units 64).
    const batched = await cleanup();
    const journal = expectSameAsSerial(batched, serial, serialJournal);
    // Each unit's changes in its order: the provider before the node.
    for (const unit of new Set(journal.lines.map((l) => l.unit).filter((u) => u !== undefined))) {
      expect(journal.lines.filter((l) => l.type === 'change' && l.unit === unit).map((l) => l.change?.kind)).toEqual(['delete-provider', 'soft-delete-compute-node']);
    }
    // 8 round trips a unit one at a time; a handful for the batch.
    expect(roundTrips(batched.stderr)).toBeLessThan(roundTrips(serial.stderr) - 6 * ORPHANS);
    expect((await runBin([...d.args, 'compute_node', 'cleanup_orphans'])).code).toBe(0);

    const undo = await runBin([...d.args, 'undo', journal.path, '--apply', '--stats']);
    expect(undo.code, undo.stderr).toBe(4);
    expect(await checksum()).toEqual(before);
    expect(roundTrips(undo.stderr)).toBeLessThan(roundTrips(serialUndo.stderr) - 2 * ORPHANS);
    // The undo journal holds every restore, committed; undoing it applies the cleanup again.
    const undoJournal = journalOf(undo.stderr);
    expectAllCommitted(undoJournal.lines);
    expect(undoJournal.lines.filter((l) => l.type === 'change')).toHaveLength(2 * ORPHANS);
  }, 120_000);

  it('a node taken over while the batch waits for its row: the batch falls back to unit by unit, which skips that unit only', async () => {
    const cell = d.knex('cell1');
    const plan = JSON.parse((await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--format', 'json'])).stdout) as {
      units: Array<{ id: string; changes: Array<{ kind: string; id?: number; provider_id?: number }> }>;
    };
    expect(plan.units).toHaveLength(ORPHANS);
    const victim = plan.units[4]?.changes.find((c) => c.kind === 'soft-delete-compute-node');
    const victimProvider = plan.units[4]?.changes.find((c) => c.kind === 'delete-provider')?.provider_id;
    const live = (await cell('compute_nodes').where('deleted', 0).whereNotIn('id', plan.units.flatMap((u) => u.changes.map((c) => c.id ?? -1))).first()) as { host: string };

    // nova-compute on a live host takes the node: its UPDATE holds the row, and commits while the batch waits.
    const trx = await cell.transaction();
    let r: Awaited<ReturnType<typeof runBin>>;
    try {
      await trx('compute_nodes').update({ host: live.host }).where('id', victim?.id ?? -1);
      const run = cleanup({}, ['--format', 'json']);
      await waitForLockWait(mysqlDatabaseOf(d.url('cell1')));
      // The batch waits for the row before anything of it is written in placement.
      expect(await d.knex('placement')('resource_providers').whereIn('id', plan.units.flatMap((u) => u.changes.map((c) => c.provider_id ?? -1)))).toHaveLength(ORPHANS);
      await trx.commit();
      r = await run;
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }

    expect(r.code, r.stderr).toBe(5);
    const doc = JSON.parse(r.stdout) as { applied: string[]; skipped: Array<{ unit: string; reason: string }> };
    expect(doc.applied).toHaveLength(ORPHANS - 1);
    expect(doc.skipped).toHaveLength(1);
    expect(doc.skipped[0]?.reason).toMatch(new RegExp(`^ownership changed: compute node .* is now on host ${live.host}, not`));
    // The taken node keeps its provider; the others are gone.
    expect(await d.knex('placement')('resource_providers').where('id', victimProvider ?? -1)).toHaveLength(1);
    expect(await cell('compute_nodes').where('id', victim?.id ?? -1).first()).toMatchObject({ deleted: 0, host: live.host });
    const journal = journalOf(r.stderr);
    expectAllCommitted(journal.lines);
    expect(journal.lines.filter((l) => l.type === 'change')).toHaveLength(2 * (ORPHANS - 1));
  }, 120_000);

  it('undo: a node changed since the apply is refused, and the other restores of its run go one by one', async () => {
    const applied = await cleanup();
    expect(applied.code, applied.stderr).toBe(4);
    const journal = journalOf(applied.stderr);
    const nodes = journal.lines.filter((l) => l.type === 'change' && l.change?.kind === 'soft-delete-compute-node');
    expect(nodes).toHaveLength(ORPHANS);
    // Someone archives one node's deletion time meanwhile: its row is neither the after- nor the before-image.
    const victim = nodes[7] as Line;
    const victimId = (victim.rows?.[0]?.key as { id: number }).id;
    await d.knex('cell1')('compute_nodes').where('id', victimId).update({ deleted_at: '2020-01-01 00:00:00' });

    const undo = await runBin([...d.args, 'undo', journal.path, '--apply', '--stats']);
    expect(undo.code, undo.stderr).toBe(5);
    expect(undo.stdout).toContain(`undo of compute_node cleanup_orphans (${journal.path}): ${2 * ORPHANS - 1} change(s) restored, 0 already restored, 1 refused.`);
    expect(undo.stdout).toContain(`  refused: change ${victim.seq} (${victim.unit}): compute_nodes {"id":${victimId}} changed since the journaled run; not restoring it`);
    // Every other node is live again; the refused one stays deleted; every provider is back.
    expect(await d.knex('cell1')('compute_nodes').whereIn('id', nodes.map((n) => (n.rows?.[0]?.key as { id: number }).id)).where('deleted', 0)).toHaveLength(ORPHANS - 1);
    expect(await d.knex('cell1')('compute_nodes').where('id', victimId).first()).toMatchObject({ deleted: victimId });
    const providers = journal.lines.filter((l) => l.type === 'change' && l.change?.kind === 'delete-provider').map((l) => (l.rows?.at(-1)?.key as { id: number }).id);
    expect(await d.knex('placement')('resource_providers').whereIn('id', providers)).toHaveLength(ORPHANS);
    const undoJournal = journalOf(undo.stderr);
    expectAllCommitted(undoJournal.lines);
    expect(undoJournal.lines.filter((l) => l.type === 'change')).toHaveLength(2 * ORPHANS - 1);
  }, 120_000);

  for (const [where, db, table, event] of [
    ['the placement transaction', 'placement', 'resource_providers', 'DELETE'],
    ['the held cell transaction, after placement committed', 'cell1', 'compute_nodes', 'UPDATE'],
  ] as const) {
    it(`a deadlock in ${where}: re-run unit by unit, every unit applied once, undo restores every table`, async () => {
      const k = d.knex(db);
      // One deadlock, as InnoDB reports it, on the 5th row the batch writes there (the flag is MyISAM: the failed statement does not take its update back).
      const rows = (await k(table).select('id').orderBy('id')) as Array<{ id: number }>;
      const plan = JSON.parse((await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--format', 'json'])).stdout) as {
        units: Array<{ changes: Array<{ kind: string; id?: number; provider_id?: number }> }>;
      };
      const ids = plan.units.flatMap((u) => u.changes.map((c) => (table === 'compute_nodes' ? (c.kind === 'soft-delete-compute-node' ? c.id : undefined) : c.provider_id))).filter((i) => i !== undefined);
      expect(ids).toHaveLength(ORPHANS);
      expect(rows.length).toBeGreaterThan(ORPHANS);
      await k.raw('CREATE TABLE nr_deadlocks (n INT) ENGINE=MyISAM');
      await k.raw('INSERT INTO nr_deadlocks VALUES (1)');
      await k.raw(
        `CREATE TRIGGER nr_deadlock BEFORE ${event} ON ${table} FOR EACH ROW BEGIN ` +
          `IF OLD.id = ${Number(ids[4])} AND (SELECT n FROM nr_deadlocks) > 0 THEN UPDATE nr_deadlocks SET n = n - 1; ` +
          `SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction'; END IF; END`,
      );
      const r = await cleanup({}, ['--format', 'json']);
      expect(r.code, r.stderr).toBe(4);
      expect(((await k('nr_deadlocks').first()) as { n: number }).n).toBe(0);
      const doc = JSON.parse(r.stdout) as { applied: string[]; skipped: unknown[] };
      expect(doc.applied).toHaveLength(ORPHANS);
      expect(doc.skipped).toEqual([]);
      const journal = journalOf(r.stderr);
      expectAllCommitted(journal.lines);
      expect(journal.lines.filter((l) => l.type === 'change')).toHaveLength(2 * ORPHANS);
      expect(await d.knex('placement')('resource_providers').whereIn('id', plan.units.flatMap((u) => u.changes.map((c) => c.provider_id ?? -1)))).toEqual([]);
      expect(await d.knex('cell1')('compute_nodes').whereIn('id', plan.units.flatMap((u) => u.changes.map((c) => c.id ?? -1))).where('deleted', 0)).toEqual([]);
      expect((await runBin([...d.args, 'compute_node', 'cleanup_orphans'])).code).toBe(0);

      const undo = await runBin([...d.args, 'undo', journal.path, '--apply']);
      expect(undo.code, undo.stderr).toBe(4);
      await k.raw('DROP TRIGGER nr_deadlock');
      await k.raw('DROP TABLE nr_deadlocks');
      expect(await checksum()).toEqual(before);
    }, 120_000);
  }
});

// placement cleanup_providers: each unit removes the allocations of every
// consumer on a stale provider, one change per consumer, then deletes the
// provider. A batch writes every unit's first removal as one run, then the
// rest, then every deletion as one run (writeOrder in db/apply-change.ts).
describeMysql('apply batches of placement cleanup_providers [mariadb]', () => {
  const STALE = 10;
  let d: TestDeployment;
  let names: string[];
  let before: Snapshot;
  const checksum = (): Promise<Snapshot> => checksumMysqlDatabases(names);
  const cleanupProviders = (env: Record<string, string> = {}): ReturnType<typeof runBin> => runBin([...d.args, 'placement', 'cleanup_providers', '--apply', '--stats'], { env });

  beforeEach(async () => {
    let cloud: CloudResult;
    ({ d, names, cloud } = await createBatchCloud('bap', STALE, { staleProviderFraction: 0.25 }));
    expect(cloud.staleProviders).toBe(STALE);
    // Units that differ: the first stale provider holds a second orphaned
    // consumer's allocations (its unit removes two consumers' allocations),
    // and the second's consumer also holds an allocation on a live provider
    // (its removal bumps that provider instead of deleting the consumer).
    const p = d.knex('placement');
    const stale = (await p('resource_providers as rp')
      .join('allocations as a', 'a.resource_provider_id', 'rp.id')
      .join('consumers as c', 'c.uuid', 'a.consumer_id')
      .where('rp.name', 'like', '%-gone-%')
      .distinct('rp.id', 'c.uuid', 'c.project_id', 'c.user_id')
      .orderBy('rp.id')) as Array<{ id: number; uuid: string; project_id: number; user_id: number }>;
    expect(stale).toHaveLength(STALE);
    const [first, second] = stale as [(typeof stale)[number], (typeof stale)[number]];
    const now = '2026-12-05 00:00:00';
    const extra = '5e5e5e5e-0000-4000-8000-000000000001';
    await p('consumers').insert({ uuid: extra, project_id: first.project_id, user_id: first.user_id, generation: 1, created_at: now, updated_at: now });
    const vcpu = ((await p('resource_classes').where('name', 'VCPU').first()) as { id: number } | undefined)?.id ?? 0;
    await p('allocations').insert({ resource_provider_id: first.id, consumer_id: extra, resource_class_id: vcpu, used: 1, created_at: now });
    const live = (await p('resource_providers').where('name', 'not like', '%-gone-%').orderBy('id').first()) as { id: number };
    await p('allocations').insert({ resource_provider_id: live.id, consumer_id: second.uuid, resource_class_id: vcpu, used: 1, created_at: now });
    before = await checksum();
  }, 120_000);
  afterEach(async () => {
    await d?.cleanup();
  });

  /** The kinds of each unit's journaled changes, in journal order, by unit. */
  function kindsByUnit(lines: readonly Line[]): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const l of lines) if (l.type === 'change' && l.unit !== undefined) (out[l.unit] ??= []).push(l.change?.kind ?? '');
    return out;
  }

  it("writes and journals what one unit at a time does, each unit's changes in its order, in a fraction of the round trips; undo of either restores every table", async () => {
    const plan = await runBin([...d.args, 'placement', 'cleanup_providers', '--format', 'json', '--stats']);
    expect(plan.code, plan.stderr).toBe(3);
    const reads = roundTrips(plan.stderr);
    const units = (JSON.parse(plan.stdout) as { units: Array<{ changes: Array<{ kind: string }> }> }).units;
    expect(units).toHaveLength(STALE);
    // The units differ as set up: one removes two consumers' allocations.
    expect(units.map((u) => u.changes.filter((c) => c.kind === 'remove-provider-allocations').length).sort()).toEqual([...Array<number>(STALE - 1).fill(1), 2]);

    const serial = await cleanupProviders({ OS_NOVA_RECONCILE__APPLY_BATCH_UNITS: '1', OS_NOVA_RECONCILE__APPLY_CONCURRENCY: '1' });
    expect(serial.code, serial.stderr).toBe(4);
    const serialJournal = journalOf(serial.stderr);
    expectAllCommitted(serialJournal.lines);
    const serialUndo = await runBin([...d.args, 'undo', serialJournal.path, '--apply', '--stats']);
    expect(serialUndo.code, serialUndo.stderr).toBe(4);
    expect(await checksum()).toEqual(before);

    const batched = await cleanupProviders();
    expect(batched.code, batched.stderr).toBe(4);
    expect(batched.stdout).toBe(serial.stdout);
    const journal = journalOf(batched.stderr);
    expectAllCommitted(journal.lines);
    expect(changesOf(journal.lines)).toEqual(changesOf(serialJournal.lines));
    expect(kindsByUnit(journal.lines)).toEqual(kindsByUnit(serialJournal.lines));
    // One at a time: BEGIN, two round trips per change, the journal, COMMIT, per unit. The batch: two round trips per run of changes.
    // The writes' round trips (the apply's beyond the dry run's reads): one at a
    // time, BEGIN, two per change and COMMIT, a unit; the batch, two per run of
    // changes (50 here when only consecutive changes of one kind formed a run).
    const serialWrites = roundTrips(serial.stderr) - reads;
    const batchedWrites = roundTrips(batched.stderr) - reads;
    expect(serialWrites).toBeGreaterThan(8 * STALE);
    expect(batchedWrites).toBeLessThan(serialWrites / 4);
    expect((await runBin([...d.args, 'placement', 'cleanup_providers'])).code).toBe(0);

    // The batch is journaled in the order written (every unit's removals, then
    // the deletions), so undo, in the reverse, restores long runs of changes
    // that share no row; the serial journal alternates a provider's deletion
    // and its removals, which share the provider's row, and its runs are short.
    const undo = await runBin([...d.args, 'undo', journal.path, '--apply', '--stats']);
    expect(undo.code, undo.stderr).toBe(4);
    expect(await checksum()).toEqual(before);
    // 18 against 36 here; 36 too when the batch was journaled unit after unit.
    expect(roundTrips(undo.stderr)).toBeLessThan(roundTrips(serialUndo.stderr) * 0.6);
    expect((await runBin([...d.args, 'placement', 'cleanup_providers', '--format', 'json'])).stdout).toBe(plan.stdout);
    expect(reads).toBeGreaterThan(0);
  }, 120_000);
});
