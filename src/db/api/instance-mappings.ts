// instance_mappings lookups (API database; hard-deleted, no soft delete).
import type { Knex } from 'knex';

export interface InstanceMappingRec {
  readonly instanceUuid: string;
  /** NULL while the instance is still queued in the conductor. */
  readonly cellId: number | null;
}

/** InstanceMapping.get_by_instance_uuid */
export async function findInstanceMapping(api: Knex, instanceUuid: string): Promise<InstanceMappingRec | undefined> {
  const row = (await api('instance_mappings').select('instance_uuid', 'cell_id').where('instance_uuid', instanceUuid).first()) as
    | { instance_uuid: string; cell_id: number | null }
    | undefined;
  return row === undefined ? undefined : { instanceUuid: row.instance_uuid, cellId: row.cell_id === null ? null : Number(row.cell_id) };
}
