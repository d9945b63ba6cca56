// Several statements in one round trip (src/db/statement-batch.ts) and the
// conditions of docs/SQL-BINDING.md it rests on, against MariaDB (the
// writer pool, one packet) and SQLite (one statement at a time): the same
// results either way; hostile strings written and read back byte for byte,
// with nothing else run; values that are not scalars, statements that are
// not SELECT/UPDATE/DELETE/INSERT and a compiled ";" refused before anything
// is sent; a failing statement stops the batch and its transaction is rolled
// back; the read pool still refuses a second statement; the writer reads its
// session's sql_mode back, and a server whose global sql_mode is
// NO_BACKSLASH_ESCAPES still gets values exactly (a throw-away server).
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDatabase, escapingProblem, openDatabase, roundTrips, writerOf, type Database } from '../../src/db/connect.js';
import { checkBinding, runStatements } from '../../src/db/statement-batch.js';
import { parseDbUrl } from '../../src/config/db-url.js';
import { startServers, stopAllServers } from '../../bench/servers.js';
import { createScratchDatabases, describeMysql, type ScratchDatabases } from '../helpers/mysql.js';

/** Strings that would end a literal, start a statement or a comment if they were put into SQL text by hand. */
const HOSTILE = [
  "it's",
  'back\\slash',
  'ends in a backslash\\',
  "\\'; DROP TABLE t; -- ",
  "x'); DELETE FROM t; /*",
  '*/ SELECT 1; #',
  '"double" `back` ticks',
  'multi-byte: ünïcödé 漢字 😀',
  '\0nul and\nnewline\r\x1a',
  '?? and ?',
];

async function setUp(db: Database): Promise<void> {
  await db.knex.raw(
    db.dialect === 'mysql'
      ? 'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(255) NULL, n INT NOT NULL DEFAULT 0) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4'
      : 'CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR(255) NULL, n INTEGER NOT NULL DEFAULT 0)',
  );
  await db.knex('t').insert([
    { id: 1, v: 'one', n: 1 },
    { id: 2, v: 'two', n: 2 },
  ]);
}

function batchTests(name: string, open: () => Promise<Database>, packets: boolean): void {
  describe(name, () => {
    let db: Database;
    beforeAll(async () => {
      db = await open();
      await setUp(db);
    });
    afterAll(async () => {
      if (db !== undefined) await closeDatabase(db);
    });

    it(`gives each statement's rows or count, in ${packets ? 'one round trip' : 'one round trip per statement'}`, async () => {
      const trx = await writerOf(db).transaction();
      try {
        const before = roundTrips.count;
        const r = await runStatements(trx, [
          trx('t').select('*').where('id', 1),
          trx('t').count({ c: '*' }),
          trx('t').update({ n: 10 }).where('id', 2),
          trx('t').insert({ id: 3, v: 'three' }),
          trx('t').delete().where('id', 1),
          trx('t').select('id', 'n').orderBy('id'),
        ]);
        expect(roundTrips.count - before).toBe(packets ? 1 : 6);
        expect(r.rows(0)).toEqual([{ id: 1, v: 'one', n: 1 }]);
        expect(Number(r.rows(1)[0]?.['c'])).toBe(2);
        expect(r.affected(2)).toBe(1);
        expect(r.affected(4)).toBe(1);
        expect(r.rows(5)).toEqual([
          { id: 2, n: 10 },
          { id: 3, n: 0 },
        ]);
        expect(() => r.affected(0)).toThrow(/not an UPDATE or DELETE/);
        expect(() => r.affected(3)).toThrow(/not an UPDATE or DELETE/);
        expect(() => r.rows(2)).toThrow(/not a SELECT/);
      } finally {
        await trx.rollback();
      }
      expect(await db.knex('t').select('id').orderBy('id')).toEqual([{ id: 1 }, { id: 2 }]);
    });

    it('writes hostile strings exactly as given and runs nothing else', async () => {
      const rows = HOSTILE.map((v, i) => ({ id: 100 + i, v }));
      const trx = await writerOf(db).transaction();
      try {
        await runStatements(trx, [...rows.map((row) => trx('t').insert(row)), trx('t').update({ v: HOSTILE[3] as string }).where('id', 2)]);
        const back = await runStatements(trx, [trx('t').select('id', 'v').where('id', '>=', 100).orderBy('id'), trx('t').select('v').where('id', 2), trx('t').count({ c: '*' })]);
        expect(back.rows(0)).toEqual(rows);
        expect(back.rows(1)).toEqual([{ v: HOSTILE[3] }]);
        // Rows 1 and 2 and the hostile ones: no DELETE or DROP ran.
        expect(Number(back.rows(2)[0]?.['c'])).toBe(2 + HOSTILE.length);
      } finally {
        await trx.rollback();
      }
      expect(await db.knex('t').count({ c: '*' })).toEqual([{ c: 2 }]);
    });

    it('refuses a value that is not a string, a finite number or null, before anything is sent', async () => {
      const trx = await writerOf(db).transaction();
      try {
        for (const [value, what] of [
          [{ toString: () => "1' OR '1'='1" }, 'an object'],
          [NaN, 'a number'],
          [Infinity, 'a number'],
          [true, 'a boolean'],
          [BigInt(1), 'a bigint'],
        ] as const) {
          const before = roundTrips.count;
          await expect(runStatements(trx, [trx('t').update({ n: 5 }).where('id', 1), trx('t').update({ v: value as unknown as string }).where('id', 2)])).rejects.toThrow(
            what === 'a number' ? /binds a number/ : new RegExp(`binds ${what}`),
          );
          expect(roundTrips.count).toBe(before);
        }
        // An array is what mysql2 would expand into a list: refused too.
        expect(() => checkBinding([1, 2])).toThrow(/binds an array/);
        expect(() => checkBinding(undefined)).toThrow(/binds undefined/);
      } finally {
        await trx.rollback();
      }
      expect(await db.knex('t').select('id', 'v', 'n').orderBy('id')).toEqual([
        { id: 1, v: 'one', n: 1 },
        { id: 2, v: 'two', n: 2 },
      ]);
    });

    it('holds only SELECT, UPDATE, DELETE and INSERT, and no compiled ";"', async () => {
      const trx = await writerOf(db).transaction();
      try {
        const before = roundTrips.count;
        await expect(runStatements(trx, [trx('t').select('*'), trx('t').truncate() as unknown as Knex.QueryBuilder])).rejects.toThrow(/not truncate/);
        await expect(runStatements(trx, [trx('t').select('*'), trx('t; DROP TABLE t').select('*')])).rejects.toThrow(/holds a ";"/);
        expect(roundTrips.count).toBe(before);
      } finally {
        await trx.rollback();
      }
      expect(await db.knex('t').count({ c: '*' })).toEqual([{ c: 2 }]);
    });

    it('stops at a failing statement; the transaction rolls back what ran before it', async () => {
      const trx = await writerOf(db).transaction();
      await expect(
        runStatements(trx, [trx('t').update({ n: 99 }).where('id', 1), trx('t').insert({ id: 2, v: 'duplicate' }), trx('t').update({ n: 99 }).where('id', 2)]),
      ).rejects.toThrow(/UNIQUE|Duplicate/i);
      await trx.rollback();
      expect(await db.knex('t').select('id', 'n').orderBy('id')).toEqual([
        { id: 1, n: 1 },
        { id: 2, n: 2 },
      ]);
    });
  });
}

const sqliteDir = mkdtempSync(join(tmpdir(), 'nr-batch-'));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));

batchTests(
  'statement batches [sqlite]',
  async () => {
    const file = join(sqliteDir, 'b.sqlite');
    // openDatabase refuses a missing file (a typo must not create one).
    const { default: Driver } = (await import('better-sqlite3')) as unknown as { default: new (f: string) => { close(): void } };
    new Driver(file).close();
    return openDatabase(parseDbUrl(`sqlite:///${file}`), { connectTimeout: 5, role: 'test database' });
  },
  false,
);

describeMysql('statement batches [mariadb]', () => {
  let s: ScratchDatabases;
  beforeAll(async () => {
    s = await createScratchDatabases('batch', ['b', 'r']);
  });
  afterAll(async () => {
    await s?.drop();
  });

  batchTests('the writer pool', async () => openDatabase(parseDbUrl(s.url('b')), { connectTimeout: 5, role: 'test database' }), true);

  it('the read pool takes one statement per packet: a second one is a syntax error', async () => {
    const db = await openDatabase(parseDbUrl(s.url('r')), { connectTimeout: 5, role: 'test database' });
    try {
      await expect(db.knex.raw('SELECT 1; SELECT 2')).rejects.toThrow(/syntax/i);
      // The writer's does, and reads its session's sql_mode back (no NO_BACKSLASH_ESCAPES).
      const [results] = (await writerOf(db).raw('SELECT 1 AS a; SELECT @@SESSION.sql_mode AS m')) as unknown as [Array<Array<Record<string, unknown>>>];
      expect(results[0]).toEqual([{ a: 1 }]);
      expect(String(results[1]?.[0]?.['m'])).toMatch(/STRICT_TRANS_TABLES/);
      expect(String(results[1]?.[0]?.['m'])).not.toMatch(/NO_BACKSLASH_ESCAPES/);
    } finally {
      await closeDatabase(db);
    }
  });
});

describe('the conditions that are not about a server', () => {
  it('a session with NO_BACKSLASH_ESCAPES, or whose sql_mode cannot be read, is refused for batching', () => {
    expect(escapingProblem('STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES')?.message).toMatch(/NO_BACKSLASH_ESCAPES: .*refusing/);
    expect(escapingProblem('no_backslash_escapes')).not.toBeNull();
    expect(escapingProblem(undefined)?.message).toMatch(/could not be read back/);
    expect(escapingProblem('STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION')).toBeNull();
    expect(escapingProblem('')).toBeNull();
  });

  it("mysql2's escaper (sql-escaper, mysql2 >= 3.17) does not expand an object into SQL", () => {
    const require = createRequire(import.meta.url);
    const mysql2 = require('mysql2') as { format(sql: string, values: unknown[]): string };
    expect(mysql2.format('SELECT ?', [{ a: "1' OR '1'='1" }])).toBe("SELECT '[object Object]'");
    expect(mysql2.format('SELECT ?', ["a\\'b"])).toBe("SELECT 'a\\\\\\'b'");
  });
});

describeMysql('statement batches on a server whose global sql_mode is NO_BACKSLASH_ESCAPES', () => {
  let db: Database | undefined;
  beforeAll(async () => {
    const [extra] = await startServers(1, { serverArgs: ['--sql-mode=NO_BACKSLASH_ESCAPES'] });
    if (extra === undefined) throw new Error('no server started');
    const url = `mysql+pymysql://root@127.0.0.1:${extra.server.port}/mysql`;
    const admin = await openDatabase(parseDbUrl(url), { connectTimeout: 5, role: 'throw-away server' });
    try {
      await admin.knex.raw('CREATE DATABASE batch_nbe');
    } finally {
      await closeDatabase(admin);
    }
    db = await openDatabase(parseDbUrl(`mysql+pymysql://root@127.0.0.1:${extra.server.port}/batch_nbe`), { connectTimeout: 5, role: 'test database' });
    await setUp(db);
  }, 60_000);
  afterAll(async () => {
    if (db !== undefined) await closeDatabase(db);
    await stopAllServers();
  });

  it('the server says so, the writer session does not, and hostile strings come back exactly', async () => {
    if (db === undefined) throw new Error('no database');
    expect(String(((await db.knex.raw('SELECT @@GLOBAL.sql_mode AS m')) as unknown as [Array<Record<string, unknown>>])[0][0]?.['m'])).toMatch(/NO_BACKSLASH_ESCAPES/);
    const trx = await writerOf(db).transaction();
    try {
      const mode = await runStatements(trx, [trx.select(trx.raw('@@SESSION.sql_mode AS m')) as unknown as Knex.QueryBuilder, trx('t').count({ c: '*' })]);
      expect(String(mode.rows(0)[0]?.['m'])).not.toMatch(/NO_BACKSLASH_ESCAPES/);
      const rows = HOSTILE.map((v, i) => ({ id: 100 + i, v }));
      await runStatements(trx, rows.map((row) => trx('t').insert(row)));
      const back = await runStatements(trx, [trx('t').select('id', 'v').where('id', '>=', 100).orderBy('id'), trx('t').count({ c: '*' })]);
      expect(back.rows(0)).toEqual(rows);
      expect(Number(back.rows(1)[0]?.['c'])).toBe(2 + HOSTILE.length);
      await trx.commit();
    } catch (err) {
      await trx.rollback().catch(() => undefined);
      throw err;
    }
    expect(await db.knex('t').count({ c: '*' })).toEqual([{ c: 2 + HOSTILE.length }]);
  });
});
