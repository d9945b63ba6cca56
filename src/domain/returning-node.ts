// A soft-deleted compute node that comes back (bug 1839560): the one
// judgement the audit and every planner that removes a stale provider use,
// so that what the audit says to keep is never offered for deletion.
import type { ComputeNodeRec, ProviderRec } from './model.js';
import type { SnapshotIndex } from './snapshot-index.js';
import { keyedByIronicNode } from './ironic-nodes.js';

/**
 * A soft-deleted ironic compute node that Nova brings back under the same
 * uuid (the ironic node uuid): its ironic node is not known to be gone, no
 * live row of its cell has taken its name, and a nova-compute service of its
 * cell is alive. ComputeNode.create then restores the deleted row (bug
 * 1839560, nova-facts §5.3/§5.4) and reuses this provider; deleting the provider would
 * lose its inventory, traits and allocations for nothing. Without ironic
 * truth the ironic node may exist, so the node comes back.
 */
export function comesBack(ix: SnapshotIndex, deleted: ComputeNodeRec): boolean {
  const hh = deleted.hypervisorHostname;
  if (hh === null || !keyedByIronicNode(deleted)) return false;
  if (ix.ironicNodeUuids !== undefined && !ix.ironicNodeUuids.has(hh.toLowerCase())) return false;
  if ((ix.liveNodesByHypervisorHostname.get(hh.toLowerCase()) ?? []).some((n) => n.cellUuid === deleted.cellUuid)) return false;
  return ix.computeServiceCells.has(deleted.cellUuid);
}

/** The soft-deleted compute node of this provider's uuid when it comes back (comesBack); its provider must stay. */
export function returningNodeOf(ix: SnapshotIndex, rp: ProviderRec): ComputeNodeRec | undefined {
  if (ix.liveNodeByUuid.has(rp.uuid)) return undefined;
  const deleted = ix.deletedNodeByUuid.get(rp.uuid);
  return deleted !== undefined && comesBack(ix, deleted) ? deleted : undefined;
}

/** The command that brings the node back now (nova-compute does it too, from 27.0.0). */
export function restoreCommand(deleted: ComputeNodeRec): string {
  return `nova-reconcile compute_node restore --uuid ${deleted.uuid ?? '-'}`;
}

/** Why a planner keeps a returning node's provider (a refusal's reason; restoreCommand is its suggestion). */
export function keptForReturningNode(ix: SnapshotIndex, rp: ProviderRec, deleted: ComputeNodeRec): string {
  const ironic = ix.ironicNodeUuids === undefined ? 'its ironic node may exist (no ironic node list was given)' : 'its ironic node exists';
  return (
    `kept: compute node ${deleted.uuid ?? '-'} (id ${deleted.id}, host ${deleted.host ?? '-'}) of provider ${rp.uuid} was soft-deleted, but ${ironic} ` +
    'and nova-compute restores the row under the same uuid (bug 1839560); deleting the provider would lose its inventory, traits and allocations'
  );
}
