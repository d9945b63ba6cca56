// placement audit: nova-manage's options, output and exit codes, reading placement from its database.
import { placementAuditExitCode, renderPlacementAuditFailures, renderPlacementAuditJson, renderPlacementAuditLines } from '../cli/render-placement-audit.js';
import { type Interrupts } from '../cli/context.js';
import { flagOption, stringOption } from '../cli/options.js';
import { formatInterruptSummary } from '../cli/suggestions.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { NOVA_RESOURCE_CLASSES } from '../domain/audit/nova-orphaned-allocations.js';
import { runPlacementAudit } from '../operations/placement-audit.js';
import { journalSettings, useDeployment } from './shared/deployment.js';
import { jsonResult, lines, report } from '../cli/results.js';

interface PlacementAuditOptions {
  readonly verbose: boolean;
  readonly providerUuid: string | undefined;
  readonly delete: boolean;
  readonly allResourceClasses: boolean;
  readonly journal: string | undefined;
  readonly json: boolean;
}

export const placementAuditCommand: CommandSpec<PlacementAuditOptions> = {
  path: ['placement', 'audit'],
  family: 'compatible',
  summary: 'find (and with --delete remove) allocations of deleted instances and finished migrations (nova-manage compatible)',
  description: [
    'Audits orphaned allocations that no longer correspond to existing instance resources, exactly as nova-manage 26.x defines them. ' +
      "For every resource provider (or the one given with --resource_provider), the provider's root is taken as the compute node; a consumer " +
      `is orphaned when its allocations on the provider use one of ${NOVA_RESOURCE_CLASSES.join(', ')} and it is neither a live instance ` +
      "on that compute node (same host and node) nor a migration of it that is still in progress. A provider whose root is not a live " +
      'compute node has all such allocations reported. Allocations that use only custom classes (every ironic CUSTOM_BAREMETAL_* ' +
      'allocation) are never reported unless --all-resource-classes is given.',
    "--delete removes them: when the consumer also has allocations on other providers only this provider's share goes and the consumer " +
      "generation is bumped; otherwise the consumer's allocations and its consumer row are deleted. Each delete is journaled, so " +
      '`nova-reconcile undo JOURNAL` restores it; the journal path is printed on stderr.',
    'Unlike nova-manage, two kinds of what nova calls orphaned are never deleted, and are reported as kept with the reason (--verbose, ' +
      '--format json): allocations on a provider that is not a compute-node provider (a sharing provider with MISC_SHARES_VIA_AGGREGATE, ' +
      'a neutron agent or cyborg device provider), and the last allocations on compute-node providers of an instance that is live in some ' +
      'cell (for example on a stale provider). Kept allocations do not count as orphaned for the exit code.',
    'Without --verbose, only an unknown provider and failed deletes print anything; the exit code tells the result.',
  ],
  options: [
    { flags: '--verbose', description: 'print every orphaned allocation found or deleted, and the count, as nova-manage does' },
    { flags: '--resource_provider <provider_uuid>', description: 'UUID of a specific resource provider to verify' },
    { flags: '--delete', description: 'delete the orphaned allocations that were found (journaled; see undo)' },
    { flags: '--all-resource-classes', description: "count allocations of every resource class, so ironic (CUSTOM_*) orphans are found too" },
    { flags: '--journal <file>', description: 'with --delete, write the journal here (default: a timestamped file in [nova_reconcile] journal_dir)' },
    FORMAT_OPTION,
  ],
  jsonSchemas: ['placement-audit'],
  exitCodes: [
    [0, 'no orphaned allocations'],
    [1, 'a delete failed (the allocations changed under the run): the run stopped after that provider'],
    [3, 'orphaned allocations were found (no --delete)'],
    [4, 'orphaned allocations were found and deleted'],
    [127, 'the --resource_provider does not exist'],
    [130, 'with --delete, interrupted by Ctrl-C (SIGINT) while deleting: the consumer in flight finished, no other was deleted; a summary on stderr gives the count, the journal and the undo command (a second Ctrl-C stops at once)'],
    [2, 'invalid usage'],
    [255, 'any other error ("An error has occurred:" and one line on stdout): database unreachable, lock held'],
  ],
  differences: [
    'Placement is read from its database ([placement_database] connection) rather than through the Placement REST API: no keystone credentials or [placement] section are needed.',
    "Never deletes an allocation on a provider that is not a compute-node provider (MISC_SHARES_VIA_AGGREGATE sharing providers, neutron, cyborg: nova takes the provider's root for a compute node, finds none, and deletes a live instance's shared DISK_GB), nor the last allocations on compute-node providers of an instance that is live in some cell (nova deletes a live instance's only allocations when they sit on a stale provider). They are printed as \"are kept, not deleted\" with the reason, listed under \"kept\" in JSON, and not counted in \"Processed\" or the exit code.",
    '--all-resource-classes is an addition: with it every resource class counts, so orphaned ironic (CUSTOM_*) allocations, which nova never reports, are found and can be deleted.',
    '--delete journals every delete (before- and after-images) under the apply lock, so `nova-reconcile undo` restores them; the journal path goes to stderr. Each delete is a compare-and-swap on the consumer generation and the allocations the audit saw; one that changed in between is a failed delete (exit 1), never an overwrite. Removing one share does not re-check the capacity of the allocations kept, which nova\'s PUT does (and fails on an in-use ironic node).',
    "--delete bumps the generation of each provider that lost allocations (a compare-and-swap, journaled, restored by undo); nova-manage's DELETE and PUT leave it alone. Deliberate: a nova or other client caching the provider then sees that its allocations changed and re-reads them, instead of acting on what it cached.",
    '--format json prints one document with every orphan, its resources and what happened to it.',
    "Placement's allocation listing has no ORDER BY. nova-reconcile prints a provider's consumers in the order MariaDB returns them on a deployment of real size (by resource class, amount, then row; checked against the real nova-manage); on a database of a few rows MariaDB may choose another plan, and nova's order then differs.",
    'Set-based: the cells and placement are read once, in batches, instead of several requests per provider. Every cell must be readable: nova skips a cell that does not answer (and would call its allocations orphaned); nova-reconcile stops with an error instead.',
    "Without --delete (and without --resource_provider), the cells are read and judged one at a time: each cell's compute-node providers' allocations are checked against that cell's instances and migrations, and the cell is let go before the next, so memory grows with the largest cell, not with the cloud; only the consumers left in doubt are judged whole at the end. A server being scheduled while the audit runs can show as an orphaned allocation; re-run before acting on one. --resource_provider reads the cells whole and streams the allocations one consumer at a time; --delete reads everything beside the cells, whole, and audits again under the apply lock before it deletes.",
    'Errors print one line after "An error has occurred:" instead of a traceback.',
    'Ctrl-C or SIGTERM during --delete stops after the consumer in flight, prints what was deleted, the journal and the undo command on stderr, and exits 130 or 143 (nova-manage stops where it is).',
  ],
  examples: ['nova-reconcile placement audit --verbose', 'nova-reconcile placement audit --all-resource-classes --delete --verbose', 'nova-reconcile undo JOURNAL'],
  parse(raw) {
    return {
      verbose: flagOption(raw, 'verbose'),
      providerUuid: stringOption(raw, 'resource_provider'),
      delete: flagOption(raw, 'delete'),
      allResourceClasses: flagOption(raw, 'allResourceClasses'),
      journal: stringOption(raw, 'journal'),
      json: stringOption(raw, 'format') === 'json',
    };
  },
  async run(ctx, o) {
    const result = await useDeployment(ctx, (d) =>
      runPlacementAudit(d, {
        providerUuid: o.providerUuid,
        allResourceClasses: o.allResourceClasses,
        delete: o.delete,
        ...journalSettings(ctx, o.journal),
        ...(ctx.interrupts === undefined ? {} : { signal: ctx.interrupts.signal, holdInterrupts: () => (ctx.interrupts as Interrupts).hold() }),
      }),
    );
    for (const line of renderPlacementAuditFailures(result)) ctx.reporter.warn(line);
    // The operator log, for a run that deletes: its verbose lines and failures.
    if (o.delete) {
      for (const line of renderPlacementAuditLines(result, true)) ctx.log?.info(line);
      for (const line of renderPlacementAuditFailures(result)) ctx.log?.warning(line);
    }
    let after: string | undefined;
    if (result.kind === 'audited' && result.interrupted !== undefined) {
      const { reason, notStarted } = result.interrupted;
      const deleted = result.providers.reduce((n, p) => n + p.orphans.filter((x) => x.outcome.status === 'deleted').length, 0);
      after = formatInterruptSummary(
          `nova-reconcile: interrupted by ${reason}: the allocations of ${deleted} orphaned consumer(s) deleted, ${notStarted} not started.`,
          result.journalPath,
          'to undo what was deleted',
          'run the same command again (it audits what is there now).',
          ctx.selfCommand,
          ctx.configSources,
        );
      ctx.log?.warning(`placement audit --delete interrupted by ${reason}: ${deleted} deleted, ${notStarted} not started${result.journalPath === undefined ? '' : ` (journal ${result.journalPath})`}`);
    }
    const exitCode = placementAuditExitCode(result);
    if (o.json) return jsonResult(renderPlacementAuditJson(result), exitCode, after);
    return report(lines(renderPlacementAuditLines(result, o.verbose)), exitCode, after);
  },
};
