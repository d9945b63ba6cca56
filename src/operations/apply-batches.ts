// Which units of a plan an apply writes together, so that BEGIN, COMMIT and
// the journal's fsync are paid per batch rather than per unit. Consecutive units of one shape (the same database for
// their first changes, and the same cell for the changes that follow, if
// any) with disjoint footprints form a batch: its first changes are written
// in one transaction, its cell changes in another that was opened, with
// every row it owns locked and checked, before the first one wrote anything
// (the ownership guard, per batch as per unit). Each change is still a
// compare-and-swap; its images are journaled, all of the transaction's with
// one fsync, before that transaction commits. Any conflict or deadlock in a
// batch rolls its transaction back, and the units are then applied one by
// one as before, so a conflict is decided and reported exactly as it was
// (apply-plan.ts). docs/RELIABILITY.md, "Apply batches", has the argument.
import { DEFAULT_APPLY_BATCH_UNITS } from '../config/load-config.js';
import { targetKey, type Change, type DbRef, type Unit } from '../domain/plan.js';

export type CellChange = Extract<Change, { target: { db: 'cell' } }>;

/**
 * How a unit's changes split: the first `firstCount` in one database, then
 * (if any are left) a run of changes in one cell after them, which the unit
 * holds (the held segment: its rows are locked before the first write).
 */
export interface UnitShape {
  readonly first: DbRef;
  readonly firstCount: number;
  readonly held: { readonly start: number; readonly changes: readonly CellChange[] } | undefined;
}

/**
 * The held segment of a unit's changes: the first run of consecutive changes
 * in one cell that follows another database's change (see UnitShape).
 */
export function heldSegment(changes: readonly Change[]): UnitShape['held'] {
  for (let i = 1; i < changes.length; i++) {
    const c = changes[i] as Change;
    const prev = changes[i - 1] as Change;
    if (c.target.db !== 'cell' || (prev.target.db === 'cell' && prev.target.cellUuid === c.target.cellUuid)) continue;
    const cellUuid = c.target.cellUuid;
    const run: CellChange[] = [];
    for (let j = i; j < changes.length; j++) {
      const d = changes[j] as Change;
      if (d.target.db !== 'cell' || d.target.cellUuid !== cellUuid) break;
      run.push(d as CellChange);
    }
    return { start: i, changes: run };
  }
  return undefined;
}

/** The unit's shape, or undefined when it has none a batch can take (no changes, or more than two runs of databases). */
export function shapeOf(unit: Unit): UnitShape | undefined {
  const changes = unit.changes.map((pc) => pc.change);
  const head = changes[0];
  if (head === undefined) return undefined;
  const where = targetKey(head.target);
  let firstCount = 1;
  while (firstCount < changes.length && targetKey((changes[firstCount] as Change).target) === where) firstCount += 1;
  if (firstCount === changes.length) return { first: head.target, firstCount, held: undefined };
  const held = heldSegment(changes);
  if (held === undefined || held.start !== firstCount || held.start + held.changes.length !== changes.length) return undefined;
  return { first: head.target, firstCount, held };
}

function signature(shape: UnitShape): string {
  return `${targetKey(shape.first)}|${shape.held === undefined ? '' : targetKey((shape.held.changes[0] as CellChange).target)}`;
}

export interface Batch {
  /** Index in the plan of its first unit; the others follow it. */
  readonly start: number;
  readonly units: readonly Unit[];
  /** Their shapes, when the batch has more than one unit. */
  readonly shapes: readonly UnitShape[] | undefined;
  /** The union of its units' footprints (unit-scheduler.ts); undefined for a unit without one. */
  readonly footprint?: readonly string[];
}

/**
 * The plan's units in batches, in plan order: a batch ends at a unit of
 * another shape, a unit without a footprint or one that shares a key with
 * the batch (it waits for that unit, as the scheduler would), or at `max`
 * units ([nova_reconcile] apply_batch_units: the locks a batch takes are
 * held until it commits).
 */
export function batchUnits(units: readonly Unit[], max: number = DEFAULT_APPLY_BATCH_UNITS): Batch[] {
  const out: Batch[] = [];
  let i = 0;
  while (i < units.length) {
    const unit = units[i] as Unit;
    const shape = unit.footprint === undefined ? undefined : shapeOf(unit);
    if (shape === undefined || max < 2) {
      out.push({ start: i, units: [unit], shapes: undefined, ...(unit.footprint === undefined ? {} : { footprint: unit.footprint }) });
      i += 1;
      continue;
    }
    const sig = signature(shape);
    const members = [unit];
    const shapes = [shape];
    const keys = new Set(unit.footprint);
    let j = i + 1;
    for (; j < units.length && members.length < max; j++) {
      const next = units[j] as Unit;
      const nextShape = next.footprint === undefined ? undefined : shapeOf(next);
      if (nextShape === undefined || signature(nextShape) !== sig || (next.footprint ?? []).some((k) => keys.has(k))) break;
      for (const k of next.footprint ?? []) keys.add(k);
      members.push(next);
      shapes.push(nextShape);
    }
    out.push({ start: i, units: members, shapes: members.length > 1 ? shapes : undefined, footprint: [...keys] });
    i = j;
  }
  return out;
}
