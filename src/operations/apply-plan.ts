// Apply a plan under the session lock: unit by unit, each change one
// compare-and-swap transaction in its own database, journaled before it
// commits. A change whose rows moved since planning stops its unit, which is
// reported as skipped; nothing is ever overwritten. Units are ordered by the
// planners so that a crash between two databases leaves a state the next run
// finishes (placement released before the compute node row goes away).
import type { Database } from '../db/connect.js';
import type { Deployment } from '../db/deployment.js';
import { applyChange } from '../db/apply-change.js';
import { describeDriverError, isConnectionLostError, isDeadlockError } from '../db/driver-errors.js';
import { withSessionLock } from '../db/locks.js';
import { CasConflict } from '../db/row-images.js';
import { utcNowString } from '../db/time.js';
import type { DbRef, Plan, Refusal, Unit } from '../domain/plan.js';
import { ReconcileError } from '../errors.js';
import { defaultJournalPath, openJournal, type DeploymentIdentity } from './journal.js';
import { readDeploymentIdentity } from './deployment-identity.js';
import { runUnits } from './unit-scheduler.js';

export const APPLY_LOCK = 'nova-reconcile-apply';

export interface ApplyOptions {
  readonly journalPath: string | undefined;
  readonly journalDir: string;
  /** Called once the journal exists, so its path reaches stderr before any write. */
  readonly onJournal?: (path: string) => void;
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Units applied at the same time ([nova_reconcile] apply_concurrency);
   * only units whose footprints are disjoint overlap (unit-scheduler.ts).
   * Default 1.
   */
  readonly concurrency?: number;
}

export type UnitOutcome =
  | { readonly unit: Unit; readonly status: 'applied' }
  | { readonly unit: Unit; readonly status: 'skipped'; readonly reason: string; readonly changesApplied: number };

export interface ApplyResult {
  readonly journalPath: string | undefined;
  readonly outcomes: readonly UnitOutcome[];
  readonly refused: readonly Refusal[];
}

/**
 * Hold the apply lock around planning and applying, so a second run waits
 * for the first and then plans from what the first left (nothing twice).
 */
export async function withApplyLock<T>(deployment: Deployment, lockTimeout: number, fn: () => Promise<T>): Promise<T> {
  return withSessionLock(await deployment.api(), APPLY_LOCK, lockTimeout, fn, { lockDatabase: deployment.config.reconcile.lockDatabase });
}

/** Apply a plan; the caller holds the apply lock (withApplyLock). */
export async function applyPlan(deployment: Deployment, plan: Plan, options: ApplyOptions): Promise<ApplyResult> {
  if (plan.units.length === 0) return { journalPath: undefined, outcomes: [], refused: plan.refused };
  const identity = await deploymentIdentity(deployment);
  {
    const path = options.journalPath ?? defaultJournalPath(options.journalDir, plan.command, new Date());
    const journal = openJournal(path, { type: 'header', format: 'nova-reconcile-journal/1', command: plan.command, startedAt: utcNowString(), deployment: identity });
    options.onJournal?.(journal.path);
    const outcomes: UnitOutcome[] = [];
    let seq = 0;
    let done = 0;
    const applyUnit = async (unit: Unit): Promise<UnitOutcome> => {
      let applied = 0;
      for (const { change } of unit.changes) {
        const db = await databaseFor(deployment, change.target);
        const now = utcNowString();
        seq += 1;
        const thisSeq = seq;
        // Set once the change is written and journaled: an error after it came from COMMIT itself.
        let committing = false;
        try {
          await retryDeadlocks(() =>
            db.knex.transaction(async (trx) => {
              committing = false;
              const rows = await applyChange(trx, db.dialect, change, now);
              await journal.appendDurably({ type: 'change', seq: thisSeq, unit: unit.id, target: change.target, change, rows });
              committing = true;
            }),
          );
          journal.append({ type: 'commit', seq: thisSeq });
          applied += 1;
        } catch (err) {
          if (err instanceof CasConflict) return { unit, status: 'skipped', reason: err.message, changesApplied: applied };
          throw wrapApplyError(err, db, unit, committing);
        }
      }
      return { unit, status: 'applied' };
    };
    try {
      await runUnits(
        plan.units,
        options.concurrency ?? 1,
        async (unit, index) => {
          outcomes[index] = await applyUnit(unit);
          done += 1;
          options.onProgress?.(done, plan.units.length);
        },
        // When units in flight fail together (a server gone), a change whose
        // COMMIT was cut is the one to report: its outcome is unknown.
        (errors) => errors.find((e) => e instanceof ReconcileError && unknownOutcomes.has(e)) ?? errors[0],
      );
    } finally {
      journal.close();
    }
    return { journalPath: journal.path, outcomes, refused: plan.refused };
  }
}

/** The errors of changes whose COMMIT was cut (wrapApplyError). */
const unknownOutcomes = new WeakSet<object>();

/** Deadlock victims are re-run (each attempt re-checks every row), a few times, after a short random pause. */
const DEADLOCK_ATTEMPTS = 4;

async function retryDeadlocks(run: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (err) {
      if (!isDeadlockError(err) || attempt >= DEADLOCK_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40 * attempt));
    }
  }
}

export async function databaseFor(deployment: Deployment, target: DbRef): Promise<Database> {
  switch (target.db) {
    case 'api':
      return deployment.api();
    case 'placement':
      return deployment.placement();
    case 'cell': {
      const mapping = (await deployment.cellMappings()).find((m) => m.uuid === target.cellUuid);
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
 * @param committing the error came from COMMIT: the server may have committed
 *   the change before the connection went, so "rolled back" would be a guess.
 */
function wrapApplyError(err: unknown, db: Database, unit: Unit, committing: boolean): ReconcileError {
  if (err instanceof ReconcileError) return err;
  const what = isConnectionLostError(err) ? 'lost the connection to' : 'failed writing to';
  if (committing) {
    const unknown = new ReconcileError('connection', `${what} the ${db.label} while committing a change of "${unit.title}": ${describeDriverError(err)}; whether that change committed is unknown`, {
      hint: 'its row images are in the journal: re-run the command to finish the plan from what the databases hold, or undo the journal',
      cause: err,
    });
    unknownOutcomes.add(unknown);
    return unknown;
  }
  return new ReconcileError('connection', `${what} the ${db.label} while applying "${unit.title}": ${describeDriverError(err)}; that change was rolled back`, {
    hint: 'the journal lists what was committed before; re-run the command to finish the plan',
    cause: err,
  });
}
