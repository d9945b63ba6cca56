// compute_node cleanup_orphans: soft-delete orphan compute nodes and release their providers.
import type { CommandSpec } from '../cli/spec.js';
import { planOrphanCleanup } from '../domain/orphan-nodes.js';
import { SCOPE_CELL, SCOPE_HOST, SCOPE_NODE } from '../cli/scope.js';
import { resolveScope, type ScopeArguments } from '../operations/scope.js';
import { orphanCleanupRead } from '../operations/read/recipes.js';
import { IRONIC_OPTIONS, ironicPlanReader, parseIronicOptions, readIronicOptions, type IronicOptions } from './shared/ironic-source.js';
import { APPLY_OPTIONS, MAX_COUNT_OPTION, PLAN_EXIT_CODES, parsePlanRun, runPlanCommand, type PlanRunOptions } from './shared/plan-command.js';
import { scopeArguments } from './shared/scope-arguments.js';

interface CleanupOrphansOptions {
  readonly ironic: IronicOptions;
  readonly scope: ScopeArguments;
  readonly run: PlanRunOptions;
}

export const cleanupOrphansCommand: CommandSpec<CleanupOrphansOptions> = {
  path: ['compute_node', 'cleanup_orphans'],
  family: 'reconcile',
  summary: 'soft-delete orphan compute nodes and remove their providers (plan first; --apply to change)',
  description: [
    'An orphan is a live compute node whose nova-compute service was soft-deleted or never existed, or, when ironic truth is given with ' +
      'the Ironic API ([ironic] in nova.conf) or --ironic-nodes, an ironic compute node whose ironic node is gone (seed bug 2013: the service keeps heartbeating, so the node looks up). ' +
      'Without ironic truth ironic nodes are never deleted; `audit` reports them as suspects. An ironic node whose service was deleted but ' +
      "whose ironic node may exist is not an orphan: Nova's hash ring owner adopts it, and compute_node rebalance re-homes it.",
    "Each orphan's provider tree is removed under Placement's rules first: an evacuated instance's leftover share is removed, an orphaned " +
      "consumer's allocations are deleted, and a live instance's last allocations are never touched. Then the compute node is soft-deleted " +
      "as Nova does (deleted = id, WHERE id = ? AND host = ? AND deleted = 0). A node with a live instance is refused, with what frees it: " +
      'for a libvirt host, its nova-compute registering again; for an ironic node that Ironic no longer lists, deleting the server.',
  ],
  options: [
    ...IRONIC_OPTIONS,
    SCOPE_CELL,
    SCOPE_HOST,
    SCOPE_NODE,
    MAX_COUNT_OPTION,
    ...APPLY_OPTIONS,
  ],
  jsonSchemas: ['plan'],
  exitCodes: PLAN_EXIT_CODES,
  examples: [
    'openstack baremetal node list -f json > nodes.json',
    'nova-reconcile compute_node cleanup_orphans --ironic-nodes nodes.json',
    'nova-reconcile compute_node cleanup_orphans --host compute-9 --apply',
    'nova-reconcile compute_node cleanup_orphans --ironic-nodes nodes.json --cell cell1 --max-count 10 --apply',
  ],
  parse(raw) {
    const ironic = parseIronicOptions(raw);
    const scope = scopeArguments(raw);
    return { ironic, scope, run: parsePlanRun(raw) };
  },
  async run(ctx, { ironic, scope, run }) {
    // --host and --node must name something anywhere: the read looks them up.
    const recipe = orphanCleanupRead({ ...(scope.host === undefined ? {} : { host: scope.host }), ...(scope.nodes === undefined ? {} : { nodes: scope.nodes }) });
    const reader = ironicPlanReader(ctx, await readIronicOptions(ctx, ironic), recipe);
    return runPlanCommand(
      ctx,
      run,
      async (d) => {
        const { snapshot, index } = await reader.read(d);
        return planOrphanCleanup(snapshot, resolveScope(snapshot, scope), index);
      },
      { jsonExtras: reader.jsonExtras },
    );
  },
};
