// Planning `compute_node move`: the bulk ironic_compute_node_move. Each node
// is one change, node and instance in one transaction, with nova-manage
// master's preconditions (nova-facts §4) checked per node: a refused node is reported
// with its reason and the others still move.
import { cellNamer } from './cell-names.js';
import type { ComputeNodeRec, InstanceRec, ServiceRec, Snapshot } from './model.js';
import { serviceHealth } from './liveness.js';
import type { Plan, Refusal, Unit } from './plan.js';
import { hostKey, indexSnapshot, instancesOn, serviceKey, type SnapshotIndex } from './snapshot-index.js';
import { ReconcileError } from '../errors.js';

export const NODE_MOVE = 'compute_node move';

export interface NodeMoveOptions {
  /** Compute node uuids (= ironic node uuids); or fromHosts. */
  readonly nodes?: readonly string[];
  /** Every compute node of these hosts (--from-host, repeatable). */
  readonly fromHosts?: readonly string[];
  readonly toHost: string;
  /** Accept a source that is down (not heartbeating) though not forced down. */
  readonly sourceDownOk: boolean;
}

export interface NodeMove {
  readonly unitId: string;
  readonly nodeUuid: string;
  readonly fromHost: string;
  readonly toHost: string;
  readonly instanceUuid: string | null;
}

export interface NodeMoveSkip {
  readonly nodeUuid: string;
  readonly host: string | null;
  readonly reason: string;
}

export interface NodeMovePlan {
  readonly plan: Plan;
  readonly moves: readonly NodeMove[];
  readonly skipped: readonly NodeMoveSkip[];
  /**
   * The live nova-compute services that nodes move away from, with the
   * live compute nodes they keep besides the planned moves: once none is
   * left, the service is deleted through the API (the follow-up).
   */
  readonly sources: readonly NodeMoveSource[];
}

export interface NodeMoveSource {
  readonly host: string;
  readonly cellUuid: string;
  readonly serviceId: number;
  readonly serviceUuid: string | null;
  /** Live compute nodes of the host that the plan does not move. */
  readonly nodesLeft: number;
}

export function planNodeMoves(snapshot: Snapshot, options: NodeMoveOptions): NodeMovePlan {
  const ix = indexSnapshot(snapshot);
  const destinations = snapshot.services.filter((svc) => !svc.deleted && svc.binary === 'nova-compute' && hostKey(svc.host) === hostKey(options.toHost));
  if (destinations.length === 0)
    throw new ReconcileError('not-found', `--to-host ${options.toHost} is not a nova-compute service`, { hint: 'list the services with `openstack compute service list --service nova-compute`' });
  const mapping = snapshot.hostMappings.find((m) => hostKey(m.host) === hostKey(options.toHost));
  const cellName = cellNamer(snapshot.cells);
  const units: Unit[] = [];
  const refused: Refusal[] = [];
  const moves: NodeMove[] = [];
  const skipped: NodeMoveSkip[] = [];
  for (const node of selectMoveNodes(snapshot, ix, options)) {
    const nodeUuid = node.uuid ?? String(node.id);
    const verdict = checkNodeMove(snapshot, ix, node, destinations, mapping, options);
    if (verdict.kind === 'skip') {
      refused.push({ subject: `compute node ${nodeUuid} (${node.host ?? '-'}/${node.hypervisorHostname ?? '-'}) in cell ${cellName(node.cellUuid)}`, reason: verdict.reason, ...(verdict.suggestion === undefined ? {} : { suggestion: verdict.suggestion }) });
      skipped.push({ nodeUuid, host: node.host, reason: verdict.reason });
      continue;
    }
    if (verdict.kind === 'there') continue;
    const { dest, sourceServiceId, instance } = verdict;
    const from = node.host as string;
    const to = dest.host as string;
    const unitId = `move-node:${node.cellUuid}:${node.id}`;
    units.push({
      id: unitId,
      title: `move ironic compute node ${nodeUuid} from ${from} to ${to}${instance === undefined ? '' : `, with instance ${instance.uuid}`}`,
      changes: [
        {
          change: {
            kind: 'rehome-compute-node',
            target: { db: 'cell', cellUuid: node.cellUuid },
            id: node.id,
            uuid: node.uuid,
            hypervisorHostname: node.hypervisorHostname as string,
            fromHost: from,
            toHost: to,
            toServiceId: dest.id,
            forcedDownSourceServiceId: sourceServiceId,
            instance: instance === undefined ? null : { id: instance.id, uuid: instance.uuid, fromHost: instance.host as string },
          },
          reason: 'ironic_compute_node_move: the compute node (host, service_id) and its instance (host) move in one transaction; the uuid, and so the provider and its allocations, stay',
        },
      ],
    });
    moves.push({ unitId, nodeUuid, fromHost: from, toHost: to, instanceUuid: instance?.uuid ?? null });
  }
  return { plan: { command: NODE_MOVE, units, refused }, moves, skipped, sources: moveSources(ix, units) };
}

function moveSources(ix: SnapshotIndex, units: readonly Unit[]): NodeMoveSource[] {
  const moving = new Set(units.flatMap((u) => u.changes.map((pc) => (pc.change.kind === 'rehome-compute-node' ? `${pc.change.target.cellUuid}:${pc.change.id}` : ''))));
  const out: NodeMoveSource[] = [];
  const seen = new Set<string>();
  for (const u of units) {
    const c = u.changes[0]?.change;
    if (c === undefined || c.kind !== 'rehome-compute-node') continue;
    const key = serviceKey(c.target.cellUuid, c.fromHost);
    if (seen.has(key)) continue;
    seen.add(key);
    const service = ix.liveComputeService.get(c.target.cellUuid, c.fromHost);
    if (service === undefined) continue;
    const nodesLeft = ix.liveNodes.filter((n) => n.cellUuid === c.target.cellUuid && hostKey(n.host) === hostKey(c.fromHost) && !moving.has(`${n.cellUuid}:${n.id}`)).length;
    out.push({ host: c.fromHost, cellUuid: c.target.cellUuid, serviceId: service.id, serviceUuid: service.uuid, nodesLeft });
  }
  return out;
}

function selectMoveNodes(s: Snapshot, ix: SnapshotIndex, options: NodeMoveOptions): ComputeNodeRec[] {
  if (options.nodes !== undefined) {
    return options.nodes.map((raw) => {
      const value = raw.toLowerCase();
      const node = ix.liveNodes.find((n) => (n.uuid ?? '').toLowerCase() === value) ?? ix.liveNodes.find((n) => (n.hypervisorHostname ?? '').toLowerCase() === value);
      if (node === undefined) throw new ReconcileError('not-found', `--node ${raw}: no live compute node has this uuid`, { hint: 'list the nodes with `nova-reconcile compute_node list`' });
      return node;
    });
  }
  const nodes: ComputeNodeRec[] = [];
  for (const host of options.fromHosts ?? []) {
    const ofHost = ix.liveNodes.filter((n) => hostKey(n.host) === hostKey(host) && !nodes.includes(n));
    if (ofHost.length === 0 && !s.services.some((svc) => svc.binary === 'nova-compute' && hostKey(svc.host) === hostKey(host)))
      throw new ReconcileError('not-found', `--from-host ${host} has no compute node and no nova-compute service`, { hint: 'list the nodes with `nova-reconcile compute_node list`' });
    nodes.push(...ofHost);
  }
  return nodes;
}

type MoveVerdict =
  | { readonly kind: 'move'; readonly dest: ServiceRec; readonly sourceServiceId: number | null; readonly instance: InstanceRec | undefined }
  | { readonly kind: 'there' }
  | { readonly kind: 'skip'; readonly reason: string; readonly suggestion?: string };

function checkNodeMove(
  s: Snapshot,
  ix: SnapshotIndex,
  node: ComputeNodeRec,
  destinations: readonly ServiceRec[],
  mapping: { readonly cellUuid: string } | undefined,
  options: NodeMoveOptions,
): MoveVerdict {
  const dest = destinations.find((d) => d.cellUuid === node.cellUuid);
  if (dest === undefined) {
    const cellName = cellNamer(s.cells);
    return { kind: 'skip', reason: `destination ${options.toHost} is in cell ${[...new Set(destinations.map((d) => d.cellUuid))].map(cellName).join(', ')}, not in the node's cell ${cellName(node.cellUuid)}` };
  }
  if (dest.forcedDown) return { kind: 'skip', reason: `destination ${dest.host ?? '-'} is forced down`, suggestion: `openstack compute service set --up ${dest.host ?? '-'} nova-compute` };
  if (mapping === undefined)
    return { kind: 'skip', reason: `destination ${dest.host ?? '-'} has no host mapping: the scheduler could not use the node there`, suggestion: `nova-reconcile cell_v2 discover_hosts --by-service --cell_uuid ${node.cellUuid}` };
  if (mapping.cellUuid !== node.cellUuid) {
    const cellName = cellNamer(s.cells);
    return { kind: 'skip', reason: `destination ${dest.host ?? '-'} is mapped to cell ${cellName(mapping.cellUuid)}, not to the node's cell ${cellName(node.cellUuid)}` };
  }
  if (node.hypervisorType !== 'ironic') return { kind: 'skip', reason: `it is a ${node.hypervisorType} node, not an ironic node` };
  if (node.host === null || node.hypervisorHostname === null) return { kind: 'skip', reason: 'it has no host or no hypervisor_hostname' };
  if (hostKey(node.host) === hostKey(dest.host)) return { kind: 'there' };
  const clash = (ix.liveNodesByHypervisorHostname.get(node.hypervisorHostname.toLowerCase()) ?? []).find((n) => n !== node && n.cellUuid === node.cellUuid && hostKey(n.host) === hostKey(dest.host));
  if (clash !== undefined)
    return { kind: 'skip', reason: `destination ${dest.host ?? '-'} already has a live compute node for it (${clash.uuid ?? clash.id}): a duplicate`, suggestion: 'nova-reconcile compute_node rebalance' };
  const source = ix.liveComputeService.get(node.cellUuid, node.host);
  const health = serviceHealth(s, source);
  if (health === 'up') return { kind: 'skip', reason: `source service ${node.host} is up and not forced down`, suggestion: `openstack compute service set --down ${node.host} nova-compute` };
  if (health === 'down' && !options.sourceDownOk)
    return {
      kind: 'skip',
      reason: `source service ${node.host} is down but not forced down`,
      suggestion: `openstack compute service set --down ${node.host} nova-compute, or pass --source-down-ok`,
    };
  const instances = instancesOn(ix, node.cellUuid, node.host, node.hypervisorHostname);
  if (instances.length > 1)
    return {
      kind: 'skip',
      reason: `${instances.length} live instances are on it (${instances.map((i) => i.uuid).join(', ')})`,
      suggestion: 'delete the Nova instances that do not match the instance uuid recorded on the Ironic node',
    };
  return { kind: 'move', dest, sourceServiceId: health === 'forced-down' && source !== undefined ? source.id : null, instance: instances[0] };
}
