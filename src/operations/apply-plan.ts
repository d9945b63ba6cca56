// Apply a plan under the session lock: unit by unit, each change a
// compare-and-swap in its own database, journaled before its transaction
// commits; consecutive units of one shape in batches that share their
// transactions (apply-batches.ts), a batch that meets a conflict re-run unit
// by unit. A change whose rows moved since planning stops its unit, which is
// reported as skipped; nothing is ever overwritten. Units are ordered by the
// planners so that a crash between two databases leaves a state the next run
// finishes (placement released before the compute node row goes away).
import type { Knex } from 'knex';
import { writerOf, type Database } from '../db/connect.js';
import type { Deployment } from '../db/deployment-databases.js';
import { changeAlreadyDone } from '../db/already-done.js';
import { applyChange, applyChanges } from '../db/apply-change.js';
import { guardCellChanges, takeCellWriteLock } from '../db/cell/ownership.js';
import { DEADLOCK_ATTEMPTS, deadlockPause, describeDriverError, isConnectionLostError, isDeadlockError } from '../db/driver-errors.js';
import { withSessionLock } from '../db/locks.js';
import { CasConflict } from '../db/row-images.js';
import { utcNowString } from '../db/time.js';
import type { Change, DbRef, Plan, Refusal, Unit } from '../domain/plan.js';
import { failedAfterChanges, ReconcileError } from '../errors.js';
import { journalHeader, defaultJournalPath, openJournal, type DeploymentIdentity, type JournalWriter } from './journal.js';
import { batchUnits, heldSegment, type Batch, type CellChange, type UnitShape } from './apply-batches.js';
import { readDeploymentIdentity } from './deployment-identity.js';
import { contention, writeJournaled, writeJournaledGroup, WriteFailed, type JournaledEntry } from './journaled-write.js';
import { runUnits } from './unit-scheduler.js';

export const APPLY_LOCK = 'nova-reconcile-apply';

export interface ApplyOptions {
  readonly journalPath: string | undefined;
  readonly journalDir: string;
  /** Called once the journal exists, so its path reaches stderr before any write. */
  readonly onJournal?: (path: string) => void;
  readonly onProgress?: (progress: ApplyProgress) => void;
  /**
   * Units applied at the same time ([nova_reconcile] apply_concurrency);
   * only units whose footprints are disjoint overlap (unit-scheduler.ts).
   * Default 1.
   */
  readonly concurrency?: number;
  /**
   * At most this many units written in one transaction per database
   * ([nova_reconcile] apply_batch_units; apply-batches.ts). Default 64;
   * 1 writes each change in its own.
   */
  readonly batchUnits?: number;
  /**
   * Aborted on Ctrl-C or SIGTERM: no unit starts after it, the units in
   * flight finish (or roll back) as usual, and the result says so.
   */
  readonly signal?: AbortSignal;
}

export interface ApplyProgress {
  readonly done: number;
  readonly total: number;
  readonly applied: number;
  readonly alreadyDone: number;
  readonly skipped: number;
}

export type UnitOutcome =
  | { readonly unit: Unit; readonly status: 'applied' }
  /** Its target state already held (another run, nova or an operator got there first); this run wrote nothing for it. */
  | { readonly unit: Unit; readonly status: 'already-done' }
  | { readonly unit: Unit; readonly status: 'skipped'; readonly reason: string; readonly changesApplied: number };

export interface ApplyResult {
  readonly journalPath: string | undefined;
  readonly outcomes: readonly UnitOutcome[];
  readonly refused: readonly Refusal[];
  /** Set when the signal stopped the run: its reason (e.g. 'SIGINT'), and how many units were never started. */
  readonly interrupted?: { readonly reason: string; readonly notStarted: number };
}

/**
 * Hold the apply lock around planning and applying, so a second run waits
 * for the first and then plans from what the first left (nothing twice).
 */
export async function withApplyLock<T>(deployment: Deployment, lockTimeout: number, fn: () => Promise<T>): Promise<T> {
  // A database at an alembic head this build does not know is not written (unless --allow-unknown-schema).
  await deployment.assertWritable();
  return withSessionLock(await deployment.api(), APPLY_LOCK, lockTimeout, fn, { lockDatabase: deployment.config.reconcile.lockDatabase });
}

/** Apply a plan; the caller holds the apply lock (withApplyLock). */
export async function applyPlan(deployment: Deployment, plan: Plan, options: ApplyOptions): Promise<ApplyResult> {
  if (plan.units.length === 0) return { journalPath: undefined, outcomes: [], refused: plan.refused };
  const identity = await deploymentIdentity(deployment);
  const path = options.journalPath ?? defaultJournalPath(options.journalDir, plan.command, new Date());
  const journal = openJournal(path, journalHeader(plan.command, identity));
  options.onJournal?.(journal.path);
  const run: ApplyRun = { deployment, journal, committed: 0 };
  const outcomes: UnitOutcome[] = [];
  let done = 0;
  const tally = { applied: 0, 'already-done': 0, skipped: 0 };
  const record = (index: number, outcome: UnitOutcome): void => {
    outcomes[index] = outcome;
    done += 1;
    tally[outcome.status] += 1;
    options.onProgress?.({ done, total: plan.units.length, applied: tally.applied, alreadyDone: tally['already-done'], skipped: tally.skipped });
  };

  try {
    await runUnits(
      batchUnits(plan.units, options.batchUnits),
      options.concurrency ?? 1,
      async (batch: Batch) => {
        const together = batch.shapes === undefined ? undefined : await applyBatch(run, batch.units, batch.shapes);
        if (together !== undefined) {
          together.forEach((outcome, k) => record(batch.start + k, outcome));
          return;
        }
        // One by one: a unit alone, or a batch that was rolled back. An interrupt starts no more of them.
        for (const [k, unit] of batch.units.entries()) {
          if (k > 0 && options.signal?.aborted === true) return;
          record(batch.start + k, await applyUnit(run, unit));
        }
      },
      // When units in flight fail together (a server gone), a change whose
      // COMMIT was cut is the one to report: its outcome is unknown.
      (errors) => errors.find(outcomeUnknown) ?? errors[0],
      () => options.signal?.aborted === true,
    );
  } catch (err) {
    throw failedAfterChanges(err, run.committed > 0 || outcomeUnknown(err));
  } finally {
    journal.close();
  }
  // Units never started leave holes; the outcomes are those of the units that ran, in plan order.
  const ran = outcomes.filter((o): o is UnitOutcome => o !== undefined);
  if (options.signal?.aborted === true && ran.length < plan.units.length) {
    return { journalPath: journal.path, outcomes: ran, refused: plan.refused, interrupted: { reason: String(options.signal.reason), notStarted: plan.units.length - ran.length } };
  }
  return { journalPath: journal.path, outcomes: ran, refused: plan.refused };
}

/** What every write of one apply shares. */
interface ApplyRun {
  readonly deployment: Deployment;
  readonly journal: JournalWriter;
  /** Changes committed so far: an error after one says so (the error document's `changed`). */
  committed: number;
}

/** One change in its own compare-and-swap transaction, journaled before it commits. */
async function applyOwn(run: ApplyRun, unit: Unit, change: Change): Promise<void> {
  const db = await databaseFor(run.deployment, change.target);
  try {
    await writeJournaled(db, () => run.journal, async (trx) => ({
      value: undefined,
      entry: { unit: unit.id, target: change.target, change, rows: await applyChange(trx, db.dialect, change, utcNowString()) },
    }));
  } catch (err) {
    if (err instanceof WriteFailed) throw wrapApplyError(err.cause, db, `"${unit.title}"`, err.committing);
    throw err;
  }
  run.committed += 1;
}

async function isAlreadyDone(deployment: Deployment, change: Change): Promise<boolean> {
  return changeAlreadyDone((await databaseFor(deployment, change.target)).knex, change);
}

/** One unit, change by change, its held cell changes (if any) in the transaction that locked and checked them first. */
async function applyUnit(run: ApplyRun, unit: Unit): Promise<UnitOutcome> {
  const { deployment } = run;
  const changes = unit.changes.map((pc) => pc.change);
  const segment = heldSegment(changes);
  let held: HeldCell | undefined;
  let applied = 0;
  let alreadyDone = 0;
  try {
    if (segment !== undefined) {
      // Ownership before placement: lock and check the cell rows first.
      try {
        held = await openHeldCell(deployment, [segment.changes]);
      } catch (err) {
        if (!(err instanceof CasConflict)) throw err;
        // Someone else may have finished this very unit (another run through another node).
        for (const change of changes) if (!(await isAlreadyDone(deployment, change))) {
          return { unit, status: 'skipped', reason: `${err.message}; nothing was changed`, changesApplied: 0 };
        }
        return { unit, status: 'already-done' };
      }
    }
    for (let i = 0; i < changes.length; i++) {
      const change = changes[i] as Change;
      if (segment !== undefined && held !== undefined && i === segment.start) {
        const result = await applyHeld(run, unit, segment, held);
        held = undefined;
        if (result !== undefined) return { unit, status: 'skipped', reason: result.message, changesApplied: applied };
        applied += segment.changes.length;
        i = segment.start + segment.changes.length - 1;
        continue;
      }
      try {
        await applyOwn(run, unit, change);
        applied += 1;
      } catch (err) {
        if (!(err instanceof CasConflict)) throw err;
        // A compare-and-swap missed: already done when the change's target state holds, else the unit stops.
        if (!(await isAlreadyDone(deployment, change))) return { unit, status: 'skipped', reason: err.message, changesApplied: applied };
        alreadyDone += 1;
      }
    }
  } finally {
    if (held !== undefined) await held.trx.rollback().catch(() => undefined);
  }
  if (applied === 0 && alreadyDone > 0) return { unit, status: 'already-done' };
  return { unit, status: 'applied' };
}

/**
 * The unit's held cell changes, written in the held transaction, then
 * committed (commitGroup). A deadlock victim is re-run from a new guard
 * (its placement changes are already committed). Returns the conflict
 * that stopped it.
 */
async function applyHeld(run: ApplyRun, unit: Unit, segment: HeldSegment, first: HeldCell | undefined): Promise<CasConflict | undefined> {
  let held: HeldCell | undefined = first;
  for (let attempt = 1; ; attempt += 1) {
    try {
      held ??= await openHeldCell(run.deployment, [segment.changes]);
    } catch (err) {
      if (err instanceof CasConflict) return err;
      throw err;
    }
    const { db, trx } = held;
    held = undefined;
    const outcome = await commitGroup(run, db, trx, [{ unit, changes: segment.changes }]);
    if (outcome.committed) return undefined;
    const err = outcome.rolledBack;
    if (err instanceof CasConflict) return err;
    // A deadlock victim or a certification failure (commitGroup throws anything else).
    if (attempt < DEADLOCK_ATTEMPTS) {
      await deadlockPause(attempt);
      continue;
    }
    return contention(db, err);
  }
}

/**
 * Write `items` (each a unit and some of its changes) in one transaction
 * of `db` (`given`, or a new one), journaled with one fsync before it
 * commits (writeJournaledGroup). Not committed when it was certainly
 * rolled back (a conflict, a deadlock victim, a certification failure):
 * nothing of it happened, and `rolledBack` says why. Anything else throws
 * as a change written on its own does.
 */
async function commitGroup(
  run: ApplyRun,
  db: Database,
  given: Knex.Transaction | undefined,
  items: ReadonlyArray<{ readonly unit: Unit; readonly changes: readonly Change[] }>,
): Promise<{ readonly committed: true } | { readonly committed: false; readonly rolledBack: unknown }> {
  let outcome: Awaited<ReturnType<typeof writeJournaledGroup>>;
  try {
    outcome = await writeJournaledGroup(db, () => run.journal, given, async (trx) => {
      const flat = items.flatMap(({ unit, changes }) => changes.map((change) => ({ unit: unit.id, change })));
      // Journaled in the order written: undo restores in exactly the reverse.
      const written = await applyChanges(trx, db.dialect, flat, utcNowString());
      return written.map(({ index, rows }): JournaledEntry => {
        const { unit, change } = flat[index] as (typeof flat)[number];
        return { unit, target: change.target, change, rows };
      });
    });
  } catch (err) {
    if (!(err instanceof WriteFailed)) throw err;
    const first = items[0]?.unit.title ?? '';
    throw wrapApplyError(err.cause, db, items.length === 1 ? `"${first}"` : `a batch of ${items.length} units ("${first}" first)`, err.committing);
  }
  if ('rolledBack' in outcome) return { committed: false, rolledBack: outcome.rolledBack };
  run.committed += outcome.seqs.length;
  return { committed: true };
}

/**
 * A batch of units of one shape (apply-batches.ts): the held cell rows of
 * every unit locked and checked, every unit's first changes in one
 * transaction, then every unit's held changes in the held one. Undefined
 * when it was rolled back before anything of it committed: the caller then
 * applies its units one by one. When only the held changes were rolled
 * back, each unit's are re-run on their own (applyHeld).
 */
async function applyBatch(run: ApplyRun, units: readonly Unit[], shapes: readonly UnitShape[]): Promise<UnitOutcome[] | undefined> {
  const shape = shapes[0] as UnitShape;
  const firstDb = await databaseFor(run.deployment, shape.first);
  const heldChanges = shapes.map((sh) => sh.held?.changes ?? []);
  let held: HeldCell | undefined;
  try {
    if (shape.held !== undefined) {
      held = await tryOpenHeldCell(run.deployment, heldChanges);
      if (held === undefined) return undefined;
    }
    const firsts = units.map((unit, k) => ({ unit, changes: unit.changes.slice(0, (shapes[k] as UnitShape).firstCount).map((pc) => pc.change) }));
    if (!(await commitGroup(run, firstDb, undefined, firsts)).committed) return undefined;
    if (held === undefined) return units.map((unit) => ({ unit, status: 'applied' }));
    const h = held;
    held = undefined;
    if ((await commitGroup(run, h.db, h.trx, units.map((unit, k) => ({ unit, changes: heldChanges[k] as Change[] })))).committed) return units.map((unit) => ({ unit, status: 'applied' }));
    // The first changes are committed: each unit's held changes again, from a guard of its own.
    const outcomes: UnitOutcome[] = [];
    for (const [k, unit] of units.entries()) {
      const sh = shapes[k] as UnitShape;
      const conflict = await applyHeld(run, unit, sh.held as HeldSegment, undefined);
      outcomes.push(conflict === undefined ? { unit, status: 'applied' } : { unit, status: 'skipped', reason: conflict.message, changesApplied: sh.firstCount });
    }
    return outcomes;
  } finally {
    if (held !== undefined) await held.trx.rollback().catch(() => undefined);
  }
}

/**
 * The cell changes of a unit that come after a write elsewhere (placement;
 * apply-batches.ts heldSegment). Their rows are locked and checked before
 * the unit's first write, in a transaction held open until they are written
 * in it (ownership before placement). A unit without one
 * (only cell changes, only placement changes, or cell changes first) has no
 * held transaction; the crash-safety order of the changes is the plan's
 * either way.
 */
type HeldSegment = NonNullable<UnitShape['held']>;

interface HeldCell {
  readonly db: Database;
  readonly trx: Knex.Transaction;
}

/**
 * Open the cell transaction and guard the held changes' rows (each list one
 * unit's); a deadlock victim is re-run. Throws CasConflict when ownership
 * changed (Contention when every attempt lost).
 */
async function openHeldCell(deployment: Deployment, units: ReadonlyArray<readonly CellChange[]>): Promise<HeldCell> {
  const first = units.find((c) => c.length > 0)?.[0];
  if (first === undefined) throw new Error('openHeldCell needs a change');
  const db = await databaseFor(deployment, first.target);
  for (let attempt = 1; ; attempt += 1) {
    const trx = await writerOf(db).transaction();
    try {
      await takeCellWriteLock(trx, db.dialect);
      await guardCellChanges(trx, db.dialect, units);
      return { db, trx };
    } catch (err) {
      await trx.rollback().catch(() => undefined);
      if (isDeadlockError(err)) {
        if (attempt < DEADLOCK_ATTEMPTS) {
          await deadlockPause(attempt);
          continue;
        }
        throw contention(db, err);
      }
      if (err instanceof CasConflict) throw err;
      throw new ReconcileError('connection', `failed locking rows in the ${db.label}: ${describeDriverError(err)}; nothing was changed`, {
        hint: 'the journal lists what was committed before; re-run the command to finish the plan',
        cause: err,
      });
    }
  }
}

/** openHeldCell for a batch: undefined when a row it owns changed or every attempt lost (its units are then applied one by one). */
async function tryOpenHeldCell(deployment: Deployment, units: ReadonlyArray<readonly CellChange[]>): Promise<HeldCell | undefined> {
  try {
    return await openHeldCell(deployment, units);
  } catch (err) {
    if (err instanceof CasConflict) return undefined;
    throw err;
  }
}



export async function databaseFor(deployment: Deployment, target: DbRef): Promise<Database> {
  switch (target.db) {
    case 'api':
      return deployment.api();
    case 'placement':
      return deployment.placement();
    case 'cell': {
      // Read once per run: a cell's handle is kept by uuid for the run anyway,
      // and every change's rows are still guarded by its compare-and-swap.
      const mapping = (await deployment.cellMappingsOnce()).find((m) => m.uuid === target.cellUuid);
      if (mapping === undefined) throw new ReconcileError('not-found', `cell ${target.cellUuid} is not in cell_mappings`);
      return deployment.cell(mapping);
    }
  }
}

/** What the journal is bound to (deployment-identity.ts): not the address the API database was reached through. */
export async function deploymentIdentity(deployment: Deployment): Promise<DeploymentIdentity> {
  return readDeploymentIdentity(deployment);
}

/**
 * A change whose COMMIT was cut (wrapApplyError): it may have committed, so
 * the error says the run changed something.
 */
function outcomeUnknown(err: unknown): boolean {
  return err instanceof ReconcileError && err.changed === true;
}

/**
 * @param subject the unit ("its title"), or the batch, the change was of
 * @param committing the error came from COMMIT: the server may have committed
 *   the change before the connection went, so "rolled back" would be a guess.
 */
function wrapApplyError(err: unknown, db: Database, subject: string, committing: boolean): ReconcileError {
  if (err instanceof ReconcileError) return err;
  const what = isConnectionLostError(err) ? 'lost the connection to' : 'failed writing to';
  if (committing) {
    const unknown = new ReconcileError('connection', `${what} the ${db.label} while committing a change of ${subject}: ${describeDriverError(err)}; whether that change committed is unknown`, {
      hint: 'its row images are in the journal: re-run the command to finish the plan from what the databases hold, or undo the journal',
      cause: err,
      changed: true,
    });
    return unknown;
  }
  return new ReconcileError('connection', `${what} the ${db.label} while applying ${subject}: ${describeDriverError(err)}; that change was rolled back`, {
    hint: 'the journal lists what was committed before; re-run the command to finish the plan',
    cause: err,
  });
}
