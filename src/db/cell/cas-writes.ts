// Compare-and-swap writes in a cell database. Each runs inside the caller's
// transaction, re-reads the row under lock, refuses with CasConflict when it
// is not what the plan saw, and returns the row images for the journal.
import type { Knex } from 'knex';
import type { Dialect } from '../connect.js';
import { CasConflict, lockedSelect, selectForUpdate, updatedImage, type RowImage } from '../row-images.js';
import { runStatements } from '../statement-batch.js';

export interface SoftDeleteNodeExpect {
  readonly id: number;
  readonly uuid: string | null;
  readonly host: string;
}

/**
 * Nova's ComputeNode.destroy: `deleted = id, deleted_at = now` with
 * `WHERE id = ? AND host = ? AND deleted = 0` (the bug 1853009 guard), and
 * updated_at left alone. mapped is reset to 0 as master's service delete does
 * (bug 2085135), so a later re-creation is discovered again.
 */
export async function softDeleteComputeNode(trx: Knex.Transaction, dialect: Dialect, expect: SoftDeleteNodeExpect, now: string): Promise<RowImage[]> {
  return (await softDeleteComputeNodes(trx, dialect, [expect], now))[0] as RowImage[];
}

/**
 * softDeleteComputeNode of several nodes (an apply batch's units: their
 * footprints are disjoint) in one round trip (statement-batch.ts): each row
 * under lock, then its UPDATE, whose WHERE holds every condition checked
 * below, so a row that fails one is not written (and the transaction is
 * rolled back whole).
 */
export async function softDeleteComputeNodes(trx: Knex.Transaction, dialect: Dialect, expects: readonly SoftDeleteNodeExpect[], now: string): Promise<RowImage[][]> {
  // oslo.db's soft_delete writes updated_at = updated_at (no ORM onupdate); so does this.
  const valuesOf = (expect: SoftDeleteNodeExpect): Record<string, string | number> => ({ deleted: expect.id, deleted_at: now, mapped: 0 });
  const batch = await runStatements(
    trx,
    expects.flatMap((expect) => {
      const update = trx('compute_nodes')
        .update({ ...valuesOf(expect), updated_at: trx.ref('updated_at') })
        .where({ id: expect.id, host: expect.host, deleted: 0 });
      if (expect.uuid !== null) update.andWhere('uuid', expect.uuid);
      return [lockedSelect(trx, dialect, 'compute_nodes', { id: expect.id }), update];
    }),
  );
  return expects.map((expect, k) => {
    const [before] = batch.rows(2 * k);
    if (before === undefined) throw new CasConflict(`compute node ${expect.id} no longer exists`);
    if (Number(before['deleted']) !== 0) throw new CasConflict(`compute node ${expect.id} is already deleted`);
    if (before['host'] !== expect.host) throw new CasConflict(`compute node ${expect.id} moved from host ${expect.host} to ${String(before['host'])} (possible rebalance)`);
    if (expect.uuid !== null && before['uuid'] !== expect.uuid) throw new CasConflict(`compute node ${expect.id} changed uuid`);
    if (batch.affected(2 * k + 1) !== 1) throw new CasConflict(`compute node ${expect.id} changed while being deleted`);
    return [{ table: 'compute_nodes', key: { id: expect.id }, before, after: updatedImage(before, valuesOf(expect)) }];
  });
}

export interface RestoreNodeExpect {
  readonly id: number;
  readonly uuid: string;
  readonly host: string | null;
  readonly hypervisorHostname: string | null;
  readonly deleted: number;
}

/**
 * Undelete a soft-deleted compute node (bug 1839560) as Nova's
 * compute_node_create restores the row whose uuid it collides with:
 * deleted = 0 and deleted_at = NULL, id and uuid kept. Refused under lock
 * when the row changed, when a live row holds its uuid or its
 * (host, hypervisor_hostname), or when its nova-compute service is gone.
 */
export async function restoreComputeNode(trx: Knex.Transaction, dialect: Dialect, expect: RestoreNodeExpect): Promise<RowImage[]> {
  const [before] = await selectForUpdate(trx, dialect, 'compute_nodes', { id: expect.id });
  if (before === undefined) throw new CasConflict(`compute node ${expect.id} no longer exists (archived to the shadow tables?)`);
  if (before['uuid'] !== expect.uuid) throw new CasConflict(`compute node ${expect.id} changed uuid`);
  if (Number(before['deleted']) === 0) throw new CasConflict(`compute node ${expect.id} is already live`);
  if (Number(before['deleted']) !== expect.deleted || before['host'] !== expect.host || before['hypervisor_hostname'] !== expect.hypervisorHostname)
    throw new CasConflict(`compute node ${expect.id} changed since planning`);
  const clash = (await trx('compute_nodes')
    .select('id')
    .where('deleted', 0)
    .andWhere((q) => {
      q.where('uuid', expect.uuid);
      if (expect.host !== null && expect.hypervisorHostname !== null) q.orWhere({ host: expect.host, hypervisor_hostname: expect.hypervisorHostname });
    })
    .first()) as { id: unknown } | undefined;
  if (clash !== undefined) throw new CasConflict(`live compute node ${String(clash.id)} has the same uuid or host and node`);
  const serviceId = before['service_id'];
  const service = (await (serviceId !== null
    ? trx('services').select('id').where({ id: Number(serviceId), deleted: 0 })
    : trx('services').select('id').where({ host: expect.host ?? '', binary: 'nova-compute', deleted: 0 })
  ).first()) as { id: unknown } | undefined;
  if (service === undefined) throw new CasConflict(`the nova-compute service of compute node ${expect.id} is gone`);
  const values = { deleted: 0, deleted_at: null };
  const n = await trx('compute_nodes').update(values).where({ id: expect.id, uuid: expect.uuid, deleted: expect.deleted });
  if (n !== 1) throw new CasConflict(`compute node ${expect.id} changed while being restored`);
  return [{ table: 'compute_nodes', key: { id: expect.id }, before, after: updatedImage(before, values) }];
}
