// audit: the read-only report of every inconsistency; exit 0 clean, 3 findings.
import { releaseJson } from '../domain/nova-release.js';
import { RECONCILE_EXIT, reconcileExitCodes } from '../cli/exit-codes.js';
import { FINDING_COLUMNS, findingsJson } from '../cli/render-findings.js';
import { COLUMN_OPTION, LISTING_FORMAT_OPTION, LISTING_FORMATS, columnsOption, listingFormat, type ListingFormat } from '../cli/listing.js';
import { TABLE_WIDTH_OPTIONS } from '../cli/table-width.js';
import { flagOption, stringOption } from '../cli/options.js';
import { findingsWithConfigArguments } from '../cli/suggestions.js';
import type { CommandContext, CommandSpec } from '../cli/spec.js';
import { auditReadsWhole } from '../cli/context.js';
import { SCOPE_CELL, SCOPE_HOST } from '../cli/scope.js';
import { FINDING_KINDS, type FindingKind } from '../domain/audit/index.js';
import { ReconcileError } from '../errors.js';
import { runAudit, type AuditRunOptions } from '../operations/audit.js';
import { renderAuditMetrics, type AuditMetrics } from '../cli/render-prometheus.js';
import { describeFileError, writeFileAtomically } from '../files.js';
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { useDeployment } from './shared/deployment.js';
import { jsonResult, report } from '../cli/results.js';
import { cellOption, progressReporter, showsStatusLine } from './shared/read-options.js';
import { IRONIC_OPTIONS, describeIronicOrigin, ironicOriginJson, parseIronicOptions, readIronicOptions, type IronicOptions } from './shared/ironic-source.js';

interface AuditOptions {
  readonly cell: string | undefined;
  readonly host: string | undefined;
  readonly kinds: FindingKind[] | undefined;
  /** table, json, value or csv; with prometheus: table (stdout then holds the metrics only). */
  readonly format: ListingFormat;
  readonly prometheus: boolean;
  readonly columns: string[] | undefined;
  /** --metrics-file as given; its directory is checked by run (metricsFileOption). */
  readonly metricsFile: string | undefined;
  readonly verbose: boolean;
  readonly ironic: IronicOptions;
}

export const auditCommand: CommandSpec<AuditOptions> = {
  path: ['audit'],
  family: 'reconcile',
  summary: 'report every inconsistency across the API, cell and placement databases (read-only)',
  description: [
    'Reads the API database, every cell and placement, and prints one finding per problem: its kind, the cell, the objects involved and the command that fixes it. ' +
      'Nothing is changed. Every cell must be readable: an audit that skipped a cell would call its nodes missing. ' +
      'A cloud of two cells or more is read and judged one cell at a time, so memory grows with the largest cell; where cells share a host, a node name or uuid, or a consumer, every cell is read at once (a progress line says why). ' +
      "Placement's allocations are read last, one consumer at a time, and not held (memory does not grow with them): a server being scheduled while the audit runs can show as an orphaned-allocation; re-run before acting on one.",
    '--cell, --host and --kind select among the findings of the whole deployment (every cell is still read); --host keeps the findings whose ' +
      'objects name the host (objects.host), so placement-only findings without a host are left out. The exit code follows the findings reported.',
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
    SCOPE_CELL,
    SCOPE_HOST,
    {
      flags: '--kind <kinds>',
      description: 'only report findings of these kinds (comma-separated, from the list under Kinds). The exit code follows the findings reported: 0 when none of these kinds is found',
      suggestions: FINDING_KINDS,
    },
    ...IRONIC_OPTIONS,
    { flags: '--verbose', description: 'print each read as a line on stderr, also when stderr is not a terminal (on a terminal one status line shows the phase in place; the global --progress prints it throttled when piped)' },
    {
      ...LISTING_FORMAT_OPTION,
      description:
        "output format: table; json (one document on stdout: schemas/audit.schema.json); value (one finding per line, space-separated, no header); csv; prometheus (text exposition format: findings per kind and cell, the run's duration, success and time)",
      choices: [...LISTING_FORMATS, 'prometheus'],
    },
    { ...COLUMN_OPTION, description: `with -f table, value or csv: show only this column (repeatable, in the order given): ${FINDING_COLUMNS.join(', ')}` },
    ...TABLE_WIDTH_OPTIONS,
    {
      flags: '--metrics-file <path>',
      description:
        "also write the Prometheus metrics to PATH, atomically (a temporary file in the same directory, renamed over it), for node_exporter's textfile collector; written also when the audit fails (success 0)",
    },
  ],
  jsonSchemas: ['audit'],
  exitCodes: reconcileExitCodes({
    0: 'clean: no findings',
    3: 'findings were reported; nothing changed',
    4: null,
    5: null,
    2: 'could not run: configuration (e.g. no [placement_database] connection), a database unreachable, the Ironic API unreachable, refusing the [ironic] credentials or failing part-way, implausible ground truth (an empty or foreign --ironic-nodes list, a cell without services, a consumer id in placement.allocations that the column collation takes for another, so that its allocations cannot be read as one), the --metrics-file could not be written',
    127: 'invalid usage or input: an unknown cell, a cell name several cells share, an unknown --host or --kind, an unreadable or malformed --ironic-nodes file, a --metrics-file in a directory that does not exist',
    130: 'interrupted by Ctrl-C (SIGINT); read-only: no database was changed',
    143: 'stopped by SIGTERM; read-only: no database was changed',
  }),
  examples: [
    'nova-reconcile audit',
    'openstack baremetal node list -f json > nodes.json && nova-reconcile audit --ironic-nodes nodes.json --format json',
    'nova-reconcile audit --cell cell1 --host compute-9 --kind orphan-node-service-deleted,orphan-node-ironic-deleted',
    'nova-reconcile audit --metrics-file /var/lib/node_exporter/textfile_collector/nova_reconcile.prom > /dev/null',
  ],
  parse(raw) {
    return {
      cell: cellOption(raw),
      host: stringOption(raw, 'host'),
      kinds: kindOption(stringOption(raw, 'kind')),
      format: listingFormat(raw),
      prometheus: stringOption(raw, 'format') === 'prometheus',
      columns: columnsOption(raw, FINDING_COLUMNS),
      metricsFile: stringOption(raw, 'metricsFile'),
      verbose: flagOption(raw, 'verbose'),
      ironic: parseIronicOptions(raw),
    };
  },
  async run(ctx, o) {
    const { cell, host, kinds, format, columns, prometheus } = o;
    const metricsFile = metricsFileOption(o.metricsFile, ctx.cwd);
    const status = auditProgress(ctx, o.verbose);
    const ironic = await readIronicOptions(ctx, o.ironic, status.hooks.progress);
    const started = Date.now();
    const metrics = (findings: AuditMetrics['findings'], cells: AuditMetrics['cells']): string =>
      renderAuditMetrics({ findings, cells, durationSeconds: (Date.now() - started) / 1000, endedAtMs: Date.now() });
    let result;
    try {
      result = await useDeployment(ctx, (d) =>
        runAudit(d, {
          ...(cell === undefined ? {} : { cell }),
          ...(host === undefined ? {} : { host }),
          ...(kinds === undefined ? {} : { kinds }),
          ...(ironic === undefined ? {} : { ironic }),
          ...(auditReadsWhole(ctx) ? { readWhole: true } : {}),
          ...status.hooks,
        }),
      );
    } catch (err) {
      status.clear();
      // Monitoring learns that the audit failed; the error itself is reported as usual.
      if (metricsFile !== undefined || prometheus) {
        const text = metrics(undefined, []);
        if (metricsFile !== undefined) writeMetrics(metricsFile, text);
        if (prometheus) return { kind: 'failed', text, error: err };
      }
      throw err;
    }
    status.clear();
    const origin = describeIronicOrigin(result.ironicOrigin);
    if (origin !== undefined) ctx.reporter.warn(origin);
    const findings = findingsWithConfigArguments(result.findings, ctx.configSources);
    const exitCode = result.findings.length === 0 ? RECONCILE_EXIT.clean : RECONCILE_EXIT.findings;
    const text = metricsFile !== undefined || prometheus ? metrics(findings, result.cells) : undefined;
    if (metricsFile !== undefined && text !== undefined) writeMetrics(metricsFile, text);
    // With -f prometheus stdout holds the metrics only.
    if (prometheus && text !== undefined) return report(text, exitCode);
    if (format === 'json') return jsonResult({ ...findingsJson(findings, result.cells), ...ironicOriginJson(result.ironicOrigin), release: releaseJson(result.release) }, exitCode);
    return { kind: 'findings', findings, cells: result.cells, format, columns, exitCode };
  },
};

/** --kind K[,K...], checked against the finding kinds before anything is read. */
function kindOption(value: string | undefined): FindingKind[] | undefined {
  if (value === undefined) return undefined;
  const kinds = value.split(',').map((k) => k.trim()).filter((k) => k !== '');
  const unknown = kinds.filter((k) => !(FINDING_KINDS as readonly string[]).includes(k));
  if (kinds.length === 0 || unknown.length > 0)
    throw new ReconcileError('usage', `--kind ${JSON.stringify(value)}: ${kinds.length === 0 ? 'no kind given' : `unknown kind ${unknown.join(', ')}`}`, { hint: `the kinds are ${FINDING_KINDS.join(', ')}` });
  return kinds as FindingKind[];
}

/** --metrics-file: its directory must exist (checked before anything is read). */
function metricsFileOption(value: string | undefined, cwd: string): string | undefined {
  if (value === undefined) return undefined;
  const path = resolve(cwd, value);
  let isDir = false;
  try {
    isDir = statSync(dirname(path)).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir || value.endsWith('/')) throw new ReconcileError('usage', `--metrics-file ${value}: ${value.endsWith('/') ? 'names a directory, not a file' : `the directory ${dirname(path)} does not exist`}`, { hint: "give a file in node_exporter's --collector.textfile.directory" });
  return path;
}

function writeMetrics(path: string, text: string): void {
  try {
    writeFileAtomically(path, text);
  } catch (err) {
    throw new ReconcileError('config', `cannot write the metrics file ${path}: ${describeFileError(err)}`, { hint: 'check that the directory is writable by this user' });
  }
}

/**
 * The audit's progress: on a terminal (or with --progress) one status line,
 * phase by phase: each read, then each check with its count; with --verbose
 * and no terminal, one line per read as before.
 */
function auditProgress(ctx: CommandContext, verbose: boolean): { hooks: Pick<AuditRunOptions, 'progress' | 'onStep'>; clear(): void } {
  const read = progressReporter(ctx, verbose);
  if (read === undefined) return { hooks: {}, clear: () => undefined };
  if (!showsStatusLine(ctx)) return { hooks: { progress: read }, clear: () => undefined };
  let auditing = false;
  return {
    hooks: {
      progress: (text) => {
        // A read between two checks (the allocations, streamed after the index is built) is a phase of its own.
        auditing = false;
        read(text);
      },
      onStep: (step, index, total) => {
        if (!auditing) ctx.reporter.phase('auditing', total);
        auditing = true;
        ctx.reporter.update(index, step);
      },
    },
    clear: () => ctx.reporter.clear(),
  };
}
