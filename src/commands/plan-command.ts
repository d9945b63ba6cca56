// The shared shape of every mutating reconciliation command: build a plan;
// without --apply print it and exit 3 (0 when empty); with --apply take the
// apply lock, plan again under it, apply, and exit 4 (5 when something was
// skipped or refused).
import { RECONCILE_EXIT, applyExitCode } from '../cli/exit-codes.js';
import { applyJson, planJson, renderApplyText, renderPlanText } from '../cli/render-plan.js';
import { FORMAT_OPTION, type CommandContext, type CommandOptions, type OptionSpec } from '../cli/spec.js';
import { planWithConfigArguments } from '../cli/suggestions.js';
import type { Deployment } from '../db/deployment.js';
import { isEmptyPlan, type Plan } from '../domain/plan.js';
import { ReconcileError } from '../errors.js';
import { applyPlan, withApplyLock } from '../operations/apply-plan.js';
import { printJson, useDeployment } from './deployment.js';

export const APPLY_OPTIONS: readonly OptionSpec[] = [
  { flags: '--apply', description: 'apply the plan; without it the plan is printed and nothing changes' },
  { flags: '--journal <file>', description: 'write the journal of applied changes here (default: a timestamped file in [nova_reconcile] journal_dir)' },
  FORMAT_OPTION,
];

/** For the commands whose plans are lists of independent units. */
export const MAX_COUNT_OPTION: OptionSpec = {
  flags: '--max-count <n>',
  description: 'act on at most N units, the first N of the plan; the rest is left for a later run (re-run until it exits 0). Default: all',
};

export const PLAN_EXIT_CODES: ReadonlyArray<readonly [number, string]> = [
  [0, 'nothing to do, or every unit was already done by someone else'],
  [3, 'a plan was printed; nothing changed (no --apply)'],
  [4, 'every change was applied (units another run had already done count as done)'],
  [5, 'partly applied: some units were skipped (their rows changed since planning) or refused for safety'],
  [2, 'could not run: configuration, a database unreachable, or another run holds the lock'],
  [127, 'invalid usage or input'],
  [255, 'unexpected internal error'],
];

export async function runPlanCommand(ctx: CommandContext, o: CommandOptions, buildPlan: (d: Deployment) => Promise<Plan>): Promise<number> {
  const json = o['format'] === 'json';
  const maxCount = parseMaxCount(o['maxCount']);
  const settings = ctx.loadConfig().reconcile;
  const limited = async (d: Deployment): Promise<{ plan: Plan; deferred: number }> => limitPlan(planWithConfigArguments(await buildPlan(d), ctx.configSources), maxCount);
  const deferredLine = (deferred: number): string =>
    deferred === 0 ? '' : `${deferred} more unit(s) left for a later run (--max-count ${String(maxCount)}).\n`;
  return useDeployment(ctx, async (d) => {
    if (o['apply'] !== true) {
      const { plan, deferred } = await limited(d);
      if (json) printJson(ctx, { ...(planJson(plan) as object), dry_run: true, changed: false, deferred_units: deferred });
      else ctx.stdout.write(renderPlanText(plan) + deferredLine(deferred) + (isEmptyPlan(plan) ? '' : '\nNothing was changed. Re-run with --apply to apply this plan.\n'));
      return isEmptyPlan(plan) ? RECONCILE_EXIT.clean : RECONCILE_EXIT.findings;
    }
    return withApplyLock(d, settings.lockTimeout, async () => {
      const { plan, deferred } = await limited(d);
      const result = await applyPlan(d, plan, {
        journalPath: typeof o['journal'] === 'string' ? o['journal'] : undefined,
        journalDir: settings.journalDir,
        concurrency: settings.applyConcurrency,
        onJournal: (path) => ctx.stderr.write(`journal: ${path}\n`),
        onProgress: (p) => {
          // Says what happened to the units so far: a skipped unit is never counted as applied.
          if (ctx.stderrIsTty || p.done === p.total || p.done % 500 === 0)
            ctx.stderr.write(`done ${p.done}/${p.total} unit(s): ${p.applied} applied, ${p.alreadyDone} already done, ${p.skipped} skipped\n`);
        },
      });
      if (json) printJson(ctx, { ...(applyJson(plan, result) as object), deferred_units: deferred });
      else ctx.stdout.write((isEmptyPlan(plan) ? renderPlanText(plan) : renderApplyText(result)) + deferredLine(deferred));
      return applyExitCode(result);
    });
  });
}

/** --max-count: a positive integer, checked before any database is opened. */
function parseMaxCount(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (!/^[0-9]+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))
    throw new ReconcileError('usage', `--max-count must be a positive integer, got '${text}'`);
  return Number(text);
}

/** The first maxCount units (refusals are always reported); the count of the others. */
export function limitPlan(plan: Plan, maxCount: number | undefined): { plan: Plan; deferred: number } {
  if (maxCount === undefined || plan.units.length <= maxCount) return { plan, deferred: 0 };
  return { plan: { ...plan, units: plan.units.slice(0, maxCount) }, deferred: plan.units.length - maxCount };
}
