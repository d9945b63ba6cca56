// The SQLite driver of the sandbox, of sqlite:// URLs and of the SQLite
// session lock. Two can serve, tried in this order:
//
// 1. better-sqlite3, when it is installed beside nova-reconcile and loads.
//    A clone has it (a devDependency, and the tests run on it). The tarball
//    does not depend on it: its install script compiles a native module (a
//    C++ toolchain and the Node.js headers), which a controller that talks
//    only to MySQL/MariaDB should not need, and which npm 11 warns about on
//    every global install (npm reads `allowScripts` only from the root
//    project). An operator may add it with `npm install -g better-sqlite3`:
//    Node's resolution from this module finds a global sibling
//    (…/lib/node_modules is on the lookup path of every global package).
// 2. Node's built-in SQLite (node:sqlite, Node.js 22.16 and later), shaped
//    as better-sqlite3 by node-sqlite.ts. It needs nothing installed.
//
// Nothing loads either at start-up: only the first SQLite connection does.
// When neither serves, the error says so in one line, with both ways out;
// knex's own message ("Knex: run $ npm install better-sqlite3 --save") is
// wrong for an installed CLI, and a better-sqlite3 whose native part was
// never built, or was built for another Node.js, would fail only at the
// first connection, with a stack.
import { createRequire } from 'node:module';
import { ReconcileError } from '../errors.js';
import { loadNodeSqlite, nodeSqliteDatabase, type SqliteConnection } from './node-sqlite.js';

export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite';

export interface SqliteDriver {
  readonly name: SqliteDriverName;
  readonly Database: new (filename: string, options?: { readonly?: boolean }) => SqliteConnection;
}

let chosen: SqliteDriver | undefined;
let wanted: string | undefined;

/**
 * Take this driver or none (NOVA_RECONCILE_SQLITE_DRIVER, a developer's
 * switch: CONTRIBUTING.md), so that a test knows which one ran; undefined
 * restores the order above.
 */
export function wantSqliteDriver(name: string | undefined): void {
  if (name === wanted) return;
  wanted = name;
  chosen = undefined;
}

/** The driver to open SQLite files with; `what` names the caller in the error when there is none. */
export function sqliteDriver(what: string): SqliteDriver {
  chosen ??= wanted === undefined ? chooseSqliteDriver(what) : takeSqliteDriver(what, wanted);
  return chosen;
}

function takeSqliteDriver(what: string, name: string): SqliteDriver {
  const tag = 'sqlite-driver-missing';
  if (name === 'better-sqlite3') {
    const better = loadBetterSqlite3();
    if ('Database' in better) return { name, Database: better.Database };
    throw new ReconcileError('config', `${what} needs the SQLite driver NOVA_RECONCILE_SQLITE_DRIVER names, and ${better.reason}`, { tag });
  }
  if (name === 'node:sqlite') {
    const builtin = loadNodeSqlite();
    if ('module' in builtin) return { name, Database: nodeSqliteDatabase(builtin.module) };
    throw new ReconcileError('config', `${what} needs the SQLite driver NOVA_RECONCILE_SQLITE_DRIVER names, and ${builtin.reason}`, { tag });
  }
  throw new ReconcileError('config', `NOVA_RECONCILE_SQLITE_DRIVER is ${JSON.stringify(name)}: it names better-sqlite3 or node:sqlite`, { tag });
}

function chooseSqliteDriver(what: string): SqliteDriver {
  const better = loadBetterSqlite3();
  if ('Database' in better) return { name: 'better-sqlite3', Database: better.Database };
  const builtin = loadNodeSqlite();
  if ('module' in builtin) return { name: 'node:sqlite', Database: nodeSqliteDatabase(builtin.module) };
  throw new ReconcileError('config', `${what} needs an SQLite driver, and there is none: ${builtin.reason}, and ${better.reason}`, {
    hint:
      better.installed
        ? 'run it with Node.js 22.16 or later, or build better-sqlite3 for this Node.js with `npm rebuild better-sqlite3` where it is installed (a C++ toolchain and the Node.js headers)'
        : 'run it with Node.js 22.16 or later, or install better-sqlite3 beside it with `npm install -g better-sqlite3` (it compiles a native module: a C++ toolchain and the Node.js headers)',
    tag: 'sqlite-driver-missing',
  });
}

type BetterSqlite3 = new (filename: string, options?: { readonly?: boolean }) => SqliteConnection;

function loadBetterSqlite3(): { Database: BetterSqlite3 } | { installed: boolean; reason: string } {
  const require = createRequire(import.meta.url);
  try {
    require.resolve('better-sqlite3');
  } catch {
    return { installed: false, reason: 'better-sqlite3 is not installed' };
  }
  try {
    const Database = require('better-sqlite3') as BetterSqlite3;
    new Database(':memory:').close();
    return { Database };
  } catch (err) {
    const reason = err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
    return { installed: true, reason: `better-sqlite3 is installed but cannot be loaded: ${reason}` };
  }
}
