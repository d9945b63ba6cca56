// Rows of the API database: cell, host and instance mappings.
import type { Knex } from 'knex';
import { utcNowString } from '../../db/time.js';
import { flag, insertMany, insertOne, type Row } from './common.js';

export interface CellMappingSpec {
  readonly uuid: string;
  readonly name: string | null;
  readonly transportUrl: string;
  readonly databaseConnection: string;
  readonly disabled?: boolean;
  readonly createdAt?: string;
}

/** As `nova-manage cell_v2 create_cell` / `map_cell0`: created_at now, updated_at NULL, disabled 0. */
export async function insertCellMapping(api: Knex, spec: CellMappingSpec): Promise<number> {
  return insertOne(api, 'cell_mappings', {
    created_at: spec.createdAt ?? utcNowString(),
    updated_at: null,
    uuid: spec.uuid,
    name: spec.name,
    transport_url: spec.transportUrl,
    database_connection: spec.databaseConnection,
    disabled: flag(spec.disabled ?? false),
  });
}

export interface HostMappingSpec {
  readonly cellId: number;
  readonly host: string;
  readonly createdAt?: string;
}

function hostMappingRow(spec: HostMappingSpec, now: string): Row {
  // discover_hosts' _create_host_mapping: created_at = utcnow, updated_at NULL.
  return { created_at: spec.createdAt ?? now, updated_at: null, cell_id: spec.cellId, host: spec.host };
}

export async function insertHostMapping(api: Knex, spec: HostMappingSpec): Promise<number> {
  return insertOne(api, 'host_mappings', hostMappingRow(spec, utcNowString()));
}

export async function insertHostMappings(api: Knex, specs: readonly HostMappingSpec[]): Promise<void> {
  const now = utcNowString();
  await insertMany(api, 'host_mappings', specs.map((s) => hostMappingRow(s, now)));
}

export interface InstanceMappingSpec {
  readonly instanceUuid: string;
  /** NULL while the instance is still being scheduled. */
  readonly cellId: number | null;
  readonly projectId: string;
  readonly userId: string;
  readonly queuedForDelete?: boolean;
  readonly createdAt?: string;
}

/**
 * The API creates the mapping without a cell at boot and the conductor sets
 * cell_id once the instance is in a cell, so a mapped row has updated_at.
 */
export async function insertInstanceMapping(api: Knex, spec: InstanceMappingSpec): Promise<number> {
  const createdAt = spec.createdAt ?? utcNowString();
  return insertOne(api, 'instance_mappings', {
    created_at: createdAt,
    updated_at: spec.cellId === null ? null : createdAt,
    instance_uuid: spec.instanceUuid,
    cell_id: spec.cellId,
    project_id: spec.projectId,
    user_id: spec.userId,
    queued_for_delete: flag(spec.queuedForDelete ?? false),
  });
}
