// Placement's providers against the cells' compute nodes: a live node
// without a provider, a provider whose node is gone, a provider that holds
// a live node's name.
import type { ProviderRec } from '../model.js';
import { comesBack } from '../returning-node.js';
import { isStaleComputeProvider, isTraitlessComputeProvider } from '../stale-providers.js';
import { providerTree, type SnapshotIndex } from '../snapshot-index.js';
import { add, cellOf, nodeLabel, nodeObjects, type Audit } from './context.js';
import { findStaleAllocations, keepForReturningNode } from './stale-allocations.js';

export function findNodesWithoutProvider(a: Audit): void {
  for (const n of a.ix.liveNodes) {
    // An orphan's missing provider is part of the orphan finding.
    if (a.orphans.has(n)) continue;
    if (n.uuid !== null && a.ix.providerByUuid.has(n.uuid)) continue;
    const holder = n.hypervisorHostname === null ? undefined : a.ix.providerByName.get(n.hypervisorHostname.toLowerCase());
    const blocker = holder !== undefined && holder.uuid !== n.uuid ? holder : undefined;
    add(a, {
      kind: 'node-without-provider',
      cellUuid: n.cellUuid,
      summary:
        blocker === undefined
          ? `${nodeLabel(n)} has no resource provider: the scheduler cannot use it`
          : `${nodeLabel(n)} has no resource provider: provider ${blocker.uuid} holds its name (409 on create)`,
      objects: { ...nodeObjects(n), blocking_provider_uuid: blocker?.uuid ?? null },
      suggestion:
        blocker !== undefined
          ? nameBlockerFix(a.ix, blocker)
          : a.ix.liveComputeService.has(n.cellUuid, n.host)
            ? `restart nova-compute on ${n.host ?? '-'}: it creates the provider in its next update_available_resource`
            : // An ironic node of a gone service (not an orphan): its new owner creates the provider.
              'nova-reconcile compute_node rebalance',
    });
  }
}

export function findStaleProviders(a: Audit): void {
  for (const rp of a.s.placement?.providers ?? []) {
    if (!isStaleComputeProvider(a.ix, rp)) continue;
    const deleted = a.ix.deletedNodeByUuid.get(rp.uuid);
    const tree = providerTree(a.ix, rp);
    const allocations = tree.flatMap((p) => a.ix.allocationsOnProvider.get(p.id) ?? []);
    const consumers = [...new Set(allocations.map((x) => x.consumerUuid))].sort();
    const why =
      deleted !== undefined
        ? `its compute node (id ${deleted.id}, host ${deleted.host ?? '-'}) was deleted`
        : isTraitlessComputeProvider(a.ix, rp)
          ? 'it has no COMPUTE_NODE trait (made before Train, bug 1661258) but only compute-node inventory, and no compute node in any cell has its uuid or name'
          : 'it carries COMPUTE_NODE but no compute node has its uuid';
    const returning = deleted !== undefined && comesBack(a.ix, deleted);
    add(a, {
      kind: 'provider-without-node',
      ...cellOf(deleted?.cellUuid),
      summary: `resource provider ${rp.uuid} (${rp.name ?? '-'}) has no live compute node: ${why}${consumers.length > 0 ? `; ${consumers.length} consumer(s) still hold allocations on it` : ''}`,
      objects: {
        provider_id: rp.id,
        provider_uuid: rp.uuid,
        provider_name: rp.name,
        deleted_node_id: deleted?.id ?? null,
        host: deleted?.host ?? null,
        children: tree.length - 1,
        consumers: consumers.length,
      },
      suggestion: returning ? keepForReturningNode(deleted) : 'nova-reconcile placement cleanup_providers',
    });
    findStaleAllocations(a, rp, deleted, tree, returning);
  }
}

/**
 * Who frees a provider name that blocks a node: cleanup_providers re-keys or
 * deletes a stale provider; one that belongs to a live node (the ironic
 * rebalance's duplicate) is compute_node rebalance's to resolve.
 */
function nameBlockerFix(ix: SnapshotIndex, blocker: ProviderRec): string {
  return isStaleComputeProvider(ix, blocker) ? 'nova-reconcile placement cleanup_providers' : 'nova-reconcile compute_node rebalance';
}

export function findNameConflicts(a: Audit): void {
  for (const rp of a.s.placement?.providers ?? []) {
    if (rp.name === null) continue;
    for (const n of a.ix.liveNodesByHypervisorHostname.get(rp.name.toLowerCase()) ?? []) {
      if (n.uuid === null || n.uuid === rp.uuid) continue;
      const stale = isStaleComputeProvider(a.ix, rp);
      add(a, {
        kind: 'provider-name-conflict',
        cellUuid: n.cellUuid,
        summary: `resource provider ${rp.uuid} holds the name ${rp.name} of ${nodeLabel(n)}, so nova-compute cannot create that node's provider (409)`,
        objects: { provider_id: rp.id, provider_uuid: rp.uuid, provider_name: rp.name, node_uuid: n.uuid, host: n.host, provider_is_stale: stale },
        suggestion: nameBlockerFix(a.ix, rp),
      });
    }
  }
}
