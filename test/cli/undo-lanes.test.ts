// undo --apply restores the databases side by side, but never a unit's
// changes out of their reverse journal order (docs/RELIABILITY.md, promise
// 16). On MariaDB, through the built binary: compute_node cleanup_orphans
// deleted each orphan's provider (placement) and then soft-deleted its node
// (cell); undo must bring the node back before the provider. The cell lane
// is held up on purpose, by a transaction that holds the compute node row of
// the unit whose provider the placement lane restores first (the provider
// journaled last; units applied side by side interleave in the journal, so
// that unit's node need not be the node journaled last): the placement lane,
// one change at a time, must wait for it, so no orphan node is ever
// soft-deleted while its provider is back (the state the apply's order rules
// out). The lock let go, the undo finishes and every table is back to its
// checksum.
import type { Knex } from 'knex';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { checksumMysqlDatabases, mysqlDatabaseOf } from '../helpers/db-checksum.js';
import { describeMysql } from '../helpers/mysql.js';
import { createFaultDeployment, type FaultDeployment } from '../faults/helpers.js';

const ORPHANS = 6;
const DBS = ['api', 'cell1', 'placement'] as const;

interface Line {
  readonly type: string;
  readonly seq: number;
  readonly unit: string;
  readonly target: { readonly db: string };
  readonly change: { readonly kind: string; readonly id?: number; readonly uuid?: string };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describeMysql('undo in lanes keeps each unit in reverse order across databases', () => {
  let f: FaultDeployment;
  let names: string[];
  let before: Record<string, string>;
  beforeAll(async () => {
    f = await createFaultDeployment(ORPHANS, 0, 'lanes');
    names = DBS.map((n) => mysqlDatabaseOf(f.d.url(n)));
    before = { ...(await checksumMysqlDatabases(names)) };
  }, 180_000);
  afterAll(async () => {
    await f?.d.cleanup();
  });

  it('a held-up cell lane holds the placement lane at the unit it waits for; released, the undo restores every table', async () => {
    const apply = await runBin([...f.d.args, 'compute_node', 'cleanup_orphans', '--apply']);
    expect(apply.code, apply.stderr).toBe(4);
    const journal = /journal: (\S+)/.exec(apply.stderr)?.[1] as string;
    const changes = readFileSync(journal, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Line)
      .filter((l) => l.type === 'change');
    expect(changes.filter((c) => c.change.kind === 'delete-provider')).toHaveLength(ORPHANS);
    const lastProvider = changes.filter((c) => c.change.kind === 'delete-provider').sort((a, b) => b.seq - a.seq)[0] as Line;
    const heldNode = changes.find((c) => c.change.kind === 'soft-delete-compute-node' && c.unit === lastProvider.unit) as Line;
    expect(heldNode.seq).toBeGreaterThan(lastProvider.seq);
    const placement = f.d.knex('placement');
    const providersBack = async (): Promise<number> =>
      Number(((await placement('resource_providers').whereIn('uuid', [...f.orphanNodes]).count({ n: '*' })) as Array<{ n: number | string }>)[0]?.n);
    expect(await providersBack()).toBe(0);

    // Hold the compute node row that the placement lane's first restore waits for.
    const holder: Knex.Transaction = await f.d.knex('cell1').transaction();
    await holder('compute_nodes').select('id').where({ id: heldNode.change.id as number }).forUpdate();
    const undo = runBin([...f.d.args, 'undo', journal, '--apply']);
    try {
      // Long enough for the placement lane to have restored every provider, were it not waiting.
      await pause(2500);
      expect(await providersBack()).toBe(0);
    } finally {
      await holder.rollback();
    }
    const done = await undo;
    expect(done.code, done.stderr).toBe(4);
    expect(await providersBack()).toBe(ORPHANS);
    expect(await checksumMysqlDatabases(names)).toEqual(before);
  }, 120_000);
});
