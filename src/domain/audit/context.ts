// What every check of the audit shares: the snapshot, its index, the
// options, the orphans found so far, and how a node is named in a finding.
import type { CellNamer } from '../cell-names.js';
import type { ComputeNodeRec, InstanceRec, ServiceRec, Snapshot } from '../model.js';
import { instancesOn, type SnapshotIndex } from '../snapshot-index.js';
import type { Finding, FindingKind, FindingValue } from '../finding.js';

export interface AuditOptions {
  /** Only report findings of this cell. */
  readonly cellUuid?: string;
  /** Only report findings whose objects name this host (hostKey: case- and trailing-space-insensitive). */
  readonly host?: string;
  /** Only report findings of these kinds. */
  readonly kinds?: readonly FindingKind[];
  /** The --ironic-nodes file as given, quoted in suggestions. */
  readonly ironicNodesFile?: string;
  readonly suspectOrphanAge?: number;
  /** Called before each check (a progress line: the checks of a large deployment take a while). */
  readonly onStep?: (step: string, index: number, total: number) => void;
}

export interface Audit {
  readonly s: Snapshot;
  readonly ix: SnapshotIndex;
  readonly options: AuditOptions;
  /** Live nodes that are orphans (their other problems are the orphan cleanup's). */
  readonly orphans: Set<ComputeNodeRec>;
  readonly out: Finding[];
  /** How the summaries name a cell (cell-names.ts), as the audit's cell column does. */
  readonly cellName: CellNamer;
}

export function add(a: Audit, finding: Finding): void {
  a.out.push(finding);
}

export function cellOf(cellUuid: string | undefined): { cellUuid?: string } {
  return cellUuid === undefined ? {} : { cellUuid };
}

export function nodeLabel(n: ComputeNodeRec): string {
  // An ironic node's hypervisor_hostname is its uuid: say it once.
  const name = n.hypervisorHostname === null || n.hypervisorHostname === n.uuid ? '' : ` (${n.hypervisorHostname})`;
  return `compute node ${n.uuid ?? `id ${n.id}`}${name} on host ${n.host ?? '-'}`;
}

export function nodeObjects(n: ComputeNodeRec): Record<string, FindingValue> {
  return { node_id: n.id, node_uuid: n.uuid, host: n.host, hypervisor_hostname: n.hypervisorHostname, hypervisor_type: n.hypervisorType };
}

export function instancesOfNode(a: Audit, n: ComputeNodeRec): readonly InstanceRec[] {
  return instancesOn(a.ix, n.cellUuid, n.host, n.hypervisorHostname);
}

export function liveComputeServices(s: Snapshot): ServiceRec[] {
  return s.services.filter((svc) => !svc.deleted && svc.binary === 'nova-compute' && svc.host !== null);
}
