// placement heal_allocations: nova-manage's options, messages and exit codes; writes placement directly.
import { renderHealJson, renderHealLines, renderHealNotes } from '../cli/render-heal.js';
import { signalExitCode, type Interrupts } from '../cli/context.js';
import { flagOption, stringOption } from '../cli/options.js';
import { formatInterruptSummary } from '../cli/suggestions.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { runHealAllocations } from '../operations/heal-allocations.js';
import { journalSettings, useDeployment } from './shared/deployment.js';
import { jsonResult, lines, report } from '../cli/results.js';

interface HealAllocationsOptions {
  readonly instanceUuid: string | undefined;
  readonly cellUuid: string | undefined;
  /** --max-count as given: runHealAllocations checks it as nova-manage does. */
  readonly maxCount: string | undefined;
  readonly dryRun: boolean;
  readonly force: boolean;
  readonly journal: string | undefined;
  readonly verbose: boolean;
  readonly json: boolean;
}

export const healAllocationsCommand: CommandSpec<HealAllocationsOptions> = {
  path: ['placement', 'heal_allocations'],
  family: 'compatible',
  summary: 'create missing allocations of live instances, or fix their project/user (nova-manage compatible; writes placement directly)',
  description: [
    'Iterates over non-cell0 cells looking for instances which do not have allocations in placement, or whose consumer project_id/user_id ' +
      'differ from the instance, and which are not undergoing a task state transition. For each one, allocations are created (or updated) ' +
      "against the compute node resource provider of the instance's host and node, from the flavor embedded in the instance: VCPU (or PCPU " +
      'for hw:cpu_policy=dedicated), MEMORY_MB and DISK_GB (no root disk when volume-backed), with resources[$S]:RC=N extra specs ' +
      'overriding them and zero amounts left out (resources:VCPU=0 gives no VCPU row).',
    'Unlike nova-manage, which PUTs through the Placement API, the allocations are written directly into the placement database, as ' +
      "Placement writes them: the consumer created at generation 1 (or bumped) with the instance's project and user (get-or-created), and " +
      "every provider of the new allocations bumped once. Placement's capacity rules are checked, with one exception stated on stderr: " +
      "an in-use ironic node's own reserved = 1 (total 1) does not block its own instance (bug 1841481), which the API refuses with 409.",
    'Each instance is written in one compare-and-swap transaction, journaled before it commits, under the apply lock; ' +
      '`nova-reconcile undo JOURNAL` restores it. The journal path goes to stderr.',
    'This command keeps nova-manage\'s grammar, which differs from the reconciliation commands: it writes unless --dry-run is given ' +
      '(there is no --apply), and its exit codes are nova\'s: a dry run always ends with 4.',
  ],
  options: [
    {
      flags: '--max-count <max_count>',
      description:
        'Maximum number of instances to process. If not specified, all instances in each cell will be mapped in batches of 50. ' +
        'If you have a large number of instances, consider specifying a custom value and run the command until it exits with 0 or 4.',
    },
    { flags: '--verbose', description: 'Provide verbose output during execution.' },
    { flags: '--dry-run', description: 'Runs the command and prints output but does not commit any changes. The return code should be 4.' },
    {
      flags: '--instance <instance_uuid>',
      description: 'UUID of a specific instance to process. If specified --max-count has no effect. The --cell and --instance options are mutually exclusive.',
    },
    {
      flags: '--skip-port-allocations',
      description: 'Skip the healing of the resource allocations of bound ports (accepted for compatibility; see the differences: port allocations are never healed here).',
    },
    { flags: '--cell <cell_uuid>', description: 'Heal allocations within a specific cell. The --cell and --instance options are mutually exclusive.' },
    { flags: '--force', description: 'Force heal allocations (rebuild them from the flavor). Requires the --instance argument.' },
    { flags: '--journal <file>', description: 'write the journal here (default: a timestamped file in [nova_reconcile] journal_dir)' },
    FORMAT_OPTION,
  ],
  jsonSchemas: ['placement-heal_allocations'],
  exitCodes: [
    [0, 'Command completed successfully and allocations were created.'],
    [1, '--max-count was reached and there are more instances to process.'],
    [2, 'Unable to find a compute node record for a given instance.'],
    [3, 'Unable to create (or update) allocations for an instance against its compute node resource provider (the reason goes to stderr).'],
    [4, 'Command completed successfully but no allocations were created (always with --dry-run).'],
    [8, 'Cannot heal instance with vGPU or Cyborg resource request.'],
    [127, 'Invalid input.'],
    [130, 'interrupted by Ctrl-C (SIGINT) while writing: no instance written after it, the one in flight finished; a summary on stderr gives the instances healed, the journal and the undo command (a second Ctrl-C stops at once)'],
    [255, 'any other error ("An error has occurred:" and one line on stdout): database unreachable, lock held'],
  ],
  differences: [
    'Writes the placement database directly ([placement_database] connection) instead of the Placement API: no keystone or [placement] section is needed.',
    "An in-use ironic node (total 1, reserved 1) takes its own instance's allocation (stated on stderr with a \"note:\" line); nova's PUT fails with exit 3. Every other capacity rule is Placement's.",
    'Port (QoS) allocations need Neutron, which nova-reconcile does not reach, and port resource requests are not visible in the Nova databases; they are never healed, with or without --skip-port-allocations, so exit codes 5, 6 and 7 do not occur.',
    'Why an exit 3 happened goes to stderr (nova prints an empty "Error: "); --dry-run also warns on stderr about a write that would be refused.',
    'Every write is journaled and undoable (`nova-reconcile undo JOURNAL`); --format json prints one document.',
    'Ctrl-C or SIGTERM while the allocations are written stops after the instance in flight, prints what was healed, the journal and the undo command on stderr, and exits 130 or 143 (nova-manage stops where it is).',
    'Flavors with hw:cpu_policy=mixed, hw:mem_encryption or hw:pmem are refused (exit 3) instead of being computed.',
    'As in nova, --max-count is checked at the end of a page and of a cell, and an unlimited run that healed exactly 50 instances when a cell ends stops with exit 1.',
    "Cells are read one at a time, as nova walks them: a cell's instances, compute nodes and placement rows are read when the walk reaches it and let go before the next, so memory grows with the largest cell, not with the cloud. Every cell the walk may reach is checked to answer (and to have services if it has compute nodes) before the first is walked; placement's inventories and usage are read only for the providers an instance would be written to.",
  ],
  examples: [
    'nova-reconcile placement heal_allocations --dry-run --verbose',
    'nova-reconcile placement heal_allocations --max-count 100 --skip-port-allocations',
    'nova-reconcile placement heal_allocations --instance 3f534fee-9450-4c30-bbd2-f26a1ae0a399 --verbose',
  ],
  parse(raw) {
    return {
      instanceUuid: stringOption(raw, 'instance'),
      cellUuid: stringOption(raw, 'cell'),
      maxCount: stringOption(raw, 'maxCount'),
      dryRun: flagOption(raw, 'dryRun'),
      force: flagOption(raw, 'force'),
      journal: stringOption(raw, 'journal'),
      verbose: flagOption(raw, 'verbose'),
      json: stringOption(raw, 'format') === 'json',
    };
  },
  async run(ctx, o) {
    const result = await useDeployment(ctx, (d) =>
      runHealAllocations(d, {
        instanceUuid: o.instanceUuid,
        cellUuid: o.cellUuid,
        maxCount: o.maxCount,
        dryRun: o.dryRun,
        force: o.force,
        // nova's --verbose lines, held only where they are printed: stdout, JSON, or the operator log of a run that writes.
        messages: o.verbose || o.json || !o.dryRun,
        ...journalSettings(ctx, o.journal),
        ...(ctx.interrupts === undefined ? {} : { signal: ctx.interrupts.signal, holdInterrupts: () => (ctx.interrupts as Interrupts).hold() }),
      }),
    );
    const interrupted = result.interrupted;
    // Interrupted: nova's closing line would claim a finished run; the exit code is the signal's.
    const shown = interrupted === undefined ? result : { ...result, end: { code: signalExitCode(interrupted.reason), text: '', always: false, detail: null } };
    for (const line of renderHealNotes(shown)) ctx.reporter.warn(line);
    // The operator log: what nova-manage --verbose would print of a run that writes, and its notes.
    if (!o.dryRun) {
      for (const line of renderHealLines(shown, true)) ctx.log?.info(line);
      for (const line of renderHealNotes(shown)) ctx.log?.warning(line);
    }
    let after: string | undefined;
    if (interrupted !== undefined) {
      const healed = result.steps.filter((s) => 'status' in s && s.status === 'healed').length;
      after = formatInterruptSummary(
          `nova-reconcile: interrupted by ${interrupted.reason}: ${healed} instance(s) healed, ${interrupted.notStarted} not started.`,
          result.journalPath,
          'to undo what was healed',
          'run the same command again (it heals what is still missing).',
          ctx.selfCommand,
          ctx.configSources,
        );
      ctx.log?.warning(`placement heal_allocations interrupted by ${interrupted.reason}: ${healed} instance(s) healed, ${interrupted.notStarted} not started${result.journalPath === undefined ? '' : ` (journal ${result.journalPath})`}`);
    }
    if (o.json) return jsonResult(renderHealJson(shown), shown.end.code, after);
    return report(lines(renderHealLines(shown, o.verbose)), shown.end.code, after);
  },
};
