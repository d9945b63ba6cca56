// compute_node move: the bulk ironic_compute_node_move, each node in its own transaction.
import { RECONCILE_EXIT } from '../cli/exit-codes.js';
import { applyJson, planJson, renderApplyText, renderPlanText } from '../cli/render-plan.js';
import type { CommandContext, CommandOptions, CommandSpec } from '../cli/spec.js';
import { planWithConfigArguments } from '../cli/suggestions.js';
import { isEmptyPlan, type Plan } from '../domain/plan.js';
import { parseUuidArguments, type NodeMoveOptions } from '../domain/rebalance.js';
import { ReconcileError } from '../errors.js';
import { applyPlan, withApplyLock } from '../operations/apply-plan.js';
import { moveReport, planComputeNodeMoves } from '../operations/ironic-move.js';
import { printJson, useDeployment } from './deployment.js';
import { APPLY_OPTIONS, PLAN_EXIT_CODES } from './plan-command.js';

export const moveCommand: CommandSpec = {
  path: ['compute_node', 'move'],
  family: 'reconcile',
  summary: 'move ironic compute nodes (and their instances) to another nova-compute service (plan first; --apply to change)',
  description: [
    'The bulk form of `db ironic_compute_node_move`: give the nodes with --node (repeatable) or all the nodes of --from-host. Each node ' +
      "moves in its own transaction: the compute node's host and service_id, and its instance's host. The node uuid, and so its provider " +
      'and allocations, stay.',
    'A node is refused, with the reason, when the destination is forced down, has no host mapping, or is in another cell; when its ' +
      'source service is up and not forced down (a source that is down but not forced down needs --source-down-ok); when it is not an ' +
      'ironic node; or when it has more than one live instance. The others still move. --format json lists nodes_moved, ' +
      'instances_moved and nodes_skipped with their reasons.',
  ],
  options: [
    { flags: '--node <uuid>', description: 'a compute node (ironic node) uuid; repeatable', repeatable: true },
    { flags: '--from-host <host>', description: 'every compute node of this host' },
    { flags: '--to-host <host>', description: 'the destination nova-compute service host', required: true },
    { flags: '--source-down-ok', description: 'also move nodes whose source service is down (longer than service_down_time) though not forced down' },
    ...APPLY_OPTIONS,
  ],
  exitCodes: PLAN_EXIT_CODES,
  examples: ['nova-reconcile compute_node move --from-host ironic-compute-0 --to-host ironic-compute-1', 'nova-reconcile compute_node move --node 1be26c0b-03f2-4d2e-ae87-c02d7f33c123 --to-host ironic-compute-1 --apply --format json'],
  async run(ctx, o) {
    return runMove(ctx, o, parseMoveOptions(o));
  },
};

function parseMoveOptions(o: CommandOptions): NodeMoveOptions {
  const nodes = Array.isArray(o['node']) ? parseUuidArguments(o['node'].map(String), '--node') : undefined;
  const fromHost = typeof o['fromHost'] === 'string' ? o['fromHost'] : undefined;
  if ((nodes === undefined) === (fromHost === undefined)) throw new ReconcileError('usage', 'give either --node (repeatable) or --from-host, not both and not neither');
  return { ...(nodes === undefined ? {} : { nodes }), ...(fromHost === undefined ? {} : { fromHost }), toHost: String(o['toHost']), sourceDownOk: o['sourceDownOk'] === true };
}

/** Refusals' suggested commands keep the user's --config-file/--config-dir. */
function withSuggestionConfig<M extends { readonly plan: Plan }>(mp: M, ctx: CommandContext): M {
  return { ...mp, plan: planWithConfigArguments(mp.plan, ctx.configSources) };
}

async function runMove(ctx: CommandContext, o: CommandOptions, options: NodeMoveOptions): Promise<number> {
  const json = o['format'] === 'json';
  const settings = ctx.loadConfig().reconcile;
  return useDeployment(ctx, async (d) => {
    if (o['apply'] !== true) {
      const mp = withSuggestionConfig(await planComputeNodeMoves(d, options), ctx);
      if (json) printJson(ctx, { ...(planJson(mp.plan) as object), ...moveReport(mp, undefined), dry_run: true, changed: false });
      else ctx.stdout.write(renderPlanText(mp.plan) + (isEmptyPlan(mp.plan) ? '' : '\nNothing was changed. Re-run with --apply to apply this plan.\n'));
      return isEmptyPlan(mp.plan) ? RECONCILE_EXIT.clean : RECONCILE_EXIT.findings;
    }
    return withApplyLock(d, settings.lockTimeout, async () => {
      const mp = withSuggestionConfig(await planComputeNodeMoves(d, options), ctx);
      const result = await applyPlan(d, mp.plan, {
        journalPath: typeof o['journal'] === 'string' ? o['journal'] : undefined,
        journalDir: settings.journalDir,
        concurrency: settings.applyConcurrency,
        onJournal: (path) => ctx.stderr.write(`journal: ${path}\n`),
      });
      if (json) printJson(ctx, { ...(applyJson(mp.plan, result) as object), ...moveReport(mp, result) });
      else ctx.stdout.write(isEmptyPlan(mp.plan) ? renderPlanText(mp.plan) : renderApplyText(result));
      if (isEmptyPlan(mp.plan)) return RECONCILE_EXIT.clean;
      return result.refused.length > 0 || result.outcomes.some((u) => u.status === 'skipped') ? RECONCILE_EXIT.partial : RECONCILE_EXIT.applied;
    });
  });
}
