// The one journaled write (src/operations/journaled-write.ts) on the MariaDB
// server, with real InnoDB deadlocks: a victim's attempt is marked rolled back
// in the journal and re-run under a new seq, so undo never sees it; a change
// that loses every attempt is a Contention (its unit is skipped), not a
// failed run; and a change a later attempt committed is the only one a
// reader of the journal gets.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createScratchDatabases, describeMysql, mysqlKnex, type ScratchDatabases } from '../helpers/mysql.js';
import type { Database } from '../../src/db/connect.js';
import { DEADLOCK_ATTEMPTS } from '../../src/db/driver-errors.js';
import { CasConflict, Contention } from '../../src/db/row-images.js';
import { openJournal, readJournal, type JournalWriter } from '../../src/operations/journal.js';
import { writeJournaled } from '../../src/operations/journaled-write.js';
import type { Change } from '../../src/domain/plan.js';

describeMysql('journaled write [mariadb]', () => {
  let s: ScratchDatabases;
  let db: Database;
  let other: Knex;
  let dir: string;
  beforeAll(async () => {
    s = await createScratchDatabases('jwrite', ['w']);
    const k = s.knex('w');
    await k.raw('CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB');
    await k.raw('CREATE TABLE side (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB');
    await k('side').insert(Array.from({ length: 500 }, (_, i) => ({ n: i })));
    await k('t').insert([1, 2, 3, 4, 5, 6, 7, 8].map((id) => ({ id, v: 0 })));
    db = { knex: k, dialect: 'mysql', label: 'test database', target: { kind: 'mysql', url: s.url('w') } as unknown as Database['target'] };
    other = mysqlKnex(s.dbNames['w']);
    dir = mkdtempSync(join(tmpdir(), 'nr-jwrite-'));
  });
  afterAll(async () => {
    await other?.destroy();
    await s?.drop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const header = { type: 'header', format: 'nova-reconcile-journal/1', command: 'test', startedAt: '2026-12-04 00:00:00', deployment: { api: 'x', cells: [] } } as const;
  const change = { kind: 'test' } as unknown as Change;

  /**
   * Make the write in `trx` a deadlock victim: it locks row 1, another
   * transaction that has changed rows 2-6 (heavier, so InnoDB keeps it;
   * the writes under test use rows 7 and 8) waits
   * for row 1 while this one asks for row 2. The other then rolls back.
   */
  async function loseDeadlock(trx: Knex.Transaction): Promise<void> {
    await trx.raw('SELECT v FROM t WHERE id = 1 FOR UPDATE');
    const o = await other.transaction();
    try {
      // Heavy (InnoDB rolls back the transaction with the fewest changed rows):
      // the 500 rows of a side table, then row 2 alone (an IN list on this
      // small table is a scan that would lock rows 1, 7 and 8 too).
      await o('side').increment('n', 1);
      await o.raw('UPDATE t SET v = v + 1 WHERE id = 2');
      // Promises made once: awaiting a knex query builder again would run it again.
      const mine = Promise.resolve(trx.raw('SELECT v FROM t WHERE id = 2 FOR UPDATE'));
      mine.catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      const theirs = Promise.resolve(o.raw('UPDATE t SET v = v + 1 WHERE id = 1'));
      theirs.catch(() => undefined);
      const first = await Promise.race([mine.then(() => 'mine'), theirs.then(() => 'theirs')]).catch((e: unknown) => e);
      if (first === 'theirs' || first instanceof Error) await o.rollback().catch(() => undefined);
      await mine;
    } finally {
      await o.rollback().catch(() => undefined);
    }
  }

  function journalLines(path: string): Array<{ type: string; seq?: number }> {
    return readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; seq?: number });
  }

  it('a deadlock victim is re-run from a fresh read; only the attempt that commits is journaled', async () => {
    const path = join(dir, 'once.jsonl');
    const journal: JournalWriter = openJournal(path, header);
    let attempts = 0;
    const value = await writeJournaled(db, () => journal, async (trx) => {
      attempts += 1;
      const before = await trx('t').where('id', 7).first();
      await trx('t').update({ v: 100 + attempts }).where('id', 7);
      if (attempts === 1) await loseDeadlock(trx);
      return { value: attempts, entry: { unit: 'u', target: { db: 'api' }, change, rows: [{ table: 't', key: { id: 7 }, before, after: { id: 7, v: 100 + attempts } }] } };
    }).finally(() => journal.close());
    expect(value).toBe(2);
    expect(Number((await db.knex('t').where('id', 7).first())?.v)).toBe(102);
    expect(journalLines(path).map((e) => `${e.type}${e.seq ?? ''}`)).toEqual(['header', 'change1', 'commit1']);
    expect(readJournal(path).changes.map((c) => c.rows[0]?.before)).toEqual([{ id: 7, v: 0 }]);
  });

  it('a reader of the journal never gets a change marked rolled back (a certification failure at COMMIT)', () => {
    const path = join(dir, 'marked.jsonl');
    const journal = openJournal(path, header);
    const row = (v: number) => [{ table: 't', key: { id: 1 }, before: { id: 1, v }, after: { id: 1, v: v + 1 } }];
    journal.append({ type: 'change', seq: journal.nextSeq(), unit: 'u', target: { db: 'api' }, change, rows: row(0) });
    journal.append({ type: 'rollback', seq: 1 });
    journal.append({ type: 'change', seq: journal.nextSeq(), unit: 'u', target: { db: 'api' }, change, rows: row(5) });
    journal.append({ type: 'commit', seq: 2 });
    journal.close();
    const read = readJournal(path);
    expect(read.changes.map((c) => c.seq)).toEqual([2]);
    expect(read.committed.has(2)).toBe(true);
  });

  it(`a change that loses all ${DEADLOCK_ATTEMPTS} attempts is a Contention (a conflict: its unit is skipped), nothing of it written`, async () => {
    await db.knex('t').update({ v: 0 });
    const path = join(dir, 'lost.jsonl');
    const journal = openJournal(path, header);
    let attempts = 0;
    const err = await writeJournaled(db, () => journal, async (trx) => {
      attempts += 1;
      await trx('t').update({ v: 7 }).where('id', 8);
      await loseDeadlock(trx);
      return { value: undefined, entry: { unit: 'u', target: { db: 'api' }, change, rows: [] } };
    })
      .catch((e: unknown) => e)
      .finally(() => journal.close());
    expect(attempts).toBe(DEADLOCK_ATTEMPTS);
    expect(err).toBeInstanceOf(Contention);
    expect(err).toBeInstanceOf(CasConflict);
    expect((err as Error).message).toMatch(new RegExp(`^lost to concurrent writers in the test database ${DEADLOCK_ATTEMPTS} times in a row \\(.*Deadlock.*\\); every attempt was rolled back, nothing of it was written$`));
    expect(Number((await db.knex('t').where('id', 8).first())?.v)).toBe(0);
    expect(readJournal(path).changes).toEqual([]);
  });

  it('a compare-and-swap miss passes through as it was thrown, and nothing is journaled', async () => {
    const path = join(dir, 'cas.jsonl');
    const journal = openJournal(path, header);
    const err = await writeJournaled(db, () => journal, async () => {
      throw new CasConflict('row 5 changed');
    })
      .catch((e: unknown) => e)
      .finally(() => journal.close());
    expect(err).toBeInstanceOf(CasConflict);
    expect(err).not.toBeInstanceOf(Contention);
    expect(journalLines(path).map((e) => e.type)).toEqual(['header']);
  });
});
