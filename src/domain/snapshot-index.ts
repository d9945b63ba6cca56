// Lookups over a Snapshot, built once per plan. Hosts and node names are
// keyed the way Nova's utf8mb3_general_ci columns compare them for ASCII
// names (the cell database's WHERE host = ? AND node = ?): case- and
// trailing-space-insensitive. These are the only key builders of hosts and
// nodes: every planner and the audits match through them, so a node that the
// database would find is found by every command alike.
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InstanceRec, InventoryRec, IronicNodeRec, ProviderRec, ServiceRec, Snapshot } from './model.js';
import { FINAL_MIGRATION_STATES } from './model.js';
import { footprintOfChanges, type PlannedChange } from './plan.js';
import { groupBy } from './text-and-maps.js';

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
  /** Live nova-compute services by `${cellUuid}|${hostKey}`. */
  readonly liveComputeService: ReadonlyMap<string, ServiceRec>;
  readonly deletedComputeService: ReadonlyMap<string, ServiceRec>;
  readonly instanceByUuid: ReadonlyMap<string, InstanceRec>;
  /** Live instances by `${cellUuid}|${hostKey(host)}|${node}`. */
  readonly instancesOnNode: ReadonlyMap<string, readonly InstanceRec[]>;
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

export function indexSnapshot(s: Snapshot): SnapshotIndex {
  const liveNodes = s.computeNodes.filter((n) => !n.deleted);
  const liveNodeByUuid = new Map<string, ComputeNodeRec>();
  const deletedNodeByUuid = new Map<string, ComputeNodeRec>();
  for (const n of s.computeNodes) {
    if (n.uuid === null) continue;
    if (!n.deleted) liveNodeByUuid.set(n.uuid, n);
    else if ((deletedNodeByUuid.get(n.uuid)?.id ?? -1) < n.id) deletedNodeByUuid.set(n.uuid, n);
  }
  const liveNodesByHypervisorHostname = groupBy(liveNodes, (n) => n.hypervisorHostname?.toLowerCase());
  const ironicNodeUuids = s.ironicNodes === undefined ? undefined : new Set(s.ironicNodes.map((n) => n.uuid.toLowerCase()));
  const ironicNodeByUuid = new Map((s.ironicNodes ?? []).map((n) => [n.uuid.toLowerCase(), n] as const));
  const liveComputeService = new Map<string, ServiceRec>();
  const deletedComputeService = new Map<string, ServiceRec>();
  for (const svc of s.services) {
    if (svc.binary !== 'nova-compute') continue;
    (svc.deleted ? deletedComputeService : liveComputeService).set(serviceKey(svc.cellUuid, svc.host), svc);
  }
  const instanceByUuid = new Map<string, InstanceRec>();
  for (const i of s.instances) instanceByUuid.set(i.uuid, i);
  const instancesOnNode = groupBy(s.instances, (i) => nodeKey(i.cellUuid, i.host, i.node));
  const activeMigrationUuids = new Set<string>();
  for (const m of s.migrations) if (m.uuid !== null && !FINAL_MIGRATION_STATES.includes(m.status ?? '')) activeMigrationUuids.add(m.uuid);

  const p = s.placement;
  const providerById = new Map<number, ProviderRec>();
  const providerByUuid = new Map<string, ProviderRec>();
  const providerByName = new Map<string, ProviderRec>();
  const consumerByUuid = new Map<string, ConsumerRec>();
  if (p !== undefined) {
    for (const rp of p.providers) {
      providerById.set(rp.id, rp);
      providerByUuid.set(rp.uuid, rp);
      if (rp.name !== null) providerByName.set(rp.name.toLowerCase(), rp);
    }
    for (const c of p.consumers) consumerByUuid.set(c.uuid, c);
  }
  const childrenOf = groupBy(p?.providers ?? [], (rp) => rp.parentId ?? undefined);
  const allocationsOnProvider = groupBy(p?.allocations ?? [], (a) => a.providerId);
  const allocationsOfConsumer = groupBy(p?.allocations ?? [], (a) => a.consumerUuid);
  const inventoriesOf = groupBy(p?.inventories ?? [], (inv) => inv.providerId);
  return {
    snapshot: s,
    liveNodes,
    liveNodeByUuid,
    liveNodesByHypervisorHostname,
    ironicNodeUuids,
    ironicNodeByUuid,
    deletedNodeByUuid,
    anyNodeName: new Set(s.computeNodes.flatMap((n) => (n.hypervisorHostname === null ? [] : [n.hypervisorHostname.toLowerCase()]))),
    liveComputeService,
    deletedComputeService,
    instanceByUuid,
    instancesOnNode,
    activeMigrationUuids,
    providerById,
    providerByUuid,
    providerByName,
    childrenOf,
    allocationsOnProvider,
    allocationsOfConsumer,
    consumerByUuid,
    inventoriesOf,
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
