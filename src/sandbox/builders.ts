// Scenario building blocks: the rows Nova and Placement write together for
// one compute service, one ironic node, one libvirt host or one server. Each
// is a few calls to ./rows.js, with the generations and timestamps those
// writes imply.
import type { Knex } from 'knex';
import { DAY, type ScenarioClock } from './clock.js';
import {
  RESERVED_HOST_MEMORY_MB,
  ZED_INITIAL_ALLOCATION_RATIOS,
  insertAllocations,
  insertComputeNode,
  insertConsumer,
  insertInstance,
  insertInstanceExtra,
  insertInstanceMapping,
  insertInventories,
  insertProviderTraits,
  insertResourceProvider,
  insertService,
} from './rows.js';

/** [DEFAULT] report_interval's default: one heartbeat (report_count + 1) every 10 s. */
export const REPORT_INTERVAL = 10;

/** Every compute node provider carries it (ResourceTracker._get_traits). */
export const COMPUTE_NODE_TRAIT = 'COMPUTE_NODE';

export interface ComputeServiceSpec {
  readonly uuid: string;
  readonly host: string;
  readonly clock: ScenarioClock;
  /** How long the service has existed; default 7 days. */
  readonly age?: number;
  /** Seconds since the last heartbeat; default 0 (up now). */
  readonly lastHeartbeatAgo?: number;
  readonly disabled?: boolean;
  readonly disabledReason?: string;
  readonly forcedDown?: boolean;
}

/** A nova-compute service that has been reporting every 10 s since it was created. */
export async function addComputeService(cell: Knex, spec: ComputeServiceSpec): Promise<number> {
  const age = spec.age ?? 7 * DAY;
  const sinceHeartbeat = spec.lastHeartbeatAgo ?? 0;
  const lastSeenUp = spec.clock.ago(sinceHeartbeat);
  return insertService(cell, {
    uuid: spec.uuid,
    host: spec.host,
    createdAt: spec.clock.ago(age),
    lastSeenUp,
    updatedAt: lastSeenUp,
    reportCount: Math.max(1, Math.floor((age - sinceHeartbeat) / REPORT_INTERVAL)),
    disabled: spec.disabled ?? false,
    disabledReason: spec.disabledReason ?? null,
    forcedDown: spec.forcedDown ?? false,
  });
}

export interface IronicNodeSpec {
  /** The ironic node uuid: compute node uuid, hypervisor_hostname, provider uuid and name. */
  readonly nodeUuid: string;
  /** The nova-compute service host that owns the node. */
  readonly host: string;
  /** e.g. CUSTOM_BAREMETAL_GOLD (normalize_rc_name of "baremetal-gold"). */
  readonly resourceClass: string;
  readonly clock: ScenarioClock;
  /** 1 when the node is unavailable or has an instance (nova-facts §6). */
  readonly reserved?: number;
  /** When the node was first seen; default 6 days ago. An idle ironic node is not re-saved. */
  readonly age?: number;
}

export interface IronicNodeRows {
  readonly computeNodeId: number;
  readonly providerId: number;
}

/**
 * An ironic node as the ironic driver and the resource tracker record it
 * (nova-facts §6): a compute node with no VCPU/RAM/disk and a provider named by the node
 * uuid holding one unit of the node's custom resource class.
 */
export async function addIronicNode(cell: Knex, placement: Knex, spec: IronicNodeSpec): Promise<IronicNodeRows> {
  const createdAt = spec.clock.ago(spec.age ?? 6 * DAY);
  const computeNodeId = await insertComputeNode(cell, {
    uuid: spec.nodeUuid,
    host: spec.host,
    hypervisorHostname: spec.nodeUuid,
    hypervisorType: 'ironic',
    createdAt,
    updatedAt: createdAt,
  });
  // Generation 2: the inventory write, then the trait write (nova-facts §8.2).
  const providerId = await insertResourceProvider(placement, { uuid: spec.nodeUuid, name: spec.nodeUuid, generation: 2, createdAt });
  await insertInventories(placement, [
    {
      providerId,
      resourceClass: spec.resourceClass,
      total: 1,
      reserved: spec.reserved ?? 0,
      minUnit: 1,
      maxUnit: 1,
      stepSize: 1,
      allocationRatio: 1.0,
      createdAt,
    },
  ]);
  await insertProviderTraits(placement, providerId, [COMPUTE_NODE_TRAIT]);
  return { computeNodeId, providerId };
}

export interface Flavor {
  readonly id: number;
  readonly vcpus: number;
  readonly memoryMb: number;
  readonly rootGb: number;
  /** Flavor extra specs, e.g. resources:VCPU=0 (embedded in instance_extra.flavor). */
  readonly extraSpecs?: Readonly<Record<string, string>>;
}

export interface LibvirtHostSpec {
  readonly host: string;
  readonly serviceUuid: string;
  /** The compute node uuid (Zed: random at first start, then kept in the compute_id file). */
  readonly nodeUuid: string;
  /** libvirt's hypervisor_hostname is the hypervisor's own (often fully qualified) name. */
  readonly hypervisorHostname: string;
  readonly hostIp: string;
  readonly clock: ScenarioClock;
  readonly vcpus?: number;
  readonly memoryMb?: number;
  readonly localGb?: number;
  /** Flavors of the instances the host runs, for the tracker's usage columns. */
  readonly running?: readonly Flavor[];
}

export interface LibvirtHostRows {
  readonly serviceId: number;
  readonly computeNodeId: number;
  readonly providerId: number;
}

/** A libvirt/QEMU compute host: its service, its one compute node and its provider with VCPU/MEMORY_MB/DISK_GB. */
export async function addLibvirtHost(cell: Knex, placement: Knex, spec: LibvirtHostSpec): Promise<LibvirtHostRows> {
  const vcpus = spec.vcpus ?? 16;
  const memoryMb = spec.memoryMb ?? 65536;
  const localGb = spec.localGb ?? 500;
  const running = spec.running ?? [];
  const sum = (f: (x: Flavor) => number): number => running.reduce((n, x) => n + f(x), 0);
  const serviceId = await addComputeService(cell, { uuid: spec.serviceUuid, host: spec.host, clock: spec.clock });
  const createdAt = spec.clock.ago(7 * DAY - 30);
  const computeNodeId = await insertComputeNode(cell, {
    uuid: spec.nodeUuid,
    host: spec.host,
    hypervisorHostname: spec.hypervisorHostname,
    hypervisorType: 'QEMU',
    vcpus,
    memoryMb,
    localGb,
    vcpusUsed: sum((x) => x.vcpus),
    memoryMbUsed: RESERVED_HOST_MEMORY_MB + sum((x) => x.memoryMb),
    localGbUsed: sum((x) => x.rootGb),
    runningVms: running.length,
    hostIp: spec.hostIp,
    stats: libvirtStats(running.length),
    createdAt,
    // A host with instances is re-saved whenever usage changes.
    updatedAt: running.length > 0 ? spec.clock.ago(60) : createdAt,
  });
  const providerId = await insertResourceProvider(placement, { uuid: spec.nodeUuid, name: spec.hypervisorHostname, generation: 2, createdAt });
  // What the libvirt driver's update_provider_tree reports, with Zed's
  // initial allocation ratios and reserved_host_memory_mb.
  await insertInventories(placement, [
    { providerId, resourceClass: 'VCPU', total: vcpus, reserved: 0, maxUnit: vcpus, allocationRatio: ZED_INITIAL_ALLOCATION_RATIOS.cpu, createdAt },
    {
      providerId,
      resourceClass: 'MEMORY_MB',
      total: memoryMb,
      reserved: RESERVED_HOST_MEMORY_MB,
      maxUnit: memoryMb,
      allocationRatio: ZED_INITIAL_ALLOCATION_RATIOS.ram,
      createdAt,
    },
    { providerId, resourceClass: 'DISK_GB', total: localGb, reserved: 0, maxUnit: localGb, allocationRatio: ZED_INITIAL_ALLOCATION_RATIOS.disk, createdAt },
  ]);
  await insertProviderTraits(placement, providerId, [COMPUTE_NODE_TRAIT]);
  return { serviceId, computeNodeId, providerId };
}

function libvirtStats(instances: number): Record<string, string> {
  if (instances === 0) return { failed_builds: '0' };
  return {
    failed_builds: '0',
    num_instances: String(instances),
    num_vm_active: String(instances),
    num_task_None: String(instances),
    num_os_type_None: String(instances),
    io_workload: '0',
  };
}

export interface ServerSpec {
  readonly uuid: string;
  readonly displayName: string;
  readonly host: string;
  /** The compute node's hypervisor_hostname. */
  readonly node: string;
  readonly providerId: number;
  readonly flavor: Flavor;
  readonly projectId: string;
  readonly userId: string;
  readonly clock: ScenarioClock;
  /** The id of the cell_mappings row of the cell that holds the instance. */
  readonly cellId: number;
  readonly age?: number;
}

/**
 * A booted server: the instance row, its instance mapping, and its
 * allocations in placement (consumer at generation 1; the provider's
 * generation bumped once for the allocation write, as Placement does).
 */
export async function addServer(cell: Knex, api: Knex, placement: Knex, spec: ServerSpec): Promise<number> {
  const createdAt = spec.clock.ago(spec.age ?? DAY);
  const instanceId = await insertInstance(cell, {
    uuid: spec.uuid,
    displayName: spec.displayName,
    host: spec.host,
    node: spec.node,
    vmState: 'active',
    projectId: spec.projectId,
    userId: spec.userId,
    vcpus: spec.flavor.vcpus,
    memoryMb: spec.flavor.memoryMb,
    rootGb: spec.flavor.rootGb,
    flavorId: spec.flavor.id,
    createdAt,
    launchedAt: createdAt,
  });
  await insertInstanceExtra(cell, { instanceUuid: spec.uuid, flavor: spec.flavor, createdAt });
  await insertInstanceMapping(api, { instanceUuid: spec.uuid, cellId: spec.cellId, projectId: spec.projectId, userId: spec.userId, createdAt });
  await placement.transaction(async (trx) => {
    await insertConsumer(trx, { uuid: spec.uuid, projectId: spec.projectId, userId: spec.userId, generation: 1, createdAt });
    await insertAllocations(trx, [
      { providerId: spec.providerId, consumerUuid: spec.uuid, resourceClass: 'VCPU', used: spec.flavor.vcpus, createdAt },
      { providerId: spec.providerId, consumerUuid: spec.uuid, resourceClass: 'MEMORY_MB', used: spec.flavor.memoryMb, createdAt },
      { providerId: spec.providerId, consumerUuid: spec.uuid, resourceClass: 'DISK_GB', used: spec.flavor.rootGb, createdAt },
    ]);
    await trx('resource_providers')
      .update({ generation: trx.raw('generation + 1'), updated_at: createdAt })
      .where('id', spec.providerId);
  });
  return instanceId;
}
