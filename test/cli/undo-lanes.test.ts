// undo --apply restores the databases side by side, but never a unit's
// changes out of their reverse journal order (docs/RELIABILITY.md, promise
// 16). On MariaDB, through the built binary: compute_node cleanup_orphans
// deleted each orphan's provider (placement) and then soft-deleted its node
// (cell); undo must bring the node back before the provider. The cell lane
// is held up on purpose, by a transaction that holds the last unit's
// compute node row: the placement lane, whose first change is that unit's
// provider, must wait too, so no orphan node is ever soft-deleted while its
// provider is back (the state the apply's order rules out). The lock let go,
// the undo finishes and every table is back to its checksum.
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
    const lastNode = changes.filter((c) => c.change.kind === 'soft-delete-compute-node').sort((a, b) => b.seq - a.seq)[0] as Line;
    const placement = f.d.knex('placement');
    const providersBack = async (): Promise<number> =>
      Number(((await placement('resource_providers').whereIn('uuid', [...f.orphanNodes]).count({ n: '*' })) as Array<{ n: number | string }>)[0]?.n);
    expect(await providersBack()).toBe(0);

    // Hold the compute node row the cell lane restores first.
    const holder: Knex.Transaction = await f.d.knex('cell1').transaction();
    await holder('compute_nodes').select('id').where({ id: lastNode.change.id as number }).forUpdate();
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
