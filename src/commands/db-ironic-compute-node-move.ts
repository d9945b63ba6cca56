// db ironic_compute_node_move: nova-manage master's command, in one transaction.
import { stringOption } from '../cli/options.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { ReconcileError } from '../errors.js';
import { ironicComputeNodeMove } from '../operations/ironic-move.js';
import { journalSettings, useDeployment } from './shared/deployment.js';
import { jsonResult, report } from '../cli/results.js';

interface IronicComputeNodeMoveOptions {
  readonly node: string;
  readonly dest: string;
  readonly journal: string | undefined;
  readonly json: boolean;
}

export const ironicComputeNodeMoveCommand: CommandSpec<IronicComputeNodeMoveOptions> = {
  path: ['db', 'ironic_compute_node_move'],
  family: 'compatible',
  summary: 'move an ironic compute node and its instance to another nova-compute service (nova-manage master compatible)',
  description: [
    'Checks, in nova-manage\'s order, that the destination is a nova-compute service that is not forced down, that the compute node ' +
      'exists, that its source service (by compute_nodes.service_id) is forced down, and that at most one instance is on the node. ' +
      "Then it sets the compute node's host and service_id to the destination's, and the instance's host. instances.node and the node " +
      'uuid stay, so placement needs no change. It works on the cell database of [database] connection, as nova-manage does.',
  ],
  options: [
    { flags: '--ironic-node-uuid <uuid>', description: 'the ironic node (compute node) uuid' },
    { flags: '--destination-host <host>', description: 'the nova-compute service host that takes the node' },
    { flags: '--journal <file>', description: 'write the journal of the change here (default: a timestamped file in [nova_reconcile] journal_dir)' },
    FORMAT_OPTION,
  ],
  jsonSchemas: ['db-ironic_compute_node_move'],
  exitCodes: [
    [0, 'the node was moved (nothing is printed)'],
    [2, 'invalid usage'],
    [255, 'a precondition failed ("An error has occurred:" and one line on stdout), or any other error'],
  ],
  differences: [
    'The checks and the writes run in one transaction with row locks; nova-manage saves the node and the instance separately.',
    'The node must be an ironic node.',
    'Errors are one line after "An error has occurred:", with no traceback; the change is journaled (undo can revert it); --format json and --journal are additions.',
    'A connection lost while the COMMIT is in flight is reported as such: whether the move committed is unknown, and the hint names the journal, whose undo (without --apply) tells which.',
  ],
  examples: ['nova-reconcile db ironic_compute_node_move --ironic-node-uuid aa2f504a-fe68-4da3-b652-d23e2283273a --destination-host ironic-compute-1'],
  parse(raw) {
    const node = stringOption(raw, 'ironicNodeUuid');
    const dest = stringOption(raw, 'destinationHost');
    // nova/cmd/common.py validate_args: the action's own argument names, then exit 255.
    const missing = [node === undefined ? 'ironic_node_uuid' : undefined, dest === undefined ? 'destination_host' : undefined].filter((m) => m !== undefined);
    if (node === undefined || dest === undefined) throw new ReconcileError('input', `Missing arguments: ${missing.join(', ')}`);
    return { node, dest, journal: stringOption(raw, 'journal'), json: stringOption(raw, 'format') === 'json' };
  },
  async run(ctx, { node, dest, journal, json }) {
    const result = await useDeployment(ctx, (d) => ironicComputeNodeMove(d, node, dest, journalSettings(ctx, journal)));
    ctx.log?.info(`moved ironic compute node ${result.nodeUuid} from host ${result.fromHost} to ${result.toHost}${result.instanceUuid === null || result.instanceUuid === undefined ? '' : ` with instance ${result.instanceUuid}`} (journal ${result.journalPath})`);
    if (json) return jsonResult({ changed: true, moved: true, node_uuid: result.nodeUuid, from_host: result.fromHost, to_host: result.toHost, instance_uuid: result.instanceUuid, journal: result.journalPath }, 0);
    return report('', 0);
  },
};
