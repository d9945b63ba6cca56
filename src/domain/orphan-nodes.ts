// Planning `compute_node cleanup_orphans`. An orphan is a live compute node
// whose nova-compute service is soft-deleted or missing, or (only with ironic
// truth) whose ironic node no longer exists. Without ironic truth an ironic
// node is never deleted: the audit lists it as a suspect (seed bug 2013: the
// service heartbeat makes every node of the service look up). A node with a
// live instance is refused: that is the rebalance command's job.
// Each unit releases placement first (allocations, then the provider tree),
// then soft-deletes the compute node, so a crash in between leaves a
// provider-less orphan that the next run finishes.
import { cellNamer } from './cell-names.js';
import type { ComputeNodeRec, IronicOrigin, Snapshot } from './model.js';
import type { Plan, PlannedChange } from './plan.js';
import { selectInScope, type PlanScope, type ScopedRefusal, type ScopedUnit, type ScopeSubject } from './plan-scope.js';
import { newPlanState, planProviderTreeRemoval } from './provider-removal.js';
import { unservedGroup } from './partitions.js';
import { indexSnapshot, instancesOn, providerTree, unitFootprint, type SnapshotIndex } from './snapshot-index.js';
import { shellWord } from './text-and-maps.js';

export const CLEANUP_ORPHANS = 'compute_node cleanup_orphans';

/**
 * Why a live node is an orphan, or undefined when it is not (shared with the audit).
 * An ironic node whose service is gone is not an orphan while its ironic node
 * may exist: Nova's hash ring gives it to a live member, whose resource
 * tracker adopts the row (host only; uuid, provider and allocations kept,
 * nova-facts §5.4), so `compute_node rebalance` re-homes it the same way. Only when
 * Ironic is known not to list it is it an orphan, as Zed's periodic would
 * delete it (nova-facts §5.1).
 */
export function orphanReason(ix: SnapshotIndex, node: ComputeNodeRec): string | undefined {
  const ironicGone = node.hypervisorType === 'ironic' && ix.ironicNodeUuids !== undefined && !ix.ironicNodeUuids.has((node.hypervisorHostname ?? '').toLowerCase());
  const unmanaged = ironicGone ? undefined : unmanagedReason(ix, node);
  if (ix.liveComputeService.get(node.cellUuid, node.host) === undefined) {
    // No ring owner adopts a node of a group that no nova-compute serves.
    if (node.hypervisorType === 'ironic' && !ironicGone) return unmanaged;
    const service = ix.deletedComputeService.has(node.cellUuid, node.host)
      ? `its nova-compute service on ${node.host ?? '-'} was deleted`
      : `no nova-compute service exists for host ${node.host ?? '-'}`;
    return ironicGone ? `${service} and ironic node ${node.hypervisorHostname ?? '-'} no longer exists in ironic` : service;
  }
  if (ironicGone) return `ironic node ${node.hypervisorHostname ?? '-'} no longer exists in ironic`;
  return unmanaged;
}

/**
 * An ironic compute node whose ironic node exists but sits in a conductor
 * group that no nova-compute serves: no nova-compute lists it, so
 * Nova never updates or deletes its record (Nova 29.0.0 stopped deleting
 * such nodes, 947bb5f641), and its service's heartbeat keeps it looking up.
 */
export function unmanagedGroupOf(ix: SnapshotIndex, node: ComputeNodeRec): string | undefined {
  if (node.hypervisorType !== 'ironic' || node.hypervisorHostname === null) return undefined;
  return unservedGroup(ix.snapshot.ironicPartitions, ix.ironicNodeByUuid.get(node.hypervisorHostname.toLowerCase()));
}

function unmanagedReason(ix: SnapshotIndex, node: ComputeNodeRec): string | undefined {
  const group = unmanagedGroupOf(ix, node);
  return group === undefined
    ? undefined
    : `ironic node ${node.hypervisorHostname ?? '-'} is in conductor group "${group}", which no nova-compute serves ([nova_reconcile] ironic_partitions): it is unmanaged, not deleted`;
}

/**
 * What frees an orphan that still has live instances (shared with the audit).
 * Only ironic nodes whose ironic node is gone are ever orphans with an
 * instance of ironic; that instance has no machine left. A libvirt host whose
 * service row was deleted gets it back when nova-compute starts there.
 */
export function orphanWithInstancesFix(node: ComputeNodeRec, instanceUuids: readonly string[], ironicArgs = ' --ironic-nodes FILE'): string {
  return node.hypervisorType === 'ironic'
    ? `its ironic node is gone: delete server(s) ${instanceUuids.join(', ')} (openstack server delete), then nova-reconcile compute_node cleanup_orphans${ironicArgs}`
    : `start nova-compute on ${node.host ?? '-'} (it registers its service again and keeps the node); if the host is gone for good, move or delete server(s) ${instanceUuids.join(', ')} first`;
}

/** An unmanaged node that carries a server is not removed: a nova-compute must take it over. */
export function unmanagedWithInstancesFix(node: ComputeNodeRec, group: string): string {
  return `serve conductor group "${group}" from a nova-compute ([ironic] conductor_group/peer_list, and [nova_reconcile] ironic_partitions), then nova-reconcile compute_node move --node ${node.hypervisorHostname ?? '-'} --to-host HOST`;
}

/**
 * The arguments that give a suggested command the same ironic truth: none
 * when it came from the Ironic API (the command reads [ironic] itself), else
 * --ironic-nodes with the file (a shell word).
 */
export function ironicTruthArgs(origin: IronicOrigin | undefined, file?: string): string {
  if (origin?.kind === 'api') return '';
  return ` --ironic-nodes ${shellWord(file ?? origin?.location ?? 'FILE')}`;
}

/**
 * The providers whose placement rows planOrphanCleanup looks at (a
 * PlanReadRecipe's scopeOf): the trees of the orphan nodes' providers, those
 * refused for their instances included, in the index of a snapshot read
 * without allocations.
 */
export function orphanCleanupPlacementScope(ix: SnapshotIndex): number[] {
  const out: number[] = [];
  for (const node of ix.liveNodes) {
    const provider = node.uuid === null ? undefined : ix.providerByUuid.get(node.uuid);
    if (provider !== undefined && orphanReason(ix, node) !== undefined) for (const rp of providerTree(ix, provider)) out.push(rp.id);
  }
  return out;
}

/**
 * The hosts whose live instances planOrphanCleanup looks at (a
 * PlanReadRecipe's instanceHostsOf): those of the orphan nodes, those
 * refused for their instances included.
 */
export function orphanCleanupInstanceHosts(ix: SnapshotIndex): Array<{ readonly cellUuid: string; readonly host: string | null }> {
  return ix.liveNodes.filter((node) => orphanReason(ix, node) !== undefined).map((node) => ({ cellUuid: node.cellUuid, host: node.host }));
}

/**
 * The whole deployment is planned; a scope (--cell, --host, --node) then keeps the units of its nodes (plan-scope.ts).
 * `ix`: the snapshot's index when the read has built it already (readForPlan).
 */
export function planOrphanCleanup(snapshot: Snapshot, scope?: PlanScope, ix: SnapshotIndex = indexSnapshot(snapshot)): Plan {
  const state = newPlanState();
  const cellName = cellNamer(snapshot.cells);
  const units: ScopedUnit[] = [];
  const refused: ScopedRefusal[] = [];
  for (const node of ix.liveNodes) {
    const reason = orphanReason(ix, node);
    if (reason === undefined) continue;
    const about: ScopeSubject = { cells: [node.cellUuid], hosts: [node.host], nodes: [node], providers: node.uuid === null ? [] : [node.uuid] };
    const subject = `compute node ${node.uuid ?? node.id} (${node.host ?? '-'}/${node.hypervisorHostname ?? '-'}) in cell ${cellName(node.cellUuid)}`;
    const instances = instancesOn(ix, node.cellUuid, node.host, node.hypervisorHostname);
    if (instances.length > 0) {
      refused.push({
        refusal: {
          subject,
          reason: `${reason}, but live instance ${instances.map((i) => i.uuid).join(', ')} is on it`,
          suggestion:
            unmanagedGroupOf(ix, node) === undefined
              ? orphanWithInstancesFix(node, instances.map((i) => i.uuid), ironicTruthArgs(snapshot.ironicOrigin))
              : unmanagedWithInstancesFix(node, unmanagedGroupOf(ix, node) as string),
        },
        subject: about,
      });
      continue;
    }
    if (node.host === null) {
      refused.push({ refusal: { subject, reason: 'the compute node has no host, so it cannot be deleted with the host guard' }, subject: about });
      continue;
    }
    const changes: PlannedChange[] = [];
    const provider = node.uuid === null ? undefined : ix.providerByUuid.get(node.uuid);
    if (provider !== undefined && snapshot.placement !== undefined) {
      const removal = planProviderTreeRemoval(ix, provider, { cellUuid: node.cellUuid, host: node.host, hypervisorHostname: node.hypervisorHostname }, state);
      if (!removal.ok) {
        refused.push({ refusal: { subject, reason: `${reason}, but ${removal.reason}`, suggestion: removal.suggestion }, subject: about });
        continue;
      }
      changes.push(...removal.changes);
    }
    changes.push({
      change: { kind: 'soft-delete-compute-node', target: { db: 'cell', cellUuid: node.cellUuid }, id: node.id, uuid: node.uuid, host: node.host, hypervisorHostname: node.hypervisorHostname },
      reason,
    });
    const footprint = unitFootprint(ix, changes);
    units.push({ unit: { id: `orphan-node:${node.cellUuid}:${node.id}`, title: `orphan ${subject}: ${reason}`, changes, footprint }, subject: about, keys: footprint });
  }
  return selectInScope(CLEANUP_ORPHANS, units, refused, scope);
}
