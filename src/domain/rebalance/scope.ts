// The rebalance's input: which cells, which ironic nodes (grouped by
// hypervisor_hostname per cell), the operator's ring members, and the indexes
// of soft-deleted nodes and instances by node.
import type { ComputeNodeRec, InstanceRec, Snapshot } from '../model.js';
import { hostKey, type SnapshotIndex } from '../snapshot-index.js';
import { pushTo } from '../text-and-maps.js';
import { ReconcileError } from '../../errors.js';
import { groupKey, type RingMembers } from './context.js';

export function scopeCells(s: Snapshot, cellUuid: string | undefined): Set<string> {
  const cells = s.cells.filter((c) => !c.isCell0);
  if (cellUuid === undefined) return new Set(cells.map((c) => c.uuid));
  const cell = cells.find((c) => c.uuid.toLowerCase() === cellUuid.toLowerCase());
  if (cell === undefined) throw new ReconcileError('not-found', `cell ${cellUuid} has no mapping`, { hint: 'run `nova-reconcile cell_v2 list_cells` to see the cells' });
  return new Set([cell.uuid]);
}

export function checkRingMembers(s: Snapshot, members: RingMembers, cells: ReadonlySet<string>): Set<string> {
  const known = new Set(s.services.filter((svc) => !svc.deleted && svc.binary === 'nova-compute' && cells.has(svc.cellUuid)).map((svc) => hostKey(svc.host)));
  const unknown = members.hosts.filter((h) => !known.has(hostKey(h)));
  if (members.hosts.length === 0) throw new ReconcileError('input', `${members.source} names no host`, { hint: 'give a comma-separated list of nova-compute hosts' });
  if (unknown.length > 0)
    throw new ReconcileError('input', `${members.source}: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not a nova-compute service' : 'are not nova-compute services'}`, {
      hint: 'list the services with `openstack compute service list --service nova-compute`',
    });
  return new Set(members.hosts.map(hostKey));
}

/** Live ironic compute nodes by `${cellUuid}|${lower(hypervisor_hostname)}`, in a stable order. */
export function ironicNodeGroups(ix: SnapshotIndex, cells: ReadonlySet<string>): Map<string, ComputeNodeRec[]> {
  const groups = new Map<string, ComputeNodeRec[]>();
  for (const n of ix.liveNodes) {
    if (n.hypervisorType !== 'ironic' || n.hypervisorHostname === null || !cells.has(n.cellUuid)) continue;
    pushTo(groups, groupKey(n.cellUuid, n.hypervisorHostname), n);
  }
  return new Map([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function selectGroups(ix: SnapshotIndex, groups: ReadonlyMap<string, readonly ComputeNodeRec[]>, nodes: readonly string[], cellUuid: string | undefined): Set<string> {
  const wanted = new Set<string>();
  for (const raw of nodes) {
    const value = raw.toLowerCase();
    let found = false;
    for (const [key, rows] of groups) {
      if (rows.some((r) => (r.hypervisorHostname ?? '').toLowerCase() === value || (r.uuid ?? '').toLowerCase() === value)) {
        wanted.add(key);
        found = true;
      }
    }
    if (found) continue;
    const other = ix.liveNodes.find((n) => (n.uuid ?? '').toLowerCase() === value || (n.hypervisorHostname ?? '').toLowerCase() === value);
    if (other !== undefined && other.hypervisorType !== 'ironic')
      throw new ReconcileError('input', `--node ${raw}: compute node ${other.uuid ?? other.id} is a ${other.hypervisorType} node, not an ironic node`);
    throw new ReconcileError('not-found', `--node ${raw}: no live ironic compute node has this uuid${cellUuid === undefined ? '' : ` in cell ${cellUuid}`}`, {
      hint: 'list the nodes with `nova-reconcile compute_node list`',
    });
  }
  return wanted;
}

export function indexDeletedNodes(s: Snapshot): Map<string, ComputeNodeRec[]> {
  const out = new Map<string, ComputeNodeRec[]>();
  for (const n of s.computeNodes) {
    if (!n.deleted || n.hypervisorHostname === null || n.uuid === null) continue;
    pushTo(out, groupKey(n.cellUuid, n.hypervisorHostname), n);
  }
  return out;
}

export function indexInstancesByNode(s: Snapshot): Map<string, InstanceRec[]> {
  const out = new Map<string, InstanceRec[]>();
  for (const i of s.instances) {
    if (i.node === null) continue;
    pushTo(out, groupKey(i.cellUuid, i.node), i);
  }
  return out;
}
