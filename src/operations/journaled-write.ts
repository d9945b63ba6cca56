// One journaled write: the one way an applying command (apply, undo,
// heal_allocations, placement audit --delete) writes a change in its own
// transaction. The row images are journaled and fsynced before COMMIT, a
// commit marker follows the COMMIT, and a deadlock victim or a Galera
// certification failure (both certainly rolled back by the server) is marked
// rolled back and re-run from a fresh read under a new seq.
import type { Knex } from 'knex';
import { commitTransaction, writerOf, type Database } from '../db/connect.js';
import { DEADLOCK_ATTEMPTS, deadlockPause, describeDriverError, isDeadlockError } from '../db/driver-errors.js';
import { CasConflict, Contention } from '../db/row-images.js';
import type { JournalChange, JournalWriter } from './journal.js';

/** What a write journals: its change and row images (the seq is the journal's). */
export type JournaledEntry = Omit<JournalChange, 'type' | 'seq'>;

/** A write that failed for another reason than a conflict: `committing` when the error came from COMMIT itself (its outcome is unknown). */
export class WriteFailed extends Error {
  constructor(
    override readonly cause: unknown,
    readonly committing: boolean,
  ) {
    super(describeDriverError(cause));
    this.name = 'WriteFailed';
  }
}

/**
 * Run `write` in a transaction of `db` and commit it, journaled as above.
 * `write` returns what it wrote (undefined when it wrote nothing, as an undo
 * that finds a row already restored). The journal is asked for only when
 * something is journaled, so a writer opened lazily stays unopened.
 *
 * Throws: CasConflict as `write` throws it (nothing written); Contention when
 * every attempt lost to concurrent writers; WriteFailed for anything else.
 */
export async function writeJournaled<T>(
  db: Database,
  journal: () => JournalWriter,
  write: (trx: Knex.Transaction) => Promise<{ readonly value: T; readonly entry?: JournaledEntry }>,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    let seq: number | undefined;
    let committing = false;
    try {
      const value = await writerOf(db).transaction(async (trx) => {
        const out = await write(trx);
        if (out.entry !== undefined) {
          const j = journal();
          seq = j.nextSeq();
          await j.appendDurably({ type: 'change', seq, ...out.entry });
        }
        committing = true;
        return out.value;
      });
      if (seq !== undefined) journal().append({ type: 'commit', seq });
      return value;
    } catch (err) {
      if (isDeadlockError(err)) {
        if (seq !== undefined) journal().append({ type: 'rollback', seq });
        if (attempt < DEADLOCK_ATTEMPTS) {
          await deadlockPause(attempt);
          continue;
        }
        throw contention(db, err);
      }
      if (err instanceof CasConflict) throw err;
      throw new WriteFailed(err, committing && seq !== undefined);
    }
  }
}

/** The conflict of a change that lost every attempt to concurrent writers. */
export function contention(db: Database, err: unknown): Contention {
  return new Contention(
    `lost to concurrent writers in the ${db.label} ${DEADLOCK_ATTEMPTS} times in a row (${describeDriverError(err)}); every attempt was rolled back, nothing of it was written`,
  );
}

/**
 * Several writes in one transaction of `db` (an apply batch, a run
 * of undo's restores): `write` runs them in `given` (a transaction already
 * open, as the apply's held cell transaction) or a new one and returns what
 * they wrote; every entry is journaled, with one fsync, before COMMIT, and
 * the commit markers follow it. Returns the seqs committed, or the error
 * (`rolledBack`) when the transaction certainly did not commit: a CasConflict or an error
 * `alsoRolledBack` names (undo's: a key taken since), rolled back here, or
 * a deadlock victim or a Galera certification failure, rolled back by the
 * server. The entries journaled by then are marked
 * rolled back, nothing of the group happened, and the caller re-runs its
 * writes one by one, each as writeJournaled does, so that a conflict is
 * decided and reported as for a write on its own.
 *
 * Throws WriteFailed for anything else (`committing` when from COMMIT).
 */
export async function writeJournaledGroup(
  db: Database,
  journal: () => JournalWriter,
  given: Knex.Transaction | undefined,
  write: (trx: Knex.Transaction) => Promise<readonly JournaledEntry[]>,
  alsoRolledBack: (err: unknown) => boolean = () => false,
): Promise<{ readonly seqs: number[] } | { readonly rolledBack: unknown }> {
  let trx = given;
  let entries: JournalChange[] = [];
  let committing = false;
  try {
    trx ??= await writerOf(db).transaction();
    const written = await write(trx);
    if (written.length > 0) {
      const j = journal();
      entries = written.map((e) => ({ type: 'change', seq: j.nextSeq(), ...e }));
      await j.appendAllDurably(entries);
    }
    committing = true;
    await commitTransaction(trx);
  } catch (err) {
    if (!committing) await trx?.rollback().catch(() => undefined);
    if (err instanceof CasConflict || isDeadlockError(err) || alsoRolledBack(err)) {
      if (entries.length > 0) journal().appendAll(entries.map((e) => ({ type: 'rollback', seq: e.seq })));
      return { rolledBack: err };
    }
    throw new WriteFailed(err, committing && entries.length > 0);
  }
  if (entries.length > 0) journal().appendAll(entries.map((e) => ({ type: 'commit', seq: e.seq })));
  return { seqs: entries.map((e) => e.seq) };
}
