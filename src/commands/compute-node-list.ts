// compute_node list: one row per live compute node with its own health
// (seed bug 2013: the service heartbeat says nothing about each node).
import { RECONCILE_EXIT, reconcileExitCodes } from '../cli/exit-codes.js';
import { COLUMN_OPTION, LISTING_FORMAT_OPTION, columnsOption, listingFormat, selectColumns, type ListingFormat } from '../cli/listing.js';
import { TABLE_WIDTH_OPTIONS } from '../cli/table-width.js';
import { stringOption } from '../cli/options.js';
import type { CommandSpec } from '../cli/spec.js';
import type { ComputeNodeHealth } from '../domain/node-health.js';
import { listComputeNodes } from '../operations/list-compute-nodes.js';
import { resolveCellArgument } from '../operations/scope.js';
import { cellOption, progressReporter } from './shared/read-options.js';
import { useDeployment } from './shared/deployment.js';
import { jsonResult } from '../cli/results.js';
import { IRONIC_OPTIONS, describeIronicOrigin, ironicOriginJson, parseIronicOptions, readIronicOptions, type IronicOptions } from './shared/ironic-source.js';

const HEADERS = ['uuid', 'cell', 'host', 'hypervisor_hostname', 'type', 'service', 'mapped', 'provider', 'allocations', 'instances', 'ironic_node'];

interface ComputeNodeListOptions {
  readonly format: ListingFormat;
  readonly columns: string[] | undefined;
  readonly cell: string | undefined;
  readonly host: string | undefined;
  readonly ironic: IronicOptions;
}

export const computeNodeListCommand: CommandSpec<ComputeNodeListOptions> = {
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
    { flags: '--cell <cell>', description: 'only the nodes of this cell, by uuid or name (only its database is read)' },
    ...IRONIC_OPTIONS,
    {
      ...LISTING_FORMAT_OPTION,
      description:
        'output format: table (on a terminal, long cells are cut to its width; piped, whole); json (one document on stdout: schemas/compute_node-list.schema.json, mapped is a boolean); value (the cells of each row, space-separated, no header); csv',
    },
    { ...COLUMN_OPTION, description: `with -f table, value or csv: show only this column (repeatable, in the order given): ${HEADERS.join(', ')}` },
    ...TABLE_WIDTH_OPTIONS,
  ],
  jsonSchemas: ['compute_node-list'],
  exitCodes: reconcileExitCodes({
    0: 'listed (also when no node matches)',
    3: null,
    4: null,
    5: null,
    2: 'could not run: configuration, a database unreachable, the Ironic API unreachable, refusing the credentials or failing part-way',
    127: 'invalid usage or input: an unknown --cell, a cell name several cells share, a malformed --ironic-nodes file',
    130: 'interrupted by Ctrl-C (SIGINT); read-only: no database was changed',
    143: 'stopped by SIGTERM; read-only: no database was changed',
  }),
  examples: [
    'nova-reconcile compute_node list --host ironic-compute-0',
    'nova-reconcile compute_node list --ironic-nodes nodes.json --format json',
    'nova-reconcile compute_node list -f value -c uuid -c service',
  ],
  parse(raw) {
    return { format: listingFormat(raw), columns: columnsOption(raw, HEADERS), cell: cellOption(raw), host: stringOption(raw, 'host'), ironic: parseIronicOptions(raw) };
  },
  async run(ctx, { format, columns, cell, host, ironic: ironicOptions }) {
    const progress = progressReporter(ctx, false);
    const ironic = await readIronicOptions(ctx, ironicOptions, progress);
    const { nodes, ironicOrigin } = await useDeployment(ctx, async (d) => {
      const cellUuid = cell === undefined ? undefined : await resolveCellArgument(d, cell);
      return listComputeNodes(d, {
        ...(cellUuid === undefined ? {} : { cellUuid }),
        ...(host === undefined ? {} : { host }),
        ...(ironic === undefined ? {} : { ironic }),
        ...(progress === undefined ? {} : { progress }),
      });
    });
    const origin = describeIronicOrigin(ironicOrigin);
    if (origin !== undefined) ctx.reporter.warn(origin);
    if (format === 'json') return jsonResult({ changed: false, compute_nodes: nodes.map(nodeJson), ...ironicOriginJson(ironicOrigin) }, RECONCILE_EXIT.clean);
    const listing = selectColumns({ headers: HEADERS, rows: nodes.map(nodeRow) }, columns);
    return { kind: 'listing', listing, format, highlight: (palette, column, text) => (column === 'service' && text !== 'up' ? palette.warn(text) : text), exitCode: RECONCILE_EXIT.clean };
  },
};

function nodeRow(h: ComputeNodeHealth): Array<string | number | null> {
  const n = h.node;
  return [n.uuid, h.cellLabel, n.host, n.hypervisorHostname, n.hypervisorType, h.service, h.mapped, h.provider, h.allocations, h.instances, h.ironicNode];
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
    // Whether the host's mapping points at the node's own cell; mapped_elsewhere: it points at another cell.
    mapped: h.mapped === 'yes',
    mapped_elsewhere: h.mapped === 'other-cell',
    mapped_flag: n.mapped,
    provider: h.provider,
    allocations: h.allocations,
    instances: h.instances,
    ironic_node: h.ironicNode,
  };
}
