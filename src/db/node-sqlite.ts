// Node's built-in SQLite (node:sqlite, Node.js 22.16 and later), shaped as
// the part of better-sqlite3 that knex's better-sqlite3 dialect and this
// tool use, so that one knex dialect drives either (sqlite-driver.ts says
// which is taken):
//
// - `new Database(filename, { readonly })`, `close()`;
// - `prepare(sql)`, whose statement has `reader` (it returns rows),
//   `all(bindings)` and `run(bindings)` → { changes, lastInsertRowid }, the
//   bindings given as one array as knex gives them;
// - `pragma(text)`.
//
// Two differences are mended here, so that nothing above sees them:
// - node:sqlite turns foreign keys on by default; better-sqlite3 leaves
//   SQLite's default (off), and the connection's own pragma decides
//   (connect.ts turns them on, the lock file's connection does not);
// - a node:sqlite error says `code: 'ERR_SQLITE_ERROR'` and the SQLite
//   result code as a number (`errcode`, extended); better-sqlite3 names it
//   (`SQLITE_CONSTRAINT_UNIQUE`), and driver-errors.ts reads the name. The
//   name is set here from the number; the message, SQLite's own, is the same.
//
// @types/node 20 has no node:sqlite, so the few members used are typed here.
import { createRequire } from 'node:module';

type SqlValue = null | number | bigint | string | Uint8Array;

interface StatementSync {
  all(...params: SqlValue[]): unknown[];
  run(...params: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  columns(): unknown[];
}

interface DatabaseSync {
  prepare(sql: string): StatementSync;
  close(): void;
}

interface NodeSqliteModule {
  DatabaseSync: new (filename: string, options: { readOnly: boolean; enableForeignKeyConstraints: boolean }) => DatabaseSync;
  StatementSync: { prototype: Partial<StatementSync> };
}

/** node:sqlite when this Node.js has it with what the adapter uses (StatementSync.columns, Node.js 22.16/23.11), else why not. */
export function loadNodeSqlite(): { module: NodeSqliteModule } | { reason: string } {
  let mod: NodeSqliteModule;
  try {
    mod = createRequire(import.meta.url)('node:sqlite') as NodeSqliteModule;
  } catch {
    return { reason: 'this Node.js has no built-in SQLite (node:sqlite came in Node.js 22)' };
  }
  if (typeof mod.StatementSync.prototype.columns !== 'function') return { reason: "this Node.js's built-in SQLite is too old (it needs Node.js 22.16 or later)" };
  return { module: mod };
}

/** SQLite's primary result codes (sqlite3.h), by number. */
const PRIMARY = [
  'OK', 'ERROR', 'INTERNAL', 'PERM', 'ABORT', 'BUSY', 'LOCKED', 'NOMEM', 'READONLY', 'INTERRUPT', 'IOERR', 'CORRUPT', 'NOTFOUND', 'FULL',
  'CANTOPEN', 'PROTOCOL', 'EMPTY', 'SCHEMA', 'TOOBIG', 'CONSTRAINT', 'MISMATCH', 'MISUSE', 'NOLFS', 'AUTH', 'FORMAT', 'RANGE', 'NOTADB', 'NOTICE', 'WARNING',
];

/** The extended codes of SQLITE_CONSTRAINT (19 | n << 8), by n: the ones driver-errors.ts tells apart. */
const CONSTRAINT = ['', 'CHECK', 'COMMITHOOK', 'FOREIGNKEY', 'FUNCTION', 'NOTNULL', 'PRIMARYKEY', 'TRIGGER', 'UNIQUE', 'VTAB', 'ROWID', 'PINNED', 'DATATYPE'];

/** better-sqlite3's name of an extended SQLite result code: SQLITE_CONSTRAINT_UNIQUE for 2067, SQLITE_BUSY for 5. */
export function sqliteCodeName(errcode: number): string {
  const primary = PRIMARY[errcode & 0xff];
  if (primary === undefined) return `SQLITE_UNKNOWN_${errcode}`;
  const sub = errcode >> 8;
  if (sub === 0) return `SQLITE_${primary}`;
  const extended = primary === 'CONSTRAINT' ? CONSTRAINT[sub] : undefined;
  return extended === undefined || extended === '' ? `SQLITE_${primary}` : `SQLITE_${primary}_${extended}`;
}

function named<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof Error && typeof (err as { errcode?: unknown }).errcode === 'number') {
      Object.defineProperty(err, 'code', { value: sqliteCodeName((err as unknown as { errcode: number }).errcode), enumerable: true, configurable: true, writable: true });
    }
    throw err;
  }
}

class Statement {
  readonly #stmt: StatementSync;
  readonly reader: boolean;

  constructor(stmt: StatementSync) {
    this.#stmt = stmt;
    this.reader = stmt.columns().length > 0;
  }

  all(bindings: readonly SqlValue[] = []): unknown[] {
    return named(() => this.#stmt.all(...bindings));
  }

  run(bindings: readonly SqlValue[] = []): { changes: number; lastInsertRowid: number | bigint } {
    const r = named(() => this.#stmt.run(...bindings));
    return { changes: Number(r.changes), lastInsertRowid: r.lastInsertRowid };
  }
}

/** A better-sqlite3-shaped connection over node:sqlite's DatabaseSync. */
export function nodeSqliteDatabase(mod: NodeSqliteModule): new (filename: string, options?: { readonly?: boolean }) => SqliteConnection {
  return class NodeSqliteDatabase implements SqliteConnection {
    readonly #db: DatabaseSync;

    constructor(filename: string, options: { readonly?: boolean } = {}) {
      this.#db = named(() => new mod.DatabaseSync(filename, { readOnly: options.readonly === true, enableForeignKeyConstraints: false }));
    }

    prepare(sql: string): Statement {
      return new Statement(named(() => this.#db.prepare(sql)));
    }

    pragma(text: string): unknown[] {
      return this.prepare(`PRAGMA ${text}`).all();
    }

    close(): void {
      this.#db.close();
    }
  };
}

/** What either driver's connection offers this tool (see the file's head). */
export interface SqliteConnection {
  prepare(sql: string): { readonly reader: boolean; all(bindings?: readonly SqlValue[]): unknown[]; run(bindings?: readonly SqlValue[]): { changes: number; lastInsertRowid: number | bigint } };
  pragma(text: string): unknown;
  close(): void;
}
