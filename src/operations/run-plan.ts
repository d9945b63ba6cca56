// The one pipeline of every plan command: open the deployment → (with
// --apply: take the apply lock →) read and plan → keep the reviewed units
// (--plan-in) → check the circuit breaker and the all-or-nothing rule →
// cut to --max-count → apply. It returns what happened; the command renders
// it and maps it to an exit code (commands/shared/plan-command.ts).
import type { NovaConfig } from '../config/types.js';
import { cellNamer, type CellNamer } from '../domain/cell-names.js';
import type { LimitTrip, PlanLimits } from '../domain/plan-limits.js';
import { matchReviewed, type StaleUnit } from '../domain/plan-review.js';
import type { Plan } from '../domain/plan.js';
import { applyPlan, deploymentIdentity, withApplyLock, type ApplyProgress, type ApplyResult, type UnitOutcome } from './apply-plan.js';
import { openDeployment, type Deployment } from './open-deployment.js';
import { checkPlanFile, planFromFile, writePlanOf, type PlanFile, type PlanOptions } from './plan-file.js';
import { planLimitTrips } from './plan-limits.js';
import { findWhatChanged } from './reviewed-units.js';
import { deploymentReport, type InterruptControl, type Reporter } from './reporter.js';

export interface RunPlanOptions {
  readonly apply: boolean;
  /** --max-count: at most this many units now; the others are counted as deferred. */
  readonly maxCount: number | undefined;
  /** The circuit breaker's limits; `allow` (--allow-large-plan) skips the check. */
  readonly limits: PlanLimits & { readonly allow: boolean };
  /** Dry run: also write the plan here. */
  readonly planOut: string | undefined;
  /** With apply: apply only the units of this reviewed plan that still hold. */
  readonly planIn: { readonly path: string; readonly doc: PlanFile } | undefined;
  /** The options that shape the plan, as a plan file records them. */
  readonly planOptions: PlanOptions;
  /**
   * All or nothing (compute_node move): when any item is refused nothing is
   * applied unless the operator gave `flag`.
   */
  readonly allOrNothing?: { readonly flag: string; readonly skipRefused: boolean } | undefined;
  readonly lockTimeout: number;
  readonly journalPath: string | undefined;
  readonly journalDir: string;
  readonly concurrency: number;
  /** [nova_reconcile] apply_batch_units (apply-batches.ts). */
  readonly batchUnits?: number;
  /** Where the run reports: opening the deployment (an unknown alembic head; --debug: each database's release), the journal's path and the apply's progress line. */
  readonly reporter?: Reporter;
  /** Ctrl-C and SIGTERM, held from the start of the apply: they stop starting units instead of killing the process mid-unit. */
  readonly interrupts?: InterruptControl;
}

/** What --apply would do, or why it would not. */
export interface Gate {
  readonly trips: readonly LimitTrip[];
  /** The all-or-nothing rule's reason, when it blocks. */
  readonly blocked: string | undefined;
}

export type RunPlanOutcome = (
  /** Nothing written (but the --plan-out file). `plan` is cut to --max-count; the gate is judged on the whole plan. */
  | { readonly kind: 'dry-run'; readonly plan: Plan; readonly deferred: number; readonly gate: Gate }
  /** --apply stopped by the gate: nothing applied, no journal. `plan` is the whole plan. */
  | { readonly kind: 'blocked'; readonly plan: Plan; readonly stale: readonly StaleUnit[]; readonly gate: Gate }
  /**
   * Applied (possibly nothing). `applied` is the apply's own result; `result`
   * adds the reviewed units that no longer held, as skipped, in the reviewed order.
   */
  | { readonly kind: 'applied'; readonly plan: Plan; readonly deferred: number; readonly stale: readonly StaleUnit[]; readonly applied: ApplyResult; readonly result: ApplyResult }
) & {
  /** How the text names the deployment's cells (domain/cell-names.ts). */
  readonly cellName: CellNamer;
};

/**
 * @param buildPlan reads what it needs from the deployment and plans; with
 *   --apply it runs under the apply lock, so the plan applied is the one made
 *   from the rows as they are now.
 */
export async function runPlan(config: NovaConfig, buildPlan: (d: Deployment) => Promise<Plan>, options: RunPlanOptions): Promise<RunPlanOutcome> {
  return openDeployment(config, async (d) => {
    if (!options.apply) {
      const full = await buildPlan(d);
      const cellName = await cellNamesOf(d);
      const { plan, deferred } = limitPlan(full, options.maxCount);
      const gate = await gateOf(d, full, options, cellName);
      if (options.planOut !== undefined) await writePlanOf(options.planOut, d, plan, options.planOptions, deferred);
      return { kind: 'dry-run', plan, deferred, gate, cellName };
    }
    return withApplyLock(d, options.lockTimeout, async () => {
      const planIn = options.planIn;
      // The reviewed plan's deployment and options are checked before planning; its command once the plan names it.
      if (planIn !== undefined) checkPlanFile(planIn.path, planIn.doc, undefined, await deploymentIdentity(d), options.planOptions);
      const current = await buildPlan(d);
      const cellName = await cellNamesOf(d);
      let full = current;
      let stale: readonly StaleUnit[] = [];
      if (planIn !== undefined) {
        checkPlanFile(planIn.path, planIn.doc, current.command, await deploymentIdentity(d), options.planOptions);
        const reviewed = matchReviewed(planFromFile(planIn.doc), current, cellName);
        full = reviewed.plan;
        stale = await findWhatChanged(d, reviewed.stale);
      }
      const gate = await gateOf(d, full, options, cellName);
      // Nothing is applied: no journal, no write.
      if (gate.trips.length > 0 || gate.blocked !== undefined) return { kind: 'blocked', plan: full, stale, gate, cellName };
      const { plan, deferred } = limitPlan(full, options.maxCount);
      const applied = await applyReporting(d, plan, options);
      return { kind: 'applied', plan, deferred, stale, applied, result: withStale(applied, stale, planIn?.doc), cellName };
    });
  }, deploymentReport(options.reporter));
}

/** The apply, with its progress line and the journal's path on the reporter, and signals held while it runs. */
async function applyReporting(d: Deployment, plan: Plan, options: RunPlanOptions): Promise<ApplyResult> {
  const { reporter, interrupts } = options;
  if (reporter !== undefined && plan.units.length > 0) reporter.phase(`applying ${plan.command}`, plan.units.length);
  const release = interrupts?.hold() ?? ((): void => undefined);
  try {
    return await applyPlan(d, plan, {
      journalPath: options.journalPath,
      journalDir: options.journalDir,
      concurrency: options.concurrency,
      ...(options.batchUnits === undefined ? {} : { batchUnits: options.batchUnits }),
      ...(interrupts === undefined ? {} : { signal: interrupts.signal }),
      ...(reporter === undefined
        ? {}
        : {
            onJournal: (path: string) => reporter.warn(`journal: ${path}`),
            // Says what happened to the units so far: a skipped unit is never counted as applied.
            onProgress: (p: ApplyProgress) => reporter.update(p.done, `${p.applied} applied, ${p.alreadyDone} already done, ${p.skipped} skipped`),
          }),
    });
  } finally {
    reporter?.clear();
    release();
  }
}

/** How the plan's text names the cells: by cell_mappings as the run sees them (the apply writes through the same read). */
async function cellNamesOf(d: Deployment): Promise<CellNamer> {
  return cellNamer(await d.cellMappingsOnce());
}

async function gateOf(d: Deployment, full: Plan, options: RunPlanOptions, cellName: CellNamer): Promise<Gate> {
  const trips = options.limits.allow ? [] : await planLimitTrips(d, full, options.limits, cellName);
  return { trips, blocked: allOrNothingBlocks(full, options.allOrNothing) };
}

function allOrNothingBlocks(plan: Plan, rule: RunPlanOptions['allOrNothing']): string | undefined {
  if (rule === undefined || rule.skipRefused || plan.refused.length === 0) return undefined;
  return `${plan.refused.length} item(s) are refused, and this command applies all or nothing: fix them, or pass ${rule.flag} to apply the others`;
}

/** Reviewed units that no longer hold join the outcomes as skipped, in the reviewed order. */
function withStale(result: ApplyResult, stale: readonly StaleUnit[], reviewed: PlanFile | undefined): ApplyResult {
  if (reviewed === undefined || stale.length === 0) return result;
  const byId = new Map<string, UnitOutcome>(result.outcomes.map((u) => [u.unit.id, u]));
  for (const st of stale) byId.set(st.unit.id, { unit: st.unit, status: 'skipped', reason: st.reason, changesApplied: 0 });
  const outcomes = reviewed.units.flatMap((u) => {
    const out = byId.get(u.id);
    return out === undefined ? [] : [out];
  });
  return { ...result, outcomes };
}

/** The first maxCount units (refusals are always reported); the count of the others. */
export function limitPlan(plan: Plan, maxCount: number | undefined): { plan: Plan; deferred: number } {
  if (maxCount === undefined || plan.units.length <= maxCount) return { plan, deferred: 0 };
  return { plan: { ...plan, units: plan.units.slice(0, maxCount) }, deferred: plan.units.length - maxCount };
}
