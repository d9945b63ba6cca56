// cell_v2 prune_host_mappings: delete host mappings that nothing live is behind (plan first; --apply to change).
import type { CommandSpec } from '../cli/spec.js';
import { stringOption } from '../cli/options.js';
import { planHostMappingPrune } from '../operations/host-mapping-plans.js';
import { parseUuidArguments } from '../cli/argument-lists.js';
import { SCOPE_CELL, SCOPE_HOST } from '../cli/scope.js';
import { ReconcileError } from '../errors.js';
import { APPLY_OPTIONS, MAX_COUNT_OPTION, PLAN_EXIT_CODES, parsePlanRun, runPlanCommand, type PlanRunOptions } from './shared/plan-command.js';
import { scopeArguments } from './shared/scope-arguments.js';
import { SCHEDULER_CACHE_NOTE } from './shared/host-mapping-notes.js';

interface PruneHostMappingsOptions {
  /** --cell_uuid or --cell: a uuid, or a cell name resolved against cell_mappings. */
  readonly cell: string | undefined;
  readonly host: string | undefined;
  readonly run: PlanRunOptions;
}

export const pruneHostMappingsCommand: CommandSpec<PruneHostMappingsOptions> = {
  path: ['cell_v2', 'prune_host_mappings'],
  family: 'reconcile',
  summary: 'delete host mappings with no live service, compute node or instance behind them (plan first; --apply to change)',
  description: [
    "A mapping is stale when its cell has no live nova-compute service, no live compute node and no live instance with the mapping's host, " +
      'and no other cell has a live nova-compute service with it. Such a mapping blocks delete_cell (exit 2) and keeps a renamed host ' +
      '(an ironic host_name change) from being mapped again. `audit` reports it as stale-mapping.',
    'Each unit first re-checks, under lock in the mapped cell, that nothing live has the host there, and sets mapped = 0 on the ' +
      "host's soft-deleted compute nodes that still say mapped = 1 (Zed leaves them so; bug 2085135), updated_at kept. Then the mapping " +
      'is deleted with a compare-and-swap on its id, host and cell. Both writes are journaled; `undo` puts them back.',
    'Refused, with the reason: a host with live instances but no service or compute node (not stale: evacuate it or bring its ' +
      'service back), and a host whose live service is in another cell (use `discover_hosts --remap`). A mapping with a live service ' +
      'or node is healthy and left alone; it is listed as refused only when --host names it. Unlike delete_host, this has a dry run, ' +
      'a journal, the guard against a live service or compute node, and it resets mapped on deleted nodes.',
    'After an apply, nova-scheduler still caches the old mappings: it needs SIGHUP or a restart (a note says so on stderr).',
  ],
  options: [
    { flags: '--cell_uuid <cell_uuid>', description: "only mappings to this cell, by uuid: delete_host's spelling of --cell, kept" },
    SCOPE_CELL,
    SCOPE_HOST,
    MAX_COUNT_OPTION,
    ...APPLY_OPTIONS,
  ],
  jsonSchemas: ['plan'],
  exitCodes: PLAN_EXIT_CODES,
  examples: ['nova-reconcile cell_v2 prune_host_mappings', 'nova-reconcile cell_v2 prune_host_mappings --host compute-9 --apply', 'nova-reconcile cell_v2 prune_host_mappings --cell cell1 --max-count 50 --apply', 'nova-reconcile undo /var/lib/nova-reconcile/journal/…jsonl --apply'],
  parse(raw) {
    const given = stringOption(raw, 'cell_uuid');
    const cellUuid = given === undefined ? undefined : (parseUuidArguments([given], '--cell_uuid')[0] as string);
    const { cell, host } = scopeArguments(raw);
    if (cellUuid !== undefined && cell !== undefined) throw new ReconcileError('usage', 'give --cell or --cell_uuid, not both');
    return { cell: cellUuid ?? cell, host, run: parsePlanRun(raw) };
  },
  async run(ctx, { cell, host, run }) {
    return runPlanCommand(ctx, run, (d) => planHostMappingPrune(d, { cell, host }), { ironicSettings: false, appliedNote: SCHEDULER_CACHE_NOTE });
  },
};
