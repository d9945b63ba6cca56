// Undo an applied run from its journal: changes in reverse order, each in
// one transaction, every row restored as a compare-and-swap against its
// after-image. A change whose rows moved since is refused and reported; the
// rest go on. The undo writes its own journal (before and after swapped), so
// an undo can itself be undone.
import type { Deployment } from '../db/deployment.js';
import { describeDriverError } from '../db/driver-errors.js';
import { restoreRows, type RestoreOutcome } from '../db/restore-rows.js';
import { CasConflict } from '../db/row-images.js';
import { utcNowString } from '../db/time.js';
import { ReconcileError } from '../errors.js';
import { databaseFor, deploymentIdentity } from './apply-plan.js';
import { defaultJournalPath, openJournal, readJournal, sameDeployment, type JournalChange, type JournalWriter } from './journal.js';

export interface UndoOptions {
  readonly dryRun: boolean;
  /** Accept a journal whose last line a killed run left incomplete (that entry never committed). */
  readonly allowTruncatedTail: boolean;
  readonly journalDir: string;
  readonly undoJournalPath: string | undefined;
  readonly onJournal?: (path: string) => void;
}

export type UndoItem =
  | { readonly seq: number; readonly unit: string; readonly status: 'restored' | 'would-restore' | 'already-restored' }
  | { readonly seq: number; readonly unit: string; readonly status: 'refused'; readonly reason: string };

export interface UndoResult {
  readonly journal: string;
  readonly command: string;
  readonly items: readonly UndoItem[];
  readonly undoJournalPath: string | undefined;
}

class DryRunRollback extends Error {}

/** Read a journal and check it belongs to this deployment; refused with one line otherwise. */
export async function readJournalFor(deployment: Deployment, path: string, allowTruncatedTail: boolean): Promise<ReturnType<typeof readJournal>> {
  const journal = readJournal(path, { allowTruncatedTail });
  const here = await deploymentIdentity(deployment);
  const there = journal.header.deployment;
  if (!sameDeployment(there, here))
    throw new ReconcileError('input', `the journal ${path} was written for another deployment (API database ${there.api}); this one is ${here.api}`, {
      hint: 'run undo with the --config-file of the deployment the journal came from',
    });
  return journal;
}

export async function undoJournal(deployment: Deployment, path: string, options: UndoOptions): Promise<UndoResult> {
  const journal = await readJournalFor(deployment, path, options.allowTruncatedTail === true);
  const here = await deploymentIdentity(deployment);
  const items: UndoItem[] = [];
  let writer: JournalWriter | undefined;
  try {
    const changes = [...journal.changes].sort((a, b) => b.seq - a.seq);
    for (const entry of changes) {
      const db = await databaseFor(deployment, entry.target);
      try {
        const box: { outcome: RestoreOutcome } = { outcome: 'already-restored' };
        await db.knex
          .transaction(async (trx) => {
            box.outcome = await restoreRows(trx, db.dialect, entry.rows);
            if (options.dryRun) throw new DryRunRollback();
            if (box.outcome === 'restored') {
              writer ??= openUndoJournal(options, journal.header.command, here);
              writer.append({ ...entry, type: 'change', seq: items.length + 1, rows: swapped(entry) });
            }
          })
          .catch((err: unknown) => {
            if (!(err instanceof DryRunRollback)) throw err;
          });
        const outcome = box.outcome;
        if (!options.dryRun && outcome === 'restored') writer?.append({ type: 'commit', seq: items.length + 1 });
        items.push({ seq: entry.seq, unit: entry.unit, status: options.dryRun && outcome === 'restored' ? 'would-restore' : outcome });
      } catch (err) {
        if (!(err instanceof CasConflict)) {
          if (err instanceof ReconcileError) throw err;
          throw new ReconcileError('connection', `undo failed writing to the ${db.label}: ${describeDriverError(err)}`, { cause: err });
        }
        items.push({ seq: entry.seq, unit: entry.unit, status: 'refused', reason: err.message });
      }
    }
  } finally {
    writer?.close();
  }
  return { journal: path, command: journal.header.command, items, undoJournalPath: writer?.path };

  function openUndoJournal(opts: UndoOptions, command: string, identity: Awaited<ReturnType<typeof deploymentIdentity>>): JournalWriter {
    const p = opts.undoJournalPath ?? defaultJournalPath(opts.journalDir, `undo ${command}`, new Date());
    const w = openJournal(p, { type: 'header', format: 'nova-reconcile-journal/1', command: `undo ${command}`, startedAt: utcNowString(), deployment: identity });
    opts.onJournal?.(w.path);
    return w;
  }
}

function swapped(entry: JournalChange): JournalChange['rows'] {
  return [...entry.rows].reverse().map((r) => ({ table: r.table, key: r.key, before: r.after, after: r.before }));
}
