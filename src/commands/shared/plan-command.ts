// The shared shape of every mutating reconciliation command: parse the run
// options (--apply, --plan-in/--plan-out, --max-count, the circuit breaker's
// limits) in the command's `parse` (parsePlanRun), run the pipeline (operations/run-plan.ts: plan; with --apply plan
// again under the apply lock and apply), and return its outcome, which
// cli/render-plan-outcome.ts prints and maps to an exit code.
import { reconcileExitCodes } from '../../cli/exit-codes.js';
import { PLAN_COLUMNS, applyChanged } from '../../cli/render-plan.js';
import type { PlanOutcomeResult } from '../../cli/results.js';
import type { CommandContext, CommandOptions, OptionSpec } from '../../cli/spec.js';
import { COLUMN_OPTION, LISTING_FORMAT_OPTION, columnsOption, listingFormat, type ListingFormat } from '../../cli/listing.js';
import { TABLE_WIDTH_OPTIONS } from '../../cli/table-width.js';
import { flagOption, stringOption } from '../../cli/options.js';
import { planWithConfigArguments, undoCommandLine } from '../../cli/suggestions.js';
import { checkIronicSettings } from '../../config/load-config.js';
import { parseFraction } from '../../config/option-values.js';
import type { ReconcileSettings } from '../../config/types.js';
import { LIMIT_OVERRIDE, type PlanLimits } from '../../domain/plan-limits.js';
import type { Plan } from '../../domain/plan.js';
import { ReconcileError } from '../../errors.js';
import type { ApplyResult } from '../../operations/apply-plan.js';
import type { Deployment } from '../../operations/open-deployment.js';
import { planOptionsOf, readPlanFile, type PlanFile, type PlanOptions } from '../../operations/plan-file.js';
import { runPlan, type Gate } from '../../operations/run-plan.js';
import { formatInterruptSummary } from '../../cli/suggestions.js';

/** A plan command's --dry-run: what it does without --apply anyway, accepted so that every mutating command takes it. */
export const DRY_RUN_OPTION: OptionSpec = { flags: '--dry-run', description: 'print the plan and change nothing: the default without --apply; not with --apply' };

export const APPLY_OPTIONS: readonly OptionSpec[] = [
  { flags: '--apply', description: 'apply the plan; without it the plan is printed and nothing changes' },
  DRY_RUN_OPTION,
  { flags: '--journal <file>', description: 'write the journal of applied changes here (default: a timestamped file in [nova_reconcile] journal_dir)' },
  { flags: '--plan-out <file>', description: 'dry run only: also write the plan to FILE (versioned JSON, no secrets) for review and --plan-in' },
  {
    flags: '--plan-in <file>',
    description:
      'with --apply: apply exactly the units of this reviewed plan (same command, deployment and options). A unit whose rows changed since is skipped with what changed; nothing new is added',
  },
  {
    flags: '--max-apply-units <n>',
    description: 'circuit breaker: apply nothing when the plan has more than N units (default: [nova_reconcile] max_apply_units, 1000; 0: no limit)',
  },
  {
    flags: '--max-apply-fraction <f>',
    description:
      'circuit breaker: apply nothing when the plan removes or moves more than this share (0..1) of the live compute nodes of a cell, or of the resource providers, judged above 5 of them (default: [nova_reconcile] max_apply_fraction, 0.5; 1: no limit)',
  },
  { flags: LIMIT_OVERRIDE, description: 'apply a plan over a circuit-breaker limit (after reviewing it)' },
  {
    ...LISTING_FORMAT_OPTION,
    description:
      'output format: table (the plan as text); json (one document on stdout: schemas/plan.schema.json; a dry run says would_change); without --apply also value or csv (one row per change, then one per refusal)',
  },
  { ...COLUMN_OPTION, description: `dry run only: show the plan as a table (or -f value/csv) of these columns, repeatable: ${PLAN_COLUMNS.join(', ')}` },
  ...TABLE_WIDTH_OPTIONS,
];

/** For the commands whose plans are lists of independent units (a scope option: src/cli/scope.ts). */
export { MAX_COUNT_OPTION } from '../../cli/scope.js';

export const PLAN_EXIT_CODES = reconcileExitCodes({
  0: 'nothing to do, or every unit was already done by someone else',
  3: 'nothing changed: a plan was printed (no --apply); or every unit was refused or skipped; or the plan is over a circuit-breaker limit',
  4: 'every change was applied (units another run had already done count as done)',
  5: 'partly applied: something was applied and something was not (units skipped because their rows changed since planning, or refused for safety; listed)',
  2: 'could not run: configuration, a database unreachable, another run holds the lock, or implausible ground truth (an empty or foreign --ironic-nodes list, a cell without services)',
  127: 'invalid usage or input (a --plan-in file of another command or deployment)',
  130: 'interrupted by Ctrl-C (SIGINT) during --apply: no unit started after it, the units in flight finished; the summary on stderr gives the units applied, the journal and the undo command (a second Ctrl-C stops at once)',
  143: 'stopped by SIGTERM during --apply, as for 130',
});

/** Options that say how to run, print and apply, not what to plan (a plan file records the others). */
const RUN_OPTIONS: ReadonlySet<string> = new Set(['apply', 'dryRun', 'journal', 'format', 'column', 'planOut', 'planIn', 'maxCount', 'maxApplyUnits', 'maxApplyFraction', 'allowLargePlan', 'skipRefused', 'maxWidth', 'fitWidth']);

/**
 * How to run, print and apply a plan, as given on the command line (checked
 * for their form by parsePlanRun; the defaults from nova.conf's
 * [nova_reconcile] and the --plan-in file are read by runPlanCommand).
 */
export interface PlanRunOptions {
  readonly apply: boolean;
  /** --journal: where to write the journal (default: a file in [nova_reconcile] journal_dir). */
  readonly journal: string | undefined;
  readonly format: ListingFormat;
  /** -c: the columns of a dry run's listing, checked against PLAN_COLUMNS. */
  readonly columns: readonly string[] | undefined;
  readonly planOut: string | undefined;
  /** --plan-in: the path only; the file is read by runPlanCommand. */
  readonly planIn: string | undefined;
  readonly maxCount: number | undefined;
  /** The circuit breaker's limits as given; undefined: [nova_reconcile]'s. */
  readonly maxApplyUnits: number | undefined;
  readonly maxApplyFraction: number | undefined;
  readonly allowLargePlan: boolean;
  /** --skip-refused (compute_node move's all-or-nothing rule). */
  readonly skipRefused: boolean;
  /** The plan-shaping options of the command line, as a plan file records them (everything but the run options). */
  readonly planOptions: PlanOptions;
}

/** The run options of a plan command, checked for their form before anything is read (exit 127, one line). */
export function parsePlanRun(raw: CommandOptions): PlanRunOptions {
  const format = listingFormat(raw);
  const columns = columnsOption(raw, PLAN_COLUMNS);
  const apply = flagOption(raw, 'apply');
  if (apply && flagOption(raw, 'dryRun')) throw new ReconcileError('usage', '--dry-run and --apply contradict each other: without --apply the plan is only printed (the dry run), with it the plan is applied');
  if (apply && (format === 'value' || format === 'csv' || columns !== undefined))
    throw new ReconcileError('usage', `${columns === undefined ? `-f ${format}` : '-c'} lists the rows of a dry run's plan; with --apply the result is printed as text (-f table) or json`);
  const maxCount = parseMaxCount(stringOption(raw, 'maxCount'));
  const units = stringOption(raw, 'maxApplyUnits');
  const maxApplyUnits = units === undefined ? undefined : parseCount(units, '--max-apply-units', 0);
  const fraction = stringOption(raw, 'maxApplyFraction');
  let maxApplyFraction: number | undefined;
  if (fraction !== undefined) {
    maxApplyFraction = parseFraction(fraction);
    if (maxApplyFraction === undefined) throw new ReconcileError('usage', `--max-apply-fraction must be a number between 0 and 1, got '${fraction}'`);
  }
  const planOut = stringOption(raw, 'planOut');
  const planIn = stringOption(raw, 'planIn');
  if (planOut !== undefined && apply) throw new ReconcileError('usage', '--plan-out writes the plan of a dry run: give it without --apply', { hint: 'review the file, then apply it with --plan-in FILE --apply' });
  if (planIn !== undefined && !apply) throw new ReconcileError('usage', '--plan-in applies a reviewed plan: give it with --apply');
  return {
    apply,
    journal: stringOption(raw, 'journal'),
    format,
    columns,
    planOut,
    planIn,
    maxCount,
    maxApplyUnits,
    maxApplyFraction,
    allowLargePlan: flagOption(raw, 'allowLargePlan'),
    skipRefused: flagOption(raw, 'skipRefused'),
    planOptions: planOptionsOf(raw, RUN_OPTIONS),
  };
}

export interface PlanCommandHooks {
  /**
   * All or nothing (compute_node move): when any item is refused nothing is
   * applied (exit 3) unless the operator gave `flag`.
   */
  readonly allOrNothing?: { readonly flag: string; readonly skipRefused: boolean };
  /** More fields for the JSON document (result: undefined on a dry run). */
  readonly jsonExtras?: (result: ApplyResult | undefined) => object;
  /** Lines printed after the plan or the apply's result (what to do next). */
  readonly followUp?: (result: ApplyResult | undefined) => string;
  /**
   * false: the plan reads no Ironic setting (its snapshot is read with
   * ironicSettings: false), so a bad [ironic] does not stop it. Otherwise a
   * bad one stops the command before any database is opened or the apply
   * lock taken.
   */
  readonly ironicSettings?: false;
  /** stderr lines once something was applied (exit 4 or 5): what the operator must do next. */
  readonly appliedNote?: string;
}

interface Settings {
  readonly maxCount: number | undefined;
  readonly limits: PlanLimits & { readonly allow: boolean };
  readonly planOut: string | undefined;
  readonly planIn: { readonly path: string; readonly doc: PlanFile } | undefined;
}

/**
 * Fill in the run options' defaults from nova.conf and read the --plan-in
 * file (before any database is opened), run the pipeline
 * (operations/run-plan.ts) and return its outcome with what the command adds
 * to it (cli/render-plan-outcome.ts prints it and maps it to an exit code).
 */
export async function runPlanCommand(ctx: CommandContext, run: PlanRunOptions, buildPlan: (d: Deployment) => Promise<Plan>, hooks: PlanCommandHooks = {}): Promise<PlanOutcomeResult> {
  const config = ctx.loadConfig();
  if (hooks.ironicSettings !== false) checkIronicSettings(config);
  const reconcile = config.reconcile;
  const s = settingsOf(run, reconcile);
  const outcome = await runPlan(
    config,
    // Refusals' suggested commands keep the user's --config-file/--config-dir.
    async (d) => planWithConfigArguments(await buildPlan(d), ctx.configSources),
    {
      apply: run.apply,
      ...s,
      planOptions: run.planOptions,
      allOrNothing: hooks.allOrNothing,
      lockTimeout: reconcile.lockTimeout,
      journalPath: run.journal,
      journalDir: reconcile.journalDir,
      concurrency: reconcile.applyConcurrency,
      batchUnits: reconcile.applyBatchUnits,
      reporter: ctx.reporter,
      ...(ctx.interrupts === undefined ? {} : { interrupts: ctx.interrupts }),
    },
  );
  const result = outcome.kind === 'applied' ? outcome.result : undefined;
  if (outcome.kind === 'blocked') logRefusal(ctx, outcome.plan, outcome.gate);
  if (outcome.kind === 'applied') logApply(ctx, outcome.applied);
  return {
    kind: 'plan',
    outcome,
    format: run.format,
    columns: run.columns,
    maxCount: s.maxCount,
    planOut: s.planOut,
    allOrNothing: hooks.allOrNothing !== undefined,
    extras: hooks.jsonExtras?.(result) ?? {},
    followUp: hooks.followUp?.(result) ?? '',
    undo: result !== undefined && applyChanged(result) && result.journalPath !== undefined ? undoCommandLine(ctx.selfCommand, ctx.configSources, result.journalPath) : undefined,
    interruptSummary: outcome.kind === 'applied' && outcome.applied.interrupted !== undefined ? interruptSummary(outcome.applied, outcome.plan.units.length, ctx) : undefined,
    appliedNote: hooks.appliedNote,
  };
}

/** What an interrupted apply did, where its journal is and how to undo or finish it (stderr). */
function interruptSummary(result: ApplyResult, total: number, ctx: CommandContext): string {
  const applied = result.outcomes.filter((u) => u.status === 'applied').length;
  return formatInterruptSummary(
    `nova-reconcile: interrupted by ${result.interrupted?.reason ?? 'a signal'}: ${applied} of ${total} unit(s) applied, ${result.outcomes.length - applied} already done or skipped, ${result.interrupted?.notStarted ?? 0} not started.`,
    result.journalPath,
    'to undo what was applied',
    'run the same command again (it plans from what is there now).',
    ctx.selfCommand,
    ctx.configSources,
  );
}

/** A blocked apply goes to the operator log: its refusals and why nothing was applied. */
function logRefusal(ctx: CommandContext, full: Plan, { trips, blocked }: Gate): void {
  for (const r of full.refused) ctx.log?.warning(`refused: ${r.subject}: ${r.reason}`);
  ctx.log?.warning(`refused to apply ${full.command}: ${[...trips.map((t) => `circuit breaker: ${t.message}`), ...(blocked === undefined ? [] : [blocked])].join('; ')}; nothing was applied`);
}

/** Applied units and refusals go to the operator log (--log-file, syslog), one line each. */
function logApply(ctx: CommandContext, result: ApplyResult): void {
  const log = ctx.log;
  if (log === undefined) return;
  const journal = result.journalPath === undefined ? '' : ` (journal ${result.journalPath})`;
  for (const o of result.outcomes) {
    if (o.status === 'applied') log.info(`applied: ${o.unit.title}: ${o.unit.changes.length} change(s)${journal}`);
    else if (o.status === 'already-done') log.info(`already done: ${o.unit.title}`);
    else log.warning(`skipped: ${o.unit.title}: ${o.reason} (${o.changesApplied} of ${o.unit.changes.length} change(s) applied)${journal}`);
  }
  for (const r of result.refused) log.warning(`refused: ${r.subject}: ${r.reason}`);
  if (result.interrupted !== undefined) log.warning(`interrupted by ${result.interrupted.reason}: ${result.interrupted.notStarted} unit(s) not started${journal}`);
}

/** The run options with [nova_reconcile]'s defaults, and the --plan-in file read (bad input is reported before any database is opened). */
function settingsOf(run: PlanRunOptions, reconcile: ReconcileSettings): Settings {
  const limits = { maxUnits: run.maxApplyUnits ?? reconcile.maxApplyUnits, maxFraction: run.maxApplyFraction ?? reconcile.maxApplyFraction, allow: run.allowLargePlan };
  const planIn = run.planIn === undefined ? undefined : { path: run.planIn, doc: readPlanFile(run.planIn) };
  return { maxCount: run.maxCount, limits, planOut: run.planOut, planIn };
}

/** --max-count: a positive integer, checked before any database is opened. */
function parseMaxCount(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return parseCount(value, '--max-count', 1);
}

function parseCount(text: string, option: string, min: number): number {
  if (!/^[0-9]+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text)))
    throw new ReconcileError('usage', `${option} must be a ${min === 0 ? 'non-negative' : 'positive'} integer, got '${text}'`);
  return Number(text);
}
