// The compute nodes themselves: orphans (seed bug 2013), duplicates, and
// nodes whose service is forced down or stopped reporting.
import type { ComputeNodeRec } from '../model.js';
import { isServiceUp, parseNaiveUtc } from '../liveness.js';
import { ironicTruthArgs, orphanReason, orphanWithInstancesFix, unmanagedGroupOf, unmanagedWithInstancesFix } from '../orphan-nodes.js';
import { groupBy } from '../text-and-maps.js';
import { add, instancesOfNode, nodeLabel, nodeObjects, type Audit } from './context.js';
import { duplicateRowFacts, liveInstanceFacts } from './node-facts.js';

/**
 * Seconds by which an ironic node's last save may trail its service's last
 * heartbeat before it is listed as a suspect. An idle ironic node is not
 * re-saved, so this is a hint to check ironic, never
 * a reason to delete.
 */
export const SUSPECT_ORPHAN_AGE = 24 * 60 * 60;

export function findOrphanNodes(a: Audit): void {
  const suspectAge = a.options.suspectOrphanAge ?? SUSPECT_ORPHAN_AGE;
  const ironicArgs = ironicTruthArgs(a.s.ironicOrigin, a.options.ironicNodesFile);
  for (const n of a.ix.liveNodes) {
    const reason = orphanReason(a.ix, n);
    if (reason !== undefined) {
      a.orphans.add(n);
      const instances = instancesOfNode(a, n);
      const blocked = instances.length > 0;
      const withInstances = blocked ? `; live instance(s) ${instances.map((i) => i.uuid).join(', ')} must move first` : '';
      const service = a.ix.liveComputeService.get(n.cellUuid, n.host);
      const unserved = unmanagedGroupOf(a.ix, n);
      if (unserved !== undefined) {
        // Not deleted: Ironic lists it, but no nova-compute serves its conductor group.
        add(a, {
          kind: 'ironic-node-unmanaged',
          cellUuid: n.cellUuid,
          summary: `${nodeLabel(n)} is unmanaged, not deleted: ${reason}${withInstances}`,
          objects: { ...nodeObjects(n), conductor_group: unserved, service: service === undefined ? 'missing' : 'live', instances: instances.length },
          suggestion: blocked ? unmanagedWithInstancesFix(n, unserved) : `nova-reconcile compute_node cleanup_orphans${ironicArgs}`,
        });
      } else if (service === undefined) {
        const deleted = a.ix.deletedComputeService.get(n.cellUuid, n.host);
        add(a, {
          kind: 'orphan-node-service-deleted',
          cellUuid: n.cellUuid,
          summary: `${nodeLabel(n)} is an orphan: ${reason}${withInstances}`,
          objects: { ...nodeObjects(n), service: deleted === undefined ? 'missing' : 'deleted', service_id: deleted?.id ?? null, instances: instances.length },
          suggestion: blocked
            ? orphanWithInstancesFix(n, instances.map((i) => i.uuid), ironicArgs)
            : n.hypervisorType === 'ironic'
              ? `nova-reconcile compute_node cleanup_orphans${ironicArgs}`
              : 'nova-reconcile compute_node cleanup_orphans',
        });
      } else {
        add(a, {
          kind: 'orphan-node-ironic-deleted',
          cellUuid: n.cellUuid,
          summary: `${nodeLabel(n)} is an orphan: ${reason}, though its service still heartbeats${withInstances}`,
          objects: { ...nodeObjects(n), service_id: service.id, instances: instances.length },
          suggestion: blocked ? orphanWithInstancesFix(n, instances.map((i) => i.uuid), ironicArgs) : `nova-reconcile compute_node cleanup_orphans${ironicArgs}`,
        });
      }
      continue;
    }
    if (n.hypervisorType !== 'ironic' || a.ix.ironicNodeUuids !== undefined) continue;
    const service = a.ix.liveComputeService.get(n.cellUuid, n.host);
    const beat = parseNaiveUtc(service?.lastSeenUp);
    const saved = parseNaiveUtc(n.updatedAt ?? n.createdAt);
    if (service === undefined || beat === undefined || saved === undefined || beat - saved <= suspectAge * 1000) continue;
    const instances = instancesOfNode(a, n);
    add(a, {
      kind: 'suspect-orphan-node',
      cellUuid: n.cellUuid,
      summary: `ironic ${nodeLabel(n)} was last saved ${describeAge((beat - saved) / 1000)} before its service's last heartbeat: its ironic node may be gone (an idle node looks the same)`,
      objects: { ...nodeObjects(n), node_updated_at: n.updatedAt ?? n.createdAt, service_last_seen_up: service.lastSeenUp, instances: instances.length },
      suggestion: 'openstack baremetal node list -f json > nodes.json && nova-reconcile audit --ironic-nodes nodes.json',
    });
  }
}

function describeAge(seconds: number): string {
  const hours = seconds / 3600;
  return hours >= 48 ? `${Math.round(hours / 24)} days` : `${Math.round(hours)} hours`;
}

// ---------------------------------------------------------------------------
// Duplicate live compute nodes for one hypervisor_hostname in a cell: after an
// ironic rebalance that raced (bug 1853009) two hosts claim one ironic node.

export function findDuplicateNodes(a: Audit): void {
  // The index's groups by lower-cased name, split by cell: no map of every node is made here.
  for (const named of a.ix.liveNodesByHypervisorHostname.values()) {
    if (named.length < 2) continue;
    for (const nodes of groupBy(named, (n) => n.cellUuid).values()) {
      if (nodes.length < 2) continue;
      const sorted = [...nodes].sort((x, y) => x.id - y.id);
      const first = sorted[0] as ComputeNodeRec;
      const facts = duplicateRowFacts(a.ix, sorted);
      add(a, {
        kind: 'duplicate-compute-node',
        cellUuid: first.cellUuid,
        summary: `${sorted.length} live compute nodes claim ${first.hypervisorHostname ?? '-'} (hosts ${sorted.map((n) => n.host ?? '-').join(', ')})${facts.summary}`,
        objects: {
          hypervisor_hostname: first.hypervisorHostname,
          node_uuids: sorted.map((n) => n.uuid ?? `id ${n.id}`),
          hosts: sorted.map((n) => n.host ?? '-'),
          ...facts.objects,
        },
        suggestion: 'nova-reconcile compute_node rebalance',
      });
    }
  }
}

export function findNodesOfDeadServices(a: Audit): void {
  for (const n of a.ix.liveNodes) {
    if (a.orphans.has(n)) continue;
    const svc = a.ix.liveComputeService.get(n.cellUuid, n.host);
    if (svc === undefined) {
      // Not an orphan (orphanReason): an ironic node whose service is gone
      // and whose ironic node may exist. Nova's ring owner adopts it (nova-facts §5.4,
      // nova-facts §6), and so does the rebalance; cleanup_orphans leaves it alone.
      if (n.hypervisorType !== 'ironic') continue;
      const deleted = a.ix.deletedComputeService.get(n.cellUuid, n.host);
      add(a, {
        kind: 'node-of-dead-service',
        cellUuid: n.cellUuid,
        summary: `ironic ${nodeLabel(n)} belongs to a nova-compute service that ${deleted === undefined ? 'does not exist' : 'was deleted'}: the hash ring's live owner takes it over`,
        objects: { ...nodeObjects(n), service: deleted === undefined ? 'missing' : 'deleted', service_id: deleted?.id ?? null, instances: instancesOfNode(a, n).length },
        suggestion: 'nova-reconcile compute_node rebalance',
      });
      continue;
    }
    if (isServiceUp(svc, a.s.takenAt, a.s.serviceDownTime)) continue;
    const state = svc.forcedDown ? 'forced down' : `down (last heartbeat ${svc.lastSeenUp ?? 'never'})`;
    const ironic = n.hypervisorType === 'ironic';
    const keep = liveInstanceFacts(instancesOfNode(a, n));
    add(a, {
      kind: 'node-of-dead-service',
      cellUuid: n.cellUuid,
      summary: `${nodeLabel(n)} belongs to a nova-compute service that is ${state}${keep.summary}`,
      objects: { ...nodeObjects(n), service_id: svc.id, forced_down: svc.forcedDown, service_last_seen_up: svc.lastSeenUp, instances: instancesOfNode(a, n).length, ...keep.objects },
      suggestion: ironic
        ? 'nova-reconcile compute_node rebalance --include-down'
        : `start nova-compute on ${n.host ?? '-'}; if the host is gone for good: openstack compute service delete ${svc.uuid ?? svc.id}`,
    });
  }
}
