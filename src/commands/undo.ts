// undo JOURNAL: restore the rows an applied run changed.
import { RECONCILE_EXIT, reconcileExitCodes } from '../cli/exit-codes.js';
import { flagOption, stringOption } from '../cli/options.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { withApplyLock } from '../operations/apply-plan.js';
import { readJournalFor, undoJournal } from '../operations/undo.js';
import { useDeployment } from './shared/deployment.js';
import { jsonResult, lines, report, type CommandResult } from '../cli/results.js';
import { signalExitCode } from '../cli/context.js';
import { undoCommandLine } from '../cli/suggestions.js';

interface UndoOptions {
  /** The journal to undo (the positional argument). */
  readonly journal: string;
  readonly apply: boolean;
  readonly allowTruncated: boolean;
  /** --journal: where to write the undo's own journal. */
  readonly undoJournal: string | undefined;
  readonly json: boolean;
}

export const undoCommand: CommandSpec<UndoOptions> = {
  path: ['undo'],
  family: 'reconcile',
  summary: 'restore the rows an applied run changed, from its journal',
  args: ['<journal>'],
  description: [
    'Reads a journal written by an applied run (--apply) and restores every row it lists to its before-image, newest change first, ' +
      'each change in one transaction. Every row is a compare-and-swap against its after-image: a row that has changed since the run ' +
      'is refused and reported, never overwritten. Rows already back at their before-image are left alone, so undo can be re-run. ' +
      'It writes under the apply lock, as the applying commands do: a second undo, or an apply, waits up to [nova_reconcile] lock_timeout.',
    'Like every mutating command, undo changes nothing without --apply: it then simulates the restore, in order, inside transactions ' +
      'that are rolled back, and lists what would be restored and what would be refused. A change whose restore would break a unique key ' +
      '(Nova re-created a provider with the same name or uuid since) is refused and listed, as a changed row is: a retry cannot fix it. ' +
      'With --apply the databases are restored side by side, last change first: up to [nova_reconcile] apply_concurrency changes at a ' +
      'time in the API and each cell database (two that touch a common row, name, uuid or host one after the other, in reverse order), ' +
      'placement one change at a time; each unit\'s changes keep their reverse order across databases (the crash-safety order of the ' +
      'apply, reversed). A change only reads and writes its own database, so the order between databases changes no outcome. ' +
      'Consecutive changes of one database are restored in one transaction, up to [nova_reconcile] apply_batch_units of them; ' +
      'a refused one makes them go one by one, so what is restored and refused is the same. ' +
      'The undo writes its own journal, so it can be undone in turn. A journal that is corrupt, truncated, ' +
      'or was written for another deployment is refused whole, before any row is touched. So is one whose row images could name other ' +
      'rows than the ones the run changed (a hand-edited line with an empty key, a key or value that is not a number, a string or null, ' +
      'a table name that is not an identifier, or an image of another row than its key), or whose change names a cell that is not in ' +
      'cell_mappings now; a journal whose last line a killed run left incomplete is accepted only with ' +
      '--allow-truncated. A journal belongs to a deployment by its API database name and its cell mappings (uuid and creation time), ' +
      'not by the address it was written through: it can be undone through any Galera node, VIP or host name of the same deployment. (Earlier versions applied by default; --dry-run is still accepted and changes nothing.)',
  ],
  options: [
    { flags: '--apply', description: 'restore the rows; without it the restore is simulated and nothing changes' },
    { flags: '--dry-run', description: 'accepted for compatibility: the default already changes nothing (without --apply)' },
    { flags: '--allow-truncated', description: 'accept a journal whose last line was cut off by a killed run: that entry never committed and is dropped' },
    { flags: '--journal <file>', description: "where to write the undo's own journal" },
    FORMAT_OPTION,
  ],
  jsonSchemas: ['undo'],
  exitCodes: reconcileExitCodes({
    0: 'nothing to restore (every row is already at its before-image)',
    3: 'without --apply: rows would be restored (nothing changed)',
    4: 'rows were restored',
    5: 'some changes were (or would be) refused because their rows changed since, their keys were taken since, or other writers kept winning the row ("lost to concurrent writers"; listed); with --apply the others were restored',
    2: 'could not run: configuration or a database unreachable',
    127: 'the journal is missing, corrupt (row images included), truncated, or for another deployment',
    130: 'with --apply, interrupted by Ctrl-C (SIGINT): the changes in flight finished, no other was started; the summary on stderr says how to finish (run the same undo again)',
    143: 'with --apply, stopped by SIGTERM, as for 130',
  }),
  examples: [
    'nova-reconcile --config-file /etc/nova/nova.conf undo /var/lib/nova-reconcile/journal/compute_node-cleanup_orphans-20261202T101500Z-1a2b3c.jsonl',
    'nova-reconcile --config-file /etc/nova/nova.conf undo /var/lib/nova-reconcile/journal/compute_node-cleanup_orphans-20261202T101500Z-1a2b3c.jsonl --apply',
  ],
  parse(raw, args) {
    return {
      journal: args[0] ?? '',
      apply: flagOption(raw, 'apply'),
      allowTruncated: flagOption(raw, 'allowTruncated'),
      undoJournal: stringOption(raw, 'journal'),
      json: stringOption(raw, 'format') === 'json',
    };
  },
  async run(ctx, o) {
    // Nothing changes without --apply (docs/operations/safety.md); --dry-run is kept as a no-op alias.
    const dryRun = !o.apply;
    const settings = ctx.loadConfig().reconcile;
    const result = await useDeployment(ctx, async (d) => {
      const undo = (): ReturnType<typeof undoJournal> =>
        undoJournal(d, o.journal, {
          dryRun,
          allowTruncatedTail: o.allowTruncated,
          journalDir: settings.journalDir,
          undoJournalPath: o.undoJournal,
          onJournal: (p) => ctx.reporter.warn(`journal: ${p}`),
          ...(ctx.interrupts === undefined ? {} : { signal: ctx.interrupts.signal }),
        });
      // Writes under the apply lock, as every applying command: two undos of
      // one journal (or an undo racing an apply) run one after the other.
      if (dryRun) return undo();
      // A journal that cannot be used is refused before the lock is taken.
      await readJournalFor(d, o.journal, o.allowTruncated);
      // Ctrl-C or SIGTERM from here on: the changes in flight finish, no other starts; a re-run finishes the undo.
      const release = ctx.interrupts?.hold() ?? ((): void => undefined);
      try {
        return await withApplyLock(d, settings.lockTimeout, undo);
      } finally {
        release();
      }
    });
    const count = (s: string): number => result.items.filter((i) => i.status === s).length;
    if (!dryRun) {
      // The operator log: one line per restored or refused change.
      for (const i of result.items) {
        if (i.status === 'restored') ctx.log?.info(`undo of ${result.command} (${result.journal}): restored change ${i.seq} (${i.unit})`);
        else if (i.status === 'refused') ctx.log?.warning(`undo of ${result.command} (${result.journal}): refused change ${i.seq} (${i.unit}): ${i.reason}`);
      }
    }
    // The document keeps its keys; an interruption is told on stderr (below).
    const { interrupted: _interrupted, ...doc } = result;
    const text = (): string =>
      `undo of ${result.command} (${result.journal}): ${count(dryRun ? 'would-restore' : 'restored')} change(s) ${dryRun ? 'would be ' : ''}restored, ${count('already-restored')} already restored, ${count('refused')} ${dryRun ? 'would be ' : ''}refused.\n` +
      lines(result.items.flatMap((i) => (i.status === 'refused' ? [`  refused: change ${i.seq} (${i.unit}): ${i.reason}`] : []))) +
      (dryRun && count('would-restore') > 0 ? 'Nothing was changed. Re-run with --apply to restore.\n' : '');
    const output = (exitCode: number, after?: string): CommandResult =>
      o.json ? jsonResult({ ...doc, changed: count('restored') > 0, ...(dryRun ? { would_change: count('would-restore') > 0 } : {}) }, exitCode, after) : report(text(), exitCode, after);
    if (result.interrupted !== undefined) {
      const after =
        `nova-reconcile: interrupted by ${result.interrupted.reason}: ${count('restored')} change(s) restored, ${result.interrupted.notStarted} not started.\n` +
          (result.undoJournalPath === undefined ? '' : `  journal: ${result.undoJournalPath}\n`) +
          `  to finish: ${undoCommandLine(ctx.selfCommand, ctx.configSources, result.journal)} (rows already restored are left alone)\n`;
      ctx.log?.warning(`undo of ${result.command} (${result.journal}) interrupted by ${result.interrupted.reason}: ${result.interrupted.notStarted} change(s) not started`);
      return output(signalExitCode(result.interrupted.reason), after);
    }
    if (count('refused') > 0) return output(RECONCILE_EXIT.partial);
    if (dryRun) return output(count('would-restore') > 0 ? RECONCILE_EXIT.findings : RECONCILE_EXIT.clean);
    return output(count('restored') > 0 ? RECONCILE_EXIT.applied : RECONCILE_EXIT.clean);
  },
};
