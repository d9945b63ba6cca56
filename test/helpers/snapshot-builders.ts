// Builders of small snapshots in code, shared by the planners' unit tests.
// Each builder returns a complete record with the defaults of a healthy,
// long-running cloud (a service seen 5 s ago, a node created a week ago);
// `over` changes what a case is about. Ids come from one counter, so records
// built anywhere in a file never collide.
import type {
  AllocationRec,
  ComputeNodeRec,
  ConsumerRec,
  HostMappingRec,
  InstanceRec,
  InventoryRec,
  IronicNodeRec,
  MigrationRec,
  ProviderRec,
  ServiceRec,
  Snapshot,
} from '../../src/domain/model.js';

/** The snapshot's clock: every ago() is relative to it. */
export const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
export const CELL0 = '00000000-0000-0000-0000-000000000000';
export const C1 = '11111111-1111-4111-8111-111111111111';
export const C2 = '22222222-2222-4222-8222-222222222222';
/** The custom resource class of the ironic nodes built here, and its id. */
export const BAREMETAL = 'CUSTOM_BAREMETAL_GOLD';
export const BAREMETAL_ID = 10000;

/** A naive UTC datetime `seconds` before NOW, as Nova's DATETIME columns read. */
export function ago(seconds: number): string {
  return new Date(NOW - seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

const UUIDS = new Map<string, string>();

/** One stable uuid per name: u('gone') is the same string wherever it is used. */
export function u(name: string): string {
  let uuid = UUIDS.get(name);
  if (uuid === undefined) {
    uuid = `${(UUIDS.size + 1).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
    UUIDS.set(name, uuid);
  }
  return uuid;
}

/** The names u() was given, by the uuid it returned: for messages and assertions that read better by name. */
export function uuidNames(): Map<string, string> {
  return new Map([...UUIDS].map(([name, uuid]) => [uuid, name]));
}

let nextId = 1;

/** A fresh id, unique in the test file. */
export function id(): number {
  return nextId++;
}

export function service(host: string, over: Partial<ServiceRec> = {}): ServiceRec {
  return {
    cellUuid: C1,
    id: nextId++,
    uuid: u(`s-${host}`),
    host,
    binary: 'nova-compute',
    disabled: false,
    forcedDown: false,
    lastSeenUp: ago(5),
    createdAt: ago(30 * 86400),
    updatedAt: ago(5),
    deleted: false,
    ...over,
  };
}

export function node(host: string, hh: string, over: Partial<ComputeNodeRec> = {}): ComputeNodeRec {
  return {
    cellUuid: C1,
    id: nextId++,
    uuid: u(`n-${hh}`),
    host,
    hypervisorHostname: hh,
    hypervisorType: 'QEMU',
    serviceId: null,
    mapped: 1,
    createdAt: ago(7 * 86400),
    updatedAt: ago(60),
    deleted: false,
    ...over,
  };
}

/** An ironic compute node: its uuid and hypervisor_hostname are the ironic node's uuid. */
export function ironicNode(host: string, nodeUuid: string, over: Partial<ComputeNodeRec> = {}): ComputeNodeRec {
  return node(host, nodeUuid, { uuid: nodeUuid, hypervisorType: 'ironic', ...over });
}

/** A root compute-node provider (COMPUTE_NODE trait, generation 2). */
export function provider(uuid: string, name: string | null, over: Partial<ProviderRec> = {}): ProviderRec {
  const pid = nextId++;
  return { id: pid, uuid, name, generation: 2, rootId: pid, parentId: null, traits: ['COMPUTE_NODE'], aggregateCount: 0, ...over };
}

/** The provider Nova makes for a compute node: its uuid and hypervisor_hostname. */
export function providerOf(n: ComputeNodeRec, over: Partial<ProviderRec> = {}): ProviderRec {
  return provider(n.uuid ?? '', n.hypervisorHostname ?? '', over);
}

/** A child provider of `parent` (a vGPU, a neutron agent): no COMPUTE_NODE trait. */
export function childOf(parent: ProviderRec, uuid: string, name: string, over: Partial<ProviderRec> = {}): ProviderRec {
  return provider(uuid, name, { rootId: parent.rootId ?? parent.id, parentId: parent.id, traits: [], ...over });
}

export function inventory(rp: ProviderRec, resourceClass = 'VCPU', over: Partial<InventoryRec> = {}): InventoryRec {
  const resourceClassId = resourceClass === 'VCPU' ? 0 : resourceClass === 'MEMORY_MB' ? 1 : resourceClass === 'DISK_GB' ? 2 : BAREMETAL_ID;
  return { id: nextId++, providerId: rp.id, resourceClassId, resourceClass, total: 16, reserved: 0, minUnit: 1, maxUnit: 16, stepSize: 1, allocationRatio: 1, ...over };
}

export function instance(uuid: string, n: ComputeNodeRec, over: Partial<InstanceRec> = {}): InstanceRec {
  return { cellUuid: n.cellUuid, id: nextId++, uuid, host: n.host, node: n.hypervisorHostname, vmState: 'active', taskState: null, ...over };
}

export function alloc(rp: ProviderRec, consumerUuid: string, resourceClass = 'VCPU', used = 2): AllocationRec {
  return { id: nextId++, providerId: rp.id, consumerUuid, resourceClassId: resourceClass === 'VCPU' ? 0 : BAREMETAL_ID, resourceClass, used };
}

export function consumer(uuid: string, generation = 1): ConsumerRec {
  return { id: nextId++, uuid, generation, projectId: 1, userId: 1 };
}

export function mapping(host: string, cellUuid = C1): HostMappingRec {
  return { id: nextId++, host, cellUuid };
}

/** An ironic node as Ironic lists it: active, not in maintenance, no conductor group. */
export function ironicTruth(...uuids: string[]): IronicNodeRec[] {
  return uuids.map((uuid) => ({ uuid, instanceUuid: null, maintenance: false, provisionState: 'active', conductorGroup: null }));
}

export interface Parts {
  hostMappings?: HostMappingRec[];
  services?: ServiceRec[];
  computeNodes?: ComputeNodeRec[];
  instances?: InstanceRec[];
  migrations?: MigrationRec[];
  providers?: ProviderRec[];
  inventories?: InventoryRec[];
  allocations?: AllocationRec[];
  /** Default: one consumer row (generation 1) per allocated consumer. */
  consumers?: ConsumerRec[];
  /** false: no placement database configured. */
  placement?: boolean;
  ironicNodes?: IronicNodeRec[];
}

/** cell0, cell1 (C1) and cell2 (C2), taken at NOW with service_down_time 60. */
export function snapshot(p: Parts): Snapshot {
  const allocations = p.allocations ?? [];
  return {
    takenAt: NOW,
    serviceDownTime: 60,
    cells: [
      { id: 1, uuid: CELL0, name: 'cell0', isCell0: true },
      { id: 2, uuid: C1, name: 'cell1', isCell0: false },
      { id: 3, uuid: C2, name: 'cell2', isCell0: false },
    ],
    hostMappings: p.hostMappings ?? [],
    services: p.services ?? [],
    computeNodes: p.computeNodes ?? [],
    instances: p.instances ?? [],
    migrations: p.migrations ?? [],
    placement:
      p.placement === false
        ? undefined
        : {
            providers: p.providers ?? [],
            inventories: p.inventories ?? [],
            allocations,
            consumers: p.consumers ?? [...new Set(allocations.map((a) => a.consumerUuid))].map((uuid) => consumer(uuid)),
          },
    ironicNodes: p.ironicNodes,
  };
}
