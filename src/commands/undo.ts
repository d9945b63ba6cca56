// undo JOURNAL: restore the rows an applied run changed.
import { RECONCILE_EXIT } from '../cli/exit-codes.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { withApplyLock } from '../operations/apply-plan.js';
import { readJournalFor, undoJournal } from '../operations/undo.js';
import { printJson, useDeployment } from './deployment.js';

export const undoCommand: CommandSpec = {
  path: ['undo'],
  family: 'reconcile',
  summary: 'restore the rows an applied run changed, from its journal',
  args: ['<journal>'],
  description: [
    'Reads a journal written by an applied run (--apply) and restores every row it lists to its before-image, newest change first, ' +
      'each change in one transaction. Every row is a compare-and-swap against its after-image: a row that has changed since the run ' +
      'is refused and reported, never overwritten. Rows already back at their before-image are left alone, so undo can be re-run. ' +
      'It writes under the apply lock, as the applying commands do: a second undo, or an apply, waits up to [nova_reconcile] lock_timeout.',
    'Unlike the other mutating commands, undo applies by default: the journal is the plan that was already approved. Use --dry-run to ' +
      'see what would be restored. The undo writes its own journal, so it can be undone in turn. A journal that is corrupt, truncated, ' +
      'or was written for another deployment is refused; a journal whose last line a killed run left incomplete is accepted only with ' +
      '--allow-truncated. A journal belongs to a deployment by its API database name and its cell mappings (uuid and creation time), ' +
      'not by the address it was written through: it can be undone through any Galera node, VIP or host name of the same deployment.',
  ],
  options: [
    { flags: '--dry-run', description: 'show what would be restored and change nothing' },
    { flags: '--allow-truncated', description: 'accept a journal whose last line was cut off by a killed run: that entry never committed and is dropped' },
    { flags: '--apply', description: 'accepted for symmetry with the other commands (undo applies by default)' },
    { flags: '--journal <file>', description: "where to write the undo's own journal" },
    FORMAT_OPTION,
  ],
  exitCodes: [
    [0, 'nothing to restore (every row is already at its before-image)'],
    [3, '--dry-run: rows would be restored'],
    [4, 'rows were restored'],
    [5, 'some changes were refused because their rows changed since (listed)'],
    [2, 'could not run: configuration or a database unreachable'],
    [127, 'the journal is missing, corrupt, truncated, or for another deployment'],
  ],
  examples: ['nova-reconcile --config-file /etc/nova/nova.conf undo /var/lib/nova-reconcile/journal/compute_node-cleanup_orphans-20261202T101500Z-1a2b3c.jsonl'],
  async run(ctx, o, args) {
    const dryRun = o['dryRun'] === true;
    const settings = ctx.loadConfig().reconcile;
    const result = await useDeployment(ctx, async (d) => {
      const undo = (): ReturnType<typeof undoJournal> =>
        undoJournal(d, args[0] ?? '', {
          dryRun,
          allowTruncatedTail: o['allowTruncated'] === true,
          journalDir: settings.journalDir,
          undoJournalPath: typeof o['journal'] === 'string' ? o['journal'] : undefined,
          onJournal: (p) => ctx.stderr.write(`journal: ${p}\n`),
        });
      // Writes under the apply lock, as every applying command: two undos of
      // one journal (or an undo racing an apply) run one after the other.
      if (dryRun) return undo();
      // A journal that cannot be used is refused before the lock is taken.
      await readJournalFor(d, args[0] ?? '', o['allowTruncated'] === true);
      return withApplyLock(d, settings.lockTimeout, undo);
    });
    const count = (s: string): number => result.items.filter((i) => i.status === s).length;
    if (o['format'] === 'json') printJson(ctx, { ...result, changed: count('restored') > 0 });
    else {
      ctx.stdout.write(`undo of ${result.command} (${result.journal}): ${count(dryRun ? 'would-restore' : 'restored')} change(s) ${dryRun ? 'would be ' : ''}restored, ${count('already-restored')} already restored, ${count('refused')} refused.\n`);
      for (const i of result.items) if (i.status === 'refused') ctx.stdout.write(`  refused: change ${i.seq} (${i.unit}): ${i.reason}\n`);
    }
    if (count('refused') > 0) return RECONCILE_EXIT.partial;
    if (dryRun) return count('would-restore') > 0 ? RECONCILE_EXIT.findings : RECONCILE_EXIT.clean;
    return count('restored') > 0 ? RECONCILE_EXIT.applied : RECONCILE_EXIT.clean;
  },
};
