// What the rebalance planner's steps share: the planning context, one
// node's plan in progress, and the step result. The liveness and ring
// helpers read the context (ring.ts); the scope (scope.ts), placement repair
// (placement-repair.ts) and cell repair (cell-repair.ts) each take a NodePlan.
import type { CellNamer } from '../cell-names.js';
import type { ComputeNodeRec, InstanceRec, ServiceRec, Snapshot } from '../model.js';
import type { HashRing } from '../hash-ring.js';
import type { PlannedChange } from '../plan.js';
import type { PlanState } from '../provider-removal.js';
import type { SnapshotIndex } from '../snapshot-index.js';

export interface RingMembers {
  readonly hosts: readonly string[];
  /** Where they came from, for messages: "--ring-members" or "[nova_reconcile] ironic_ring_members". */
  readonly source: string;
}

export interface Ctx {
  readonly s: Snapshot;
  readonly ix: SnapshotIndex;
  readonly includeDown: boolean;
  readonly state: PlanState;
  readonly instancesByNode: ReadonlyMap<string, readonly InstanceRec[]>;
  /** Soft-deleted compute nodes by groupKey: their providers are this node's stale providers. */
  readonly deletedByNode: ReadonlyMap<string, readonly ComputeNodeRec[]>;
  readonly rings: Map<string, CellRing>;
  readonly ringMembers: ReadonlySet<string> | undefined;
  /** How the texts name a cell (cell-names.ts). */
  readonly cellName: CellNamer;
}

export interface CellRing {
  readonly ring: HashRing;
  /** Lower-cased member → its service. */
  readonly services: ReadonlyMap<string, ServiceRec>;
}

export type Step = { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly suggestion?: string };

export const OK: Step = { ok: true };

export interface NodePlan {
  readonly ctx: Ctx;
  readonly cellUuid: string;
  readonly hh: string;
  readonly rows: readonly ComputeNodeRec[];
  readonly canonical: ComputeNodeRec;
  readonly instance: InstanceRec | undefined;
  /** The node's state of generations and removed allocations; merged into ctx.state on success. */
  readonly state: PlanState;
  readonly changes: PlannedChange[];
  /** What the unit does, for its title. */
  readonly notes: string[];
}

export function groupKey(cellUuid: string, hypervisorHostname: string): string {
  return `${cellUuid}|${hypervisorHostname.toLowerCase()}`;
}

/** Oldest first: created_at, then id. */
export function byAge(a: ComputeNodeRec, b: ComputeNodeRec): number {
  const ca = a.createdAt ?? '';
  const cb = b.createdAt ?? '';
  return ca < cb ? -1 : ca > cb ? 1 : a.id - b.id;
}
