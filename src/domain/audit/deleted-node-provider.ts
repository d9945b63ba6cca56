// The audit's placement completeness: what nova's `placement
// audit` never reports and the rest of the audit did not see. The two
// checks of allocations (instance-without-allocation, orphaned-allocation)
// are judged one consumer at a time, in consumer-allocations.ts.
//  - soft-deleted-node-with-provider: a soft-deleted compute node whose
//    provider is still there, with no live row of its uuid and its service
//    alive: the node was deleted while it still exists (bug 1839560, an
//    ironic node in maintenance), so nova-compute hits DBDuplicateEntry on
//    compute_nodes_uuid_idx every cycle. Restoring the row is the fix;
//    removing the provider is not.
import type { Finding } from '../finding.js';
import { novaKnowsIronicByUuid } from '../nova-release.js';
import { hostKey, type SnapshotIndex } from '../snapshot-index.js';

export function findDeletedNodesWithProvider(ix: SnapshotIndex): Finding[] {
  const out: Finding[] = [];
  for (const n of ix.deletedNodeByUuid.values()) {
    if (n.uuid === null || ix.liveNodeByUuid.has(n.uuid)) continue;
    const rp = ix.providerByUuid.get(n.uuid);
    if (rp === undefined) continue;
    const service = ix.liveComputeService.get(n.cellUuid, n.host);
    if (service === undefined) continue;
    // The deleted row is history, not a lost node, when the node lives on in
    // another row: an ironic node under the same name anywhere, or any live
    // node of the same host for the one-node-per-host drivers (libvirt
    // re-creates its node under a new uuid, Zed nova-facts §5.2).
    const sameName = (ix.liveNodesByHypervisorHostname.get((n.hypervisorHostname ?? '').toLowerCase()) ?? []).length > 0;
    const sameHost = n.hypervisorType !== 'ironic' && ix.liveNodes.some((live) => live.cellUuid === n.cellUuid && hostKey(live.host) === hostKey(n.host));
    if (sameName || sameHost) continue;
    out.push({
      kind: 'soft-deleted-node-with-provider',
      cellUuid: n.cellUuid,
      summary:
        `compute node ${n.uuid} on host ${n.host ?? '-'} was soft-deleted while its provider ${rp.uuid} remains and its service is alive; ` +
        (novaKnowsIronicByUuid(ix.snapshot.release)
          ? 'if the node still exists, nova-compute (27.0.0+) un-deletes the row itself on its next periodic; restoring it now is the same write. '
          : 'if the node still exists, nova-compute fails on compute_nodes_uuid_idx (DBDuplicateEntry) every cycle (bug 1839560). ') +
        'Do not run `nova-manage db archive_deleted_rows` before restoring it: it would move the row to the shadow tables',
      objects: { node_id: n.id, node_uuid: n.uuid, host: n.host, hypervisor_hostname: n.hypervisorHostname, hypervisor_type: n.hypervisorType, provider_uuid: rp.uuid, service_id: service.id },
      suggestion: `nova-reconcile compute_node restore --uuid ${n.uuid}`,
    });
  }
  return out;
}
