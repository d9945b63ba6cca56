// The rows `db ironic_compute_node_move` checks, read as nova-manage reads
// them (operations/ironic-move.ts checks them in its order, with its
// messages). Inside the move's transaction they are read with row locks
// (`forUpdate`, MySQL only: SQLite locks the whole database on write), so
// nothing can change between the checks and the writes.
import type { Knex } from 'knex';
import { normaliseRow, type Row } from '../row-images.js';

type Reader = Knex | Knex.Transaction;

function locked(q: Knex.QueryBuilder, forUpdate: boolean): Knex.QueryBuilder {
  return forUpdate ? q.forUpdate() : q;
}

async function firstRow(q: Knex.QueryBuilder): Promise<Row | undefined> {
  const rows = (await q) as Array<Record<string, unknown>>;
  return rows[0] === undefined ? undefined : normaliseRow(rows[0]);
}

/** The first live nova-compute service of a host (by id, as Nova's service_get_by_compute_host). */
export async function liveComputeServiceByHost(db: Reader, host: string, forUpdate: boolean): Promise<Row | undefined> {
  return firstRow(locked(db('services').select('*').where({ host, binary: 'nova-compute', deleted: 0 }).orderBy('id'), forUpdate));
}

export async function liveServiceById(db: Reader, id: number, forUpdate: boolean): Promise<Row | undefined> {
  return firstRow(locked(db('services').select('*').where({ id, deleted: 0 }), forUpdate));
}

export async function liveComputeNodeByUuid(db: Reader, uuid: string, forUpdate: boolean): Promise<Row | undefined> {
  return firstRow(locked(db('compute_nodes').select('*').where({ uuid, deleted: 0 }), forUpdate));
}

/** The live instances on a compute node (host and node, as Nova matches them), by id. */
export async function liveInstancesOnNode(db: Reader, host: string, node: string, forUpdate: boolean): Promise<Row[]> {
  return ((await locked(db('instances').select('*').where({ host, node, deleted: 0 }).orderBy('id'), forUpdate)) as Array<Record<string, unknown>>).map(normaliseRow);
}
