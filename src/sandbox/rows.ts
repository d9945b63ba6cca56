// Row writers shared by the sandbox, the tests and the benchmark. Each one
// inserts a row the way Nova or Placement itself writes it, so that the tool
// is exercised against data it will meet in a real deployment:
//
// - every NOT NULL column is filled, and `deleted = 0` / `mapped = 0` are
//   written explicitly: the DDL defaults are NULL, and NULL rows are invisible
//   to Nova (`deleted = 0`, `mapped < 1`);
// - timestamps are naive UTC 'YYYY-MM-DD HH:MM:SS' strings; created_at is set
//   and updated_at is what Nova leaves there (NULL on a bare insert, the last
//   save otherwise);
// - JSON columns hold what Nova's jsonutils.dumps produces (Python spacing);
// - allocation ratios are never NULL or 0.0, because loading such a compute
//   node makes nova-manage write to it (§1.3), which would make the sandbox
//   differ from itself between a nova-manage run and ours.
//
// Every writer takes a Knex or a Knex.Transaction and returns ids. The
// multi-row variants insert in chunks for the benchmark's 30,000 hosts.
import type { Knex } from 'knex';
import { chunk } from '../db/batches.js';
import { utcNowString } from '../db/time.js';
import { FIRST_CUSTOM_RESOURCE_CLASS_ID, STANDARD_RESOURCE_CLASSES } from '../domain/resource-classes.js';

/**
 * knex compiles a multi-row INSERT for SQLite as one compound
 * `SELECT ... UNION ALL SELECT ...`, and SQLite allows at most 500 terms in a
 * compound select (SQLITE_MAX_COMPOUND_SELECT). 500 rows of compute_nodes are
 * also well under both engines' placeholder limits.
 */
export const INSERT_CHUNK = 500;

type Row = Record<string, string | number | null>;

type Dialect = 'mysql' | 'sqlite';

function dialectOf(db: Knex): Dialect {
  // knex types its client as `any`; read it as unknown.
  const client: unknown = db.client.config.client;
  if (client === 'mysql2' || client === 'mysql') return 'mysql';
  if (client === 'better-sqlite3' || client === 'sqlite3') return 'sqlite';
  throw new Error(`sandbox rows support MySQL/MariaDB and SQLite, not ${String(client)}`);
}

/** Both drivers answer a single-row insert with [insertId]. */
async function insertOne(db: Knex, table: string, row: Row): Promise<number> {
  const result: unknown = await db(table).insert(row);
  const id = Array.isArray(result) ? Number(result[0]) : Number.NaN;
  if (!Number.isInteger(id) || id <= 0) throw new Error(`insert into ${table} returned no id`);
  return id;
}

/** Insert rows in chunks; no ids are read back. */
async function insertMany(db: Knex, table: string, rows: readonly Row[]): Promise<void> {
  for (const batch of chunk(rows, INSERT_CHUNK)) await db(table).insert(batch);
}

/**
 * Insert rows in chunks and return their ids in input order, read back by a
 * unique key (auto-increment ids of a multi-row insert are only guaranteed
 * consecutive under some innodb_autoinc_lock_mode settings).
 */
async function insertManyReturningIds(db: Knex, table: string, key: string, rows: readonly Row[]): Promise<number[]> {
  const ids: number[] = [];
  for (const batch of chunk(rows, INSERT_CHUNK)) {
    await db(table).insert(batch);
    const keys = batch.map((r) => String(r[key]));
    const found: Array<{ id: number; key: string }> = await db(table).select('id', `${key} as key`).whereIn(key, keys);
    const byKey = new Map(found.map((f) => [String(f.key).toLowerCase(), Number(f.id)]));
    for (const k of keys) {
      const id = byKey.get(k.toLowerCase());
      if (id === undefined) throw new Error(`row ${table}.${key} = ${k} was inserted but cannot be read back`);
      ids.push(id);
    }
  }
  return ids;
}

function flag(value: boolean): number {
  return value ? 1 : 0;
}

/**
 * JSON as Python's json.dumps writes it (", " and ": " separators), which is
 * what Nova stores through oslo.serialization's jsonutils.dumps.
 */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

// ---------------------------------------------------------------------------
// API database

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

// ---------------------------------------------------------------------------
// Cell databases

/** Zed's nova.objects.service.SERVICE_VERSION. */
export const ZED_SERVICE_VERSION = 64;

export interface ServiceSpec {
  readonly uuid: string;
  readonly host: string;
  readonly binary?: string;
  readonly topic?: string;
  readonly disabled?: boolean;
  readonly disabledReason?: string | null;
  readonly forcedDown?: boolean;
  /** The last heartbeat; NULL for a service that never reported. */
  readonly lastSeenUp?: string | null;
  readonly reportCount?: number;
  readonly version?: number;
  readonly createdAt?: string;
  /** Default: the last heartbeat (every report saves the row), else NULL. */
  readonly updatedAt?: string | null;
}

function serviceRow(spec: ServiceSpec, now: string): Row {
  const lastSeenUp = spec.lastSeenUp ?? null;
  return {
    created_at: spec.createdAt ?? now,
    updated_at: spec.updatedAt !== undefined ? spec.updatedAt : lastSeenUp,
    deleted_at: null,
    deleted: 0,
    uuid: spec.uuid,
    host: spec.host,
    binary: spec.binary ?? 'nova-compute',
    topic: spec.topic ?? 'compute',
    // service_update sets last_seen_up only when report_count grows.
    report_count: spec.reportCount ?? (lastSeenUp === null ? 0 : 1),
    disabled: flag(spec.disabled ?? false),
    disabled_reason: spec.disabledReason ?? null,
    last_seen_up: lastSeenUp,
    forced_down: flag(spec.forcedDown ?? false),
    version: spec.version ?? ZED_SERVICE_VERSION,
  };
}

export async function insertService(cell: Knex, spec: ServiceSpec): Promise<number> {
  return insertOne(cell, 'services', serviceRow(spec, utcNowString()));
}

export async function insertServices(cell: Knex, specs: readonly ServiceSpec[]): Promise<number[]> {
  const now = utcNowString();
  return insertManyReturningIds(cell, 'services', 'uuid', specs.map((s) => serviceRow(s, now)));
}

export type HypervisorType = 'ironic' | 'QEMU';

export interface ComputeNodeSpec {
  /** For ironic: the ironic node uuid (also the hypervisor_hostname and the provider's uuid and name). */
  readonly uuid: string;
  readonly host: string;
  readonly hypervisorHostname: string;
  readonly hypervisorType: HypervisorType;
  /** Zed's resource tracker never sets service_id (§5.4): NULL unless given. */
  readonly serviceId?: number | null;
  readonly mapped?: number;
  readonly vcpus?: number;
  readonly memoryMb?: number;
  readonly localGb?: number;
  readonly vcpusUsed?: number;
  /** Default: [DEFAULT] reserved_host_memory_mb (512), which the tracker counts as used even for ironic. */
  readonly memoryMbUsed?: number;
  readonly localGbUsed?: number;
  readonly runningVms?: number;
  readonly hypervisorVersion?: number;
  readonly cpuInfo?: string;
  readonly hostIp?: string | null;
  /** ComputeNode.stats; stored as a JSON object of strings. */
  readonly stats?: Readonly<Record<string, string>>;
  /** [arch, hv_type, vm_mode] triples. */
  readonly supportedInstances?: ReadonlyArray<readonly [string, string, string]>;
  readonly diskAvailableLeast?: number | null;
  readonly cpuAllocationRatio?: number;
  readonly ramAllocationRatio?: number;
  readonly diskAllocationRatio?: number;
  readonly createdAt?: string;
  /** Default: createdAt, because the tracker saves a new node in its first periodic run. */
  readonly updatedAt?: string | null;
}

/** [DEFAULT] reserved_host_memory_mb's default. */
export const RESERVED_HOST_MEMORY_MB = 512;

/** Zed's initial_{cpu,ram,disk}_allocation_ratio, written when the tracker creates a node. */
export const ZED_INITIAL_ALLOCATION_RATIOS = Object.freeze({ cpu: 16.0, ram: 1.5, disk: 1.0 });

/** An empty PciDevicePoolList as ComputeNode._convert_pci_stats_to_db_format stores it. */
const EMPTY_PCI_STATS = pythonJson({
  'nova_object.name': 'PciDevicePoolList',
  'nova_object.namespace': 'nova',
  'nova_object.version': '1.1',
  'nova_object.data': { objects: [] },
  'nova_object.changes': ['objects'],
});

function computeNodeRow(spec: ComputeNodeSpec, now: string): Row {
  const ironic = spec.hypervisorType === 'ironic';
  // Since Stein the ironic driver reports no VCPU/RAM/disk (custom resource
  // classes carry the capacity): all zero, cpu_info None -> '' (the tracker
  // forces it, the column is NOT NULL), hypervisor_version = the ironic API
  // major version, 1.
  const vcpus = spec.vcpus ?? (ironic ? 0 : 16);
  const memoryMb = spec.memoryMb ?? (ironic ? 0 : 65536);
  const localGb = spec.localGb ?? (ironic ? 0 : 500);
  const vcpusUsed = spec.vcpusUsed ?? 0;
  const memoryMbUsed = spec.memoryMbUsed ?? RESERVED_HOST_MEMORY_MB;
  const localGbUsed = spec.localGbUsed ?? 0;
  const createdAt = spec.createdAt ?? now;
  const supported =
    spec.supportedInstances ??
    (ironic
      ? [['x86_64', 'baremetal', 'hvm'] as const]
      : [['x86_64', 'qemu', 'hvm'] as const, ['x86_64', 'kvm', 'hvm'] as const]);
  const stats = spec.stats ?? (ironic ? { failed_builds: '0', cpu_arch: 'x86_64' } : { failed_builds: '0' });
  return {
    created_at: createdAt,
    updated_at: spec.updatedAt !== undefined ? spec.updatedAt : createdAt,
    deleted_at: null,
    deleted: 0,
    uuid: spec.uuid,
    host: spec.host,
    hypervisor_hostname: spec.hypervisorHostname,
    service_id: spec.serviceId ?? null,
    vcpus,
    memory_mb: memoryMb,
    local_gb: localGb,
    vcpus_used: vcpusUsed,
    memory_mb_used: memoryMbUsed,
    local_gb_used: localGbUsed,
    hypervisor_type: spec.hypervisorType,
    hypervisor_version: spec.hypervisorVersion ?? (ironic ? 1 : 7002000),
    cpu_info: spec.cpuInfo ?? (ironic ? '' : LIBVIRT_CPU_INFO),
    disk_available_least: spec.diskAvailableLeast !== undefined ? spec.diskAvailableLeast : localGb - localGbUsed,
    free_ram_mb: memoryMb - memoryMbUsed,
    free_disk_gb: localGb - localGbUsed,
    current_workload: 0,
    running_vms: spec.runningVms ?? 0,
    host_ip: spec.hostIp ?? null,
    supported_instances: pythonJson(supported),
    pci_stats: EMPTY_PCI_STATS,
    metrics: '[]',
    extra_resources: null,
    stats: pythonJson(stats),
    numa_topology: null,
    cpu_allocation_ratio: spec.cpuAllocationRatio ?? ZED_INITIAL_ALLOCATION_RATIOS.cpu,
    ram_allocation_ratio: spec.ramAllocationRatio ?? ZED_INITIAL_ALLOCATION_RATIOS.ram,
    disk_allocation_ratio: spec.diskAllocationRatio ?? ZED_INITIAL_ALLOCATION_RATIOS.disk,
    mapped: spec.mapped ?? 0,
  };
}

const LIBVIRT_CPU_INFO = pythonJson({
  arch: 'x86_64',
  model: 'Cascadelake-Server-noTSX',
  vendor: 'Intel',
  topology: { cells: 1, sockets: 1, cores: 8, threads: 2 },
  features: ['avx', 'avx2', 'sse4.2', 'vmx', 'x2apic'],
});

export async function insertComputeNode(cell: Knex, spec: ComputeNodeSpec): Promise<number> {
  return insertOne(cell, 'compute_nodes', computeNodeRow(spec, utcNowString()));
}

export async function insertComputeNodes(cell: Knex, specs: readonly ComputeNodeSpec[]): Promise<number[]> {
  const now = utcNowString();
  return insertManyReturningIds(cell, 'compute_nodes', 'uuid', specs.map((s) => computeNodeRow(s, now)));
}

export interface InstanceSpec {
  readonly uuid: string;
  /** NULL for an instance that was never scheduled. */
  readonly host: string | null;
  /** The compute node's hypervisor_hostname. */
  readonly node: string | null;
  readonly vmState: string;
  readonly taskState?: string | null;
  readonly powerState?: number;
  readonly projectId: string;
  readonly userId: string;
  readonly displayName?: string;
  readonly vcpus?: number;
  readonly memoryMb?: number;
  readonly rootGb?: number;
  readonly ephemeralGb?: number;
  /** instances.instance_type_id: the flavor's id. */
  readonly flavorId?: number;
  readonly imageRef?: string;
  readonly availabilityZone?: string | null;
  readonly reservationId?: string;
  readonly createdAt?: string;
  readonly updatedAt?: string | null;
  readonly launchedAt?: string | null;
}

/** nova.compute.power_state values. */
export const POWER_STATE = Object.freeze({ nostate: 0, running: 1, paused: 3, shutdown: 4, crashed: 6, suspended: 7 });

function defaultPowerState(vmState: string): number {
  switch (vmState) {
    case 'active':
    case 'rescued':
    case 'resized':
      return POWER_STATE.running;
    case 'stopped':
    case 'shelved':
      return POWER_STATE.shutdown;
    case 'paused':
      return POWER_STATE.paused;
    case 'suspended':
      return POWER_STATE.suspended;
    default:
      return POWER_STATE.nostate;
  }
}

function instanceRow(spec: InstanceSpec, now: string): Row {
  const createdAt = spec.createdAt ?? now;
  const name = spec.displayName ?? `server-${spec.uuid.slice(0, 8)}`;
  const launched = spec.host !== null && spec.vmState !== 'building' && spec.vmState !== 'error';
  return {
    created_at: createdAt,
    updated_at: spec.updatedAt !== undefined ? spec.updatedAt : createdAt,
    deleted_at: null,
    deleted: 0,
    uuid: spec.uuid,
    user_id: spec.userId,
    project_id: spec.projectId,
    image_ref: spec.imageRef ?? '0b6d9b5e-7c1e-4c1d-9a57-3a3f1fd2e1a4',
    kernel_id: '',
    ramdisk_id: '',
    launch_index: 0,
    key_name: null,
    key_data: null,
    power_state: spec.powerState ?? defaultPowerState(spec.vmState),
    vm_state: spec.vmState,
    task_state: spec.taskState ?? null,
    memory_mb: spec.memoryMb ?? 4096,
    vcpus: spec.vcpus ?? 2,
    root_gb: spec.rootGb ?? 20,
    ephemeral_gb: spec.ephemeralGb ?? 0,
    hostname: name.toLowerCase().replace(/[^a-z0-9-]+/g, '-'),
    host: spec.host,
    node: spec.node,
    launched_on: spec.host,
    launched_at: spec.launchedAt !== undefined ? spec.launchedAt : launched ? createdAt : null,
    terminated_at: null,
    display_name: name,
    display_description: name,
    availability_zone: spec.availabilityZone !== undefined ? spec.availabilityZone : 'nova',
    locked: 0,
    locked_by: null,
    os_type: null,
    instance_type_id: spec.flavorId ?? 1,
    vm_mode: null,
    architecture: null,
    root_device_name: '/dev/vda',
    access_ip_v4: null,
    access_ip_v6: null,
    config_drive: '',
    default_ephemeral_device: null,
    default_swap_device: null,
    progress: 0,
    auto_disk_config: 0,
    shutdown_terminate: 0,
    disable_terminate: 0,
    cell_name: null,
    reservation_id: spec.reservationId ?? `r-${spec.uuid.replace(/-/g, '').slice(0, 8)}`,
    user_data: null,
    cleaned: 0,
    ephemeral_key_uuid: null,
    hidden: 0,
  };
}

export async function insertInstance(cell: Knex, spec: InstanceSpec): Promise<number> {
  return insertOne(cell, 'instances', instanceRow(spec, utcNowString()));
}

export async function insertInstances(cell: Knex, specs: readonly InstanceSpec[]): Promise<number[]> {
  const now = utcNowString();
  return insertManyReturningIds(cell, 'instances', 'uuid', specs.map((s) => instanceRow(s, now)));
}

/** Nova's soft delete: deleted = id, deleted_at = at, updated_at left alone (§8.1). */
export async function softDeleteRow(cell: Knex, table: 'services' | 'compute_nodes' | 'instances', id: number, at: string): Promise<void> {
  await cell(table).update({ deleted: id, deleted_at: at }).where('id', id);
}

// ---------------------------------------------------------------------------
// Placement database


export { FIRST_CUSTOM_RESOURCE_CLASS_ID, STANDARD_RESOURCE_CLASSES };

/**
 * The id of a resource class, creating it if missing: a standard class at its
 * standard id, a CUSTOM_ one at max(10000, max(id) + 1) as Placement's
 * ResourceClass._get_next_id does.
 */
export async function ensureResourceClass(placement: Knex, name: string): Promise<number> {
  const existing = await placement('resource_classes').select('id').where('name', name).first();
  if (existing !== undefined) return Number((existing as { id: number }).id);
  const standardId = STANDARD_RESOURCE_CLASSES.indexOf(name);
  if (standardId < 0 && !name.startsWith('CUSTOM_')) {
    throw new Error(`resource class ${name} is neither a standard class nor CUSTOM_*`);
  }
  return placement.transaction(async (trx) => {
    let id = standardId;
    if (id < 0) {
      const row = (await trx('resource_classes').max({ max: 'id' }).first()) as { max: number | string | null } | undefined;
      const max = row?.max === null || row?.max === undefined ? -1 : Number(row.max);
      id = Math.max(FIRST_CUSTOM_RESOURCE_CLASS_ID, max + 1);
    }
    const row: Row = { id, name, created_at: utcNowString(), updated_at: null };
    if (id === 0 && dialectOf(trx) === 'mysql') {
      // VCPU's id 0 would mean "next auto-increment value" to MySQL; Placement
      // inserts it under NO_AUTO_VALUE_ON_ZERO. The transaction pins the
      // connection, so the session change stays on it and is undone below.
      await trx.raw('SET @nr_saved_sql_mode = @@SESSION.sql_mode');
      await trx.raw("SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO')");
      try {
        await trx('resource_classes').insert(row);
      } finally {
        await trx.raw('SET SESSION sql_mode = @nr_saved_sql_mode');
      }
    } else {
      await trx('resource_classes').insert(row);
    }
    return id;
  });
}

/** The ids of several resource classes, each created if missing. */
export async function ensureResourceClasses(placement: Knex, names: Iterable<string>): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const name of new Set(names)) ids.set(name, await ensureResourceClass(placement, name));
  return ids;
}

/** Get-or-create a trait by name (standard traits too: they are inserted at API start with auto-increment ids). */
export async function ensureTrait(placement: Knex, name: string): Promise<number> {
  const existing = await placement('traits').select('id').where('name', name).first();
  if (existing !== undefined) return Number((existing as { id: number }).id);
  return insertOne(placement, 'traits', { name, created_at: utcNowString(), updated_at: null });
}

async function getOrCreateExternal(placement: Knex, table: 'projects' | 'users', externalId: string): Promise<number> {
  const existing = await placement(table).select('id').where('external_id', externalId).first();
  if (existing !== undefined) return Number((existing as { id: number }).id);
  return insertOne(placement, table, { external_id: externalId, created_at: utcNowString(), updated_at: null });
}

/** Placement's projects row for a Keystone project id; rows are never deleted. */
export async function getOrCreateProject(placement: Knex, externalId: string): Promise<number> {
  return getOrCreateExternal(placement, 'projects', externalId);
}

export async function getOrCreateUser(placement: Knex, externalId: string): Promise<number> {
  return getOrCreateExternal(placement, 'users', externalId);
}

export interface ResourceProviderSpec {
  readonly uuid: string;
  /** Nova names a compute node's provider by its hypervisor_hostname. */
  readonly name: string;
  /** Placement starts at 0 and bumps it on every inventory, trait or allocation write (§8.2). */
  readonly generation?: number;
  /** The parent provider's id; omitted for a root. */
  readonly parentId?: number;
  readonly createdAt?: string;
}

function providerRow(spec: ResourceProviderSpec, now: string): Row {
  const createdAt = spec.createdAt ?? now;
  return {
    created_at: createdAt,
    // Setting root_provider_id is an ORM save in the creating transaction, so
    // a new provider already has updated_at; so does every generation bump.
    updated_at: createdAt,
    uuid: spec.uuid,
    name: spec.name,
    generation: spec.generation ?? 0,
    root_provider_id: null,
    parent_provider_id: spec.parentId ?? null,
  };
}

/**
 * A provider as ResourceProvider._create_in_db makes it: a root gets
 * root_provider_id = its own id right after the insert, in the same
 * transaction; a child gets its parent's root.
 */
export async function insertResourceProvider(placement: Knex, spec: ResourceProviderSpec): Promise<number> {
  return placement.transaction(async (trx) => {
    const id = await insertOne(trx, 'resource_providers', providerRow(spec, utcNowString()));
    const rootId = spec.parentId === undefined ? id : await rootOf(trx, spec.parentId);
    await trx('resource_providers').update({ root_provider_id: rootId }).where('id', id);
    return id;
  });
}

async function rootOf(placement: Knex, providerId: number): Promise<number> {
  const row = (await placement('resource_providers').select('root_provider_id').where('id', providerId).first()) as
    | { root_provider_id: number | null }
    | undefined;
  if (row === undefined || row.root_provider_id === null) throw new Error(`parent resource provider ${providerId} has no root`);
  return Number(row.root_provider_id);
}

/** Many providers: one multi-row insert and one root update per chunk, in one transaction. */
export async function insertResourceProviders(placement: Knex, specs: readonly ResourceProviderSpec[]): Promise<number[]> {
  if (specs.length === 0) return [];
  const now = utcNowString();
  return placement.transaction(async (trx) => {
    const ids = await insertManyReturningIds(trx, 'resource_providers', 'uuid', specs.map((s) => providerRow(s, now)));
    const roots: number[] = [];
    const children: Array<{ id: number; parentId: number }> = [];
    specs.forEach((s, i) => {
      const id = ids[i];
      if (id === undefined) return;
      if (s.parentId === undefined) roots.push(id);
      else children.push({ id, parentId: s.parentId });
    });
    for (const batch of chunk(roots, INSERT_CHUNK)) {
      await trx('resource_providers').update({ root_provider_id: trx.ref('id') }).whereIn('id', batch);
    }
    for (const c of children) {
      await trx('resource_providers').update({ root_provider_id: await rootOf(trx, c.parentId) }).where('id', c.id);
    }
    return ids;
  });
}

export interface InventorySpec {
  readonly providerId: number;
  readonly resourceClass: string;
  readonly total: number;
  readonly reserved?: number;
  readonly minUnit?: number;
  /** Default: total (what Nova's drivers report); Placement's own default is 2147483647. */
  readonly maxUnit?: number;
  readonly stepSize?: number;
  readonly allocationRatio?: number;
  readonly createdAt?: string;
}

function inventoryRow(spec: InventorySpec, classId: number, now: string): Row {
  return {
    created_at: spec.createdAt ?? now,
    updated_at: null,
    resource_provider_id: spec.providerId,
    resource_class_id: classId,
    total: spec.total,
    reserved: spec.reserved ?? 0,
    min_unit: spec.minUnit ?? 1,
    max_unit: spec.maxUnit ?? spec.total,
    step_size: spec.stepSize ?? 1,
    allocation_ratio: spec.allocationRatio ?? 1.0,
  };
}

export async function insertInventories(placement: Knex, specs: readonly InventorySpec[]): Promise<void> {
  const classes = await ensureResourceClasses(placement, specs.map((s) => s.resourceClass));
  const now = utcNowString();
  await insertMany(placement, 'inventories', specs.map((s) => inventoryRow(s, classes.get(s.resourceClass) ?? -1, now)));
}

/** resource_provider_traits rows (no timestamps are read, but Placement writes created_at). */
export async function insertProviderTraits(placement: Knex, providerId: number, traitNames: readonly string[]): Promise<void> {
  const now = utcNowString();
  const rows: Row[] = [];
  for (const name of new Set(traitNames)) {
    rows.push({ trait_id: await ensureTrait(placement, name), resource_provider_id: providerId, created_at: now, updated_at: null });
  }
  await insertMany(placement, 'resource_provider_traits', rows);
}

export interface ConsumerSpec {
  /** The instance or migration uuid. */
  readonly uuid: string;
  /** Keystone ids; the projects/users rows are get-or-created. */
  readonly projectId: string;
  readonly userId: string;
  /** 1 after the first allocation write (created at 0 and bumped in the same transaction). */
  readonly generation?: number;
  readonly createdAt?: string;
}

/** A consumer as the first allocation write creates it; consumer_type_id stays NULL for Nova's consumers. */
export async function insertConsumer(placement: Knex, spec: ConsumerSpec): Promise<number> {
  const projectId = await getOrCreateProject(placement, spec.projectId);
  const userId = await getOrCreateUser(placement, spec.userId);
  const createdAt = spec.createdAt ?? utcNowString();
  const generation = spec.generation ?? 1;
  return insertOne(placement, 'consumers', {
    created_at: createdAt,
    updated_at: generation > 0 ? createdAt : null,
    uuid: spec.uuid,
    project_id: projectId,
    user_id: userId,
    generation,
    consumer_type_id: null,
  });
}

export interface AllocationSpec {
  readonly providerId: number;
  /** allocations.consumer_id holds the consumer's uuid. */
  readonly consumerUuid: string;
  readonly resourceClass: string;
  readonly used: number;
  readonly createdAt?: string;
}

function allocationRow(spec: AllocationSpec, classId: number, now: string): Row {
  return {
    created_at: spec.createdAt ?? now,
    updated_at: null,
    resource_provider_id: spec.providerId,
    consumer_id: spec.consumerUuid,
    resource_class_id: classId,
    used: spec.used,
  };
}

export async function insertAllocation(placement: Knex, spec: AllocationSpec): Promise<number> {
  const classId = await ensureResourceClass(placement, spec.resourceClass);
  return insertOne(placement, 'allocations', allocationRow(spec, classId, utcNowString()));
}

export async function insertAllocations(placement: Knex, specs: readonly AllocationSpec[]): Promise<void> {
  const classes = await ensureResourceClasses(placement, specs.map((s) => s.resourceClass));
  const now = utcNowString();
  await insertMany(placement, 'allocations', specs.map((s) => allocationRow(s, classes.get(s.resourceClass) ?? -1, now)));
}

// ---------------------------------------------------------------------------
// instance_extra (the embedded flavor heal_allocations reads)

export interface InstanceFlavorSpec {
  readonly id: number;
  readonly name?: string;
  readonly vcpus: number;
  readonly memoryMb: number;
  readonly rootGb: number;
  readonly ephemeralGb?: number;
  /** MB, as the flavor stores it. */
  readonly swap?: number;
  readonly extraSpecs?: Readonly<Record<string, string>>;
}

/**
 * The instance's flavor as Instance._save_flavor stores it:
 * jsonutils.dumps({'cur': flavor.obj_to_primitive(), 'old': None, 'new': None}).
 */
export function instanceFlavorJson(f: InstanceFlavorSpec, createdAt: string): string {
  const data = {
    id: f.id,
    name: f.name ?? `flavor-${f.id}`,
    memory_mb: f.memoryMb,
    vcpus: f.vcpus,
    root_gb: f.rootGb,
    ephemeral_gb: f.ephemeralGb ?? 0,
    flavorid: String(f.id),
    swap: f.swap ?? 0,
    rxtx_factor: 1.0,
    vcpu_weight: 0,
    disabled: false,
    is_public: true,
    extra_specs: f.extraSpecs ?? {},
    description: null,
    created_at: createdAt.replace(' ', 'T') + 'Z',
    updated_at: null,
    deleted_at: null,
    deleted: false,
  };
  const cur = {
    'nova_object.name': 'Flavor',
    'nova_object.namespace': 'nova',
    'nova_object.version': '1.2',
    'nova_object.data': data,
    'nova_object.changes': Object.keys(data).sort(),
  };
  return pythonJson({ cur, old: null, new: null });
}

export interface InstanceExtraSpec {
  readonly instanceUuid: string;
  readonly flavor: InstanceFlavorSpec;
  readonly createdAt?: string;
}

/** The instance_extra row Instance.create writes (flavor set; the other columns as a plain boot leaves them). */
export async function insertInstanceExtra(cell: Knex, spec: InstanceExtraSpec): Promise<number> {
  return insertOne(cell, 'instance_extra', instanceExtraRow(spec));
}

export async function insertInstanceExtras(cell: Knex, specs: readonly InstanceExtraSpec[]): Promise<void> {
  await insertMany(cell, 'instance_extra', specs.map(instanceExtraRow));
}

function instanceExtraRow(spec: InstanceExtraSpec): Row {
  const createdAt = spec.createdAt ?? utcNowString();
  return {
    created_at: createdAt,
    updated_at: null,
    deleted_at: null,
    deleted: 0,
    instance_uuid: spec.instanceUuid,
    numa_topology: null,
    pci_requests: '[]',
    flavor: instanceFlavorJson(spec.flavor, createdAt),
    vcpu_model: null,
    migration_context: null,
    keypairs: pythonJson({ 'nova_object.name': 'KeyPairList', 'nova_object.namespace': 'nova', 'nova_object.version': '1.3', 'nova_object.data': { objects: [] }, 'nova_object.changes': ['objects'] }),
    device_metadata: null,
    trusted_certs: null,
    vpmems: null,
    resources: null,
  };
}
