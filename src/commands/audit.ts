// audit: the read-only report of every inconsistency; exit 0 clean, 3 findings.
import { RECONCILE_EXIT } from '../cli/exit-codes.js';
import { findingsJson, renderFindingsTable } from '../cli/render-findings.js';
import { findingsWithConfigArguments } from '../cli/suggestions.js';
import { FORMAT_OPTION, type CommandContext, type CommandOptions, type CommandSpec } from '../cli/spec.js';
import { FINDING_KINDS } from '../domain/audit.js';
import { isUuid } from '../domain/ironic-nodes.js';
import { ReconcileError } from '../errors.js';
import { runAudit } from '../operations/audit.js';
import { printJson, useDeployment } from './deployment.js';
import { IRONIC_OPTIONS, describeIronicOrigin, ironicOriginJson, readIronicOptions } from './ironic-source.js';

export const auditCommand: CommandSpec = {
  path: ['audit'],
  family: 'reconcile',
  summary: 'report every inconsistency across the API, cell and placement databases (read-only)',
  description: [
    'Reads the API database, every cell and placement, and prints one finding per problem: its kind, the cell, the objects involved and the command that fixes it. ' +
      'Nothing is changed. Every cell must be readable: an audit that skipped a cell would call its nodes missing.',
    `Kinds: ${FINDING_KINDS.join(', ')}.`,
    'Allocations on stale providers are classified in objects.class: evacuation-leftover, live-instance-on-node, active-migration or orphaned. ' +
      'Ironic compute nodes whose ironic node is gone are only known with ironic truth: the Ironic API (nova.conf [ironic]) or --ironic-nodes; ' +
      'a node listed in a conductor group that no nova-compute serves ([nova_reconcile] ironic_partitions) is ironic-node-unmanaged, not deleted. ' +
      'Without ironic truth, an ironic node last saved more than 24 hours ' +
      "before its service's last heartbeat is listed as suspect-orphan-node (an idle node looks the same, so check before deleting).",
    'Each suggestion is the command that fixes the finding and agrees with what that command plans: an ironic node whose service was deleted ' +
      "is node-of-dead-service for compute_node rebalance (Nova's ring owner adopts it), and an orphan only when the ironic truth says its " +
      'ironic node is gone; an unmapped node of a host without a live service is never sent to discover_hosts; the provider of a ' +
      'soft-deleted ironic node that nova-compute restores under the same uuid (bug 1839560) is kept, not offered to cleanup_providers; an ' +
      "allocation on another live node's provider is placement audit --delete's. Suggested commands repeat the --config-file and " +
      '--config-dir options given, shell-quoted.',
  ],
  options: [
    { flags: '--cell <uuid>', description: "only report this cell's findings (every cell is still read)" },
    ...IRONIC_OPTIONS,
    { flags: '--verbose', description: 'print progress on stderr (also when stderr is a terminal)' },
    { ...FORMAT_OPTION, description: 'output format: table, or json (one document on stdout)' },
  ],
  exitCodes: [
    [0, 'clean: no findings'],
    [3, 'findings were reported; nothing changed'],
    [2, 'could not run: configuration (e.g. no [placement_database] connection), a database unreachable, the Ironic API unreachable, refusing the [ironic] credentials or failing part-way, implausible ground truth (an empty or foreign --ironic-nodes list, a cell without services)'],
    [127, 'invalid usage or input: a malformed --cell uuid, an unknown cell, an unreadable or malformed --ironic-nodes file'],
    [255, 'unexpected internal error'],
  ],
  examples: [
    'nova-reconcile audit',
    'openstack baremetal node list -f json > nodes.json && nova-reconcile audit --ironic-nodes nodes.json --format json',
  ],
  async run(ctx, o) {
    const cellUuid = cellUuidOption(o);
    const progress = progressReporter(ctx, o['verbose'] === true);
    const ironic = await readIronicOptions(ctx, o, progress);
    const result = await useDeployment(ctx, (d) =>
      runAudit(d, {
        ...(cellUuid === undefined ? {} : { cellUuid }),
        ...(ironic === undefined ? {} : { ironic }),
        ...(progress === undefined ? {} : { progress }),
      }),
    );
    const findings = findingsWithConfigArguments(result.findings, ctx.configSources);
    const origin = describeIronicOrigin(result.ironicOrigin);
    if (origin !== undefined) ctx.stderr.write(origin + '\n');
    if (o['format'] === 'json') printJson(ctx, { ...(findingsJson(findings, result.cells) as object), ...ironicOriginJson(result.ironicOrigin) });
    else ctx.stdout.write(renderFindingsTable(findings, result.cells) + '\n');
    return result.findings.length === 0 ? RECONCILE_EXIT.clean : RECONCILE_EXIT.findings;
  },
};

/** --cell, checked for the uuid form before anything is read. */
export function cellUuidOption(o: CommandOptions): string | undefined {
  const value = o['cell'];
  if (typeof value !== 'string') return undefined;
  if (!isUuid(value)) throw new ReconcileError('usage', `--cell ${JSON.stringify(value)} is not a cell uuid`, { hint: 'run `nova-reconcile cell_v2 list_cells` to see the cells' });
  return value.toLowerCase();
}

/** Progress lines on stderr for long reads: on a terminal, or when asked for. */
export function progressReporter(ctx: CommandContext, verbose: boolean): ((line: string) => void) | undefined {
  return ctx.stderrIsTty || verbose ? (line) => ctx.stderr.write(line + '\n') : undefined;
}
