// compute_nodes in a cell database. Live rows have deleted = 0 (NULL is
// invisible to Nova, nova-facts §8.1); `mapped < 1` never matches NULL, on purpose, as
// in nova's compute_node_get_all_mapped_less_than.
import type { Knex } from 'knex';
import { chunk } from '../batches.js';

export interface NodeRef {
  readonly id: number;
  readonly uuid: string | null;
  readonly host: string | null;
}

/** Candidates of the node path: live and not yet mapped, by id. */
export async function listUnmappedComputeNodes(db: Knex): Promise<NodeRef[]> {
  return db('compute_nodes').select('id', 'uuid', 'host').where('deleted', 0).andWhere('mapped', '<', 1).orderBy('id');
}

/**
 * Live nodes that claim to be mapped, by id, without their uuid; checked for
 * bug 2085135 (mapped = 1 without a host mapping). Every node is read on
 * every run, and the uuids would be most of the bytes: the few nodes
 * that turn out to need one are read again by readLiveComputeNodes.
 */
export async function listMappedComputeNodeHosts(db: Knex): Promise<Array<{ readonly id: number; readonly host: string | null }>> {
  return db('compute_nodes').select('id', 'host').where('deleted', 0).andWhere('mapped', '>=', 1).orderBy('id');
}

/** The given nodes that are still live, by id. */
export async function readLiveComputeNodes(db: Knex, ids: readonly number[]): Promise<NodeRef[]> {
  const out: NodeRef[] = [];
  for (const batch of chunk(ids)) {
    out.push(...((await db('compute_nodes').select('id', 'uuid', 'host').whereIn('id', batch).andWhere('deleted', 0)) as NodeRef[]));
  }
  return out.sort((a, b) => Number(a.id) - Number(b.id));
}

/**
 * Set mapped = 1 on the given live nodes, in batched UPDATEs. The WHERE
 * repeats `deleted = 0 AND mapped < 1` so a node deleted or mapped meanwhile
 * is left alone. updated_at is bumped as compute_node_update does.
 */
export async function markComputeNodesMapped(db: Knex, ids: readonly number[], now: string): Promise<number> {
  let changed = 0;
  for (const batch of chunk(ids)) {
    changed += await db('compute_nodes')
      .update({ mapped: 1, updated_at: now })
      .whereIn('id', batch)
      .andWhere('deleted', 0)
      .andWhere('mapped', '<', 1);
  }
  return changed;
}

/** delete_host: every live node of the host gets mapped = 0 and updated_at = now. */
export async function resetMappedForHost(db: Knex, host: string, now: string): Promise<number> {
  return db('compute_nodes').update({ mapped: 0, updated_at: now }).where('host', host).andWhere('deleted', 0);
}
