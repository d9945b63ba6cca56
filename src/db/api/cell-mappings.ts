// cell_mappings in the API database. Rows are returned raw (templates
// unrendered); src/db/deployment-databases.ts renders them as Nova does on load.
import type { Knex } from 'knex';

export interface CellMappingRow {
  readonly id: number;
  readonly uuid: string;
  readonly name: string | null;
  readonly transport_url: string | null;
  readonly database_connection: string | null;
  readonly disabled: number | null;
}

const COLUMNS = ['id', 'uuid', 'name', 'transport_url', 'database_connection', 'disabled'] as const;

/** All cells, ordered by id as CellMappingList.get_all does. */
export async function listCellMappings(db: Knex): Promise<CellMappingRow[]> {
  return db<CellMappingRow>('cell_mappings').select(...COLUMNS).orderBy('id', 'asc');
}

/** Lookup by uuid; the column's collation decides (utf8mb3_general_ci in Nova). */
export async function findCellMappingByUuid(db: Knex, uuid: string): Promise<CellMappingRow | undefined> {
  const rows = await db<CellMappingRow>('cell_mappings').select(...COLUMNS).where('uuid', uuid).orderBy('id').limit(1);
  return rows[0];
}

/**
 * uuid and created_at of every cell: what identifies a deployment whatever
 * address its API database is reached through (a VIP, a host name, another
 * Galera node). created_at is the second `nova-manage cell_v2 map_cell0` /
 * `create_cell` ran, so two deployments built with the same cell uuids (a
 * sandbox's fixed ones) still differ.
 */
export async function listCellAnchors(db: Knex): Promise<Array<{ uuid: string; createdAt: string | null }>> {
  const rows: Array<{ uuid: string; created_at: unknown }> = await db('cell_mappings').select('uuid', 'created_at').orderBy('id', 'asc');
  return rows.map((r) => ({ uuid: r.uuid, createdAt: r.created_at === null || r.created_at === undefined ? null : String(r.created_at) }));
}
