// `--plan-in FILE --apply`: apply exactly the units an operator
// reviewed. Under the apply lock the command plans again; a reviewed unit is
// applied only when that plan still has it with the same changes and the same
// expected values (then each write is still a compare-and-swap on them). Any
// other reviewed unit is skipped with what changed ("host is now host_b,
// reviewed host_a"); a unit that only the new plan has is never added.
// Re-planning (rather than trusting the compare-and-swap alone) keeps every
// safety check of the planner: a node that gained an instance since the
// review is refused, though its host and uuid are unchanged.
import { assertNever } from '../errors.js';
import type { CellNamer } from './cell-names.js';
import type { Change, Plan, Unit } from './plan.js';

export interface StaleUnit {
  readonly unit: Unit;
  readonly reason: string;
  /** Planning now has nothing for it and refuses none of its objects: what changed is for the caller to find in the rows (withWhatChanged). */
  readonly nothingToDo?: true;
}

export interface ReviewedPlan {
  /** The reviewed units that still hold, in their reviewed order. */
  readonly plan: Plan;
  /** The reviewed units that do not, with the reason. */
  readonly stale: readonly StaleUnit[];
  /** Units the new plan has and the review had not: left alone. */
  readonly notReviewed: number;
}

/** `cellName` names the cells in the reasons (cell-names.ts). */
export function matchReviewed(reviewed: Plan, current: Plan, cellName: CellNamer): ReviewedPlan {
  const byId = new Map(current.units.map((u) => [u.id, u]));
  const reviewedIds = new Set(reviewed.units.map((u) => u.id));
  const keep: Unit[] = [];
  const stale: StaleUnit[] = [];
  for (const unit of reviewed.units) {
    const now = byId.get(unit.id);
    const reason = now === undefined ? goneReason(unit, current) : differenceReason(unit, now, cellName);
    if (reason === undefined) keep.push(unit);
    else stale.push({ unit, reason: changedSinceReview(reason), ...(reason === NOTHING_TO_DO ? { nothingToDo: true as const } : {}) });
  }
  return { plan: { ...reviewed, units: keep }, stale, notReviewed: current.units.filter((u) => !reviewedIds.has(u.id)).length };
}

/**
 * A unit planning no longer has, with what changed in its rows as the apply's
 * ownership guard words it (e.g. "ownership changed: compute node U is now
 * on host host_b, not host_a"), when something did.
 */
export function withWhatChanged(stale: StaleUnit, changed: string | undefined): StaleUnit {
  return changed === undefined ? stale : { unit: stale.unit, reason: changedSinceReview(changed) };
}

function changedSinceReview(reason: string): string {
  return `changed since the plan was reviewed: ${reason}`;
}

const NOTHING_TO_DO = 'planning now finds nothing to do for it (fixed meanwhile, or its rows changed)';

/** Undefined when the unit's changes are the same, expected values included. */
function differenceReason(reviewed: Unit, now: Unit, cellName: CellNamer): string | undefined {
  const n = Math.max(reviewed.changes.length, now.changes.length);
  for (let i = 0; i < n; i++) {
    const a = reviewed.changes[i]?.change;
    const b = now.changes[i]?.change;
    if (a === undefined || b === undefined) return `it now has ${now.changes.length} change(s), the review had ${reviewed.changes.length}`;
    if (canonical(a) === canonical(b)) continue;
    if (a.kind !== b.kind) return `change ${i + 1} is now "${b.kind}" of ${objectLabel(b, cellName)}, the review had "${a.kind}" of ${objectLabel(a, cellName)}`;
    const fields = differingFields(a, b);
    return `${objectLabel(a, cellName)}: ${fields.slice(0, 3).map((f) => `${f.name} is now ${f.now}, reviewed ${f.was}`).join('; ')}`;
  }
  return undefined;
}

/** The unit is not in the new plan: refused now (a refusal names one of its objects), or nothing to do. */
function goneReason(unit: Unit, current: Plan): string {
  const uuids = new Set(JSON.stringify(unit.changes).match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi) ?? []);
  const refusal = current.refused.find((r) => [...uuids].some((u) => r.subject.toLowerCase().includes(u.toLowerCase())));
  if (refusal !== undefined) return `it is refused now: ${refusal.subject}: ${refusal.reason}`;
  return NOTHING_TO_DO;
}

function differingFields(a: Change, b: Change): Array<{ name: string; was: string; now: string }> {
  const ra = a as unknown as Record<string, unknown>;
  const rb = b as unknown as Record<string, unknown>;
  const names = [...new Set([...Object.keys(ra), ...Object.keys(rb)])];
  return names
    .filter((k) => canonical(ra[k]) !== canonical(rb[k]))
    .map((k) => ({ name: k, was: show(ra[k]), now: show(rb[k]) }));
}

function show(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v) ?? 'nothing';
}

/** JSON with sorted keys, so two equal changes compare equal however they were built. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([x], [y]) => x.localeCompare(y)))
      : value,
  );
}

/** The object a change writes, for people. */
export function objectLabel(c: Change, cellName: CellNamer): string {
  switch (c.kind) {
    case 'soft-delete-compute-node':
    case 'rehome-compute-node':
      return `compute node ${c.id} (${c.uuid ?? '-'})`;
    case 'delete-provider':
    case 'rename-provider':
      return `resource provider ${c.uuid}`;
    case 'rekey-provider':
      return `resource provider ${c.fromUuid}`;
    case 'remove-provider-allocations':
      return `the allocations of consumer ${c.consumerUuid} on provider ${c.providerUuid}`;
    case 'move-allocations':
      return `the allocations of consumer ${c.consumerUuid} on provider ${c.fromProviderUuid}`;
    case 'move-instance':
      return `instance ${c.uuid}`;
    case 'delete-host-mapping':
    case 'remap-host-mapping':
      return `the host mapping of ${c.host}`;
    case 'put-allocations':
      return `the allocations of consumer ${c.consumerUuid}`;
    case 'restore-compute-node':
      return `compute node ${c.id} (${c.uuid})`;
    case 'release-host-in-cell':
    case 'mark-host-nodes-mapped':
      return `the compute nodes of host ${c.host} in cell ${cellName(c.target.cellUuid)}`;
    default:
      return assertNever(c, 'change kind');
  }
}
