// placement cleanup_providers: remove stale compute-node providers; free names that block live nodes.
import type { CommandSpec } from '../cli/spec.js';
import { planProviderCleanup } from '../domain/stale-providers.js';
import { SCOPE_CELL, SCOPE_RESOURCE_PROVIDER } from '../cli/scope.js';
import { providerCleanupRead } from '../operations/read/recipes.js';
import { IRONIC_OPTIONS, ironicPlanReader, parseIronicOptions, readIronicOptions, type IronicOptions } from './shared/ironic-source.js';
import { resolveScope, type ScopeArguments } from '../operations/scope.js';
import { APPLY_OPTIONS, MAX_COUNT_OPTION, PLAN_EXIT_CODES, parsePlanRun, runPlanCommand, type PlanRunOptions } from './shared/plan-command.js';
import { scopeArguments } from './shared/scope-arguments.js';

interface CleanupProvidersOptions {
  readonly ironic: IronicOptions;
  readonly scope: ScopeArguments;
  readonly run: PlanRunOptions;
}

export const cleanupProvidersCommand: CommandSpec<CleanupProvidersOptions> = {
  path: ['placement', 'cleanup_providers'],
  family: 'reconcile',
  summary: 'remove stale compute-node resource providers and free blocked names (plan first; --apply to change)',
  description: [
    'A stale provider is a root compute-node provider (COMPUTE_NODE trait, or the uuid of a deleted compute node) with no live compute node ' +
      'of its uuid. They stay behind because Nova ignores the 409 when a provider still holds allocations. Sharing providers and providers ' +
      'that are not compute-node providers are never touched.',
    "Stale providers are deleted children first, with their inventories, trait links and aggregate links, after their allocations are " +
      "handled: an evacuated instance's leftover share is removed (its consumer generation bumped), an orphaned consumer's allocations are " +
      "deleted (the consumer row with its last allocation), and a live instance's allocations on its own node are refused.",
    'A stale provider that holds the name of a live compute node blocks that node from registering. When no provider has the live node\'s ' +
      'uuid, the stale provider is re-keyed to it (everything it holds is kept, generation + 1): nova-compute finds its provider at once, ' +
      'where a deleted one would leave the node without a provider until its next periodic, which logs an error before it creates one.',
    'The provider of a soft-deleted ironic compute node that comes back is kept, and the plan says why (refused, with `compute_node restore` ' +
      'as the fix): its ironic node exists, or may (no ironic node list: the Ironic API from nova.conf [ironic], or --ironic-nodes), no live ' +
      'node of its cell has its name, and its cell has a live nova-compute service, so nova-compute restores the row under the same uuid ' +
      '(bug 1839560) and needs the provider with its inventory and traits. `audit` judges it the same way.',
    "For --cell, a provider belongs to the cell of the soft-deleted compute node of its uuid and of the live node whose name it blocks; a " +
      'provider whose compute node is unknown (archived to the shadow tables) belongs to no cell: --resource_provider or an unscoped run selects it.',
  ],
  options: [SCOPE_CELL, SCOPE_RESOURCE_PROVIDER, ...IRONIC_OPTIONS, MAX_COUNT_OPTION, ...APPLY_OPTIONS],
  jsonSchemas: ['plan'],
  exitCodes: PLAN_EXIT_CODES,
  examples: [
    'nova-reconcile placement cleanup_providers',
    'nova-reconcile placement cleanup_providers --resource_provider b8828977-02e0-44a6-b5df-477773c72fe7 --apply',
    'nova-reconcile placement cleanup_providers --cell cell1 --max-count 20 --apply --format json',
  ],
  parse(raw) {
    const ironic = parseIronicOptions(raw);
    const scope = scopeArguments(raw);
    return { ironic, scope, run: parsePlanRun(raw) };
  },
  async run(ctx, { ironic, scope, run }) {
    const source = await readIronicOptions(ctx, ironic);
    // Every node when --resource_provider must name any provider, or an ironic node list must be checked against every live ironic node.
    const reader = ironicPlanReader(ctx, source, providerCleanupRead(scope.providers !== undefined || source !== undefined));
    return runPlanCommand(
      ctx,
      run,
      async (d) => {
        const { snapshot, index } = await reader.read(d);
        return planProviderCleanup(snapshot, resolveScope(snapshot, scope), index);
      },
      { jsonExtras: reader.jsonExtras },
    );
  },
};
