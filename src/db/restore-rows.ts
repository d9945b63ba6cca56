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
  return (await restoreRowsOfChanges(trx, dialect, [{ images, earlier }]))[0] as RestoreOutcome;
}

/** One change's rows for restoreRowsOfChanges: its images and the earlier before-images of each (see restoreRows). */
export interface ChangeRows {
  readonly images: readonly RowImage[];
  readonly earlier: (img: RowImage) => ReadonlyArray<Row | null>;
}

/**
 * restoreRows of several changes that share no row (a run of undo's
 * restores), in two round trips in all: every row under lock, then every
 * write. Any refusal throws, and the caller's transaction is rolled back
 * whole.
 */
export async function restoreRowsOfChanges(trx: Knex.Transaction, dialect: Dialect, changes: readonly ChangeRows[]): Promise<RestoreOutcome[]> {
  // Every row under lock in one round trip (statement-batch.ts), then every write in another.
  const read = await runStatements(
    trx,
    changes.flatMap((c) => c.images.map((img) => lockedSelect(trx, dialect, img.table, img.key))),
  );
  let at = 0;
  const writes: Knex.QueryBuilder[] = [];
  const outcomes = changes.map(({ images, earlier }): RestoreOutcome => {
    const current = images.map((_, i) => read.rows(at + i)[0] ?? null);
    at += images.length;
    const restored = images.map((img, i) => rowsEqual(current[i] ?? null, img.before) || earlier(img).some((e) => rowsEqual(current[i] ?? null, e)));
    if (restored.every(Boolean)) return 'already-restored';
    images.forEach((img, i) => {
      const now = current[i] ?? null;
      if (!restored[i] && !rowsEqual(now, img.after))
        throw new CasConflict(`${img.table} ${JSON.stringify(img.key)} changed since the journaled run; not restoring it`);
    });
    // Reverse order: a provider deleted last is recreated first, before its inventories.
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
    return 'restored';
  });
  await runStatements(trx, writes);
  return outcomes;
}

function insertRow(trx: Knex.Transaction, table: string, row: Row): Knex.QueryBuilder[] {
  if (table === 'resource_providers' && row['root_provider_id'] !== null) {
    // The root FK references the row itself: insert without it, then set it, as Placement creates roots.
    return [trx(table).insert({ ...row, root_provider_id: null }), trx(table).update({ root_provider_id: row['root_provider_id'] }).where({ id: row['id'] ?? null })];
  }
  return [trx(table).insert({ ...row })];
}
