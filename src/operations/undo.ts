// Undo an applied run from its journal: changes in reverse order, each in
// one transaction, every row restored as a compare-and-swap against its
// after-image; with --apply, the databases side by side, several changes at
// a time in the API and cell databases, one at a time in placement
// (undoLanes, runInLanes). A change whose rows moved since is refused and reported; the
// rest go on. So is a change a retry can never make succeed (a duplicate
// key: Nova re-created a provider with that name). The undo writes its own
// journal (before and after swapped), so an undo can itself be undone.
//
// A dry run (the default without --apply) simulates the undo in order: every
// change is restored in a savepoint of one transaction per database, which
// is rolled back at the end, so each change is checked against the state the
// previous restores leave (a rebalance re-homes a node and then retires its
// duplicate: undoing them one by one against the unchanged database would
// trip the unique key of compute_nodes).
import type { Knex } from 'knex';
import type { CellMapping, Deployment } from '../db/deployment.js';
import { writerOf, type Database } from '../db/connect.js';
import { describeDriverError, isConstraintError } from '../db/driver-errors.js';
import { restoreRows, restoreRowsOfChanges, type RestoreOutcome } from '../db/restore-rows.js';
import { CasConflict, type Row, type RowImage } from '../db/row-images.js';
import { describeTarget, footprintOfChanges, type DbRef } from '../domain/plan.js';
import { failedAfterChanges, ReconcileError } from '../errors.js';
import { databaseFor, deploymentIdentity } from './apply-plan.js';
import { writeJournaled, writeJournaledGroup, WriteFailed, type JournaledEntry } from './journaled-write.js';
import { journalHeader, defaultJournalPath, openJournal, readJournal, sameDeployment, type JournalChange, type JournalWriter } from './journal.js';
import { pushTo } from '../domain/text-and-maps.js';

export interface UndoOptions {
  readonly dryRun: boolean;
  /** Accept a journal whose last line a killed run left incomplete (that entry never committed). */
  readonly allowTruncatedTail: boolean;
  readonly journalDir: string;
  readonly undoJournalPath: string | undefined;
  readonly onJournal?: (path: string) => void;
  /** Aborted on Ctrl-C or SIGTERM: no change is restored after it (those in flight finish: a run of one database is one transaction). */
  readonly signal?: AbortSignal;
}

export type UndoItem =
  | { readonly seq: number; readonly unit: string; readonly status: 'restored' | 'would-restore' | 'already-restored' }
  | { readonly seq: number; readonly unit: string; readonly status: 'refused'; readonly reason: string };

export interface UndoResult {
  readonly journal: string;
  readonly command: string;
  readonly dryRun: boolean;
  readonly items: readonly UndoItem[];
  readonly undoJournalPath: string | undefined;
  /** Set when the signal stopped it: its reason and how many changes were left untouched (a re-run restores them). */
  readonly interrupted?: { readonly reason: string; readonly notStarted: number };
}

/** Read a journal and check it belongs to this deployment; refused with one line otherwise. */
export async function readJournalFor(deployment: Deployment, path: string, allowTruncatedTail: boolean): Promise<ReturnType<typeof readJournal>> {
  const journal = readJournal(path, { allowTruncatedTail });
  const here = await deploymentIdentity(deployment);
  const there = journal.header.deployment;
  if (!sameDeployment(there, here))
    throw new ReconcileError('input', `the journal ${path} was written for another deployment (API database ${there.api}); this one is ${here.api}`, {
      hint: 'run undo with the --config-file of the deployment the journal came from',
    });
  // Every cell a change names must be mapped now: found missing half-way, the undo would stop with some changes restored.
  const mapped = new Set(here.cells);
  const unmapped = journal.changes.find((c) => c.target.db === 'cell' && !mapped.has(c.target.cellUuid));
  if (unmapped !== undefined && unmapped.target.db === 'cell')
    throw new ReconcileError('not-found', `the journal ${path} has a change (${unmapped.seq}) in cell ${unmapped.target.cellUuid}, which is not in cell_mappings; nothing was restored`, {
      hint: 'restore the cell mapping first (nova-manage cell_v2 list_cells shows the cells), then re-run undo',
    });
  return journal;
}

export async function undoJournal(deployment: Deployment, path: string, options: UndoOptions): Promise<UndoResult> {
  const journal = await readJournalFor(deployment, path, options.allowTruncatedTail === true);
  const here = await deploymentIdentity(deployment);
  const items: UndoItem[] = [];
  const changes = [...journal.changes].sort((a, b) => b.seq - a.seq);
  const earlier = earlierImages(journal.changes);
  let writer: JournalWriter | undefined;
  // Dry run: one transaction per database, rolled back at the end. The cell
  // mappings are read first: once the API database's simulation holds its
  // only SQLite connection, a read beside it would wait for ever.
  const mappings = await deployment.cellMappings();
  const dbFor = async (target: DbRef): Promise<Database> => {
    if (target.db !== 'cell') return databaseFor(deployment, target);
    const mapping = mappings.find((m) => m.uuid === target.cellUuid);
    return mapping === undefined ? databaseFor(deployment, target) : deployment.cell(mapping);
  };
  const simulations = new Map<string, { db: Database; trx: Knex.Transaction }>();
  /** The undo's own journal, opened on its first restore. */
  const undoWriter = (): JournalWriter => (writer ??= openUndoJournal(options, journal.header.command, here));
  /** What a restore journals: the change with its images swapped, so that the undo can itself be undone. */
  const restoredEntry = (entry: JournalChange): JournaledEntry => ({ unit: entry.unit, target: entry.target, change: entry.change, rows: swapped(entry) });
  /** The error that stops the undo: the database failed it (`cut`: a COMMIT was cut, and what it held may have committed). */
  const failed = (err: unknown, db: Database, what: string): unknown => {
    if (err instanceof ReconcileError) return err;
    const cause = err instanceof WriteFailed ? err.cause : err;
    const cut = err instanceof WriteFailed && err.committing;
    const outcome = cut ? `; whether ${what} committed is unknown (re-run undo: it decides from the rows)` : '';
    return failedAfterChanges(new ReconcileError('connection', `undo failed ${options.dryRun ? 'reading' : 'writing to'} the ${db.label}: ${describeDriverError(cause)}${outcome}`, { cause }), cut);
  };
  // One change: its item (restored, already restored, refused), or a throw that stops the undo.
  const restoreOne = async (entry: JournalChange): Promise<UndoItem> => {
    const db = await dbFor(entry.target);
    const previous = (img: RowImage): ReadonlyArray<Row | null> => earlier(entry, img);
    try {
      let outcome: RestoreOutcome;
      if (options.dryRun) {
        const key = describeTarget(entry.target);
        let sim = simulations.get(key);
        if (sim === undefined) {
          sim = { db, trx: await writerOf(db).transaction() };
          simulations.set(key, sim);
        }
        // A savepoint: a refused change leaves the simulation as it was.
        outcome = await sim.trx.transaction((sp) => restoreRows(sp, db.dialect, entry.rows, previous));
      } else {
        outcome = await writeJournaled(db, undoWriter, async (trx) => {
          const restored = await restoreRows(trx, db.dialect, entry.rows, previous);
          return { value: restored, ...(restored === 'restored' ? { entry: restoredEntry(entry) } : {}) };
        });
      }
      return { seq: entry.seq, unit: entry.unit, status: options.dryRun && outcome === 'restored' ? 'would-restore' : outcome };
    } catch (err) {
      if (err instanceof CasConflict) return { seq: entry.seq, unit: entry.unit, status: 'refused', reason: err.message };
      const cause = err instanceof WriteFailed ? err.cause : err;
      if (isConstraintError(cause)) {
        // No retry can fix it: the row's key is taken (or its parent gone) since the run.
        return { seq: entry.seq, unit: entry.unit, status: 'refused', reason: `the ${db.label} refuses the restored rows: ${describeDriverError(cause)} (taken or removed since the journaled run; restore it by hand if it is still wanted)` };
      }
      // A restore whose COMMIT was cut may have committed: changed (the restores before it are counted below).
      throw failed(err, db, 'that restore');
    }
  };
  /**
   * Consecutive changes of one database restored in one transaction
   * (writeJournaledGroup), their images journaled with one fsync. When the
   * server rolled it back for certain (a refused or changed row, a key taken
   * since, a deadlock), each change is restored on its own instead, so that
   * it is decided and reported as it always was.
   */
  const restoreGroup = async (entries: readonly JournalChange[]): Promise<void> => {
    const first = entries[0] as JournalChange;
    const db = await dbFor(first.target);
    const outcomes: RestoreOutcome[] = [];
    let group: Awaited<ReturnType<typeof writeJournaledGroup>>;
    try {
      group = await writeJournaledGroup(
        db,
        undoWriter,
        undefined,
        async (trx) => {
          outcomes.length = 0;
          // Changes that share no row together (two round trips for the run); a change that shares one starts the next run.
          for (const run of disjointRuns(entries)) {
            outcomes.push(...(await restoreRowsOfChanges(trx, db.dialect, run.map((entry) => ({ images: entry.rows, earlier: (img: RowImage) => earlier(entry, img) })))));
          }
          return entries.flatMap((entry, k) => (outcomes[k] === 'restored' ? [restoredEntry(entry)] : []));
        },
        isConstraintError,
      );
    } catch (err) {
      throw failed(err, db, 'those restores');
    }
    if ('rolledBack' in group) {
      for (const entry of entries) items.push(await restoreOne(entry));
      return;
    }
    entries.forEach((entry, k) => items.push({ seq: entry.seq, unit: entry.unit, status: outcomes[k] ?? 'restored' }));
  };
  try {
    if (options.dryRun) {
      // The simulation is one ordered pass: each change is checked against what the previous restores leave.
      for (const entry of changes) items.push(await restoreOne(entry));
    } else {
      // One lane per database, side by side, each in reverse journal order;
      // a unit's changes in that order across lanes too (runInLanes).
      // A change whose keys are unknown could share a unique value with any other: then each database one change at a time.
      const keys = new Map(changes.map((c) => [c.seq, changeKeys(c)] as const));
      const keyed = [...keys.values()].every((k) => k !== undefined);
      const failures = await runInLanes(
        changes,
        {
          laneOf: (target) => laneOf(deployment, mappings, target),
          // Placement one change at a time: units side by side there lost to deadlocks (11dd6e2).
          widthOf: (target) => (target.db === 'placement' || !keyed ? 1 : deployment.config.reconcile.applyConcurrency),
          keysOf: (c) => keys.get(c.seq) ?? [],
          // Consecutive changes of one database in one transaction ([nova_reconcile] apply_batch_units of them).
          group: { max: deployment.config.reconcile.applyBatchUnits, together: (a, b) => describeTarget(a.target) === describeTarget(b.target), run: restoreGroup },
        },
        async (entry) => {
          items.push(await restoreOne(entry));
        },
        () => options.signal?.aborted === true,
      );
      // Of several lanes that failed, the one whose restore may have committed speaks for the run.
      const failure = failures.find((e) => e instanceof ReconcileError && e.changed === true) ?? failures[0];
      if (failures.length > 0) throw failure;
    }
  } catch (err) {
    // Anything that stops the undo after a restore committed (a database that
    // cannot be opened, say) says changed in its error document.
    throw failedAfterChanges(err, !options.dryRun && items.some((i) => i.status === 'restored'));
  } finally {
    writer?.close();
    for (const { trx } of simulations.values()) await trx.rollback().catch(() => undefined);
  }
  // Lanes finish in any order: the items are listed as the journal is undone, last change first.
  items.sort((a, b) => b.seq - a.seq);
  const interrupted = options.signal?.aborted === true && !options.dryRun && items.length < changes.length ? { reason: String(options.signal.reason), notStarted: changes.length - items.length } : undefined;
  return { journal: path, command: journal.header.command, dryRun: options.dryRun, items, undoJournalPath: writer?.path, ...(interrupted === undefined ? {} : { interrupted }) };

  function openUndoJournal(opts: UndoOptions, command: string, identity: Awaited<ReturnType<typeof deploymentIdentity>>): JournalWriter {
    const p = opts.undoJournalPath ?? defaultJournalPath(opts.journalDir, `undo ${command}`, new Date());
    const w = openJournal(p, journalHeader(`undo ${command}`, identity));
    opts.onJournal?.(w.path);
    return w;
  }
}

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
  const after = unitPredecessors(changes);
  const finished = new Map(changes.map((c) => [c.seq, settledSignal()] as const));
  /** The seqs settled so far, to decide synchronously whether a change may join a group. */
  const settled = new Set<number>();
  // Every lane's waits are worked out before any change runs, so nothing that
  // could throw here can leave a lane running behind a failed undo.
  const plans = undoLanes(changes, lanes.laneOf).map((lane) => {
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

/** A change's lane: its database's connection URL as configured (the database's name when it has none). */
function laneOf(deployment: Deployment, mappings: readonly CellMapping[], target: DbRef): string {
  const url =
    target.db === 'api'
      ? deployment.config.apiDatabaseConnection
      : target.db === 'placement'
        ? deployment.config.placementDatabaseConnection
        : (mappings.find((m) => m.uuid === target.cellUuid)?.databaseConnection ?? undefined);
  return url === undefined || url === '' ? describeTarget(target) : `url ${url}`;
}

/** One row of a change's database: database, table and key. */
function rowKey(entry: JournalChange, img: RowImage): string {
  return `${describeTarget(entry.target)}|${img.table}|${JSON.stringify(img.key)}`;
}

/** For a change and one of its rows: the before-images of that row in the journal's earlier changes. */
function earlierImages(changes: readonly JournalChange[]): (entry: JournalChange, img: RowImage) => ReadonlyArray<Row | null> {
  const byRow = new Map<string, Array<{ seq: number; before: Row | null }>>();
  for (const entry of changes) {
    for (const img of entry.rows) {
      const k = rowKey(entry, img);
      pushTo(byRow, k, { seq: entry.seq, before: img.before });
    }
  }
  return (entry, img) => (byRow.get(rowKey(entry, img)) ?? []).filter((x) => x.seq < entry.seq).map((x) => x.before);
}

/** `entries` cut into runs, in order, in which no two changes have a row in common. */
function disjointRuns(entries: readonly JournalChange[]): JournalChange[][] {
  const runs: JournalChange[][] = [];
  let run: JournalChange[] = [];
  let rows = new Set<string>();
  for (const entry of entries) {
    const mine = entry.rows.map((img) => rowKey(entry, img));
    if (mine.some((k) => rows.has(k))) {
      runs.push(run);
      run = [];
      rows = new Set();
    }
    run.push(entry);
    for (const k of mine) rows.add(k);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

function swapped(entry: JournalChange): JournalChange['rows'] {
  return [...entry.rows].reverse().map((r) => ({ table: r.table, key: r.key, before: r.after, after: r.before }));
}
