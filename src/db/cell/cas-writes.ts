// Compare-and-swap writes in a cell database. Each runs inside the caller's
// transaction, re-reads the row under lock, refuses with CasConflict when it
// is not what the plan saw, and returns the row images for the journal.
import type { Knex } from 'knex';
import type { Dialect } from '../connect.js';
import { CasConflict, selectForUpdate, updatedImage, type RowImage } from '../row-images.js';

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
  const [before] = await selectForUpdate(trx, dialect, 'compute_nodes', { id: expect.id });
  if (before === undefined) throw new CasConflict(`compute node ${expect.id} no longer exists`);
  if (Number(before['deleted']) !== 0) throw new CasConflict(`compute node ${expect.id} is already deleted`);
  if (before['host'] !== expect.host) throw new CasConflict(`compute node ${expect.id} moved from host ${expect.host} to ${String(before['host'])} (possible rebalance)`);
  if (expect.uuid !== null && before['uuid'] !== expect.uuid) throw new CasConflict(`compute node ${expect.id} changed uuid`);
  const values = { deleted: expect.id, deleted_at: now, mapped: 0, updated_at: before['updated_at'] ?? null };
  const changed = await trx('compute_nodes').update(values).where({ id: expect.id, host: expect.host, deleted: 0 });
  if (changed !== 1) throw new CasConflict(`compute node ${expect.id} changed while being deleted`);
  return [{ table: 'compute_nodes', key: { id: expect.id }, before, after: updatedImage(before, values) }];
}
