// The one list of the tables and columns nova-reconcile reads or writes. The
// runtime schema check (schema-check.ts) refuses a database that lacks any
// of them, and test/db/schema-migrations.test.ts proves every entry exists in
// the real Zed/Placement 8.0.0 schemas and that migrations/ builds them
// identically. A query module that starts using a new column adds it here.
import type { SchemaKind } from './migrate.js';

export type SchemaManifest = Readonly<Record<SchemaKind, Readonly<Record<string, readonly string[]>>>>;

function freezeManifest(manifest: Record<SchemaKind, Record<string, string[]>>): SchemaManifest {
  for (const tables of Object.values(manifest)) {
    for (const columns of Object.values(tables)) Object.freeze(columns);
    Object.freeze(tables);
  }
  return Object.freeze(manifest);
}

const TIMESTAMPS = ['created_at', 'updated_at'];
/** oslo.db SoftDeleteMixin: deleted = id once soft-deleted. */
const SOFT_DELETE = ['deleted_at', 'deleted'];

export const TOUCHED_SCHEMA: SchemaManifest = freezeManifest({
  // API tables are hard-deleted and small: the tool reads them whole.
  api: {
    cell_mappings: [...TIMESTAMPS, 'id', 'uuid', 'name', 'transport_url', 'database_connection', 'disabled'],
    host_mappings: [...TIMESTAMPS, 'id', 'cell_id', 'host'],
    instance_mappings: [...TIMESTAMPS, 'id', 'instance_uuid', 'cell_id', 'project_id', 'queued_for_delete', 'user_id'],
  },
  cell: {
    services: [
      ...TIMESTAMPS,
      ...SOFT_DELETE,
      'id',
      'uuid',
      'host',
      'binary',
      'topic',
      'report_count',
      'disabled',
      'disabled_reason',
      'last_seen_up',
      'forced_down',
      'version',
    ],
    compute_nodes: [
      ...TIMESTAMPS,
      ...SOFT_DELETE,
      'id',
      'service_id',
      'host',
      'hypervisor_hostname',
      'hypervisor_type',
      'uuid',
      'mapped',
      'vcpus',
      'memory_mb',
      'local_gb',
      'cpu_allocation_ratio',
      'ram_allocation_ratio',
      'disk_allocation_ratio',
      // NOT NULL without a default: written whenever a row is restored or
      // built (undo, sandbox), so they must exist too.
      'vcpus_used',
      'memory_mb_used',
      'local_gb_used',
      'hypervisor_version',
      'cpu_info',
      'running_vms',
      'host_ip',
    ],
    instances: [
      ...TIMESTAMPS,
      ...SOFT_DELETE,
      'id',
      'uuid',
      'host',
      'node',
      'launched_on',
      'vm_state',
      'task_state',
      'project_id',
      'user_id',
      // Set on the source copy of a cross-cell resize; such an instance is
      // not the live one (Zed).
      'hidden',
      // heal_allocations: '' means booted from volume (no root disk allocation).
      'image_ref',
    ],
    // heal_allocations reads the embedded flavor, as nova-manage does.
    instance_extra: [...TIMESTAMPS, ...SOFT_DELETE, 'id', 'instance_uuid', 'flavor'],
    // heal_allocations: a root mapping (boot_index 0) to a volume means no root-disk DISK_GB.
    block_device_mapping: [...TIMESTAMPS, ...SOFT_DELETE, 'id', 'instance_uuid', 'boot_index', 'destination_type', 'source_type'],
    migrations: [
      ...TIMESTAMPS,
      ...SOFT_DELETE,
      'id',
      'uuid',
      'instance_uuid',
      'source_compute',
      'dest_compute',
      'dest_host',
      'source_node',
      'dest_node',
      'status',
      'migration_type',
      'hidden',
    ],
  },
  // Placement rows are moved between providers with all their columns, and
  // providers are deleted with everything that hangs off them (nova-facts §8.2).
  placement: {
    resource_providers: [...TIMESTAMPS, 'id', 'uuid', 'name', 'generation', 'root_provider_id', 'parent_provider_id'],
    inventories: [
      ...TIMESTAMPS,
      'id',
      'resource_provider_id',
      'resource_class_id',
      'total',
      'reserved',
      'min_unit',
      'max_unit',
      'step_size',
      'allocation_ratio',
    ],
    allocations: [...TIMESTAMPS, 'id', 'resource_provider_id', 'consumer_id', 'resource_class_id', 'used'],
    consumers: [...TIMESTAMPS, 'id', 'uuid', 'project_id', 'user_id', 'generation', 'consumer_type_id'],
    consumer_types: [...TIMESTAMPS, 'id', 'name'],
    projects: [...TIMESTAMPS, 'id', 'external_id'],
    users: [...TIMESTAMPS, 'id', 'external_id'],
    resource_classes: [...TIMESTAMPS, 'id', 'name'],
    traits: [...TIMESTAMPS, 'id', 'name'],
    resource_provider_traits: [...TIMESTAMPS, 'trait_id', 'resource_provider_id'],
    resource_provider_aggregates: [...TIMESTAMPS, 'resource_provider_id', 'aggregate_id'],
    placement_aggregates: [...TIMESTAMPS, 'id', 'uuid'],
  },
});

/**
 * Columns of newer Novas that the tool reads and writes where they exist and
 * that older schemas lack (docs/NEWER-NOVA.md): instances.compute_id and
 * migrations.dest_compute_id arrived in Nova 28.0.0 (2023.2). Not required:
 * Zed has neither.
 */
export const OPTIONAL_COLUMNS = Object.freeze({
  instances: Object.freeze(['compute_id']),
  migrations: Object.freeze(['dest_compute_id']),
} as const);

/**
 * What must exist for the tool to run at all. Today that is everything it
 * touches: no column is optional, because every one is already in Zed and
 * Placement 8.0.0, the releases the tool is built against.
 */
export const REQUIRED_SCHEMA: SchemaManifest = TOUCHED_SCHEMA;
