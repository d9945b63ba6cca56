// Undo an applied run from its journal. Every row is restored as a
// compare-and-swap against its after-image; a change whose rows moved since
// is refused and reported, and the rest go on. So is a change a retry can
// never make succeed (a duplicate key: Nova re-created a provider with that
// name). The undo writes its own journal (before and after swapped, each
// change line fsynced before its transaction commits, a commit marker after),
// so an undo can itself be undone.
//
// Concurrency (issue 20: undo as fast as the apply that wrote the journal).
// The journal's changes are grouped by the unit that wrote them. Units are
// undone newest first (by the last change each wrote), up to `concurrency`
// at a time, by the same scheduler as the apply (unit-scheduler.ts): a unit
// waits for every unit ahead of it in that order whose footprint shares a
// key with its own. Inside a unit the changes are undone one after the
// other, newest first, each in its own transaction, as before. The
// footprint of a unit is derived from the journal alone:
//   - every row its changes wrote: database target + table + primary key,
//     from the journaled row images (a provider's generation, a consumer, an
//     allocation, a compute node row);
//   - the keys the apply's scheduler used (footprintOfChanges of the
//     journaled changes: provider names and uuids, hypervisor host names,
//     host names), which also cover values that are unique across rows (a
//     name freed by one unit and taken by a later one).
// Why that is as safe as the sequential undo:
//   1. Every row gets its changes undone in exact reverse journal order. Two
//      units that touched one row share a footprint key, so the later-listed
//      one waits for the other to finish; the order holds as long as the
//      apply did not interleave the two on that row. The apply's own
//      scheduler rules that out for a well-formed journal, but undo does not
//      trust it: `scheduleUndo` checks, for every key, that the units touching
//      it follow each other in journal order without interleaving, and when
//      any key is interleaved the whole undo falls back to one change at a
//      time in reverse journal order (the old behaviour).
//   2. Units with disjoint footprints write disjoint rows and disjoint unique
//      values, so the order between them cannot change any compare-and-swap
//      or constraint check: each change sees exactly the rows it would see
//      in the sequential undo.
//   3. Each change is still one transaction with the same compare-and-swap
//      and the same earlier-images rule (earlierImages); a refusal
//      (CasConflict, constraint error) is recorded for that change and its
//      unit goes on with its other changes, as the sequential undo did.
//   4. Within a unit the reverse order across databases is kept, so an undo
//      killed or interrupted half way leaves each unit in a state its apply
//      passed through, which the apply's ordering makes crash-safe.
//   5. A deadlock victim (concurrent transactions on MariaDB) is re-run, the
//      whole change from a fresh compare-and-swap, a few times.
// The items are reported newest change first (seq descending), whatever
// order they finished in, so the output does not depend on the timing.
//
// A dry run (the default without --apply) simulates the undo: every change
// is restored in a savepoint of one transaction per database, which is
// rolled back at the end, so each change is checked against the state the
// previous restores leave (a rebalance re-homes a node and then retires its
// duplicate: undoing them one by one against the unchanged database would
// trip the unique key of compute_nodes). One transaction is one connection,
// so the simulation stays sequential: it walks the units in the order the
// scheduler would start them, each unit's changes newest first, which by (1)
// and (2) gives every change the state the concurrent undo gives it.
//
// Ctrl-C / SIGTERM (options.signal): no change starts after it; the changes
// in flight (at most one per running unit) finish and are journaled.
import type { Knex } from 'knex';
import type { Deployment } from '../db/deployment.js';
import type { Database } from '../db/connect.js';
import { describeDriverError, isConstraintError, retryDeadlocks } from '../db/driver-errors.js';
import { restoreRows, type RestoreOutcome } from '../db/restore-rows.js';
import { CasConflict, type Row, type RowImage } from '../db/row-images.js';
import { utcNowString } from '../db/time.js';
import { describeTarget, footprintOfChanges, type DbRef } from '../domain/plan.js';
import { ReconcileError } from '../errors.js';
import { databaseFor, deploymentIdentity } from './apply-plan.js';
import { defaultJournalPath, openJournal, readJournal, sameDeployment, type JournalChange, type JournalWriter } from './journal.js';
import { runUnits } from './unit-scheduler.js';

export interface UndoOptions {
  readonly dryRun: boolean;
  /** Accept a journal whose last line a killed run left incomplete (that entry never committed). */
  readonly allowTruncatedTail: boolean;
  readonly journalDir: string;
  readonly undoJournalPath: string | undefined;
  readonly onJournal?: (path: string) => void;
  /** Aborted on Ctrl-C or SIGTERM: no change is restored after it (those in flight finish). */
  readonly signal?: AbortSignal;
  /** Units undone at the same time ([nova_reconcile] apply_concurrency, as the apply); default 1. */
  readonly concurrency?: number;
}

export type UndoItem =
  | { readonly seq: number; readonly unit: string; readonly status: 'restored' | 'would-restore' | 'already-restored' }
  | { readonly seq: number; readonly unit: string; readonly status: 'refused'; readonly reason: string };

export interface UndoResult {
  readonly journal: string;
  readonly command: string;
  readonly dryRun: boolean;
  /** Newest change first. */
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
  return journal;
}

export async function undoJournal(deployment: Deployment, path: string, options: UndoOptions): Promise<UndoResult> {
  const journal = await readJournalFor(deployment, path, options.allowTruncatedTail === true);
  const here = await deploymentIdentity(deployment);
  const items: UndoItem[] = [];
  const schedule = scheduleUndo(journal.changes);
  const total = journal.changes.length;
  const earlier = earlierImages(journal.changes);
  let writer: JournalWriter | undefined;
  /** The undo journal's own sequence: in the order its changes were written. */
  let undoSeq = 0;
  // The cell mappings are read first: once the API database's simulation
  // holds its only SQLite connection, a read beside it would wait for ever.
  const mappings = await deployment.cellMappings();
  const dbFor = async (target: DbRef): Promise<Database> => {
    if (target.db !== 'cell') return databaseFor(deployment, target);
    const mapping = mappings.find((m) => m.uuid === target.cellUuid);
    return mapping === undefined ? databaseFor(deployment, target) : deployment.cell(mapping);
  };
  const stopped = (): boolean => options.signal?.aborted === true && !options.dryRun;
  /** Set when a change failed (not a refusal): the units in flight start no further change. */
  let failed = false;

  /** A refusal of this change, or undefined when the error is not one (it is thrown). */
  const refusal = (err: unknown, db: Database): string | undefined => {
    if (err instanceof CasConflict) return err.message;
    // No retry can fix it: the row's key is taken (or its parent gone) since the run.
    if (isConstraintError(err)) return `the ${db.label} refuses the restored rows: ${describeDriverError(err)} (taken or removed since the journaled run; restore it by hand if it is still wanted)`;
    return undefined;
  };
  const failure = (err: unknown, db: Database): unknown =>
    err instanceof ReconcileError ? err : new ReconcileError('connection', `undo failed ${options.dryRun ? 'reading' : 'writing to'} the ${db.label}: ${describeDriverError(err)}`, { cause: err });

  /** One change in its own transaction, journaled (fsynced) before it commits. */
  const restoreOne = async (entry: JournalChange): Promise<void> => {
    const db = await dbFor(entry.target);
    const previous = (img: RowImage): ReadonlyArray<Row | null> => earlier(entry, img);
    try {
      const outcome = await retryDeadlocks(async () => {
        let result: RestoreOutcome = 'already-restored';
        let seq: number | undefined;
        await db.knex.transaction(async (trx) => {
          seq = undefined;
          result = await restoreRows(trx, db.dialect, entry.rows, previous);
          if (result === 'restored') {
            writer ??= openUndoJournal(options, journal.header.command, here);
            undoSeq += 1;
            seq = undoSeq;
            await writer.appendDurably({ ...entry, type: 'change', seq, rows: swapped(entry) });
          }
        });
        if (seq !== undefined) writer?.append({ type: 'commit', seq });
        return result;
      });
      items.push({ seq: entry.seq, unit: entry.unit, status: outcome });
    } catch (err) {
      const reason = refusal(err, db);
      if (reason === undefined) {
        failed = true;
        throw failure(err, db);
      }
      items.push({ seq: entry.seq, unit: entry.unit, status: 'refused', reason });
    }
  };

  const simulations = new Map<string, { db: Database; trx: Knex.Transaction }>();
  /** The same change simulated in a savepoint of its database's rolled-back transaction. */
  const simulateOne = async (entry: JournalChange): Promise<void> => {
    const db = await dbFor(entry.target);
    const previous = (img: RowImage): ReadonlyArray<Row | null> => earlier(entry, img);
    try {
      const key = describeTarget(entry.target);
      let sim = simulations.get(key);
      if (sim === undefined) {
        sim = { db, trx: await db.knex.transaction() };
        simulations.set(key, sim);
      }
      // A savepoint: a refused change leaves the simulation as it was.
      const outcome = await sim.trx.transaction((sp) => restoreRows(sp, db.dialect, entry.rows, previous));
      items.push({ seq: entry.seq, unit: entry.unit, status: outcome === 'restored' ? 'would-restore' : outcome });
    } catch (err) {
      const reason = refusal(err, db);
      if (reason === undefined) throw failure(err, db);
      items.push({ seq: entry.seq, unit: entry.unit, status: 'refused', reason });
    }
  };

  try {
    if (options.dryRun) {
      for (const group of schedule.groups) for (const entry of group.changes) await simulateOne(entry);
    } else {
      await runUnits(
        schedule.groups,
        schedule.sequential ? 1 : (options.concurrency ?? 1),
        async (group) => {
          for (const entry of group.changes) {
            if (stopped() || failed) return;
            await restoreOne(entry);
          }
        },
        undefined,
        stopped,
      );
    }
  } finally {
    writer?.close();
    for (const { trx } of simulations.values()) await trx.rollback().catch(() => undefined);
  }
  items.sort((a, b) => b.seq - a.seq);
  const interrupted = stopped() && items.length < total ? { reason: String(options.signal?.reason), notStarted: total - items.length } : undefined;
  return { journal: path, command: journal.header.command, dryRun: options.dryRun, items, undoJournalPath: writer?.path, ...(interrupted === undefined ? {} : { interrupted }) };

  function openUndoJournal(opts: UndoOptions, command: string, identity: Awaited<ReturnType<typeof deploymentIdentity>>): JournalWriter {
    const p = opts.undoJournalPath ?? defaultJournalPath(opts.journalDir, `undo ${command}`, new Date());
    const w = openJournal(p, { type: 'header', format: 'nova-reconcile-journal/1', command: `undo ${command}`, startedAt: utcNowString(), deployment: identity });
    opts.onJournal?.(w.path);
    return w;
  }
}

/** The changes of one journaled unit, newest first, and the keys it shares with others (see the file header). */
export interface UndoGroup {
  readonly unit: string;
  readonly changes: readonly JournalChange[];
  readonly footprint: readonly string[];
}

export interface UndoSchedule {
  /** In the order the scheduler starts them: the unit whose last change is newest first. */
  readonly groups: readonly UndoGroup[];
  /** True when the journal interleaves units on a shared key: then everything is undone one change at a time, newest first. */
  readonly sequential: boolean;
}

/**
 * Group a journal's changes by unit and check that no key is interleaved
 * between units (file header, point 1). When one is, a single group holds
 * every change newest first and `sequential` is set.
 */
export function scheduleUndo(changes: readonly JournalChange[]): UndoSchedule {
  const byUnit = new Map<string, JournalChange[]>();
  for (const entry of changes) {
    const list = byUnit.get(entry.unit);
    if (list === undefined) byUnit.set(entry.unit, [entry]);
    else list.push(entry);
  }
  const keysOf = new Map<JournalChange, readonly string[]>();
  const groups: UndoGroup[] = [];
  /** Per unit: its newest change's seq (its place in the undo order). */
  const last = new Map<string, number>();
  for (const [unit, list] of byUnit) {
    list.sort((a, b) => b.seq - a.seq);
    const footprint = new Set<string>();
    for (const entry of list) {
      const keys = changeFootprint(entry);
      keysOf.set(entry, keys);
      for (const k of keys) footprint.add(k);
    }
    last.set(unit, list[0]?.seq ?? 0);
    groups.push({ unit, changes: list, footprint: [...footprint] });
  }
  groups.sort((a, b) => (last.get(b.unit) ?? 0) - (last.get(a.unit) ?? 0));
  // For each key, walking its changes oldest first, the units must come in
  // the order of their newest change: a unit never reappears after another
  // took the key, and a unit that took it later is undone earlier.
  const seen = new Map<string, number>();
  const ascending = [...changes].sort((a, b) => a.seq - b.seq);
  let interleaved = false;
  for (const entry of ascending) {
    const rank = last.get(entry.unit) ?? 0;
    for (const k of keysOf.get(entry) ?? []) {
      const before = seen.get(k);
      if (before !== undefined && before > rank) interleaved = true;
      seen.set(k, rank);
    }
  }
  if (!interleaved) return { groups, sequential: false };
  const all = [...changes].sort((a, b) => b.seq - a.seq);
  return { groups: [{ unit: '*', changes: all, footprint: [] }], sequential: true };
}

/** The keys of one journaled change: its rows, and the apply scheduler's keys of the change itself. */
function changeFootprint(entry: JournalChange): string[] {
  const keys = entry.rows.map((img) => rowKey(entry, img));
  try {
    keys.push(...footprintOfChanges([{ change: entry.change, reason: '' }], () => []));
  } catch {
    // A change kind this version does not know (a newer journal): its rows still order it.
  }
  return keys;
}

function rowKey(entry: JournalChange, img: RowImage): string {
  return `${describeTarget(entry.target)}|${img.table}|${JSON.stringify(img.key)}`;
}

/** For a change and one of its rows: the before-images of that row in the journal's earlier changes. */
function earlierImages(changes: readonly JournalChange[]): (entry: JournalChange, img: RowImage) => ReadonlyArray<Row | null> {
  const byRow = new Map<string, Array<{ seq: number; before: Row | null }>>();
  for (const entry of changes) {
    for (const img of entry.rows) {
      const k = rowKey(entry, img);
      const list = byRow.get(k);
      if (list === undefined) byRow.set(k, [{ seq: entry.seq, before: img.before }]);
      else list.push({ seq: entry.seq, before: img.before });
    }
  }
  return (entry, img) => (byRow.get(rowKey(entry, img)) ?? []).filter((x) => x.seq < entry.seq).map((x) => x.before);
}

function swapped(entry: JournalChange): JournalChange['rows'] {
  return [...entry.rows].reverse().map((r) => ({ table: r.table, key: r.key, before: r.after, after: r.before }));
}
