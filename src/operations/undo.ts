// Undo an applied run from its journal: changes in reverse order, each in
// one transaction, every row restored as a compare-and-swap against its
// after-image; with --apply, the databases side by side, one change at a
// time in each (undoLanes). A change whose rows moved since is refused and reported; the
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
import type { Database } from '../db/connect.js';
import { describeDriverError, isConstraintError } from '../db/driver-errors.js';
import { restoreRows, type RestoreOutcome } from '../db/restore-rows.js';
import { CasConflict, type Row, type RowImage } from '../db/row-images.js';
import { describeTarget, type DbRef } from '../domain/plan.js';
import { failedAfterChanges, ReconcileError } from '../errors.js';
import { databaseFor, deploymentIdentity } from './apply-plan.js';
import { writeJournaled, WriteFailed } from './journaled-write.js';
import { journalHeader, defaultJournalPath, openJournal, readJournal, sameDeployment, type JournalChange, type JournalWriter } from './journal.js';
import { pushTo } from '../domain/text-and-maps.js';

export interface UndoOptions {
  readonly dryRun: boolean;
  /** Accept a journal whose last line a killed run left incomplete (that entry never committed). */
  readonly allowTruncatedTail: boolean;
  readonly journalDir: string;
  readonly undoJournalPath: string | undefined;
  readonly onJournal?: (path: string) => void;
  /** Aborted on Ctrl-C or SIGTERM: no change is restored after it (the one in flight finishes). */
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
          sim = { db, trx: await db.knex.transaction() };
          simulations.set(key, sim);
        }
        // A savepoint: a refused change leaves the simulation as it was.
        outcome = await sim.trx.transaction((sp) => restoreRows(sp, db.dialect, entry.rows, previous));
      } else {
        const undoJournal = (): JournalWriter => (writer ??= openUndoJournal(options, journal.header.command, here));
        outcome = await writeJournaled(db, undoJournal, async (trx) => {
          const restored = await restoreRows(trx, db.dialect, entry.rows, previous);
          return { value: restored, ...(restored === 'restored' ? { entry: { unit: entry.unit, target: entry.target, change: entry.change, rows: swapped(entry) } } : {}) };
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
      if (err instanceof ReconcileError) throw err;
      // A restore whose COMMIT was cut may have committed: changed (the restores before it are counted below).
      const cut = err instanceof WriteFailed && err.committing;
      const outcome = cut ? '; whether that restore committed is unknown (re-run undo: it decides from the rows)' : '';
      throw failedAfterChanges(new ReconcileError('connection', `undo failed ${options.dryRun ? 'reading' : 'writing to'} the ${db.label}: ${describeDriverError(cause)}${outcome}`, { cause }), cut);
    }
  };
  try {
    if (options.dryRun) {
      // The simulation is one ordered pass: each change is checked against what the previous restores leave.
      for (const entry of changes) items.push(await restoreOne(entry));
    } else {
      // One lane per database, side by side, each in reverse journal order;
      // a unit's changes in that order across lanes too (runInLanes).
      const failures = await runInLanes(
        changes,
        (target) => laneOf(deployment, mappings, target),
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
 * are put back on it), and each lane keeps it. Within a unit the order
 * across databases is kept as well (unitPredecessors), so an undo stopped
 * half-way leaves every unit in a state its apply passed through. Lanes run
 * side by side, so no two changes of one database ever run at once: the
 * deadlocks that stopped a concurrent undo within placement (11dd6e2) cannot
 * arise between lanes.
 */
export function undoLanes(changes: readonly JournalChange[], laneOf: (target: DbRef) => string): JournalChange[][] {
  const lanes = new Map<string, JournalChange[]>();
  for (const c of changes) pushTo(lanes, laneOf(c.target), c);
  return [...lanes.values()];
}

/**
 * For each change, the change of the same unit undone just before it (the
 * next higher seq of that unit), if any: the apply ordered a unit's changes
 * across databases for crash safety (placement is released before a compute
 * node row goes away), so the undo restores them in the exact reverse order
 * even when they are in different lanes. Every wait is on a higher seq and
 * every lane runs in descending seq, so the change with the highest seq not
 * yet done is never waiting: the lanes cannot wait on each other in a cycle.
 */
/**
 * Run `run` on every change, in lanes (undoLanes) side by side, each change
 * after the one of its unit undone before it (unitPredecessors). A change
 * that throws stops every lane before its next change (the changes in
 * flight finish), as `stop()` does; the errors are returned, in no order.
 */
export async function runInLanes(
  changes: readonly JournalChange[],
  laneOf: (target: DbRef) => string,
  run: (change: JournalChange) => Promise<void>,
  stop: () => boolean,
): Promise<unknown[]> {
  let failed = false;
  const after = unitPredecessors(changes);
  const finished = new Map(changes.map((c) => [c.seq, settledSignal()] as const));
  const settled = await Promise.allSettled(
    undoLanes(changes, laneOf).map(async (lane) => {
      try {
        for (const entry of lane) {
          const before = after.get(entry.seq);
          if (before !== undefined) await finished.get(before)?.done;
          if (failed || stop()) return;
          try {
            await run(entry);
          } catch (err) {
            failed = true;
            throw err;
          } finally {
            finished.get(entry.seq)?.settle();
          }
        }
      } finally {
        // A lane that stops wakes whoever waits on its changes (they stop too).
        for (const entry of lane) finished.get(entry.seq)?.settle();
      }
    }),
  );
  return settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
}

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

/** For a change and one of its rows: the before-images of that row in the journal's earlier changes. */
function earlierImages(changes: readonly JournalChange[]): (entry: JournalChange, img: RowImage) => ReadonlyArray<Row | null> {
  const byRow = new Map<string, Array<{ seq: number; before: Row | null }>>();
  const rowKey = (entry: JournalChange, img: RowImage): string => `${describeTarget(entry.target)}|${img.table}|${JSON.stringify(img.key)}`;
  for (const entry of changes) {
    for (const img of entry.rows) {
      const k = rowKey(entry, img);
      pushTo(byRow, k, { seq: entry.seq, before: img.before });
    }
  }
  return (entry, img) => (byRow.get(rowKey(entry, img)) ?? []).filter((x) => x.seq < entry.seq).map((x) => x.before);
}

function swapped(entry: JournalChange): JournalChange['rows'] {
  return [...entry.rows].reverse().map((r) => ({ table: r.table, key: r.key, before: r.after, after: r.before }));
}
