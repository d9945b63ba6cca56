// Undo of one journaled change: every row goes back to its before-image, as a
// compare-and-swap against its after-image. A row that is already back at its
// before-image (the change never committed, or was undone) is left alone; a
// row that is neither has changed since and the whole change is refused.
import type { Knex } from 'knex';
import type { Dialect } from './connect.js';
import { CasConflict, lockedSelect, rowsEqual, type Row, type RowImage } from './row-images.js';
import { runStatements } from './statement-batch.js';

export type RestoreOutcome = 'restored' | 'already-restored';

/**
 * @param earlier the before-images of the same row in the journal's earlier
 *   changes (oldest last or first, any order): a row touched by several
 *   changes (a provider's generation bumped by each allocation removal, then
 *   the provider deleted) that is already back at one of them was restored
 *   further back than this change, by an earlier undo, and is left alone.
 */
export async function restoreRows(trx: Knex.Transaction, dialect: Dialect, images: readonly RowImage[], earlier: (img: RowImage) => ReadonlyArray<Row | null> = () => []): Promise<RestoreOutcome> {
  // Every row under lock in one round trip (statement-batch.ts), then every write in another.
  const read = await runStatements(
    trx,
    images.map((img) => lockedSelect(trx, dialect, img.table, img.key)),
  );
  const current = images.map((_, i) => read.rows(i)[0] ?? null);
  const restored = images.map((img, i) => rowsEqual(current[i] ?? null, img.before) || earlier(img).some((e) => rowsEqual(current[i] ?? null, e)));
  if (restored.every(Boolean)) return 'already-restored';
  images.forEach((img, i) => {
    const now = current[i] ?? null;
    if (!restored[i] && !rowsEqual(now, img.after))
      throw new CasConflict(`${img.table} ${JSON.stringify(img.key)} changed since the journaled run; not restoring it`);
  });
  // Reverse order: a provider deleted last is recreated first, before its inventories.
  const writes: Knex.QueryBuilder[] = [];
  for (let i = images.length - 1; i >= 0; i--) {
    const img = images[i] as RowImage;
    if (restored[i] === true) continue;
    if (img.before === null) {
      writes.push(trx(img.table).delete().where(img.key));
    } else if (img.after === null) {
      writes.push(...insertRow(trx, img.table, img.before));
    } else {
      const values: Record<string, unknown> = { ...img.before };
      for (const k of Object.keys(img.key)) delete values[k];
      writes.push(trx(img.table).update(values).where(img.key));
    }
  }
  await runStatements(trx, writes);
  return 'restored';
}

function insertRow(trx: Knex.Transaction, table: string, row: Row): Knex.QueryBuilder[] {
  if (table === 'resource_providers' && row['root_provider_id'] !== null) {
    // The root FK references the row itself: insert without it, then set it, as Placement creates roots.
    return [trx(table).insert({ ...row, root_provider_id: null }), trx(table).update({ root_provider_id: row['root_provider_id'] }).where({ id: row['id'] ?? null })];
  }
  return [trx(table).insert({ ...row })];
}
