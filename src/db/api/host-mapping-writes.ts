// Compare-and-swap writes on host_mappings (API database). Each runs inside
// the caller's transaction, re-reads the mapping under lock, refuses with
// CasConflict when it is not what the plan saw, and returns the row images
// for the journal. API tables are hard-deleted, as Nova does.
import type { Knex } from 'knex';
import type { Dialect } from '../connect.js';
import { CasConflict, selectForUpdate, updatedImage, type Row, type RowImage } from '../row-images.js';

export interface HostMappingExpect {
  readonly id: number;
  readonly host: string;
}

async function lockMapping(trx: Knex.Transaction, dialect: Dialect, expect: HostMappingExpect, cellId: number): Promise<Row> {
  const [before] = await selectForUpdate(trx, dialect, 'host_mappings', { id: expect.id });
  if (before === undefined) throw new CasConflict(`the host mapping of ${expect.host} (id ${expect.id}) no longer exists`);
  if (before['host'] !== expect.host) throw new CasConflict(`host mapping ${expect.id} now belongs to host ${String(before['host'])}, not ${expect.host}`);
  if (Number(before['cell_id']) !== cellId) throw new CasConflict(`the host mapping of ${expect.host} now points at cell id ${String(before['cell_id'])}, not ${cellId}`);
  return before;
}

/** DELETE FROM host_mappings WHERE id = ? AND host = ? AND cell_id = ?. */
export async function deleteHostMappingCas(trx: Knex.Transaction, dialect: Dialect, change: HostMappingExpect & { readonly cellId: number }): Promise<RowImage[]> {
  const before = await lockMapping(trx, dialect, change, change.cellId);
  const n = await trx('host_mappings').delete().where({ id: change.id, cell_id: change.cellId });
  if (n !== 1) throw new CasConflict(`the host mapping of ${change.host} changed while being deleted`);
  return [{ table: 'host_mappings', key: { id: change.id }, before, after: null }];
}

/** UPDATE host_mappings SET cell_id = to, updated_at = now WHERE id = ? AND cell_id = from: one statement, one transaction. */
export async function remapHostMappingCas(
  trx: Knex.Transaction,
  dialect: Dialect,
  change: HostMappingExpect & { readonly fromCellId: number; readonly toCellId: number },
  now: string,
): Promise<RowImage[]> {
  const before = await lockMapping(trx, dialect, change, change.fromCellId);
  const values = { cell_id: change.toCellId, updated_at: now };
  const n = await trx('host_mappings').update(values).where({ id: change.id, cell_id: change.fromCellId });
  if (n !== 1) throw new CasConflict(`the host mapping of ${change.host} changed while being moved`);
  return [{ table: 'host_mappings', key: { id: change.id }, before, after: updatedImage(before, values) }];
}
