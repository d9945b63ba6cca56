// compute_node list: one row per live compute node with its own health
// (seed bug 2013: the service heartbeat says nothing about each node).
import { renderTable } from '../cli/render-table.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import type { ComputeNodeHealth } from '../domain/audit.js';
import { listComputeNodes } from '../operations/list-compute-nodes.js';
import { cellUuidOption, progressReporter } from './audit.js';
import { printJson, useDeployment } from './deployment.js';
import { IRONIC_OPTIONS, describeIronicOrigin, ironicOriginJson, readIronicOptions } from './ironic-source.js';

const HEADERS = ['uuid', 'cell', 'host', 'hypervisor_hostname', 'type', 'service', 'mapped', 'provider', 'allocations', 'instances', 'ironic_node'];

export const computeNodeListCommand: CommandSpec = {
  path: ['compute_node', 'list'],
  family: 'reconcile',
  summary: "list live compute nodes with each node's own health (read-only)",
  description: [
    'One row per live compute node: its service state judged by nova\'s rule (up or down from last_seen_up and service_down_time; forced-down; disabled; ' +
      'deleted or missing when the node is an orphan), whether its host is mapped to its cell, whether its resource provider exists, how many consumers hold ' +
      'allocations on it, how many live instances it runs, and, for ironic nodes, whether the ironic node still exists (from the Ironic API when nova.conf has [ironic], or --ironic-nodes).',
    'Without a [placement_database] connection the provider and allocation columns say unknown; without ironic truth the ironic column does.',
  ],
  options: [
    { flags: '--host <host>', description: 'only the nodes of this host (case- and trailing-space-insensitive, as in the database)' },
    { flags: '--cell <uuid>', description: 'only the nodes of this cell (only its database is read)' },
    ...IRONIC_OPTIONS,
    { ...FORMAT_OPTION, description: 'output format: table, or json (one document on stdout)' },
  ],
  exitCodes: [
    [0, 'listed (also when no node matches)'],
    [2, 'could not run: configuration, a database unreachable, the Ironic API unreachable, refusing the credentials or failing part-way'],
    [127, 'invalid usage or input: a malformed or unknown --cell, a malformed --ironic-nodes file'],
    [255, 'unexpected internal error'],
  ],
  examples: ['nova-reconcile compute_node list --host ironic-compute-0', 'nova-reconcile compute_node list --ironic-nodes nodes.json --format json'],
  async run(ctx, o) {
    const cellUuid = cellUuidOption(o);
    const host = typeof o['host'] === 'string' ? o['host'] : undefined;
    const progress = progressReporter(ctx, false);
    const ironic = await readIronicOptions(ctx, o, progress);
    const { nodes, ironicOrigin } = await useDeployment(ctx, (d) =>
      listComputeNodes(d, {
        ...(cellUuid === undefined ? {} : { cellUuid }),
        ...(host === undefined ? {} : { host }),
        ...(ironic === undefined ? {} : { ironic }),
        ...(progress === undefined ? {} : { progress }),
      }),
    );
    const origin = describeIronicOrigin(ironicOrigin);
    if (origin !== undefined) ctx.stderr.write(origin + '\n');
    if (o['format'] === 'json') printJson(ctx, { compute_nodes: nodes.map(nodeJson), ...ironicOriginJson(ironicOrigin) });
    else ctx.stdout.write(renderTable(HEADERS, nodes.map(nodeRow)) + '\n');
    return 0;
  },
};

function nodeRow(h: ComputeNodeHealth): Array<string | number | null> {
  const n = h.node;
  return [n.uuid, h.cellName ?? n.cellUuid, n.host, n.hypervisorHostname, n.hypervisorType, h.service, h.mapped, h.provider, h.allocations, h.instances, h.ironicNode];
}

function nodeJson(h: ComputeNodeHealth): Record<string, unknown> {
  const n = h.node;
  return {
    id: n.id,
    uuid: n.uuid,
    cell_uuid: n.cellUuid,
    cell_name: h.cellName,
    host: n.host,
    hypervisor_hostname: n.hypervisorHostname,
    hypervisor_type: n.hypervisorType,
    service_state: h.service,
    service_disabled: h.serviceDisabled,
    service_last_seen_up: h.serviceLastSeenUp,
    updated_at: n.updatedAt,
    mapped: h.mapped,
    mapped_flag: n.mapped,
    provider: h.provider,
    allocations: h.allocations,
    instances: h.instances,
    ironic_node: h.ironicNode,
  };
}
