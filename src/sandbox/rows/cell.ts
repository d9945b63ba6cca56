// Rows of a cell database: services, compute nodes, instances and
// instance_extra (the embedded flavor heal_allocations reads).
import type { Knex } from 'knex';
import { utcNowString } from '../../db/time.js';
import { flag, insertMany, insertManyReturningIds, insertOne, pythonJson, type Row } from './common.js';

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
  /** Zed's resource tracker never sets service_id (nova-facts §5.4): NULL unless given. */
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

/** Nova's soft delete: deleted = id, deleted_at = at, updated_at left alone (nova-facts §8.1). */
export async function softDeleteRow(cell: Knex, table: 'services' | 'compute_nodes' | 'instances', id: number, at: string): Promise<void> {
  await cell(table).update({ deleted: id, deleted_at: at }).where('id', id);
}

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
