// The planner of `compute_node list`: each live compute node's own health
// (seed bug 2013: a node is not healthy just because its service heartbeats),
// from its service, host mapping, provider tree, instances and ironic node.
import { cellNamer } from './cell-names.js';
import type { ComputeNodeRec, ServiceRec, Snapshot } from './model.js';
import { isServiceUp } from './liveness.js';
import { hostKey, indexSnapshot, instancesOn, providerTree } from './snapshot-index.js';

export type NodeServiceState = 'up' | 'down' | 'forced-down' | 'disabled' | 'deleted' | 'missing';
export type Presence = 'yes' | 'no' | 'unknown';

export interface ComputeNodeHealth {
  readonly node: ComputeNodeRec;
  /** cell_mappings.name, as it is (JSON's cell_name). */
  readonly cellName: string | null;
  /** The cell as the table names it: by cell-names.ts's rule. */
  readonly cellLabel: string;
  /** forced-down, then down, then disabled (an up but disabled service), then up. */
  readonly service: NodeServiceState;
  readonly serviceDisabled: boolean;
  readonly serviceLastSeenUp: string | null;
  /** Whether the host's mapping points at the node's cell. */
  readonly mapped: 'yes' | 'no' | 'other-cell';
  readonly provider: Presence;
  /** Consumers with allocations on the node's provider tree; null without placement. */
  readonly allocations: number | null;
  readonly instances: number;
  /** 'n/a' for nodes that are not ironic. */
  readonly ironicNode: Presence | 'n/a';
}

export interface ComputeNodeFilter {
  readonly host?: string;
  readonly cellUuid?: string;
}

export function describeComputeNodes(snapshot: Snapshot, filter: ComputeNodeFilter = {}): ComputeNodeHealth[] {
  const ix = indexSnapshot(snapshot);
  const cellNames = new Map(snapshot.cells.map((c) => [c.uuid, c.name]));
  const cellLabel = cellNamer(snapshot.cells);
  const mappingCell = new Map<string, string>();
  for (const m of snapshot.hostMappings) if (!mappingCell.has(hostKey(m.host))) mappingCell.set(hostKey(m.host), m.cellUuid);
  const nodes = ix.liveNodes.filter(
    (n) => (filter.host === undefined || hostKey(n.host) === hostKey(filter.host)) && (filter.cellUuid === undefined || n.cellUuid === filter.cellUuid),
  );
  return nodes.map((n) => {
    const svc = ix.liveComputeService.get(n.cellUuid, n.host);
    const mappedTo = mappingCell.get(hostKey(n.host));
    const provider = n.uuid === null ? undefined : ix.providerByUuid.get(n.uuid);
    const tree = provider === undefined ? [] : providerTree(ix, provider);
    return {
      node: n,
      cellName: cellNames.get(n.cellUuid) ?? null,
      cellLabel: cellLabel(n.cellUuid),
      service: nodeServiceState(svc, ix.deletedComputeService.has(n.cellUuid, n.host), snapshot),
      serviceDisabled: svc?.disabled ?? false,
      serviceLastSeenUp: svc?.lastSeenUp ?? null,
      mapped: mappedTo === undefined ? 'no' : mappedTo === n.cellUuid ? 'yes' : 'other-cell',
      provider: snapshot.placement === undefined ? 'unknown' : provider === undefined ? 'no' : 'yes',
      allocations:
        snapshot.placement === undefined ? null : new Set(tree.flatMap((p) => (ix.allocationsOnProvider.get(p.id) ?? []).map((x) => x.consumerUuid))).size,
      instances: instancesOn(ix, n.cellUuid, n.host, n.hypervisorHostname).length,
      ironicNode:
        n.hypervisorType !== 'ironic'
          ? 'n/a'
          : ix.ironicNodeUuids === undefined
            ? 'unknown'
            : ix.ironicNodeUuids.has((n.hypervisorHostname ?? '').toLowerCase())
              ? 'yes'
              : 'no',
    };
  });
}

function nodeServiceState(svc: ServiceRec | undefined, deleted: boolean, s: Snapshot): NodeServiceState {
  if (svc === undefined) return deleted ? 'deleted' : 'missing';
  if (svc.forcedDown) return 'forced-down';
  if (!isServiceUp(svc, s.takenAt, s.serviceDownTime)) return 'down';
  return svc.disabled ? 'disabled' : 'up';
}
