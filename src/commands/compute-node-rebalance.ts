// compute_node rebalance: repair the records of ironic nodes after a rebalance or failover (seed bug 1714248).
import { flagOption, stringOption } from '../cli/options.js';
import type { CommandSpec } from '../cli/spec.js';
import { parseHostList } from '../cli/argument-lists.js';
import { planRebalance, type RingMembers } from '../domain/rebalance/index.js';
import { SCOPE_CELL, SCOPE_HOST, SCOPE_NODE } from '../cli/scope.js';
import { resolveScope, type ScopeArguments } from '../operations/scope.js';
import { APPLY_OPTIONS, MAX_COUNT_OPTION, PLAN_EXIT_CODES, parsePlanRun, runPlanCommand, type PlanRunOptions } from './shared/plan-command.js';
import { scopeArguments } from './shared/scope-arguments.js';
import { WHOLE_READ } from '../operations/read/recipes.js';
import { IRONIC_OPTIONS, ironicSnapshotReader, parseIronicOptions, readIronicOptions, type IronicOptions } from './shared/ironic-source.js';

interface RebalanceOptions {
  readonly scope: ScopeArguments;
  readonly includeDown: boolean;
  /** --ring-members as given; without it [nova_reconcile] ironic_ring_members, else Nova's membership. */
  readonly ringMembers: readonly string[] | undefined;
  readonly ironic: IronicOptions;
  readonly run: PlanRunOptions;
}

export const rebalanceCommand: CommandSpec<RebalanceOptions> = {
  path: ['compute_node', 'rebalance'],
  family: 'reconcile',
  summary: 'repair ironic nodes after a rebalance or failover: duplicates, dead hosts, stale providers (plan first; --apply to change)',
  description: [
    'Plans per ironic node (hypervisor_hostname) and cell. The canonical compute node is the row whose provider holds the node\'s ' +
      "allocations, else the row with the node's instance, else the oldest; the other live rows are duplicates.",
    "Placement first: the canonical row's provider is made the one that holds the instance's allocations and the node's name. A stale " +
      'provider holding the name is dealt with first. Allocations on a stale provider are moved (target provider and consumer generations ' +
      '+ 1, as Placement does), under Placement\'s capacity rules; the one exception is an in-use ironic node (reserved = total = 1) taking ' +
      'back its own single instance, which the plan states. When the canonical provider does not exist, the stale provider is re-keyed to ' +
      'the canonical uuid instead. Emptied stale providers are deleted with their inventories, traits and aggregate links.',
    'Then the cell: duplicates are soft-deleted (WHERE id = ? AND host = ? AND deleted = 0). When the canonical row\'s own service is up ' +
      '(legacy duplicates of pre-Rocky random uuids while both services are up, bug 1714248), that is all: the row stays where it is and ' +
      "placement is left alone; if no row's uuid has a resource provider, nothing tells which row Nova uses and the node is refused. " +
      "Otherwise the canonical row moves (host and service_id) to the host of its instance when that service is up (Nova's ironic driver " +
      "gives a node with an instance to the instance's host), else to the newest duplicate's host when that service is up, or, when its own " +
      "service is dead (forced down or deleted; with --include-down also down for longer than service_down_time), to the owner that Nova's " +
      'hash ring picks among the live members. Its instance follows in the same transaction (instances.host; instances.node is unchanged). ' +
      'A node with more than one live instance is refused.',
    "An ironic node whose nova-compute service was deleted is this command's, not cleanup_orphans': Nova's ring owner adopts such a " +
      'node (same uuid, provider and allocations), and so does the re-home. Only when Ironic no longer lists the node is it an orphan ' +
      '(compute_node cleanup_orphans --ironic-nodes FILE).',
    'Each change is a compare-and-swap, journaled before its transaction commits, in that order, so a crash after any of them leaves a ' +
      'state that the next run finishes; consecutive nodes of one shape share transactions, up to [nova_reconcile] apply_batch_units ' +
      '(default 64), and a conflict in one makes its nodes go one by one. Different ironic nodes touch different rows, so up to [nova_reconcile] apply_concurrency of them (default 4) ' +
      'are applied at the same time; nodes that share a row (a provider, a consumer) are still applied one after the other, in plan order. ' +
      'The ring members are the up, enabled ironic nova-compute services of the cell. With conductor groups, [nova_reconcile] ' +
      'ironic_partitions (and the given nova.conf\'s [ironic] conductor_group, or partition_key before 2023.2, and peer_list) gives one ring per partition, as Nova hashes a ' +
      "partition's nodes over its peer_list only: a node goes to the owner among its partition's up hosts (its partition is the one " +
      "its dead host serves). --ring-members / [nova_reconcile] ironic_ring_members name one ring for every node and override that.",
    'With ironic truth (the Ironic API from nova.conf [ironic], or --ironic-nodes FILE) the node\'s conductor group comes from Ironic, ' +
      "not from its dead host's partition, so a node moved to another group is hashed over that group's hosts; a group that no " +
      'nova-compute serves is refused (the node is unmanaged, as audit reports). A node that a complete listing does not hold is gone ' +
      'from Ironic: it is neither re-homed nor are its duplicates retired; it is refused and named for compute_node cleanup_orphans. ' +
      'Without ironic truth every node is taken to exist, as before. When the given nova.conf sets [ironic] shard (Nova 2024.1) with ' +
      "[DEFAULT] host, that nova-compute owns every node Ironic puts in its shard (API 1.82), as Nova forces its ring to itself, and " +
      "no ring gives it a node of another shard; without [DEFAULT] host the shard's nodes are refused (which compute owns them is not known).",
  ],
  options: [
    { flags: '--include-down', description: 'also re-home nodes of services that are down for longer than service_down_time (forced down always counts)' },
    { flags: '--ring-members <hosts>', description: 'comma-separated ring members, overriding [nova_reconcile] ironic_ring_members and Nova\'s membership' },
    ...IRONIC_OPTIONS,
    SCOPE_CELL,
    SCOPE_HOST,
    SCOPE_NODE,
    MAX_COUNT_OPTION,
    ...APPLY_OPTIONS,
  ],
  jsonSchemas: ['plan'],
  exitCodes: PLAN_EXIT_CODES,
  examples: ['nova-reconcile compute_node rebalance', 'nova-reconcile compute_node rebalance --include-down --apply', 'nova-reconcile compute_node rebalance --ironic-source api --include-down', 'nova-reconcile compute_node rebalance --node 1be26c0b-03f2-4d2e-ae87-c02d7f33c123 --apply --format json'],
  parse(raw) {
    const scope = scopeArguments(raw);
    const ring = stringOption(raw, 'ringMembers');
    const ironic = parseIronicOptions(raw);
    return { scope, includeDown: flagOption(raw, 'includeDown'), ringMembers: ring === undefined ? undefined : parseHostList(ring), ironic, run: parsePlanRun(raw) };
  },
  async run(ctx, o) {
    const { scope, run } = o;
    const configured = ctx.loadConfig().reconcile.ironicRingMembers;
    const ringMembers: RingMembers | undefined =
      o.ringMembers !== undefined
        ? { hosts: o.ringMembers, source: '--ring-members' }
        : configured === undefined
          ? undefined
          : { hosts: configured, source: '[nova_reconcile] ironic_ring_members' };
    // Read before any database is opened: an Ironic that fails leaves nothing behind.
    const reader = ironicSnapshotReader(ctx, await readIronicOptions(ctx, o.ironic), WHOLE_READ);
    return runPlanCommand(ctx, run, async (d) => {
      const snapshot = await reader.read(d);
      const { cellUuid, host, nodes } = resolveScope(snapshot, scope);
      const options = {
        includeDown: o.includeDown,
        ...(cellUuid === undefined ? {} : { cellUuid }),
        ...(host === undefined ? {} : { host }),
        ...(nodes === undefined ? {} : { nodes }),
        ...(ringMembers === undefined ? {} : { ringMembers }),
      };
      return planRebalance(snapshot, options);
    }, { jsonExtras: reader.jsonExtras });
  },
};
