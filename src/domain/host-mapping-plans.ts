// Planning the day-2 host-mapping commands: `cell_v2 prune_host_mappings`
// (delete mappings nothing live is behind) and `cell_v2 discover_hosts
// --remap` (move a mapping to the cell that now holds the host). Hosts
// compare as Nova's utf8mb3_general_ci columns do (hostKey). Every unit
// starts in the mapped cell with a guard that re-checks, under lock, that
// nothing live holds the host there; the API write comes after it, so a
// crash in between leaves a state the next run finishes.
import { cellNamer, type CellNamer } from './cell-names.js';
import type { ComputeNodeRec, HostMappingRec, InstanceRec, ServiceRec, Snapshot } from './model.js';
import type { Plan, PlannedChange, Refusal, Unit } from './plan.js';
import { footprintOfChanges } from './plan.js';
import { hostKey } from './snapshot-index.js';
import { ReconcileError } from '../errors.js';

export const PRUNE_HOST_MAPPINGS = 'cell_v2 prune_host_mappings';
export const REMAP_HOST_MAPPINGS = 'cell_v2 discover_hosts --remap';

/** What one cell holds of one host. */
export interface HostPresence {
  readonly services: readonly ServiceRec[];
  readonly nodes: readonly ComputeNodeRec[];
  readonly deletedNodes: readonly ComputeNodeRec[];
  readonly instances: readonly InstanceRec[];
}

export interface HostPresenceIndex {
  /** The presence of a host in a cell (empty when none). */
  in(cellUuid: string, host: string): HostPresence;
  /** The cells where a live nova-compute service has the host. */
  serviceCells(host: string): string[];
  /** The cells where a live nova-compute service or a live compute node has the host (audit's holders). */
  holderCells(host: string): string[];
  /** Live instances with the host, in any cell. */
  instances(host: string): InstanceRec[];
}

const NONE: HostPresence = { services: [], nodes: [], deletedNodes: [], instances: [] };

export function indexHostPresence(s: Snapshot): HostPresenceIndex {
  const by = new Map<string, { services: ServiceRec[]; nodes: ComputeNodeRec[]; deletedNodes: ComputeNodeRec[]; instances: InstanceRec[] }>();
  const serviceCells = new Map<string, string[]>();
  const holderCells = new Map<string, string[]>();
  const instances = new Map<string, InstanceRec[]>();
  const addCell = (map: Map<string, string[]>, host: string, cellUuid: string): void => {
    const cells = map.get(hostKey(host)) ?? [];
    if (!cells.includes(cellUuid)) cells.push(cellUuid);
    map.set(hostKey(host), cells);
  };
  const at = (cellUuid: string, host: string | null) => {
    const key = `${cellUuid}|${hostKey(host)}`;
    let p = by.get(key);
    if (p === undefined) by.set(key, (p = { services: [], nodes: [], deletedNodes: [], instances: [] }));
    return p;
  };
  for (const svc of s.services) {
    if (svc.deleted || svc.binary !== 'nova-compute' || svc.host === null) continue;
    at(svc.cellUuid, svc.host).services.push(svc);
    addCell(serviceCells, svc.host, svc.cellUuid);
    addCell(holderCells, svc.host, svc.cellUuid);
  }
  for (const n of s.computeNodes) {
    if (n.host === null) continue;
    (n.deleted ? at(n.cellUuid, n.host).deletedNodes : at(n.cellUuid, n.host).nodes).push(n);
    if (!n.deleted) addCell(holderCells, n.host, n.cellUuid);
  }
  for (const i of s.instances) {
    if (i.host === null) continue;
    at(i.cellUuid, i.host).instances.push(i);
    instances.set(hostKey(i.host), [...(instances.get(hostKey(i.host)) ?? []), i]);
  }
  return {
    in: (cellUuid, host) => by.get(`${cellUuid}|${hostKey(host)}`) ?? NONE,
    serviceCells: (host) => serviceCells.get(hostKey(host)) ?? [],
    holderCells: (host) => holderCells.get(hostKey(host)) ?? [],
    instances: (host) => instances.get(hostKey(host)) ?? [],
  };
}

/** Why a mapping's host is still held in its cell, or undefined when nothing live is there. */
export function liveHoldReason(p: HostPresence): string | undefined {
  const parts: string[] = [];
  if (p.services.length > 0) parts.push(`a live nova-compute service (id ${p.services.map((x) => x.id).join(', ')})`);
  if (p.nodes.length > 0) parts.push(`${p.nodes.length} live compute node(s)`);
  if (p.instances.length > 0) parts.push(`${p.instances.length} live instance(s) (${p.instances.slice(0, 3).map((i) => i.uuid).join(', ')}${p.instances.length > 3 ? ', ...' : ''})`);
  return parts.length === 0 ? undefined : parts.join(', ');
}

export interface PruneScope {
  readonly cellUuid?: string;
  readonly host?: string;
}

export function planPruneHostMappings(s: Snapshot, scope: PruneScope = {}): Plan {
  const presence = indexHostPresence(s);
  const cellName = cellNamer(s.cells);
  const units: Unit[] = [];
  const refused: Refusal[] = [];
  for (const m of s.hostMappings) {
    if (scope.cellUuid !== undefined && m.cellUuid !== scope.cellUuid) continue;
    if (scope.host !== undefined && hostKey(m.host) !== hostKey(scope.host)) continue;
    const subject = `host mapping of ${m.host} (id ${m.id}) to cell ${cellName(m.cellUuid)}`;
    const here = presence.in(m.cellUuid, m.host);
    const held = liveHoldReason(here);
    if (here.services.length > 0 || here.nodes.length > 0) {
      // A healthy mapping: only worth a line when the operator named it.
      if (scope.host !== undefined) refused.push({ subject, reason: `the host has ${held ?? 'live rows'} in that cell` });
      continue;
    }
    const elsewhere = presence.holderCells(m.host).filter((c) => c !== m.cellUuid);
    if (elsewhere.length > 0) {
      refused.push({
        subject,
        reason: `a live nova-compute service or compute node has the host in cell ${elsewhere.map(cellName).join(', ')}: the mapping points at the wrong cell`,
        suggestion: 'nova-reconcile cell_v2 discover_hosts --remap',
      });
      continue;
    }
    const instances = presence.instances(m.host);
    if (instances.length > 0) {
      refused.push({
        subject,
        reason: `no live service or compute node, but ${instances.length} live instance(s) are on the host (${instances.slice(0, 3).map((i) => i.uuid).join(', ')}${instances.length > 3 ? ', ...' : ''}): not stale`,
        suggestion: `bring nova-compute on ${m.host} back, or evacuate its instances; then re-run`,
      });
      continue;
    }
    units.push(pruneUnit(s, m, here, cellName));
  }
  return { command: PRUNE_HOST_MAPPINGS, units, refused };
}

function releaseChange(m: HostMappingRec, here: HostPresence, why: string): PlannedChange {
  const stale = here.deletedNodes.filter((n) => n.mapped !== null && n.mapped >= 1).map((n) => n.id);
  return {
    change: { kind: 'release-host-in-cell', target: { db: 'cell', cellUuid: m.cellUuid }, host: m.host, deletedNodeIds: stale },
    reason: stale.length === 0 ? why : `${why}; soft-deleted nodes that keep mapped = 1 hide a re-used name from discovery (bug 2085135)`,
  };
}

function pruneUnit(s: Snapshot, m: HostMappingRec, here: HostPresence, cellName: CellNamer): Unit {
  const changes: PlannedChange[] = [
    releaseChange(m, here, 'nothing live has the host in the mapped cell'),
    {
      change: { kind: 'delete-host-mapping', target: { db: 'api' }, id: m.id, host: m.host, cellId: cellIdOf(s, m), cellUuid: m.cellUuid },
      reason: 'no live nova-compute service, compute node or instance has this host in any cell',
    },
  ];
  return { id: `prune-host-mapping:${m.id}`, title: `stale host mapping of ${m.host} to cell ${cellName(m.cellUuid)}`, changes, footprint: footprintOfChanges(changes, () => []) };
}

export interface RemapScope {
  /** Only hosts whose live service is in this cell. */
  readonly cellUuid?: string;
}

/**
 * A host mapped to cell A whose live nova-compute service is in cell B:
 * move the mapping to B, only when A holds nothing live of the host.
 */
export function planRemapHostMappings(s: Snapshot, scope: RemapScope = {}): Plan {
  const presence = indexHostPresence(s);
  const cellId = new Map(s.cells.map((c) => [c.uuid, c.id]));
  const cellName = cellNamer(s.cells);
  const units: Unit[] = [];
  const refused: Refusal[] = [];
  for (const m of s.hostMappings) {
    const targets = presence.serviceCells(m.host).filter((c) => c !== m.cellUuid);
    if (targets.length === 0) continue;
    if (presence.serviceCells(m.host).includes(m.cellUuid)) continue; // held where it is mapped: fine
    if (scope.cellUuid !== undefined && !targets.includes(scope.cellUuid)) continue;
    const subject = `host mapping of ${m.host} (id ${m.id}) to cell ${cellName(m.cellUuid)}`;
    if (targets.length > 1) {
      refused.push({ subject, reason: `live nova-compute services have the host in ${targets.length} cells (${targets.map(cellName).join(', ')}); which one is right is for a person to decide` });
      continue;
    }
    const to = targets[0] as string;
    const here = presence.in(m.cellUuid, m.host);
    const held = liveHoldReason(here);
    if (held !== undefined) {
      refused.push({ subject, reason: `its live service is in cell ${cellName(to)}, but cell ${cellName(m.cellUuid)} still has ${held}`, suggestion: `nova-reconcile audit --cell ${m.cellUuid}` });
      continue;
    }
    const toId = cellId.get(to);
    if (toId === undefined) continue;
    const toMark = presence
      .in(to, m.host)
      .nodes.filter((n) => n.mapped !== 1)
      .map((n) => n.id);
    const changes: PlannedChange[] = [
      releaseChange(m, here, `cell ${cellName(m.cellUuid)} has nothing live of the host`),
      {
        change: { kind: 'remap-host-mapping', target: { db: 'api' }, id: m.id, host: m.host, fromCellId: cellIdOf(s, m), fromCellUuid: m.cellUuid, toCellId: toId, toCellUuid: to },
        reason: `the host's live nova-compute service is in cell ${cellName(to)}; the scheduler sends its builds to cell ${cellName(m.cellUuid)}`,
      },
    ];
    if (toMark.length > 0)
      changes.push({
        change: { kind: 'mark-host-nodes-mapped', target: { db: 'cell', cellUuid: to }, host: m.host, nodeIds: toMark },
        reason: 'the host is now mapped to this cell, as discover_hosts would mark them',
      });
    units.push({ id: `remap-host-mapping:${m.id}`, title: `host ${m.host} is mapped to cell ${cellName(m.cellUuid)} but lives in cell ${cellName(to)}`, changes, footprint: footprintOfChanges(changes, () => []) });
  }
  return { command: REMAP_HOST_MAPPINGS, units, refused };
}


function cellIdOf(s: Snapshot, m: HostMappingRec): number {
  const cell = s.cells.find((c) => c.uuid === m.cellUuid);
  // host_mappings.cell_id is a foreign key to cell_mappings: read together, the cell is there.
  if (cell === undefined) throw new ReconcileError('internal', `host mapping ${m.id} points at cell ${m.cellUuid}, which is not in the snapshot`);
  return cell.id;
}
