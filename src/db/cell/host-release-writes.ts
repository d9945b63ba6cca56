// Compare-and-swap writes on a host's rows in one cell, for the host-mapping
// plans (prune_host_mappings, discover_hosts --remap). Host names are
// compared by the database on MySQL (the cell columns are
// utf8mb3_general_ci); SQLite emulates that with rtrim() and NOCASE.
import type { Knex } from 'knex';
import type { Dialect } from '../connect.js';
import { CasConflict, selectForUpdate, updatedImage, withLock, type RowImage } from '../row-images.js';

function byHost(q: Knex.QueryBuilder, dialect: Dialect, host: string): Knex.QueryBuilder {
  return dialect === 'mysql' ? q.where('host', host) : q.whereRaw('rtrim(host) = rtrim(?) COLLATE NOCASE', [host]);
}

/** Host names as the cell columns (utf8mb3_general_ci) compare them: case and trailing spaces ignored. */
export function sameHost(a: unknown, b: string): boolean {
  return typeof a === 'string' && a.replace(/ +$/, '').toLowerCase() === b.replace(/ +$/, '').toLowerCase();
}

/** Rows with the host, read under lock: on InnoDB the index range lock also keeps a new row for the host out until commit. */
async function lockedIds(trx: Knex.Transaction, dialect: Dialect, table: string, host: string, extra: Readonly<Record<string, string | number>>): Promise<number[]> {
  const rows: Array<{ id: number | string }> = await withLock(byHost(trx(table).select('id').where(extra), dialect, host), dialect);
  return rows.map((r) => Number(r.id));
}

/**
 * The guard every host-mapping change of a cell starts with: nothing live
 * holds the host in this cell (a nova-compute service, a compute node, an
 * instance). Then mapped = 0 on the listed soft-deleted nodes, updated_at
 * kept, as master's service_destroy leaves them (bug 2085135).
 */
export async function releaseHostInCell(
  trx: Knex.Transaction,
  dialect: Dialect,
  change: { readonly host: string; readonly deletedNodeIds: readonly number[] },
): Promise<RowImage[]> {
  const services = await lockedIds(trx, dialect, 'services', change.host, { deleted: 0, binary: 'nova-compute' });
  if (services.length > 0) throw new CasConflict(`a live nova-compute service (id ${services.join(', ')}) now has host ${change.host}`);
  const nodes = await lockedIds(trx, dialect, 'compute_nodes', change.host, { deleted: 0 });
  if (nodes.length > 0) throw new CasConflict(`a live compute node (id ${nodes.join(', ')}) now has host ${change.host}`);
  const instances = await lockedIds(trx, dialect, 'instances', change.host, { deleted: 0 });
  if (instances.length > 0) throw new CasConflict(`${instances.length} live instance(s) now have host ${change.host}`);
  const images: RowImage[] = [];
  for (const id of change.deletedNodeIds) {
    const [before] = await selectForUpdate(trx, dialect, 'compute_nodes', { id });
    if (before === undefined) throw new CasConflict(`compute node ${id} no longer exists`);
    if (Number(before['deleted']) === 0) throw new CasConflict(`compute node ${id} was restored`);
    if (!sameHost(before['host'], change.host)) throw new CasConflict(`compute node ${id} moved to host ${String(before['host'])}`);
    if (before['mapped'] === null || Number(before['mapped']) < 1) continue;
    const values = { mapped: 0 };
    await trx('compute_nodes').update(values).where({ id }).andWhereNot('deleted', 0);
    images.push({ table: 'compute_nodes', key: { id }, before, after: updatedImage(before, values) });
  }
  return images;
}

/** mapped = 1 and updated_at = now on the host's listed live nodes (those already mapped are left alone). */
export async function markHostNodesMapped(
  trx: Knex.Transaction,
  dialect: Dialect,
  change: { readonly host: string; readonly nodeIds: readonly number[] },
  now: string,
): Promise<RowImage[]> {
  const images: RowImage[] = [];
  for (const id of change.nodeIds) {
    const [before] = await selectForUpdate(trx, dialect, 'compute_nodes', { id });
    if (before === undefined) throw new CasConflict(`compute node ${id} no longer exists`);
    if (Number(before['deleted']) !== 0) throw new CasConflict(`compute node ${id} was deleted`);
    if (!sameHost(before['host'], change.host)) throw new CasConflict(`compute node ${id} moved to host ${String(before['host'])}`);
    if (Number(before['mapped']) === 1) continue;
    const values = { mapped: 1, updated_at: now };
    await trx('compute_nodes').update(values).where({ id, deleted: 0 });
    images.push({ table: 'compute_nodes', key: { id }, before, after: updatedImage(before, values) });
  }
  return images;
}
