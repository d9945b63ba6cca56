// Host mappings. Hosts compare as the API column's collation compares them:
// case- and trailing-space-insensitive.
import type { ComputeNodeRec, HostMappingRec, InstanceRec, ServiceRec } from '../model.js';
import { ironicTruthArgs, orphanReason } from '../orphan-nodes.js';
import { hostKey, serviceKey } from '../snapshot-index.js';
import { pushTo, shellWord } from '../text-and-maps.js';
import { add, liveComputeServices, type Audit } from './context.js';

type Holders = ReadonlyMap<string, string | string[]>;

export function findMappingProblems(a: Audit): void {
  const mappingByHost = new Map<string, HostMappingRec>();
  for (const m of a.s.hostMappings) {
    const key = hostKey(m.host);
    if (!mappingByHost.has(key)) mappingByHost.set(key, m);
  }
  const services = liveComputeServices(a.s);
  const holders = cellsHoldingHosts(a, services);
  findUnmappedServices(a, services, mappingByHost);
  findUnmappedNodes(a, mappingByHost);
  findWrongCellMappings(a, holders, mappingByHost);
  findStaleMappings(a, holders);
}

/**
 * The cells that hold each host (a live nova-compute service or a live node
 * there): almost always one, held as a string; a list only for a host that
 * several cells hold, so the common case costs no array per host.
 */
function cellsHoldingHosts(a: Audit, services: readonly ServiceRec[]): Holders {
  const holders = new Map<string, string | string[]>();
  const hold = (key: string, cellUuid: string): void => {
    const cells = holders.get(key);
    if (cells === undefined) holders.set(key, cellUuid);
    else if (typeof cells === 'string') {
      if (cells !== cellUuid) holders.set(key, [cells, cellUuid]);
    } else if (!cells.includes(cellUuid)) cells.push(cellUuid);
  };
  for (const svc of services) hold(hostKey(svc.host), svc.cellUuid);
  for (const n of a.ix.liveNodes) if (n.host !== null) hold(hostKey(n.host), n.cellUuid);
  return holders;
}

function findUnmappedServices(a: Audit, services: readonly ServiceRec[], mappingByHost: ReadonlyMap<string, HostMappingRec>): void {
  for (const svc of services) {
    if (mappingByHost.has(hostKey(svc.host))) continue;
    add(a, {
      kind: 'unmapped-service',
      cellUuid: svc.cellUuid,
      summary: `nova-compute service on host ${svc.host ?? '-'} has no host mapping: the scheduler cannot place servers on it`,
      objects: { host: svc.host, service_id: svc.id, service_uuid: svc.uuid },
      suggestion: `nova-reconcile cell_v2 discover_hosts --by-service --cell_uuid ${svc.cellUuid}`,
    });
  }
}

function findUnmappedNodes(a: Audit, mappingByHost: ReadonlyMap<string, HostMappingRec>): void {
  // A host with a live service is reported once, by findUnmappedServices; its nodes are the same problem.
  const unmappedNodeHosts = new Map<string, ComputeNodeRec[]>();
  for (const n of a.ix.liveNodes) {
    if (n.host === null || mappingByHost.has(hostKey(n.host))) continue;
    if (a.ix.liveComputeService.has(n.cellUuid, n.host)) continue;
    pushTo(unmappedNodeHosts, serviceKey(n.cellUuid, n.host), n);
  }
  // Only hosts without a live service are left here: mapping a dead host
  // would not help. Its ironic nodes go to the ring's live owner (a mapped
  // host), its other nodes are orphans.
  const ironicArgs = ironicTruthArgs(a.s.ironicOrigin, a.options.ironicNodesFile);
  for (const nodes of unmappedNodeHosts.values()) {
    const n = nodes[0] as ComputeNodeRec;
    const adoptable = nodes.some((x) => x.hypervisorType === 'ironic' && orphanReason(a.ix, x) === undefined);
    add(a, {
      kind: 'unmapped-node',
      cellUuid: n.cellUuid,
      summary: `host ${n.host ?? '-'} has ${nodes.length} live compute node(s) but no host mapping and no live nova-compute service`,
      objects: { host: n.host, node_uuids: nodes.map((x) => x.uuid ?? `id ${x.id}`) },
      suggestion: adoptable
        ? 'nova-reconcile compute_node rebalance'
        : `nova-reconcile compute_node cleanup_orphans${nodes.some((x) => x.hypervisorType === 'ironic') ? ironicArgs : ''}`,
    });
  }
}

function findWrongCellMappings(a: Audit, holders: Holders, mappingByHost: ReadonlyMap<string, HostMappingRec>): void {
  for (const [key, held] of holders) {
    const m = mappingByHost.get(key);
    const cells = typeof held === 'string' ? [held] : held;
    // A host held by the cell it is mapped to is fine, even if another cell also claims it.
    if (m === undefined || cells.includes(m.cellUuid)) continue;
    for (const cellUuid of cells) {
      add(a, {
        kind: 'wrong-cell-mapping',
        cellUuid,
        summary: `host ${m.host} is in cell ${a.cellName(cellUuid)} but mapped to cell ${a.cellName(m.cellUuid)}: discover_hosts never re-points it`,
        objects: { host: m.host, mapping_id: m.id, mapped_cell_uuid: m.cellUuid },
        // --remap moves the mapping in one compare-and-swap when the host's live service is there; delete_host + discover leaves it unmapped in between.
        suggestion: hasLiveComputeService(a, cellUuid, key)
          ? `nova-reconcile cell_v2 discover_hosts --remap --cell_uuid ${cellUuid}`
          : `nova-reconcile cell_v2 delete_host --cell_uuid ${m.cellUuid} --host ${shellWord(m.host)} && nova-reconcile cell_v2 discover_hosts --by-service --cell_uuid ${cellUuid}`,
      });
    }
  }
}

function findStaleMappings(a: Audit, holders: Holders): void {
  // A mapping whose host still runs servers is not stale, whatever else is gone.
  // Only the instances of hosts that no cell holds are looked at (almost always none).
  const unheld = new Set<string>();
  for (const m of a.s.hostMappings) if (!holders.has(hostKey(m.host))) unheld.add(hostKey(m.host));
  const instancesByHost = new Map<string, InstanceRec[]>();
  if (unheld.size > 0)
    for (const i of a.s.instances) {
      if (i.host === null) continue;
      const key = hostKey(i.host);
      if (unheld.has(key)) pushTo(instancesByHost, key, i);
    }
  for (const m of a.s.hostMappings) {
    if (holders.has(hostKey(m.host))) continue;
    const instances = instancesByHost.get(hostKey(m.host)) ?? [];
    if (instances.length > 0) {
      add(a, {
        kind: 'mapping-host-has-instances',
        cellUuid: m.cellUuid,
        summary: `host ${m.host} has no live nova-compute service and no live compute node, but ${instances.length} live instance(s) are on it: the mapping is not stale`,
        objects: { host: m.host, mapping_id: m.id, instance_uuids: instances.map((i) => i.uuid) },
        suggestion: `bring nova-compute on ${m.host} back, or evacuate its instances; then nova-reconcile cell_v2 prune_host_mappings --host ${shellWord(m.host)}`,
      });
      continue;
    }
    add(a, {
      kind: 'stale-mapping',
      cellUuid: m.cellUuid,
      summary: `host mapping of ${m.host} has no live nova-compute service, compute node or instance in any cell`,
      objects: { host: m.host, mapping_id: m.id },
      suggestion: `nova-reconcile cell_v2 prune_host_mappings --host ${shellWord(m.host)}`,
    });
  }
}

/** A live nova-compute service (with a host) of this cell on this host key, as liveComputeServices lists them. */
function hasLiveComputeService(a: Audit, cellUuid: string, key: string): boolean {
  return (a.ix.liveComputeService.get(cellUuid, key)?.host ?? null) !== null;
}
