// The compare-and-swap writes of the host-mapping plans, on SQLite and
// MariaDB: each re-checks under lock what the plan saw and refuses
// (CasConflict, nothing written) when it no longer holds.
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { applyChange } from '../../src/db/apply-change.js';
import { CasConflict } from '../../src/db/row-images.js';
import type { Change } from '../../src/domain/plan.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { insertHostMapping, insertService } from '../../src/sandbox/rows.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';

const NOW = '2026-06-01 12:00:00';

describeEachDialect('host-mapping CAS writes', (dialect) => {
  let d: TestDeployment;
  let node3: number;
  let mapping3: number;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'hmw');
    const cell1 = d.knex('cell1');
    await cell1('services').update({ deleted: cell1.raw('id'), deleted_at: NOW }).where('host', 'compute-3');
    await cell1('compute_nodes').update({ deleted: cell1.raw('id'), deleted_at: NOW, mapped: 1 }).where('host', 'compute-3');
    node3 = Number(((await cell1('compute_nodes').where('host', 'compute-3').first()) as { id: number }).id);
    mapping3 = await insertHostMapping(d.knex('api'), { cellId: d.dbs.cellIds.cell1, host: 'compute-3' });
  });
  afterEach(async () => {
    await d.cleanup();
  });
  const apply = async (k: Knex, change: Change) => k.transaction((trx) => applyChange(trx, dialect, change, NOW));
  const release: Change = { kind: 'release-host-in-cell', target: { db: 'cell', cellUuid: CELL.cell1 }, host: 'compute-3', deletedNodeIds: [] };
  const mappedOf = async () => Number(((await d.knex('cell1')('compute_nodes').where('id', node3).first()) as { mapped: number }).mapped);

  it('release-host-in-cell resets mapped on the deleted node, and refuses once a nova-compute registers the host again', async () => {
    const images = await apply(d.knex('cell1'), { ...release, deletedNodeIds: [node3] });
    expect(images.map((i) => [i.table, i.key, i.before?.['mapped'], i.after?.['mapped']])).toEqual([['compute_nodes', { id: node3 }, 1, 0]]);
    expect(await mappedOf()).toBe(0);

    await d.knex('cell1')('compute_nodes').update({ mapped: 1 }).where('id', node3);
    await insertService(d.knex('cell1'), { uuid: '3e0c7c52-0000-4000-8000-000000000003', host: 'COMPUTE-3', lastSeenUp: NOW });
    const err = await apply(d.knex('cell1'), { ...release, deletedNodeIds: [node3] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CasConflict);
    expect(String((err as Error).message)).toMatch(/a live nova-compute service \(id \d+\) now has host compute-3/);
    expect(await mappedOf()).toBe(1);
  });

  it('release-host-in-cell refuses a live instance with the host', async () => {
    await d.knex('cell1')('instances').update({ host: 'compute-3' }).where('host', 'compute-1');
    await expect(apply(d.knex('cell1'), release)).rejects.toThrow(/1 live instance\(s\) now have host compute-3/);
  });

  it('delete-host-mapping and remap-host-mapping compare the cell the plan saw', async () => {
    const del: Change = { kind: 'delete-host-mapping', target: { db: 'api' }, id: mapping3, host: 'compute-3', cellId: d.dbs.cellIds.cell2, cellUuid: CELL.cell2 };
    await expect(apply(d.knex('api'), del)).rejects.toBeInstanceOf(CasConflict);
    const remap: Change = { kind: 'remap-host-mapping', target: { db: 'api' }, id: mapping3, host: 'compute-3', fromCellId: d.dbs.cellIds.cell2, fromCellUuid: CELL.cell2, toCellId: d.dbs.cellIds.cell1, toCellUuid: CELL.cell1 };
    await expect(apply(d.knex('api'), remap)).rejects.toThrow(/now points at cell id/);
    expect(await d.knex('api')('host_mappings').where('id', mapping3).select('cell_id')).toEqual([{ cell_id: d.dbs.cellIds.cell1 }]);

    const moved = await apply(d.knex('api'), { ...remap, fromCellId: d.dbs.cellIds.cell1, toCellId: d.dbs.cellIds.cell2 });
    expect(moved[0]?.after).toMatchObject({ cell_id: d.dbs.cellIds.cell2, updated_at: NOW });
    const gone = await apply(d.knex('api'), del);
    expect(gone[0]?.after).toBeNull();
    expect(await d.knex('api')('host_mappings').where('id', mapping3)).toEqual([]);
    await expect(apply(d.knex('api'), del)).rejects.toThrow(/no longer exists/);
  });
});
