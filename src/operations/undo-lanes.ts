// The lanes of `undo --apply`: one per database, side by side, each in
// reverse journal order, with the waits that keep every outcome as if the
// changes had been restored one at a time.
import { targetKey, footprintOfChanges, type DbRef } from '../domain/plan.js';
import { pushTo } from '../domain/text-and-maps.js';
import type { RowImage } from '../db/row-images.js';
import type { JournalChange } from './journal.js';

/**
 * The changes of an `undo --apply` in lanes, one per database (one
 * connection URL: an API database that also holds placement's tables is one
 * lane), each lane in the order given (reverse journal order). A change only
 * reads and writes rows of its own database, and its compare-and-swap is
 * against those rows, so the order between databases changes no outcome;
 * within a database it does (a provider is re-created before allocations
 * are put back on it), and each lane keeps it for the changes that share
 * a row or a unique value (runInLanes). Within a unit the order across
 * databases is kept as well (unitPredecessors), so an undo stopped half-way
 * leaves every unit in a state its apply passed through.
 */
export function undoLanes(changes: readonly JournalChange[], laneOf: (target: DbRef) => string): JournalChange[][] {
  const lanes = new Map<string, JournalChange[]>();
  for (const c of changes) pushTo(lanes, laneOf(c.target), c);
  return [...lanes.values()];
}

/** How `undo --apply` runs the changes of its lanes. */
export interface LaneOptions {
  /** The lane of a change's database (undoLanes). */
  readonly laneOf: (target: DbRef) => string;
  /** How many changes of that database may run at once (1: one after the other). */
  readonly widthOf: (target: DbRef) => number;
  /** What a change touches; two changes of one lane that share a key run in lane order. */
  readonly keysOf: (change: JournalChange) => readonly string[];
  /**
   * Consecutive changes of a lane run as one group (one transaction): up to
   * `max`, each with `together(first, next)`, and only while nothing a
   * change waits for is still to run outside the group. Absent: one change
   * at a time.
   */
  readonly group?: {
    readonly max: number;
    readonly together: (first: JournalChange, next: JournalChange) => boolean;
    readonly run: (changes: readonly JournalChange[]) => Promise<void>;
  };
}

/**
 * Run `run` on every change, in lanes (undoLanes) side by side. In a lane,
 * up to widthOf changes at a time, taken in lane order (descending seq); a
 * change starts only after every earlier change of its lane it shares a key
 * with (a row, a name, a uuid, a host: changeKeys) and after the change of
 * its unit undone before it (unitPredecessors). Every wait is on a higher
 * seq, so the change with the highest seq not yet done never waits: nothing
 * waits in a cycle. A change that throws stops every lane before its next
 * change, as `stop()` does; the changes in flight finish. The errors are
 * returned, in no order.
 */
export async function runInLanes(changes: readonly JournalChange[], lanes: LaneOptions, run: (change: JournalChange) => Promise<void>, stop: () => boolean): Promise<unknown[]> {
  let failed = false;
  const errors: unknown[] = [];
  const finished = new Map(changes.map((c) => [c.seq, settledSignal()] as const));
  /** The seqs settled so far, to decide synchronously whether a change may join a group. */
  const settled = new Set<number>();
  // Every lane's waits are worked out before any change runs, so nothing that
  // could throw here can leave a lane running behind a failed undo.
  const plans = planLanes(changes, lanes);
  const settle = (seq: number): void => {
    settled.add(seq);
    finished.get(seq)?.settle();
  };
  await Promise.all(
    plans.map(async ({ lane, width, waits }) => {
      const running = new Set<Promise<void>>();
      try {
        for (let i = 0; i < lane.length; ) {
          const entry = lane[i] as JournalChange;
          for (const seq of waits.get(entry.seq) ?? []) await finished.get(seq)?.done;
          while (running.size >= width) await Promise.race(running);
          if (failed || stop()) break;
          // The group: the next changes whose waits are all settled or in it (a group never waits once started).
          const group = [entry];
          const members = new Set([entry.seq]);
          for (i += 1; lanes.group !== undefined && i < lane.length && group.length < lanes.group.max; i += 1) {
            const next = lane[i] as JournalChange;
            if (!lanes.group.together(entry, next) || !(waits.get(next.seq) ?? []).every((s) => members.has(s) || settled.has(s))) break;
            group.push(next);
            members.add(next.seq);
          }
          const task = (async (): Promise<void> => {
            try {
              if (group.length > 1 && lanes.group !== undefined) await lanes.group.run(group);
              else await run(entry);
            } catch (err) {
              failed = true;
              errors.push(err);
            } finally {
              for (const c of group) settle(c.seq);
            }
          })();
          running.add(task);
          void task.then(() => running.delete(task));
        }
        await Promise.all(running);
      } finally {
        // A lane that stops wakes whoever waits on its changes (they stop too).
        for (const entry of lane) settle(entry.seq);
      }
    }),
  );
  return errors;
}

/** A lane with the width it runs at and, per change, the seqs it waits for. */
interface LanePlan {
  readonly lane: readonly JournalChange[];
  readonly width: number;
  readonly waits: ReadonlyMap<number, readonly number[]>;
}

function planLanes(changes: readonly JournalChange[], lanes: LaneOptions): LanePlan[] {
  const after = unitPredecessors(changes);
  return undoLanes(changes, lanes.laneOf).map((lane) => {
    // The narrowest of its databases: an API database that holds placement's tables is one lane, run as placement is.
    const width = Math.max(1, lane.reduce((w, c) => Math.min(w, lanes.widthOf(c.target)), Number.POSITIVE_INFINITY));
    // For each change, the last earlier lane-mate per shared key (those wait on theirs in turn).
    const holder = new Map<string, number>();
    const waits = new Map<number, number[]>();
    for (const c of lane) {
      const mine = new Set<number>();
      for (const key of lanes.keysOf(c)) {
        const previous = holder.get(key);
        // A key named twice by one change is not a wait on itself.
        if (previous !== undefined && previous !== c.seq) mine.add(previous);
        holder.set(key, c.seq);
      }
      const before = after.get(c.seq);
      if (before !== undefined) mine.add(before);
      waits.set(c.seq, [...mine]);
    }
    return { lane, width, waits };
  });
}

/**
 * What a journaled change touches, for runInLanes: every row it wrote (its
 * database, table and key, from the row images) and the keys the apply's
 * scheduler gives it (footprintOfChanges: node and hypervisor names,
 * instance ids, provider ids, names and uuids, consumers, hosts), which also
 * cover values unique across rows (a name freed by one unit and taken by
 * another). Undefined for a change kind this version does not know.
 */
export function changeKeys(change: JournalChange): string[] | undefined {
  let footprint: string[];
  try {
    footprint = footprintOfChanges([{ change: change.change, reason: '' }], () => []);
  } catch {
    // A change kind this version does not know (a hand-edited or newer journal): its unique values are unknown.
    return undefined;
  }
  return [...footprint, ...change.rows.map((img) => rowKey(change, img))];
}

/**
 * For each change, the change of the same unit undone just before it (the
 * next higher seq of that unit), if any: the apply ordered a unit's changes
 * across databases for crash safety (placement is released before a compute
 * node row goes away), so the undo restores them in the exact reverse order
 * even when they are in different lanes.
 */
export function unitPredecessors(changes: readonly JournalChange[]): Map<number, number> {
  const last = new Map<string, number>();
  const before = new Map<number, number>();
  for (const c of [...changes].sort((a, b) => b.seq - a.seq)) {
    const previous = last.get(c.unit);
    if (previous !== undefined) before.set(c.seq, previous);
    last.set(c.unit, c.seq);
  }
  return before;
}

/** A promise settled once, by whoever gets there first. */
function settledSignal(): { readonly done: Promise<void>; settle(): void } {
  let settle = (): void => undefined;
  const done = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { done, settle };
}

/** One row of a change's database: database, table and key. */
export function rowKey(entry: JournalChange, img: RowImage): string {
  return `${targetKey(entry.target)}|${img.table}|${JSON.stringify(img.key)}`;
}
