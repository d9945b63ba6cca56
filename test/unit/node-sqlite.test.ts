// src/db/node-sqlite.ts: Node's built-in SQLite shaped as the part of
// better-sqlite3 that knex and the tool use. The code names run everywhere;
// the adapter's cases need node:sqlite (Node.js 22.16 and later: .ci/run's
// LTS step runs test/unit), and each is checked against what better-sqlite3
// does where both exist.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDriverError, isConstraintError, isDuplicateKeyError } from '../../src/db/driver-errors.js';
import { loadNodeSqlite, nodeSqliteDatabase, sqliteCodeName, type SqliteConnection } from '../../src/db/node-sqlite.js';

describe('sqliteCodeName', () => {
  it("names SQLite's result codes as better-sqlite3 does", () => {
    expect(sqliteCodeName(5)).toBe('SQLITE_BUSY');
    expect(sqliteCodeName(14)).toBe('SQLITE_CANTOPEN');
    expect(sqliteCodeName(19)).toBe('SQLITE_CONSTRAINT');
    expect(sqliteCodeName(2067)).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect(sqliteCodeName(1555)).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(sqliteCodeName(787)).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
    expect(sqliteCodeName(1299)).toBe('SQLITE_CONSTRAINT_NOTNULL');
    // An extended code it does not spell out keeps its primary name.
    expect(sqliteCodeName(261)).toBe('SQLITE_BUSY');
    expect(sqliteCodeName(99)).toBe('SQLITE_UNKNOWN_99');
  });
});

const builtin = loadNodeSqlite();

describe.runIf('module' in builtin)('the node:sqlite adapter', () => {
  const Database = 'module' in builtin ? nodeSqliteDatabase(builtin.module) : undefined;
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nova-reconcile-test-node-sqlite-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const open = (name: string): SqliteConnection => new (Database as NonNullable<typeof Database>)(join(dir, name));

  it('says which statements return rows, binds one array of values, and reports changes and the rowid', () => {
    const db = open('a.sqlite');
    expect(db.prepare('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)').reader).toBe(false);
    db.prepare('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)').run();
    const insert = db.prepare('INSERT INTO t (name, n) VALUES (?, ?)');
    expect(insert.reader).toBe(false);
    expect(insert.run(['a', 1])).toEqual({ changes: 1, lastInsertRowid: 1 });
    expect(insert.run(['b', null])).toEqual({ changes: 1, lastInsertRowid: 2 });
    expect(db.prepare('UPDATE t SET n = 5').run()).toMatchObject({ changes: 2 });
    const select = db.prepare('SELECT name, n FROM t WHERE n = ? ORDER BY id');
    expect(select.reader).toBe(true);
    expect(select.all([5]).map((r) => ({ ...(r as object) }))).toEqual([{ name: 'a', n: 5 }, { name: 'b', n: 5 }]);
    db.close();
  });

  it("leaves foreign keys to the connection's pragma, as better-sqlite3 does (off until turned on)", () => {
    const db = open('fk.sqlite');
    db.prepare('CREATE TABLE p (id INTEGER PRIMARY KEY)').run();
    db.prepare('CREATE TABLE c (id INTEGER PRIMARY KEY, p INTEGER REFERENCES p (id))').run();
    expect(db.prepare('INSERT INTO c (p) VALUES (?)').run([7]).changes).toBe(1);
    db.pragma('foreign_keys = ON');
    let caught: unknown;
    try {
      db.prepare('INSERT INTO c (p) VALUES (?)').run([8]);
    } catch (err) {
      caught = err;
    }
    expect((caught as { code?: string }).code).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
    expect(isConstraintError(caught)).toBe(true);
    db.close();
  });

  it('names a unique violation, a busy database and a file it cannot open as better-sqlite3 does', () => {
    const db = open('u.sqlite');
    db.prepare('CREATE TABLE t (name TEXT UNIQUE)').run();
    db.prepare('INSERT INTO t VALUES (?)').run(['x']);
    let dup: unknown;
    try {
      db.prepare('INSERT INTO t VALUES (?)').run(['x']);
    } catch (err) {
      dup = err;
    }
    expect(dup).toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE', message: 'UNIQUE constraint failed: t.name' });
    expect(isDuplicateKeyError(dup)).toBe(true);

    const other = open('u.sqlite');
    other.pragma('busy_timeout = 20');
    db.prepare('BEGIN IMMEDIATE').run();
    expect(() => other.prepare('BEGIN IMMEDIATE').run()).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY', message: 'database is locked' }) as Error);
    db.prepare('ROLLBACK').run();
    other.close();
    db.close();

    let cannot: unknown;
    try {
      open('no/such/dir.sqlite');
    } catch (err) {
      cannot = err;
    }
    expect((cannot as { code?: string }).code).toBe('SQLITE_CANTOPEN');
    expect(describeDriverError(cannot)).toBe('cannot open the database file');
  });
});
