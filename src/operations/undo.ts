// Undo an applied run from its journal: changes in reverse order, each in
// one transaction, every row restored as a compare-and-swap against its
// after-image; with --apply, the databases side by side, several changes at
// a time in the API and cell databases, one at a time in placement
// (undo-lanes.ts). A change whose rows moved since is refused and reported; the
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
import type { CellMapping, Deployment } from '../db/deployment-databases.js';
import { writerOf, type Database } from '../db/connect.js';
import { describeDriverError, isConstraintError } from '../db/driver-errors.js';
import { restoreRows, restoreRowsOfChanges, type RestoreOutcome } from '../db/restore-rows.js';
import { CasConflict, type Row, type RowImage } from '../db/row-images.js';
import { targetKey, type DbRef } from '../domain/plan.js';
import { failedAfterChanges, ReconcileError } from '../errors.js';
import { databaseFor, deploymentIdentity } from './apply-plan.js';
import { writeJournaled, writeJournaledGroup, WriteFailed, type JournaledEntry } from './journaled-write.js';
import { journalHeader, defaultJournalPath, openJournal, readJournal, sameDeployment, type JournalChange, type JournalWriter } from './journal.js';
import { pushTo } from '../domain/text-and-maps.js';
import { changeKeys, rowKey, runInLanes } from './undo-lanes.js';

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

/** What every restore of one undo shares. */
interface UndoRun {
  readonly options: UndoOptions;
  readonly dbFor: (target: DbRef) => Promise<Database>;
  readonly earlier: (entry: JournalChange, img: RowImage) => ReadonlyArray<Row | null>;
  /** Dry run: one transaction per database, rolled back at the end. */
  readonly simulations: Map<string, { db: Database; trx: Knex.Transaction }>;
  readonly journal: LazyJournal;
  readonly items: UndoItem[];
}

export async function undoJournal(deployment: Deployment, path: string, options: UndoOptions): Promise<UndoResult> {
  const journal = await readJournalFor(deployment, path, options.allowTruncatedTail === true);
  const here = await deploymentIdentity(deployment);
  const changes = [...journal.changes].sort((a, b) => b.seq - a.seq);
  // The cell mappings are read first: once the API database's simulation
  // holds its only SQLite connection, a read beside it would wait for ever.
  const mappings = await deployment.cellMappings();
  const run: UndoRun = {
    options,
    dbFor: async (target) => {
      if (target.db !== 'cell') return databaseFor(deployment, target);
      const mapping = mappings.find((m) => m.uuid === target.cellUuid);
      return mapping === undefined ? databaseFor(deployment, target) : deployment.cell(mapping);
    },
    earlier: earlierImages(journal.changes),
    simulations: new Map(),
    journal: lazyUndoJournal(options, journal.header.command, here),
    items: [],
  };
  const { items } = run;
  try {
    // The simulation is one ordered pass: each change is checked against what the previous restores leave.
    if (options.dryRun) for (const entry of changes) items.push(await restoreOne(run, entry));
    else await restoreInLanes(run, deployment, mappings, changes);
  } catch (err) {
    // Anything that stops the undo after a restore committed (a database that
    // cannot be opened, say) says changed in its error document.
    throw failedAfterChanges(err, !options.dryRun && items.some((i) => i.status === 'restored'));
  } finally {
    run.journal.opened()?.close();
    for (const { trx } of run.simulations.values()) await trx.rollback().catch(() => undefined);
  }
  // Lanes finish in any order: the items are listed as the journal is undone, last change first.
  items.sort((a, b) => b.seq - a.seq);
  const interrupted = options.signal?.aborted === true && !options.dryRun && items.length < changes.length ? { reason: String(options.signal.reason), notStarted: changes.length - items.length } : undefined;
  return { journal: path, command: journal.header.command, dryRun: options.dryRun, items, undoJournalPath: run.journal.opened()?.path, ...(interrupted === undefined ? {} : { interrupted }) };
}

/** The undo's own journal, opened on its first restore. */
interface LazyJournal {
  open(): JournalWriter;
  opened(): JournalWriter | undefined;
}

function lazyUndoJournal(options: UndoOptions, command: string, identity: Awaited<ReturnType<typeof deploymentIdentity>>): LazyJournal {
  let writer: JournalWriter | undefined;
  return {
    open() {
      if (writer === undefined) {
        const p = options.undoJournalPath ?? defaultJournalPath(options.journalDir, `undo ${command}`, new Date());
        writer = openJournal(p, journalHeader(`undo ${command}`, identity));
        options.onJournal?.(writer.path);
      }
      return writer;
    },
    opened: () => writer,
  };
}

/**
 * One lane per database, side by side, each in reverse journal order; a
 * unit's changes in that order across lanes too (runInLanes).
 */
async function restoreInLanes(run: UndoRun, deployment: Deployment, mappings: readonly CellMapping[], changes: readonly JournalChange[]): Promise<void> {
  // A change whose keys are unknown could share a unique value with any other: then each database one change at a time.
  const keys = new Map(changes.map((c) => [c.seq, changeKeys(c)] as const));
  const keyed = [...keys.values()].every((k) => k !== undefined);
  const failures = await runInLanes(
    changes,
    {
      laneOf: (target) => laneOf(deployment, mappings, target),
      // Placement one change at a time: units side by side there lose to deadlocks.
      widthOf: (target) => (target.db === 'placement' || !keyed ? 1 : deployment.config.reconcile.applyConcurrency),
      keysOf: (c) => keys.get(c.seq) ?? [],
      // Consecutive changes of one database in one transaction ([nova_reconcile] apply_batch_units of them).
      group: { max: deployment.config.reconcile.applyBatchUnits, together: (a, b) => targetKey(a.target) === targetKey(b.target), run: (entries) => restoreGroup(run, entries) },
    },
    async (entry) => {
      run.items.push(await restoreOne(run, entry));
    },
    () => run.options.signal?.aborted === true,
  );
  // Of several lanes that failed, the one whose restore may have committed speaks for the run.
  const failure = failures.find((e) => e instanceof ReconcileError && e.changed === true) ?? failures[0];
  if (failures.length > 0) throw failure;
}

/** What a restore journals: the change with its images swapped, so that the undo can itself be undone. */
function restoredEntry(entry: JournalChange): JournaledEntry {
  return { unit: entry.unit, target: entry.target, change: entry.change, rows: swapped(entry) };
}

/** The error that stops the undo: the database failed it (`cut`: a COMMIT was cut, and what it held may have committed). */
function failed(options: UndoOptions, err: unknown, db: Database, what: string): unknown {
  if (err instanceof ReconcileError) return err;
  const cause = err instanceof WriteFailed ? err.cause : err;
  const cut = err instanceof WriteFailed && err.committing;
  const outcome = cut ? `; whether ${what} committed is unknown (re-run undo: it decides from the rows)` : '';
  return failedAfterChanges(new ReconcileError('connection', `undo failed ${options.dryRun ? 'reading' : 'writing to'} the ${db.label}: ${describeDriverError(cause)}${outcome}`, { cause }), cut);
}

/** One change: its item (restored, already restored, refused), or a throw that stops the undo. */
async function restoreOne(run: UndoRun, entry: JournalChange): Promise<UndoItem> {
  const { options } = run;
  const db = await run.dbFor(entry.target);
  const previous = (img: RowImage): ReadonlyArray<Row | null> => run.earlier(entry, img);
  try {
    let outcome: RestoreOutcome;
    if (options.dryRun) {
      const key = targetKey(entry.target);
      let sim = run.simulations.get(key);
      if (sim === undefined) {
        sim = { db, trx: await writerOf(db).transaction() };
        run.simulations.set(key, sim);
      }
      // A savepoint: a refused change leaves the simulation as it was.
      outcome = await sim.trx.transaction((sp) => restoreRows(sp, db.dialect, entry.rows, previous));
    } else {
      outcome = await writeJournaled(db, () => run.journal.open(), async (trx) => {
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
    // A restore whose COMMIT was cut may have committed: changed (undoJournal counts the restores before it).
    throw failed(options, err, db, 'that restore');
  }
}

/**
 * Consecutive changes of one database restored in one transaction
 * (writeJournaledGroup), their images journaled with one fsync. When the
 * server rolled it back for certain (a refused or changed row, a key taken
 * since, a deadlock), each change is restored on its own instead, so that
 * it is decided and reported as it always was.
 */
async function restoreGroup(run: UndoRun, entries: readonly JournalChange[]): Promise<void> {
  const first = entries[0] as JournalChange;
  const db = await run.dbFor(first.target);
  const outcomes: RestoreOutcome[] = [];
  let group: Awaited<ReturnType<typeof writeJournaledGroup>>;
  try {
    group = await writeJournaledGroup(
      db,
      () => run.journal.open(),
      undefined,
      async (trx) => {
        outcomes.length = 0;
        // Changes that share no row together (two round trips for the run); a change that shares one starts the next run.
        for (const part of disjointRuns(entries)) {
          outcomes.push(...(await restoreRowsOfChanges(trx, db.dialect, part.map((entry) => ({ images: entry.rows, earlier: (img: RowImage) => run.earlier(entry, img) })))));
        }
        return entries.flatMap((entry, k) => (outcomes[k] === 'restored' ? [restoredEntry(entry)] : []));
      },
      isConstraintError,
    );
  } catch (err) {
    throw failed(run.options, err, db, 'those restores');
  }
  if ('rolledBack' in group) {
    for (const entry of entries) run.items.push(await restoreOne(run, entry));
    return;
  }
  entries.forEach((entry, k) => run.items.push({ seq: entry.seq, unit: entry.unit, status: outcomes[k] ?? 'restored' }));
}

/** A change's lane: its database's connection URL as configured (the database's name when it has none). */
function laneOf(deployment: Deployment, mappings: readonly CellMapping[], target: DbRef): string {
  const url =
    target.db === 'api'
      ? deployment.config.apiDatabaseConnection
      : target.db === 'placement'
        ? deployment.config.placementDatabaseConnection
        : (mappings.find((m) => m.uuid === target.cellUuid)?.databaseConnection ?? undefined);
  return url === undefined || url === '' ? targetKey(target) : `url ${url}`;
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
