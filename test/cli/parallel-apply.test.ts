// Rebalance applies different ironic nodes side by side ([nova_reconcile]
// apply_concurrency). On MariaDB, on a generated cloud whose hosts half
// failed over: the parallel apply really overlaps units (their journal
// entries interleave; apply_batch_units = 1, so that each unit is written on
// its own) while apply_concurrency = 1 does not; every planned
// change is journaled and committed exactly once; the audit is clean after
// it; and undo of the parallel journal brings every table back to its
// checksum before the apply.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { checksumMysqlDatabases, mysqlDatabaseOf } from '../helpers/db-checksum.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, type DbName, type TestDeployment } from '../helpers/test-deployment.js';
import { generateCloud } from '../../src/sandbox/scale-cloud.js';

const DBS: readonly DbName[] = ['api', 'cell1', 'cell2', 'placement'];

interface Line {
  readonly type: string;
  readonly seq?: number;
  readonly unit?: string;
  readonly change?: { readonly kind: string };
}

function journalOf(stderr: string): Line[] {
  const path = /^journal: (.+)$/m.exec(stderr)?.[1];
  if (path === undefined) throw new Error(`no journal: line in ${stderr}`);
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
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

describeMysql('parallel apply of rebalance', () => {
  let d: TestDeployment;
  let names: string[];
  beforeAll(async () => {
    d = await createTestDeployment('mysql', 'empty', 'par');
    names = DBS.map((n) => mysqlDatabaseOf(d.url(n)));
    await generateCloud(
      { api: d.dbs.api, cells: [d.dbs.cells.cell1, d.dbs.cells.cell2], cellIds: [d.dbs.cellIds.cell1, d.dbs.cellIds.cell2], placement: d.dbs.placement },
      { hostsPerCell: 4, nodesPerHost: 15, failedOverFraction: 0.5 },
    );
  }, 120_000);
  afterAll(async () => {
    await d?.cleanup();
  });

  it('overlaps units, applies each planned change once, and undo restores every table', async () => {
    const plan = await runBin([...d.args, 'compute_node', 'rebalance', '--format', 'json']);
    expect(plan.code).toBe(3);
    const planned = (JSON.parse(plan.stdout) as { units: { id: string; changes: { kind: string }[] }[] }).units;
    expect(planned).toHaveLength(60);
    const before = await checksumMysqlDatabases(names);

    // One unit at a time (and in transactions of its own: a batch's changes are journaled in the order written, step by step across its units): no interleaving; then undo it.
    const serial = await runBin([...d.args, 'compute_node', 'rebalance', '--apply'], { env: { OS_NOVA_RECONCILE__APPLY_CONCURRENCY: '1', OS_NOVA_RECONCILE__APPLY_BATCH_UNITS: '1' } });
    expect(serial.code, serial.stderr).toBe(4);
    const serialJournal = journalOf(serial.stderr);
    expect(interleavings(serialJournal)).toBe(0);
    const serialUndo = await runBin([...d.args, 'undo', /^journal: (.+)$/m.exec(serial.stderr)?.[1] ?? '', '--apply']);
    expect(serialUndo.code, serialUndo.stderr).toBe(4);
    expect(await checksumMysqlDatabases(names)).toEqual(before);

    // apply_concurrency 4 (the default), each unit in transactions of its own.
    const parallel = await runBin([...d.args, 'compute_node', 'rebalance', '--apply'], { env: { OS_NOVA_RECONCILE__APPLY_BATCH_UNITS: '1' } });
    expect(parallel.code, parallel.stdout.split("\n").filter((l) => /SKIPPED|refused:/.test(l)).slice(0, 5).join("\n") + parallel.stderr).toBe(4);
    const journal = journalOf(parallel.stderr);
    expect(interleavings(journal)).toBeGreaterThan(0);
    const changes = journal.filter((l) => l.type === 'change');
    const committed = new Set(journal.filter((l) => l.type === 'commit').map((l) => l.seq));
    expect(changes.every((c) => committed.has(c.seq))).toBe(true);
    expect(new Set(changes.map((c) => c.seq)).size).toBe(changes.length);
    const perUnit = (entries: readonly { unit: string; kind: string }[]): string[] => entries.map((e) => `${e.unit} ${e.kind}`).sort();
    expect(perUnit(changes.map((c) => ({ unit: c.unit ?? '', kind: c.change?.kind ?? '' })))).toEqual(
      perUnit(planned.flatMap((u) => u.changes.map((c) => ({ unit: u.id, kind: c.kind })))),
    );
    // Each unit's own changes stay in plan order.
    for (const u of planned) {
      expect(changes.filter((c) => c.unit === u.id).map((c) => c.change?.kind)).toEqual(u.changes.map((c) => c.kind));
    }

    const audit = await runBin([...d.args, 'audit']);
    expect(audit.code, audit.stdout).toBe(0);
    expect((await runBin([...d.args, 'compute_node', 'rebalance'])).code).toBe(0);

    const undo = await runBin([...d.args, 'undo', /^journal: (.+)$/m.exec(parallel.stderr)?.[1] ?? '', '--apply']);
    expect(undo.code, undo.stderr).toBe(4);
    expect(await checksumMysqlDatabases(names)).toEqual(before);
  }, 180_000);
});
