// A plan command's outcome (operations/run-plan.ts) as text, listing or JSON,
// and its exit code: a dry run exits 3 (0 when empty), a blocked apply 3, an
// apply by applyExitCode, an interrupted one by its signal.
import { LIMIT_OVERRIDE, type LimitTrip } from '../domain/plan-limits.js';
import type { StaleUnit } from '../domain/plan-review.js';
import { isEmptyPlan, type Plan } from '../domain/plan.js';
import type { ApplyResult, UnitOutcome } from '../operations/apply-plan.js';
import type { Gate, RunPlanOutcome } from '../operations/run-plan.js';
import { paletteFor } from './colour.js';
import { RECONCILE_EXIT, applyExitCode } from './exit-codes.js';
import type { RunContext } from './context.js';
import { signalExitCode } from './context.js';
import { renderJson } from './json-contract.js';
import { renderListing, selectColumns } from './listing.js';
import type { PlanOutcomeResult } from './results.js';
import { applyJson, planJson, planListing, renderApplyText, renderPlanText } from './render-plan.js';

type Writer = Pick<RunContext, 'stdout' | 'stderr' | 'env' | 'stdoutIsTty' | 'stdoutColumns'>;

export function writePlanOutcome(ctx: Writer, r: PlanOutcomeResult): number {
  const { outcome } = r;
  if (outcome.kind === 'dry-run') return writeDryRun(ctx, r, outcome);
  if (outcome.kind === 'blocked') return writeBlocked(ctx, r, outcome);
  return writeApplied(ctx, r, outcome);
}

function writeDryRun(ctx: Writer, r: PlanOutcomeResult, { plan, deferred, gate, cellName }: Extract<RunPlanOutcome, { kind: 'dry-run' }>): number {
  const { format, columns } = r;
  const palette = paletteFor(ctx);
  const verdict = dryRunVerdict(plan, gate, r.allOrNothing);
  if (format === 'json')
    ctx.stdout.write(renderJson({
      ...planJson(plan, cellName),
      dry_run: true,
      changed: false,
      // What --apply would do now: false when the plan is empty, every item is refused, or the circuit breaker would stop it.
      would_change: verdict.applicable,
      deferred_units: deferred,
      applicable: verdict.applicable,
      breaker: gate.trips.map(tripJson),
      ...(r.planOut === undefined ? {} : { plan_file: r.planOut }),
      ...r.extras,
    }));
  else if (format === 'value' || format === 'csv' || columns !== undefined)
    ctx.stdout.write(renderListing(selectColumns(planListing(plan, cellName), columns), format === 'value' || format === 'csv' ? format : 'table', ctx, (column, text) => (column === 'action' ? palette.verb(text) : text)));
  else
    ctx.stdout.write(
      renderPlanText(plan, cellName, palette) + deferredLine(deferred, r.maxCount) + (isEmptyPlan(plan) ? '' : `\n${verdict.text}`) + (r.planOut === undefined ? '' : `plan written to ${r.planOut}\n`) + r.followUp,
    );
  return isEmptyPlan(plan) ? RECONCILE_EXIT.clean : RECONCILE_EXIT.findings;
}

function writeBlocked(ctx: Writer, r: PlanOutcomeResult, { plan: full, stale, gate, cellName }: Extract<RunPlanOutcome, { kind: 'blocked' }>): number {
  const { trips, blocked } = gate;
  // A trip is one line on stderr, for cron's log.
  if (trips.length > 0) ctx.stderr.write(`nova-reconcile: circuit breaker tripped: ${trips.map((t) => t.message).join('; ')}; nothing was applied (override: ${LIMIT_OVERRIDE})\n`);
  if (r.format === 'json') ctx.stdout.write(renderJson({ ...planJson(full, cellName), dry_run: false, changed: false, applied: [], skipped: stale.map(staleJson), breaker: trips.map(tripJson), journal: null, ...r.extras }));
  else ctx.stdout.write(renderPlanText(full, cellName, paletteFor(ctx)) + `\n${notApplied(trips, blocked)}` + staleText(stale));
  return RECONCILE_EXIT.findings;
}

function writeApplied(ctx: Writer, r: PlanOutcomeResult, { plan, deferred, stale, applied, result, cellName }: Extract<RunPlanOutcome, { kind: 'applied' }>): number {
  const palette = paletteFor(ctx);
  const nothing = isEmptyPlan(plan) && stale.length === 0;
  if (plan.units.length > 0) ctx.stderr.write(`${doneLine(result, plan.units.length)}\n`);
  // An interrupted apply's summary says it in its own words.
  if (r.undo !== undefined && applied.interrupted === undefined) ctx.stderr.write(`undo: ${r.undo}\n`);
  if (r.format === 'json') ctx.stdout.write(renderJson({ ...applyJson({ ...plan, units: result.outcomes.map((u) => u.unit) }, result, cellName), undo_command: r.undo ?? null, deferred_units: deferred, breaker: [], ...r.extras }));
  else ctx.stdout.write((nothing ? renderPlanText(plan, cellName, palette) : renderApplyText(result, cellName, palette)) + deferredLine(deferred, r.maxCount) + (nothing ? '' : r.followUp));
  if (applied.interrupted !== undefined) {
    ctx.stderr.write(r.interruptSummary ?? '');
    return signalExitCode(applied.interrupted.reason);
  }
  const code = applyExitCode(result);
  if (r.appliedNote !== undefined && (code === RECONCILE_EXIT.applied || code === RECONCILE_EXIT.partial)) ctx.stderr.write(r.appliedNote + '\n');
  return code;
}

function deferredLine(deferred: number, maxCount: number | undefined): string {
  return deferred === 0 ? '' : `${deferred} more unit(s) left for a later run (--max-count ${String(maxCount)}).\n`;
}

/** The apply's last count, always on stderr (cron's log keeps it). */
function doneLine(result: ApplyResult, total: number): string {
  const count = (status: UnitOutcome['status']): number => result.outcomes.filter((u) => u.status === status).length;
  return `done ${result.outcomes.length}/${total} unit(s): ${count('applied')} applied, ${count('already-done')} already done, ${count('skipped')} skipped`;
}

function dryRunVerdict(plan: Plan, { trips, blocked }: Gate, allOrNothing: boolean): { applicable: boolean; text: string } {
  if (plan.units.length === 0) return { applicable: false, text: 'Nothing was changed, and --apply would change nothing: every item is refused (the reasons are listed above).\n' };
  if (trips.length > 0 || blocked !== undefined) return { applicable: false, text: `Nothing was changed. --apply would apply nothing: ${[...trips.map((t) => t.message), ...(blocked === undefined ? [] : [blocked])].join('; ')}.${trips.length > 0 ? ` Review the plan; ${LIMIT_OVERRIDE} applies it.` : ''}\n` };
  const refusedNote = plan.refused.length > 0 && !allOrNothing ? ` The ${plan.refused.length} refused item(s) will be left alone.` : '';
  return { applicable: true, text: `Nothing was changed. Re-run with --apply to apply this plan.${refusedNote}\n` };
}

function notApplied(trips: readonly LimitTrip[], blocked: string | undefined): string {
  const lines = ['Nothing was applied:'];
  for (const t of trips) lines.push(`  - circuit breaker: ${t.message}`);
  if (trips.length > 0) lines.push(`    (review the plan; ${LIMIT_OVERRIDE} applies it, --max-apply-units / --max-apply-fraction or [nova_reconcile] change the limits)`);
  if (blocked !== undefined) lines.push(`  - ${blocked}`);
  return lines.join('\n') + '\n';
}

function staleText(stale: readonly StaleUnit[]): string {
  return stale.map((st) => `  SKIPPED: ${st.unit.title}: ${st.reason}\n`).join('');
}

function staleJson(st: StaleUnit): object {
  return { id: st.unit.id, reason: st.reason, changes_applied: 0 };
}

function tripJson(t: LimitTrip): object {
  return { limit: t.limit, max: t.max, units: t.units, objects: t.objects, ...(t.total === undefined ? {} : { total: t.total }), scope: t.scope, message: t.message, override: LIMIT_OVERRIDE };
}
