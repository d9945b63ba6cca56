// compute_node cleanup_orphans: soft-delete orphan compute nodes and release their providers.
import type { CommandSpec } from '../cli/spec.js';
import { orphanCleanupInstanceHosts, orphanCleanupPlacementScope, planOrphanCleanup } from '../domain/orphan-nodes.js';
import { SCOPE_CELL, SCOPE_HOST, SCOPE_NODE } from '../cli/scope.js';
import { resolveScope, type ScopeArguments } from '../operations/scope.js';
import { IRONIC_OPTIONS, ironicSnapshotReader, parseIronicOptions, readIronicOptions, type IronicOptions } from './shared/ironic-source.js';
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
    // Placement's rows only for the orphans' provider trees, instances only of their hosts and consumers (ScopedPlacement); --host is checked against its instances too.
    const reader = ironicSnapshotReader(ctx, await readIronicOptions(ctx, ironic), {
      scopeOf: orphanCleanupPlacementScope,
      instanceHostsOf: (ix) => [...orphanCleanupInstanceHosts(ix), ...(scope.host === undefined ? [] : [{ host: scope.host }])],
      // Only the nodes that may be orphans are read, and their providers; --host and --node (which must name something anywhere) are looked up.
      nodes: 'orphan-candidates' as const,
      names: { ...(scope.host === undefined ? {} : { host: scope.host }), ...(scope.nodes === undefined ? {} : { nodes: scope.nodes }) },
    });
    return runPlanCommand(
      ctx,
      run,
      async (d) => {
        const snapshot = await reader.read(d);
        return planOrphanCleanup(snapshot, resolveScope(snapshot, scope));
      },
      { jsonExtras: reader.jsonExtras },
    );
  },
};
