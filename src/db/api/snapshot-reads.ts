// The API tables of a Snapshot. cell_mappings come through the Deployment
// (which renders their URL templates); host_mappings are read here whole, in
// keyset pages, each with the uuid of its cell.
import type { Knex } from 'knex';
import type { HostMappingRec } from '../../domain/model.js';
import { chunk } from '../batches.js';
import { eachByKeyset, readByKeyset } from '../keyset.js';
import type { StringPool } from '../string-pool.js';

interface HostMappingRow {
  readonly id: number;
  readonly host: string;
  readonly cell_uuid: string;
}

export async function readHostMappings(db: Knex, pool: StringPool): Promise<HostMappingRec[]> {
  return readByKeyset(mappingPage(db), (r) => hostMappingRecord(r, pool));
}

/**
 * Every host mapping, in id order, handed over one by one (the audit by cell
 * keeps a few of them), its cell's uuid taken from `cellUuids` (by
 * cell_mappings.id; a mapping of no known cell is left out, as the join
 * leaves it out). Without the join, each page is a range of the primary key:
 * with it, MariaDB sorts the whole join for every page.
 */
export async function eachHostMapping(db: Knex, cellUuids: ReadonlyMap<number, string>, onRow: (m: HostMappingRec) => void): Promise<void> {
  await eachByKeyset(
    async (afterId, limit) => (await db('host_mappings').select('id', 'host', 'cell_id').where('id', '>', afterId).orderBy('id').limit(limit)) as Array<{ id: number; host: string; cell_id: number }>,
    (r) => {
      const cellUuid = cellUuids.get(Number(r.cell_id));
      // Not pooled: the caller keeps a few, and a pool would hold every host.
      if (cellUuid !== undefined) onRow({ id: Number(r.id), host: r.host, cellUuid });
    },
  );
}

/** The host mappings of one cell (by cell_mappings.id), in id order. */
export async function readHostMappingsOfCell(db: Knex, pool: StringPool, cellId: number): Promise<HostMappingRec[]> {
  return readByKeyset(mappingPage(db, (q) => q.where('hm.cell_id', cellId)), (r) => hostMappingRecord(r, pool));
}

function mappingPage(db: Knex, where: (q: Knex.QueryBuilder) => Knex.QueryBuilder = (q) => q): (afterId: number, limit: number) => Promise<HostMappingRow[]> {
  return async (afterId, limit) =>
    (await where(db('host_mappings as hm').join('cell_mappings as cm', 'cm.id', 'hm.cell_id').select('hm.id as id', 'hm.host as host', 'cm.uuid as cell_uuid'))
      .andWhere('hm.id', '>', afterId)
      .orderBy('hm.id')
      .limit(limit)) as HostMappingRow[];
}

function hostMappingRecord(r: HostMappingRow, pool: StringPool): HostMappingRec {
  return { id: Number(r.id), host: pool.get(r.host), cellUuid: pool.get(r.cell_uuid) };
}

/** The hosts, as spelt, of the host mappings that may have one of these hosts (asked by IN as the cells are: a superset, compared by hostKey). */
export async function readMappedHostsNamed(db: Knex, hosts: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const batch of chunk([...new Set(hosts)])) out.push(...((await db('host_mappings').distinct('host').whereIn('host', batch)) as Array<{ host: string }>).map((r) => r.host));
  return out;
}
