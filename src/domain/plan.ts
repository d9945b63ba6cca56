// A plan is data: units of typed changes, each with the reason it exists and
// the values it expects to find. Planners (pure) build plans from a
// Snapshot; src/operations/apply-plan.ts applies them unit by unit, each
// change as one compare-and-swap transaction in its own database.

/** Which database a change writes. */
export type DbRef = { readonly db: 'api' } | { readonly db: 'placement' } | { readonly db: 'cell'; readonly cellUuid: string };

export interface AllocationPart {
  readonly resourceClassId: number;
  readonly resourceClass: string;
  readonly used: number;
}

export type Change =
  | {
      /** Nova's host-constrained soft delete (bug 1853009): deleted = id, deleted_at = now, mapped = 0, updated_at kept. */
      readonly kind: 'soft-delete-compute-node';
      readonly target: DbRef & { readonly db: 'cell' };
      readonly id: number;
      readonly uuid: string | null;
      readonly host: string;
      readonly hypervisorHostname: string | null;
    }
  | {
      /** Placement's provider delete: only without allocations and children; removes inventories, trait and aggregate links. */
      readonly kind: 'delete-provider';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly providerId: number;
      readonly uuid: string;
      readonly name: string | null;
      readonly generation: number;
    }
  | {
      /**
       * Remove one consumer's allocations from one provider. When the consumer
       * keeps allocations elsewhere its generation is bumped, and so is every
       * provider left in its allocation set (as a PUT of the rest would);
       * when nothing remains the consumer row is deleted.
       */
      readonly kind: 'remove-provider-allocations';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly consumerUuid: string;
      readonly consumerGeneration: number;
      readonly providerId: number;
      readonly providerUuid: string;
      readonly allocations: readonly AllocationPart[];
    }
  | {
      /** Give a stale provider the live compute node's uuid, keeping everything it holds; generation + 1. */
      readonly kind: 'rekey-provider';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly providerId: number;
      readonly fromUuid: string;
      readonly toUuid: string;
      readonly generation: number;
    };

export type ChangeKind = Change['kind'];

export interface PlannedChange {
  readonly change: Change;
  /** Why: one line for people. */
  readonly reason: string;
}

export interface Unit {
  /** Stable id within the plan, e.g. "orphan-node:cell1:42". */
  readonly id: string;
  /** One line: what this unit fixes. */
  readonly title: string;
  /** Applied in order; a change whose rows moved stops the unit (the rest is skipped). */
  readonly changes: readonly PlannedChange[];
}

export interface Refusal {
  readonly subject: string;
  readonly reason: string;
  /** The command that can deal with it, when there is one. */
  readonly suggestion?: string;
}

export interface Plan {
  readonly command: string;
  readonly units: readonly Unit[];
  readonly refused: readonly Refusal[];
}

export function isEmptyPlan(plan: Plan): boolean {
  return plan.units.length === 0 && plan.refused.length === 0;
}

export function describeTarget(target: DbRef): string {
  return target.db === 'cell' ? `cell ${target.cellUuid}` : target.db;
}
