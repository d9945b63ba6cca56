// Planning `compute_node restore --uuid U`: bring back a compute node that
// was soft-deleted while its node still exists (bug 1839560: an ironic node
// deleted from Nova while in maintenance keeps its uuid in
// compute_nodes_uuid_idx, so nova-compute's re-create fails with
// DBDuplicateEntry every cycle; Zed's compute_node_create restore path only
// runs when nova-compute gets that far). The restore is what Nova itself
// does on a uuid collision: deleted = 0, deleted_at = NULL, id and uuid kept.
// Refused when a live row has the same uuid or the same (host,
// hypervisor_hostname), or when the row's nova-compute service is gone.
import type { ComputeNodeRec, Snapshot } from './model.js';
import type { Plan, Refusal, Unit } from './plan.js';
import { novaKnowsIronicByUuid } from './nova-release.js';
import { hostKey, indexSnapshot, type SnapshotIndex } from './snapshot-index.js';

export const RESTORE_NODE = 'compute_node restore';

export type RestorePlan = { readonly found: true; readonly plan: Plan } | { readonly found: false };

/**
 * A restored row would be an orphan: no live nova-compute service on its
 * host, or the service it names by id is deleted (the restore's write checks
 * the same under lock, db/cell/cas-writes.ts).
 */
export function restoredNodeServiceGone(snapshot: Snapshot, ix: SnapshotIndex, deleted: ComputeNodeRec): boolean {
  if (ix.liveComputeService.get(deleted.cellUuid, deleted.host) === undefined) return true;
  const byId = deleted.serviceId === null ? undefined : snapshot.services.find((s) => s.cellUuid === deleted.cellUuid && s.id === deleted.serviceId);
  return byId?.deleted === true;
}

export function planNodeRestore(snapshot: Snapshot, uuid: string): RestorePlan {
  const ix = indexSnapshot(snapshot);
  const wanted = uuid.toLowerCase();
  const live = ix.liveNodes.find((n) => (n.uuid ?? '').toLowerCase() === wanted);
  const deleted = snapshot.computeNodes.filter((n) => n.deleted && (n.uuid ?? '').toLowerCase() === wanted).sort((a, b) => b.id - a.id)[0];
  if (live === undefined && deleted === undefined) return { found: false };
  const refused: Refusal[] = [];
  const units: Unit[] = [];
  const plan = (): RestorePlan => ({ found: true, plan: { command: RESTORE_NODE, units, refused } });
  if (live !== undefined || deleted === undefined) {
    // A live node: nothing to restore (a re-run after the restore).
    return plan();
  }
  const subject = `compute node ${deleted.uuid ?? uuid} (id ${deleted.id}, host ${deleted.host ?? '-'})`;
  const twin = ix.liveNodes.find(
    (n) => n.cellUuid === deleted.cellUuid && hostKey(n.host) === hostKey(deleted.host) && (n.hypervisorHostname ?? '').toLowerCase() === (deleted.hypervisorHostname ?? '').toLowerCase(),
  );
  if (twin !== undefined) {
    refused.push({
      subject,
      reason: `live compute node ${twin.uuid ?? `id ${twin.id}`} has the same host and hypervisor_hostname; the deleted row is history, not a lost node`,
    });
    return plan();
  }
  if (restoredNodeServiceGone(snapshot, ix, deleted)) {
    refused.push({ subject, reason: `its nova-compute service on host ${deleted.host ?? '-'} is gone; a restored node would be an orphan`, suggestion: 'nova-reconcile compute_node cleanup_orphans' });
    return plan();
  }
  if (deleted.uuid === null) return plan();
  units.push({
    id: `restore-node:${deleted.cellUuid}:${deleted.id}`,
    title: `restore ${subject}`,
    changes: [
      {
        change: {
          kind: 'restore-compute-node',
          target: { db: 'cell', cellUuid: deleted.cellUuid },
          id: deleted.id,
          uuid: deleted.uuid,
          host: deleted.host,
          hypervisorHostname: deleted.hypervisorHostname,
          // Nova's soft delete writes deleted = id (nova-facts §8.1).
          deleted: deleted.id,
        },
        reason: novaKnowsIronicByUuid(snapshot.release)
          ? 'soft-deleted while its node still exists (bug 1839560); nova-compute 27.0.0+ would un-delete it on its next periodic, and this is the same write'
          : 'soft-deleted while its node still exists (bug 1839560); nova-compute cannot re-create it (DBDuplicateEntry on compute_nodes_uuid_idx)',
      },
    ],
  });
  return plan();
}
