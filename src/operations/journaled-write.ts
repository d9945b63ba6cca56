// One journaled write: the one way an applying command (apply, undo,
// heal_allocations, placement audit --delete) writes a change in its own
// transaction. The row images are journaled and fsynced before COMMIT, a
// commit marker follows the COMMIT, and a deadlock victim or a Galera
// certification failure (both certainly rolled back by the server) is marked
// rolled back and re-run from a fresh read under a new seq.
import type { Knex } from 'knex';
import { writerOf, type Database } from '../db/connect.js';
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
