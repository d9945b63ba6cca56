// Lookups over a Snapshot, built once per plan. Hosts and node names are
// keyed the way Nova's utf8mb3_general_ci columns compare them for ASCII
// names (the cell database's WHERE host = ? AND node = ?): case- and
// trailing-space-insensitive. These are the only key builders of hosts and
// nodes: every planner and the audits match through them, so a node that the
// database would find is found by every command alike.
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InstanceRec, InventoryRec, IronicNodeRec, PlacementSnapshot, ProviderRec, ServiceRec, Snapshot } from './model.js';
import { COMPUTE_NODE_TRAIT, FINAL_MIGRATION_STATES } from './model.js';
import { ReconcileError } from '../errors.js';
import { footprintOfChanges, type PlannedChange } from './plan.js';
import { Groups, groupBy } from './text-and-maps.js';
import { outOfScope, ScopedMap, ScopedSet } from './scoped-lookups.js';

/**
 * A host (or node name) as the database compares it: case folded, trailing
 * spaces ignored. NULL keys as '' (no live service or node of Nova's has a
 * NULL or empty host; a NULL host is refused before anything is matched).
 */
export function hostKey(host: string | null): string {
  return (host ?? '').replace(/ +$/, '').toLowerCase();
}

export interface SnapshotIndex {
  readonly snapshot: Snapshot;
  readonly liveNodes: readonly ComputeNodeRec[];
  readonly liveNodeByUuid: ReadonlyMap<string, ComputeNodeRec>;
  /** Live nodes by lower-cased hypervisor_hostname (the provider name Nova uses). */
  readonly liveNodesByHypervisorHostname: ReadonlyMap<string, readonly ComputeNodeRec[]>;
  /** Lower-cased ironic node uuids, when ironic truth was given. */
  readonly ironicNodeUuids: ReadonlySet<string> | undefined;
  /** The listed ironic nodes by lower-cased uuid (empty without ironic truth). */
  readonly ironicNodeByUuid: ReadonlyMap<string, IronicNodeRec>;
  /** Soft-deleted compute nodes by uuid (the newest row wins). */
  readonly deletedNodeByUuid: ReadonlyMap<string, ComputeNodeRec>;
  /** Lower-cased hypervisor_hostname of every compute node read, live or soft-deleted. */
  readonly anyNodeName: ReadonlySet<string>;
  /** Live nova-compute services by cell and host. */
  readonly liveComputeService: CellHostMap<ServiceRec>;
  readonly deletedComputeService: CellHostMap<ServiceRec>;
  /** The cells with a live nova-compute service (with a host). */
  readonly computeServiceCells: ReadonlySet<string>;
  readonly instanceByUuid: ReadonlyMap<string, InstanceRec>;
  /** Live instances by cell and node name (instancesOn matches the host too). */
  readonly instancesOnNode: CellHostMap<readonly InstanceRec[]>;
  /** Uuids of active migrations (nova's placement audit uses them as consumers). */
  readonly activeMigrationUuids: ReadonlySet<string>;
  readonly providerById: ReadonlyMap<number, ProviderRec>;
  readonly providerByUuid: ReadonlyMap<string, ProviderRec>;
  /** Providers by lower-cased name (placement's name column is case-insensitive). */
  readonly providerByName: ReadonlyMap<string, ProviderRec>;
  readonly childrenOf: ReadonlyMap<number, readonly ProviderRec[]>;
  readonly allocationsOnProvider: ReadonlyMap<number, readonly AllocationRec[]>;
  readonly allocationsOfConsumer: ReadonlyMap<string, readonly AllocationRec[]>;
  readonly consumerByUuid: ReadonlyMap<string, ConsumerRec>;
  readonly inventoriesOf: ReadonlyMap<number, readonly InventoryRec[]>;
}

/** A node of a cell as instances.host/node and compute_nodes.host/hypervisor_hostname are matched (Nova's get_by_host_and_nodename). */
export function nodeKey(cellUuid: string, host: string | null, node: string | null): string {
  return `${cellUuid}\u0000${hostKey(host)}\u0000${hostKey(node)}`;
}

export function serviceKey(cellUuid: string, host: string | null): string {
  return `${cellUuid}|${hostKey(host)}`;
}

/**
 * Values keyed by a cell and a host (or node name) as the database compares
 * them (hostKey): one map per cell, keyed by the folded name, which is the
 * record's own string when it is folded already. A `${cellUuid}|${host}` key
 * per entry was a new string per host: 6 MB of the audit's index at 100,000
 * hosts for the services, 8 MB for the instances (bench/README.md, "Memory").
 */
export class CellHostMap<V> {
  private readonly cells = new Map<string, ReadonlyMap<string, V>>();
  /** Set by scoped(): the (cell, folded host) pairs this map may be asked for. */
  private allowed: ((cellUuid: string, key: string) => boolean) | undefined;

  /** This map, answering only for the hosts a scoped read held in full (Snapshot.nodeScope); any other throws. */
  scoped(allowed: (cellUuid: string, key: string) => boolean, what: string): this {
    this.allowed = allowed;
    this.what = what;
    return this;
  }

  private what = '';

  private check(cellUuid: string, name: string | null): string {
    const key = hostKey(name);
    if (this.allowed !== undefined && !this.allowed(cellUuid, key)) throw outOfScope(`${this.what} of host ${name ?? '-'} in cell ${cellUuid}`, 'node');
    return key;
  }

  /** Exact groups of `items` by cell and name (Groups: a group of one is held as its item), in item order. */
  static grouped<T>(items: readonly T[], cellOf: (item: T) => string, nameOf: (item: T) => string | null): CellHostMap<readonly T[]> {
    const out = new CellHostMap<readonly T[]>();
    for (const [cellUuid, ofCell] of groupBy(items, cellOf)) out.cells.set(cellUuid, new Groups(ofCell, (item) => hostKey(nameOf(item))));
    return out;
  }

  get(cellUuid: string, name: string | null): V | undefined {
    const key = this.check(cellUuid, name);
    return this.cells.get(cellUuid)?.get(key);
  }

  has(cellUuid: string, name: string | null): boolean {
    const key = this.check(cellUuid, name);
    return this.cells.get(cellUuid)?.has(key) ?? false;
  }

  /** For a map built entry by entry (not by grouped). */
  set(cellUuid: string, name: string | null, value: V): void {
    let names = this.cells.get(cellUuid);
    if (names === undefined) {
      names = new Map<string, V>();
      this.cells.set(cellUuid, names);
    }
    if (!(names instanceof Map)) throw new Error('internal: CellHostMap.set on a grouped map');
    names.set(hostKey(name), value);
  }
}

/** The live instances on a node of a cell, as Nova's get_by_host_and_nodename matches them (nodeKey). */
export function instancesOn(ix: SnapshotIndex, cellUuid: string, host: string | null, node: string | null): readonly InstanceRec[] {
  const scope = ix.snapshot.instanceScope;
  if (scope !== undefined && !(scope.hostsByCell.get(cellUuid)?.has(hostKey(host)) ?? false)) throw outOfScope(`the live instances on host ${host ?? '-'} of cell ${cellUuid}`, 'instance');
  const named = ix.instancesOnNode.get(cellUuid, node);
  if (named === undefined) return [];
  const key = hostKey(host);
  return named.every((i) => hostKey(i.host) === key) ? named : named.filter((i) => hostKey(i.host) === key);
}

/**
 * The index of `s`, a snapshot that differs from `base.snapshot` only in
 * placement's rows and instances (the same providers: readForPlan's second
 * step): only the lookups of allocations, consumers and inventories (and of
 * instances, when the read scoped them too) are built again. Any other
 * snapshot is indexed whole.
 */
export function indexWithPlacementRows(base: SnapshotIndex, s: Snapshot): SnapshotIndex {
  const b = base.snapshot;
  const same = s.computeNodes === b.computeNodes && s.services === b.services && s.migrations === b.migrations && s.ironicNodes === b.ironicNodes;
  const p = s.placement;
  const instances = s.instances === b.instances && s.instanceScope === b.instanceScope ? {} : instanceMaps(s);
  return same && p !== undefined && p.providers === b.placement?.providers ? { ...base, snapshot: s, ...instances, ...placementRowMaps(p, base.providerById) } : indexSnapshot(s);
}

type PlacementRowMaps = Pick<SnapshotIndex, 'allocationsOnProvider' | 'allocationsOfConsumer' | 'consumerByUuid' | 'inventoriesOf'>;

/** The lookups of placement's rows; a scoped read's answer only for what it holds (ScopedMap). */
function placementRowMaps(p: PlacementSnapshot | undefined, providerById: ReadonlyMap<number, ProviderRec>): PlacementRowMaps {
  const consumerByUuid = new Map<string, ConsumerRec>();
  for (const c of p?.consumers ?? []) consumerByUuid.set(c.uuid, c);
  const maps: PlacementRowMaps = {
    allocationsOnProvider: groupBy(p?.allocations ?? [], (a) => a.providerId),
    allocationsOfConsumer: groupBy(p?.allocations ?? [], (a) => a.consumerUuid),
    consumerByUuid,
    inventoriesOf: groupBy(p?.inventories ?? [], (inv) => inv.providerId),
  };
  const scope = p?.scope;
  if (scope === undefined) return maps;
  const inScope = (id: number): boolean => scope.providerIds.has(id);
  const consumerInScope = (uuid: string): boolean => scope.consumerUuids.has(uuid);
  // The 'audit' read's inventories: root providers without COMPUTE_NODE.
  const inventoried = (id: number): boolean => {
    if (inScope(id)) return true;
    // The 'audit' read's inventories of root providers without COMPUTE_NODE; a read by uuid has none but the scope's, unless it read those too.
    const rp = p?.named === undefined || p.named.rootInventories === true ? providerById.get(id) : undefined;
    return rp !== undefined && rp.parentId === null && !rp.traits.includes(COMPUTE_NODE_TRAIT);
  };
  return {
    allocationsOnProvider: new ScopedMap(maps.allocationsOnProvider, inScope, 'the allocations of provider'),
    allocationsOfConsumer: new ScopedMap(maps.allocationsOfConsumer, consumerInScope, 'the allocations of consumer'),
    consumerByUuid: new ScopedMap(maps.consumerByUuid, consumerInScope, 'the consumer row of'),
    inventoriesOf: new ScopedMap(maps.inventoriesOf, inventoried, 'the inventories of provider'),
  };
}

type InstanceMaps = Pick<SnapshotIndex, 'instanceByUuid' | 'instancesOnNode'>;

/** The lookups of the instances; a scoped read's by uuid only for what it holds (ScopedMap; instancesOn checks the host). */
function instanceMaps(s: Snapshot): InstanceMaps {
  const instanceByUuid = new Map<string, InstanceRec>();
  for (const i of s.instances) instanceByUuid.set(i.uuid, i);
  const instancesOnNode = CellHostMap.grouped(s.instances, (i) => i.cellUuid, (i) => i.node);
  const scope = s.instanceScope;
  if (scope === undefined) return { instanceByUuid, instancesOnNode };
  return { instanceByUuid: new ScopedMap(instanceByUuid, (uuid) => scope.uuids.has(uuid), 'the live instance of uuid', 'instance'), instancesOnNode };
}

export function indexSnapshot(s: Snapshot): SnapshotIndex {
  const liveNodes = s.computeNodes.filter((n) => !n.deleted);
  const liveNodeByUuid = new Map<string, ComputeNodeRec>();
  const deletedNodeByUuid = new Map<string, ComputeNodeRec>();
  for (const n of s.computeNodes) {
    if (n.uuid === null) continue;
    if (!n.deleted) liveNodeByUuid.set(n.uuid, n);
    else if ((deletedNodeByUuid.get(n.uuid)?.id ?? -1) < n.id) deletedNodeByUuid.set(n.uuid, n);
  }
  const liveNodesByHypervisorHostname = new Groups(liveNodes, (n) => n.hypervisorHostname?.toLowerCase());
  const ironicNodeUuids = s.ironicNodes === undefined ? undefined : new Set(s.ironicNodes.map((n) => n.uuid.toLowerCase()));
  const ironicNodeByUuid = new Map((s.ironicNodes ?? []).map((n) => [n.uuid.toLowerCase(), n] as const));
  const liveComputeService = new CellHostMap<ServiceRec>();
  const deletedComputeService = new CellHostMap<ServiceRec>();
  for (const svc of s.services) {
    if (svc.binary !== 'nova-compute') continue;
    (svc.deleted ? deletedComputeService : liveComputeService).set(svc.cellUuid, svc.host, svc);
  }
  const noServices = s.nodeScope === 'no-services' || s.nodeScope === 'stale-provider-candidates';
  if (noServices) {
    // No service was read: "none" would be a guess.
    liveComputeService.scoped(() => false, 'the live nova-compute service');
    deletedComputeService.scoped(() => false, 'the deleted nova-compute service');
  }
  const computeServiceCells: ReadonlySet<string> = noServices
    ? s.computeServiceCells === undefined
      ? new ScopedSet(new Set(), 'whether a live nova-compute service is in cell')
      : new Set(s.computeServiceCells)
    : s.nodeScope === 'orphan-candidates'
      ? new ScopedSet(new Set(), 'whether a live nova-compute service is in cell')
      : new Set(s.services.filter((svc) => !svc.deleted && svc.binary === 'nova-compute' && svc.host !== null).map((svc) => svc.cellUuid));
  const activeMigrationUuids = new Set<string>();
  for (const m of s.migrations) if (m.uuid !== null && !FINAL_MIGRATION_STATES.includes(m.status ?? '')) activeMigrationUuids.add(m.uuid);

  const p = s.placement;
  const providerById = new Map<number, ProviderRec>();
  const providerByUuid = new Map<string, ProviderRec>();
  const providerByName = new Map<string, ProviderRec>();
  if (p !== undefined) {
    for (const rp of p.providers) {
      providerById.set(rp.id, rp);
      providerByUuid.set(rp.uuid, rp);
      if (rp.name !== null) providerByName.set(rp.name.toLowerCase(), rp);
    }
  }
  const childrenOf = groupBy(p?.providers ?? [], (rp) => rp.parentId ?? undefined);
  const anyNodeName = new Set(s.computeNodes.flatMap((n) => (n.hypervisorHostname === null ? [] : [n.hypervisorHostname.toLowerCase()])));
  const nodes = { liveNodeByUuid, liveNodesByHypervisorHostname, deletedNodeByUuid, anyNodeName };
  return {
    snapshot: s,
    liveNodes,
    ironicNodeUuids,
    ironicNodeByUuid,
    ...(s.nodeScope === 'orphan-candidates'
      ? candidateNodeMaps(s, nodes, liveComputeService, deletedComputeService)
      : s.nodeScope === 'stale-provider-candidates'
        ? staleCandidateNodeMaps(s, nodes)
        : nodes),
    liveComputeService,
    deletedComputeService,
    computeServiceCells,
    ...instanceMaps(s),
    activeMigrationUuids,
    ...(p?.named === undefined ? { providerById, providerByUuid, providerByName, childrenOf } : namedProviderMaps(p, p.named, { providerById, providerByUuid, providerByName, childrenOf })),
    ...placementRowMaps(p, providerById),
  };
}

type NodeMaps = Pick<SnapshotIndex, 'liveNodeByUuid' | 'liveNodesByHypervisorHostname' | 'deletedNodeByUuid' | 'anyNodeName'>;

/**
 * The lookups of a read of the orphan candidates only (Snapshot.nodeScope):
 * liveNodes holds them, the services are asked only for their hosts, and no
 * node is looked up by uuid or name (the read cannot tell "none" there).
 */
function candidateNodeMaps(s: Snapshot, maps: NodeMaps, live: CellHostMap<ServiceRec>, deleted: CellHostMap<ServiceRec>): NodeMaps {
  const hosts = new Set(s.computeNodes.map((n) => `${n.cellUuid}\u0000${hostKey(n.host)}`));
  const held = (cellUuid: string, key: string): boolean => hosts.has(`${cellUuid}\u0000${key}`);
  live.scoped(held, 'the live nova-compute service');
  deleted.scoped(held, 'the deleted nova-compute service');
  const none = (): boolean => false;
  return {
    liveNodeByUuid: new ScopedMap(maps.liveNodeByUuid, none, 'the live compute node of uuid', 'node'),
    liveNodesByHypervisorHostname: new ScopedMap(maps.liveNodesByHypervisorHostname, none, 'the live compute nodes named', 'node'),
    deletedNodeByUuid: new ScopedMap(maps.deletedNodeByUuid, none, 'the deleted compute node of uuid', 'node'),
    anyNodeName: new ScopedSet(maps.anyNodeName, 'the compute nodes named'),
  };
}

/**
 * The lookups of placement cleanup_providers' read (Snapshot.nodeScope
 * 'stale-provider-candidates'): whether a uuid is a live node's, and every
 * node name, for any (nodeKeys); a live node's record by uuid, and the live
 * nodes of a name, only for the names read; the soft-deleted nodes whole.
 */
function staleCandidateNodeMaps(s: Snapshot, maps: NodeMaps): NodeMaps {
  const keys = s.nodeKeys;
  if (keys === undefined) throw new ReconcileError('internal', 'a read of the stale-provider candidates without its node keys');
  return {
    liveNodeByUuid: new ScopedMap(maps.liveNodeByUuid, (uuid) => maps.liveNodeByUuid.has(uuid) || !keys.liveUuids.has(uuid), 'the live compute node of uuid', 'node', keys.liveUuids),
    liveNodesByHypervisorHostname: new ScopedMap(maps.liveNodesByHypervisorHostname, (name) => keys.namesRead.has(name), 'the live compute nodes named', 'node'),
    deletedNodeByUuid: maps.deletedNodeByUuid,
    anyNodeName: keys.names,
  };
}

type ProviderMaps = Pick<SnapshotIndex, 'providerById' | 'providerByUuid' | 'providerByName' | 'childrenOf'>;

/**
 * The provider lookups of a read by uuid (PlacementSnapshot.named): by uuid
 * the named ones and those read, by id those read, children only of the
 * trees read whole (the named providers' trees), never by name.
 */
function namedProviderMaps(p: PlacementSnapshot, named: NonNullable<PlacementSnapshot['named']>, maps: ProviderMaps): ProviderMaps {
  const trees = new Set<number>();
  const roots = new Set(p.providers.filter((rp) => named.uuids.has(rp.uuid)).map((rp) => rp.rootId ?? rp.id));
  for (const rp of p.providers) if (roots.has(rp.rootId ?? rp.id)) trees.add(rp.id);
  return {
    providerById: new ScopedMap(maps.providerById, (id) => named.ids.has(id) || maps.providerById.has(id), 'the resource provider of id'),
    providerByUuid: new ScopedMap(maps.providerByUuid, (uuid) => named.uuids.has(uuid) || maps.providerByUuid.has(uuid), 'the resource provider of uuid'),
    providerByName: new ScopedMap(maps.providerByName, () => false, 'the resource provider named'),
    childrenOf: new ScopedMap(maps.childrenOf, (id) => trees.has(id), 'the children of resource provider'),
  };
}

/**
 * The index with these allocations in place of the snapshot's (the audit's:
 * it streams the allocations and keeps only those its provider checks need).
 */
export function withAllocations(ix: SnapshotIndex, allocations: readonly AllocationRec[]): SnapshotIndex {
  return {
    ...ix,
    allocationsOnProvider: groupBy(allocations, (a) => a.providerId),
    allocationsOfConsumer: groupBy(allocations, (a) => a.consumerUuid),
  };
}

/** The footprint of a unit's changes in this snapshot (Unit.footprint): a consumer brings every provider it holds allocations on. */
export function unitFootprint(ix: SnapshotIndex, changes: readonly PlannedChange[]): string[] {
  return footprintOfChanges(changes, (consumer) => (ix.allocationsOfConsumer.get(consumer) ?? []).map((a) => a.providerId));
}

/** The provider and its descendants. */
export function providerTree(ix: SnapshotIndex, root: ProviderRec): ProviderRec[] {
  const out: ProviderRec[] = [];
  const stack = [root];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const rp = stack.pop() as ProviderRec;
    if (seen.has(rp.id)) continue;
    seen.add(rp.id);
    out.push(rp);
    stack.push(...(ix.childrenOf.get(rp.id) ?? []));
  }
  return out;
}
