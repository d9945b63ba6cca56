// compute_node move: the bulk ironic_compute_node_move, each node in its own transaction.
import type { CommandOptions, CommandSpec } from '../cli/spec.js';
import { parseUuidArguments } from '../cli/argument-lists.js';
import { flagOption, listOption, requiredOption } from '../cli/options.js';
import type { NodeMoveOptions, NodeMovePlan } from '../domain/node-move.js';
import { ReconcileError } from '../errors.js';
import type { ApplyResult } from '../operations/apply-plan.js';
import { moveReport, planComputeNodeMoves } from '../operations/ironic-move.js';
import { APPLY_OPTIONS, PLAN_EXIT_CODES, parsePlanRun, runPlanCommand, type PlanRunOptions } from './shared/plan-command.js';

const SKIP_REFUSED = '--skip-refused';

interface MoveCommandOptions {
  readonly move: NodeMoveOptions;
  readonly run: PlanRunOptions;
}

export const moveCommand: CommandSpec<MoveCommandOptions> = {
  path: ['compute_node', 'move'],
  family: 'reconcile',
  summary: 'move ironic compute nodes (and their instances) to another nova-compute service (plan first; --apply to change)',
  description: [
    'The bulk form of `db ironic_compute_node_move`: give the nodes with --node (repeatable) or all the nodes of one or more --from-host. Each node ' +
      "moves in its own transaction: the compute node's host and service_id, and its instance's host. The node uuid, and so its provider " +
      'and allocations, stay.',
    'A node is refused, with the reason, when the destination is forced down, has no host mapping, or is in another cell; when its ' +
      'source service is up and not forced down (a source that is down but not forced down needs --source-down-ok); when it is not an ' +
      'ironic node; or when it has more than one live instance. All or nothing: when any node is refused, nothing moves (exit 3) unless ' +
      '--skip-refused is given, which moves the others (exit 5: something moved and something did not). --format json lists nodes_moved, ' +
      'instances_moved and nodes_skipped with their reasons.',
    'Afterwards, delete each source service that has no node left through the compute API (`openstack compute service delete`), so that ' +
      'Nova removes its host mapping and resource provider as it does for any service delete; the command prints that follow-up.',
  ],
  options: [
    { flags: '--node <uuid>', description: 'a compute node (ironic node) uuid; repeatable', repeatable: true },
    { flags: '--from-host <host>', description: 'every compute node of this host; repeatable', repeatable: true },
    { flags: '--to-host <host>', description: 'the destination nova-compute service host', required: true },
    { flags: '--source-down-ok', description: 'also move nodes whose source service is down (longer than service_down_time) though not forced down' },
    { flags: SKIP_REFUSED, description: 'move the nodes that are not refused; without it any refused node means nothing moves' },
    ...APPLY_OPTIONS,
  ],
  jsonSchemas: ['plan'],
  exitCodes: PLAN_EXIT_CODES,
  examples: [
    'nova-reconcile compute_node move --from-host ironic-compute-0 --from-host ironic-compute-2 --to-host ironic-compute-1',
    'nova-reconcile compute_node move --node aa2f504a-fe68-4da3-b652-d23e2283273a --to-host ironic-compute-1 --apply --format json',
  ],
  parse(raw) {
    const move = parseMoveOptions(raw);
    return { move, run: parsePlanRun(raw) };
  },
  async run(ctx, { move: options, run }) {
    // The move plan behind the generic one: its moves and sources make the JSON report and the follow-up commands.
    let mp: NodeMovePlan | undefined;
    return runPlanCommand(
      ctx,
      run,
      async (d) => {
        mp = await planComputeNodeMoves(d, options);
        return mp.plan;
      },
      {
        allOrNothing: { flag: SKIP_REFUSED, skipRefused: run.skipRefused },
        jsonExtras: (result) => (mp === undefined ? {} : { ...moveReport(mp, result), follow_up: followUps(mp, result).map((f) => ({ host: f.host, service_uuid: f.serviceUuid, command: f.command })) }),
        followUp: (result) => (mp === undefined ? '' : followUpText(followUps(mp, result), result === undefined)),
      },
    );
  },
};

function parseMoveOptions(raw: CommandOptions): NodeMoveOptions {
  const given = listOption(raw, 'node');
  const nodes = given === undefined ? undefined : parseUuidArguments(given, '--node');
  const fromHosts = listOption(raw, 'fromHost');
  if ((nodes === undefined) === (fromHosts === undefined)) throw new ReconcileError('usage', 'give either --node (repeatable) or --from-host (repeatable), not both and not neither');
  return {
    ...(nodes === undefined ? {} : { nodes }),
    ...(fromHosts === undefined ? {} : { fromHosts }),
    toHost: requiredOption(raw, 'toHost', '--to-host <host>'),
    sourceDownOk: flagOption(raw, 'sourceDownOk'),
  };
}

interface FollowUp {
  readonly host: string;
  readonly serviceUuid: string | null;
  readonly command: string;
}

/**
 * The source services left without a node: Nova's own service delete (through
 * the API) removes their host mapping and provider. Not done here: this tool
 * writes no service row. On a dry run: the services that would be
 * left without a node.
 */
function followUps(mp: NodeMovePlan, result: ApplyResult | undefined): FollowUp[] {
  const moved = result === undefined ? undefined : new Set(result.outcomes.filter((u) => u.status !== 'skipped').map((u) => u.unit.id));
  return mp.sources
    .filter((src) => src.nodesLeft === 0 && mp.moves.filter((m) => m.fromHost === src.host).every((m) => moved === undefined || moved.has(m.unitId)))
    .map((src) => ({
      host: src.host,
      serviceUuid: src.serviceUuid,
      // The uuid needs compute API microversion 2.53; it names the service in every cell unambiguously.
      command: src.serviceUuid === null ? `openstack compute service delete ${src.serviceId}` : `openstack --os-compute-api-version 2.53 compute service delete ${src.serviceUuid}`,
    }));
}

function followUpText(items: readonly FollowUp[], dryRun: boolean): string {
  if (items.length === 0) return '';
  const lines = [
    '',
    `${dryRun ? 'After --apply, delete' : 'Next: delete'} the source service(s) left without a node through the compute API, so that Nova removes their host mappings and resource providers:`,
    ...items.map((f) => `  ${f.command}    # ${f.host}`),
  ];
  return lines.join('\n') + '\n';
}
