// The audit's placement completeness (issue 14): what nova's `placement
// audit` never reports and the rest of the audit did not see.
//  - instance-without-allocation: a live instance on a live node holds no
//    allocation on that node's provider tree (bug 1841481: a cascade delete
//    removed it), and is not migrating. Fixed by heal_allocations.
//  - orphaned-allocation: a consumer that is no live instance in any cell and
//    no in-progress migration holds allocations on a provider that is not
//    stale (stale providers are reported as stale-allocation) — any provider,
//    any resource class, so CUSTOM_* ironic allocations count too.
//  - soft-deleted-node-with-provider: a soft-deleted compute node whose
//    provider is still there, with no live row of its uuid and its service
//    alive: the node was deleted while it still exists (bug 1839560, an
//    ironic node in maintenance), so nova-compute hits DBDuplicateEntry on
//    compute_nodes_uuid_idx every cycle. Restoring the row is the fix;
//    removing the provider is not.
import type { Finding } from './finding.js';
import type { AllocationRec, ComputeNodeRec, ProviderRec } from './model.js';
import { FINAL_MIGRATION_STATES } from './model.js';
import { isStaleComputeProvider } from './stale-providers.js';
import { hostKey, nodeKey, providerTree, serviceKey, type SnapshotIndex } from './snapshot-index.js';
import { pushTo } from './text-and-maps.js';

export function findPlacementGaps(ix: SnapshotIndex): Finding[] {
  return [...findInstancesWithoutAllocation(ix), ...findOrphanedAllocations(ix), ...findDeletedNodesWithProvider(ix)];
}

function treeIds(ix: SnapshotIndex, root: ProviderRec): Set<number> {
  return new Set(providerTree(ix, root).map((rp) => rp.id));
}

function findInstancesWithoutAllocation(ix: SnapshotIndex): Finding[] {
  const s = ix.snapshot;
  const nodeByKey = new Map<string, ComputeNodeRec>();
  for (const n of ix.liveNodes) nodeByKey.set(nodeKey(n.cellUuid, n.host, n.hypervisorHostname), n);
  const migrating = new Set<string>();
  for (const m of s.migrations) if (m.instanceUuid !== null && !FINAL_MIGRATION_STATES.includes(m.status ?? '')) migrating.add(m.instanceUuid);
  const out: Finding[] = [];
  for (const i of s.instances) {
    if (i.host === null || i.node === null || migrating.has(i.uuid)) continue;
    const node = nodeByKey.get(nodeKey(i.cellUuid, i.host, i.node));
    if (node === undefined || node.uuid === null) continue;
    const rp = ix.providerByUuid.get(node.uuid);
    // No provider at all is node-without-provider's finding.
    if (rp === undefined) continue;
    const tree = treeIds(ix, rp);
    const mine = ix.allocationsOfConsumer.get(i.uuid) ?? [];
    if (mine.some((a) => tree.has(a.providerId))) continue;
    // Allocations on another node's provider are allocation-on-other-node's finding.
    if (mine.length > 0) continue;
    out.push({
      kind: 'instance-without-allocation',
      cellUuid: i.cellUuid,
      summary: `live instance ${i.uuid} on ${i.host}/${i.node} has no allocation in placement (its node's provider ${rp.uuid} holds none of it)`,
      objects: { instance_uuid: i.uuid, host: i.host, node: i.node, node_uuid: node.uuid, provider_uuid: rp.uuid, task_state: i.taskState, hypervisor_type: node.hypervisorType },
      suggestion: `nova-reconcile placement heal_allocations --instance ${i.uuid}${i.taskState === null ? '' : ' (once its task state is cleared)'}`,
    });
  }
  return out;
}

function findOrphanedAllocations(ix: SnapshotIndex): Finding[] {
  const out: Finding[] = [];
  const staleRoot = new Map<number, boolean>();
  const isOnStale = (providerId: number): boolean => {
    const rp = ix.providerById.get(providerId);
    if (rp === undefined) return false;
    const root = (rp.rootId === null ? undefined : ix.providerById.get(rp.rootId)) ?? rp;
    let stale = staleRoot.get(root.id);
    if (stale === undefined) staleRoot.set(root.id, (stale = isStaleComputeProvider(ix, root)));
    return stale;
  };
  for (const [consumerUuid, allocations] of [...ix.allocationsOfConsumer].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (ix.instanceByUuid.has(consumerUuid) || ix.activeMigrationUuids.has(consumerUuid)) continue;
    const byProvider = new Map<number, AllocationRec[]>();
    for (const a of allocations) {
      if (isOnStale(a.providerId)) continue;
      pushTo(byProvider, a.providerId, a);
    }
    for (const [providerId, rows] of byProvider) {
      const rp = ix.providerById.get(providerId);
      const resources = rows.map((a) => `${a.resourceClass}=${a.used}`).join(', ');
      out.push({
        kind: 'orphaned-allocation',
        summary: `consumer ${consumerUuid} (no live instance in any cell, no migration in progress) holds ${resources} on resource provider ${rp?.uuid ?? providerId} (${rp?.name ?? '-'})`,
        objects: { consumer_uuid: consumerUuid, provider_id: providerId, provider_uuid: rp?.uuid ?? null, provider_name: rp?.name ?? null, resources },
        suggestion: `nova-reconcile placement audit --all-resource-classes --resource_provider ${rp?.uuid ?? providerId} --delete`,
      });
    }
  }
  return out;
}

function findDeletedNodesWithProvider(ix: SnapshotIndex): Finding[] {
  const out: Finding[] = [];
  for (const n of ix.deletedNodeByUuid.values()) {
    if (n.uuid === null || ix.liveNodeByUuid.has(n.uuid)) continue;
    const rp = ix.providerByUuid.get(n.uuid);
    if (rp === undefined) continue;
    const service = ix.liveComputeService.get(serviceKey(n.cellUuid, n.host));
    if (service === undefined) continue;
    // The deleted row is history, not a lost node, when the node lives on in
    // another row: an ironic node under the same name anywhere, or any live
    // node of the same host for the one-node-per-host drivers (libvirt
    // re-creates its node under a new uuid, Zed §5.2).
    const sameName = (ix.liveNodesByHypervisorHostname.get((n.hypervisorHostname ?? '').toLowerCase()) ?? []).length > 0;
    const sameHost = n.hypervisorType !== 'ironic' && ix.liveNodes.some((live) => live.cellUuid === n.cellUuid && hostKey(live.host) === hostKey(n.host));
    if (sameName || sameHost) continue;
    out.push({
      kind: 'soft-deleted-node-with-provider',
      cellUuid: n.cellUuid,
      summary:
        `compute node ${n.uuid} on host ${n.host ?? '-'} was soft-deleted while its provider ${rp.uuid} remains and its service is alive; ` +
        'if the node still exists, nova-compute fails on compute_nodes_uuid_idx (DBDuplicateEntry) every cycle (bug 1839560). ' +
        'Do not run `nova-manage db archive_deleted_rows` before restoring it: it would move the row to the shadow tables',
      objects: { node_id: n.id, node_uuid: n.uuid, host: n.host, hypervisor_hostname: n.hypervisorHostname, hypervisor_type: n.hypervisorType, provider_uuid: rp.uuid, service_id: service.id },
      suggestion: `nova-reconcile compute_node restore --uuid ${n.uuid}`,
    });
  }
  return out;
}
