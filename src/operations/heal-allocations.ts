// placement heal_allocations: nova-manage's input checks (in its order, with
// its messages and exit 127), then read the cells and placement, plan
// (src/domain/heal-allocations.ts) and, unless --dry-run, write each healed
// instance's allocations directly into the placement database: one
// compare-and-swap transaction per instance, journaled before it commits
// (so `undo` restores it), in nova's order, under the apply lock. As in
// nova, the first write that cannot be made stops the run (exit 3).
import type { CellMapping, Deployment } from '../db/deployment-databases.js';
import { applyChange } from '../db/apply-change.js';
import { describeDriverError } from '../db/driver-errors.js';
import { findInstanceMapping } from '../db/api/instance-mappings.js';
import { CasConflict } from '../db/row-images.js';
import { writeJournaled, WriteFailed } from './journaled-write.js';
import { utcNowString } from '../db/time.js';
import { HEAL_EXIT, type HealEnd, type HealPlan, type HealStep } from '../domain/heal-allocations.js';
import { failedAfterChanges, ReconcileError } from '../errors.js';
import { deploymentIdentity, withApplyLock } from './apply-plan.js';
import { journalHeader, defaultJournalPath, openJournal, type JournalSettings } from './journal.js';
import { planHeal } from './read/heal.js';

export const HEAL_COMMAND = 'placement heal_allocations';

export interface HealRunOptions extends JournalSettings {
  readonly instanceUuid: string | undefined;
  readonly cellUuid: string | undefined;
  /** --max-count as given (nova parses it with int()). */
  readonly maxCount: string | undefined;
  readonly dryRun: boolean;
  readonly force: boolean;
  /** Keep nova's --verbose lines (HealOptions.messages); default true. */
  readonly messages?: boolean;
  /**
   * Ctrl-C or SIGTERM while the writes run: no instance is written after it,
   * the one in flight finishes (HealRunResult.interrupted). `holdInterrupts`
   * makes the signals graceful for the writes only (main.ts); before them a
   * signal ends the process at once, as it does any read-only run.
   */
  readonly signal?: AbortSignal;
  readonly holdInterrupts?: () => () => void;
}

export type HealStepOutcome =
  | { readonly step: Extract<HealStep, { kind: 'say' }> }
  | { readonly step: Extract<HealStep, { kind: 'heal' }>; readonly status: 'would-heal' | 'healed' }
  | { readonly step: Extract<HealStep, { kind: 'heal' }>; readonly status: 'failed'; readonly reason: string };

export interface HealRunResult {
  readonly dryRun: boolean;
  readonly steps: readonly HealStepOutcome[];
  readonly end: HealEnd;
  readonly journalPath: string | undefined;
  /** Set when a signal stopped the writes: its reason (e.g. 'SIGINT'), and how many planned instances were not written. */
  readonly interrupted?: { readonly reason: string; readonly notStarted: number };
}

/** nova's own messages for bad input: printed on stdout, exit 127 (after the verbose lines printed before the check). */
function invalid(text: string, before: readonly HealStepOutcome[] = []): HealRunResult {
  return { dryRun: false, steps: before, end: { code: HEAL_EXIT.input, text, always: true, detail: null }, journalPath: undefined };
}

export async function runHealAllocations(deployment: Deployment, options: HealRunOptions): Promise<HealRunResult> {
  if (options.instanceUuid !== undefined && options.cellUuid !== undefined) return invalid('The --cell and --instance options are mutually exclusive.');
  if (options.force && options.instanceUuid === undefined) return invalid('The --instance flag is required when using --force flag.');
  let maxCount = 50;
  let unlimited = true;
  if (options.instanceUuid !== undefined) {
    maxCount = 1;
    unlimited = false;
  } else if (options.maxCount !== undefined) {
    maxCount = pythonInt(options.maxCount) ?? -1;
    unlimited = false;
    if (maxCount < 1) return invalid('Must supply a positive integer for --max-count.');
  }
  // nova prints this before it looks the instance or the cell up.
  const prelude: HealStepOutcome[] = unlimited ? [{ step: { kind: 'say', text: `Running batches of ${maxCount} until complete` } }] : [];

  const mappings = await deployment.cellMappings();
  let cells: CellMapping[];
  if (options.instanceUuid !== undefined) {
    const im = await findInstanceMapping((await deployment.api()).knex, options.instanceUuid);
    const cell = im === undefined ? undefined : mappings.find((m) => m.id === im.cellId);
    if (cell === undefined)
      return invalid(
        `Unable to find cell for instance ${options.instanceUuid}, is it mapped? Try running "nova-manage cell_v2 verify_instance" or "nova-manage cell_v2 map_instances".`,
      );
    cells = [cell];
  } else if (options.cellUuid !== undefined) {
    const cell = mappings.find((m) => m.uuid === options.cellUuid);
    if (cell === undefined) return invalid(`Cell with uuid ${options.cellUuid} was not found.`, prelude);
    cells = [cell];
  } else {
    cells = [...mappings];
    if (cells.length === 0) return { dryRun: options.dryRun, steps: [...prelude, { step: { kind: 'say', text: 'No cells to process.' } }], end: { code: HEAL_EXIT.nothing, text: '', always: false, detail: null }, journalPath: undefined };
  }

  const plan = (): Promise<HealPlan> => planHeal(deployment, cells, { instanceUuid: options.instanceUuid, maxCount, unlimited, dryRun: options.dryRun, force: options.force, ...(options.messages === undefined ? {} : { messages: options.messages }) });
  const first = await plan();
  const heals = first.steps.filter((s) => s.kind === 'heal');
  if (options.dryRun || heals.length === 0) {
    return {
      dryRun: options.dryRun,
      steps: first.steps.map((step) => (step.kind === 'say' ? { step } : { step, status: 'would-heal' as const })),
      end: first.end,
      journalPath: undefined,
    };
  }
  // Planned again under the lock, so a second run waits and then sees what the first left.
  return withApplyLock(deployment, options.lockTimeout, async () => write(deployment, await plan(), options));
}

async function write(deployment: Deployment, plan: HealPlan, options: HealRunOptions): Promise<HealRunResult> {
  const steps: HealStepOutcome[] = [];
  if (!plan.steps.some((s) => s.kind === 'heal')) return { dryRun: false, steps: plan.steps.map((step) => (step.kind === 'say' ? { step } : { step, status: 'would-heal' as const })), end: plan.end, journalPath: undefined };
  const db = await deployment.placement();
  const path = options.journalPath ?? defaultJournalPath(options.journalDir, HEAL_COMMAND, new Date());
  const journal = openJournal(path, journalHeader(HEAL_COMMAND, await deploymentIdentity(deployment)));
  options.onJournal?.(journal.path);
  const release = options.holdInterrupts?.();
  try {
    for (const [i, step] of plan.steps.entries()) {
      if (step.kind === 'say') {
        steps.push({ step });
        continue;
      }
      if (options.signal?.aborted === true) {
        const notStarted = plan.steps.slice(i).filter((s) => s.kind === 'heal').length;
        return { dryRun: false, steps, end: plan.end, journalPath: journal.path, interrupted: { reason: String(options.signal.reason), notStarted } };
      }
      const planned = step.unit.changes[0];
      if (planned === undefined) throw new ReconcileError('internal', `instance ${step.instanceUuid} has no planned write`);
      const change = planned.change;
      try {
        await writeJournaled(db, () => journal, async (trx) => ({
          value: undefined,
          entry: { unit: step.unit.id, target: change.target, change, rows: await applyChange(trx, db.dialect, change, utcNowString()) },
        }));
        steps.push({ step, status: 'healed' });
      } catch (err) {
        if (!(err instanceof CasConflict)) {
          const committing = err instanceof WriteFailed && err.committing;
          const cause = err instanceof WriteFailed ? err.cause : err;
          const changed = committing || steps.some((o) => 'status' in o && o.status === 'healed');
          throw failedAfterChanges(new ReconcileError(
            'connection',
            `failed ${committing ? 'committing' : 'writing'} the allocations of instance ${step.instanceUuid} in the ${db.label}: ${describeDriverError(cause)}; ` +
              (committing ? 'whether that write committed is unknown' : 'that write was rolled back'),
            { hint: 'the journal lists the writes committed before; re-run the command to finish', cause },
          ), changed);
        }
        // nova's PUT refused: AllocationUpdateFailed, exit 3; the run stops here.
        steps.push({ step, status: 'failed', reason: err.message });
        return {
          dryRun: false,
          steps,
          end: { code: HEAL_EXIT.failed, text: `Failed to update allocations for consumer ${step.instanceUuid}. Error: `, always: true, detail: err.message },
          journalPath: journal.path,
        };
      }
    }
  } finally {
    journal.close();
    release?.();
  }
  return { dryRun: false, steps, end: plan.end, journalPath: journal.path };
}

/** Python's int() of a str. */
function pythonInt(text: string): number | undefined {
  const t = text.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(t)) return undefined;
  const n = Number(t.replaceAll('_', ''));
  return Number.isSafeInteger(n) ? n : undefined;
}
