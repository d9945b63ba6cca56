// Keyset pagination for reading whole tables in bounded statements:
// `WHERE id > ? ORDER BY id LIMIT n`, repeated until a short page. Each page
// is mapped to plain records at once, so driver rows never pile up, and no
// statement ever scans past what it returns (unlike OFFSET paging). Used by
// the snapshot reads of every database.
import type { Knex } from 'knex';

/** Rows per statement: 30,000 compute nodes take six round trips. */
export const KEYSET_BATCH = 5000;

/**
 * Read every row that `page` selects, one page at a time. `page` must filter
 * on `id > afterId`, order by id and apply the limit; the first page starts
 * below every id (placement's VCPU class has id 0).
 */
export async function readByKeyset<R extends { readonly id: unknown }, T>(
  page: (afterId: number, limit: number) => Promise<readonly R[]>,
  toRecord: (row: R) => T,
  batchSize: number = KEYSET_BATCH,
): Promise<T[]> {
  const out: T[] = [];
  await eachByKeyset(page, (row) => out.push(toRecord(row)), batchSize);
  return out;
}

/** readByKeyset's walk, each row handed to `onRow` (for a caller that keeps a few columns of it, not a record). */
export async function eachByKeyset<R extends { readonly id: unknown }>(
  page: (afterId: number, limit: number) => Promise<readonly R[]>,
  onRow: (row: R) => void,
  batchSize: number = KEYSET_BATCH,
): Promise<void> {
  let afterId = -1;
  for (;;) {
    const rows = await page(afterId, batchSize);
    for (const row of rows) onRow(row);
    const last = rows[rows.length - 1];
    if (rows.length < batchSize || last === undefined) return;
    afterId = Number(last.id);
  }
}

/** One table read whole: these columns (`id` among them), the rows `where` keeps (Nova's soft-delete rule). */
export interface TableRead {
  readonly table: string;
  readonly columns: readonly string[];
  readonly where?: (q: Knex.QueryBuilder) => Knex.QueryBuilder;
}

/** Every row a TableRead selects, in keyset pages, each mapped by `toRecord`. */
export async function readTable<R extends { readonly id: unknown }, T>(db: Knex, read: TableRead, toRecord: (row: R) => T): Promise<T[]> {
  const where = read.where ?? ((q: Knex.QueryBuilder): Knex.QueryBuilder => q);
  return readByKeyset(async (afterId, limit) => (await where(db(read.table).select(...read.columns)).andWhere('id', '>', afterId).orderBy('id').limit(limit)) as R[], toRecord);
}
