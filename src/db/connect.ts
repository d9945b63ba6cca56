// The only place that builds knex instances. One instance per logical
// database (API, each cell, placement, ironic), each with a small pool, bounded
// connect timeouts, and session settings that match oslo.db's: UTC and
// sql_mode=TRADITIONAL. Every statement is counted for `--stats`.
import { existsSync } from 'node:fs';
import type { Knex } from 'knex';
import { createKnex, sqliteClient } from './knex-factory.js';
import { sqliteDriver } from './sqlite-driver.js';
import type { DbTarget } from '../config/types.js';
import { ReconcileError } from '../errors.js';
import { describeDriverError, isGaleraNotReadyError } from './driver-errors.js';
import { describeNotReady, NOT_READY_HINT, type GaleraState } from './galera.js';

export type Dialect = 'mysql' | 'sqlite';

export interface Database {
  readonly knex: Knex;
  /**
   * The pool the write path's transactions run on (journaled-write.ts, the
   * apply's held cell transaction, undo), opened on first use. On MySQL its
   * connections accept several statements in one packet, for
   * db/statement-batch.ts (docs/SQL-BINDING.md: a pool of its own, and the
   * session's sql_mode read back); on SQLite, and when absent, it is `knex`.
   */
  readonly writer?: () => Knex;
  readonly dialect: Dialect;
  /** What the database is, for messages: "API database mysql://127.0.0.1:3306/nova_api". */
  readonly label: string;
  readonly target: DbTarget;
}

export interface OpenOptions {
  /** Seconds to wait for a connection before giving up. */
  readonly connectTimeout: number;
  /** Human name of the role, e.g. "API database", "cell 'cell1' database". */
  readonly role: string;
  /** Pool size; cells and placement need 1–2, tests may want more. */
  readonly poolMax?: number;
}

/**
 * knex's default logger writes to stdout with console.log, and on a failed
 * connect it logs "Acquire connection error" with the driver's stack. That
 * would break nova-manage's stdout and --format json, and print a stack
 * without --debug. The error itself is thrown and reported by the CLI, so
 * knex's own log lines are dropped.
 */
const KNEX_LOG: Knex.Logger = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined };

/** Counts every packet of SQL sent (a batch of statements is one), across all databases of the process. */
export const roundTrips = { count: 0 };

/** The writer pool of each database opened here, if it was opened: closeDatabase closes it too. */
const openWriters = new WeakMap<Database, () => Knex | undefined>();

/**
 * Open a database and prove it answers: one `SELECT 1` is run so that an
 * unreachable server, a bad password or an unknown database fails here, in
 * bounded time, with one clear line, rather than deep inside a command.
 */
export async function openDatabase(target: DbTarget, options: OpenOptions): Promise<Database> {
  const label = `${options.role} ${target.display}`;
  if (target.kind === 'sqlite') sqliteDriver(`the ${label}`);
  if (target.kind === 'sqlite' && target.filename !== ':memory:' && !existsSync(target.filename)) {
    // SQLite would silently create an empty file; a typo must not.
    throw new ReconcileError('connection', `cannot open the ${label}: file ${target.filename} does not exist`, { hint: connectionHint(target) });
  }
  const timeoutMs = Math.max(1, Math.round(options.connectTimeout * 1000));
  const countRoundTrips = (k: Knex): Knex =>
    k.on('query', () => {
      roundTrips.count += 1;
    });
  const knex = countRoundTrips(target.kind === 'mysql' ? mysqlKnex(target, timeoutMs, options.poolMax ?? 2, false) : sqliteKnex(target, label, timeoutMs));
  let writer: Knex | undefined;
  const db: Database = {
    knex,
    ...(target.kind === 'mysql' ? { writer: () => (writer ??= countRoundTrips(mysqlKnex(target, timeoutMs, options.poolMax ?? 2, true))) } : {}),
    dialect: target.kind,
    label,
    target,
  };
  openWriters.set(db, () => writer);
  try {
    await withTimeout(knex.raw('SELECT 1'), timeoutMs + 500, () => `timed out after ${options.connectTimeout} s`);
  } catch (err) {
    await knex.destroy().catch(() => undefined);
    throw new ReconcileError('connection', `cannot connect to the ${label}: ${describeDriverError(err)}`, {
      hint: isGaleraNotReadyError(err) ? NOT_READY_HINT : connectionHint(target),
      cause: err,
    });
  }
  return db;
}

/** The knex instance a write transaction of `db` runs on (Database.writer). */
export function writerOf(db: Database): Knex {
  return db.writer?.() ?? db.knex;
}

/**
 * COMMIT a transaction opened without a handler (`knex.transaction()`), and
 * throw the driver's error when it failed: knex's `trx.commit()` resolves
 * even then (the transaction's executionPromise is what rejects), so a
 * connection lost at COMMIT would pass for a commit.
 */
export async function commitTransaction(trx: Knex.Transaction): Promise<void> {
  await trx.commit();
  await trx.executionPromise;
}

export async function closeDatabase(db: Database): Promise<void> {
  const writer = openWriters.get(db)?.();
  await Promise.all([db.knex.destroy(), writer?.destroy()]);
}

/** What the sessions of a knex instance found: wsrep_on of the server (undefined before the first connection). */
interface SessionFacts {
  wsrepOn: boolean | undefined;
}

const sessionFacts = new WeakMap<Knex, SessionFacts>();

/** Whether the server behind `knex` is a Galera node (wsrep_on), as its first session found; false for SQLite. */
export function isGalera(knex: Knex): boolean {
  return sessionFacts.get(knex)?.wsrepOn === true;
}

function checkGaleraSession(conn: MysqlConn, session: SessionFacts, done: (err: Error | null) => void): void {
  conn.query("SHOW VARIABLES WHERE Variable_name = 'wsrep_on'", (err, rows) => {
    if (err !== null) return done(err);
    const on = Array.isArray(rows) && rows.some((r) => String((r as Record<string, unknown>)['Value']).toUpperCase() === 'ON');
    session.wsrepOn = on;
    if (!on) return done(null);
    conn.query("SHOW STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_status', 'wsrep_local_state_comment')", (err2, statusRows) => {
      if (err2 !== null) return done(err2);
      const status = new Map((Array.isArray(statusRows) ? statusRows : []).map((r) => [String((r as Record<string, unknown>)['Variable_name']).toLowerCase(), String((r as Record<string, unknown>)['Value'])]));
      if ((status.get('wsrep_ready') ?? 'OFF').toUpperCase() === 'ON') return done(null);
      const state: GaleraState = { on, ready: false, clusterStatus: status.get('wsrep_cluster_status'), localState: status.get('wsrep_local_state_comment') };
      done(Object.assign(new Error(describeNotReady(state)), { errno: 1047, code: 'ER_UNKNOWN_COM_ERROR' }));
    });
  });
}

/**
 * @param batching the write path's pool: its connections take several
 *   statements in one packet (CLIENT_MULTI_STATEMENTS), and each one's
 *   sql_mode is read back after it is set (docs/SQL-BINDING.md, conditions 1
 *   and 3). Every other pool keeps the flag off, so a `;` in anything it
 *   sends is a syntax error, not a second statement.
 */
function mysqlKnex(target: Extract<DbTarget, { kind: 'mysql' }>, timeoutMs: number, poolMax: number, batching: boolean): Knex {
  const session: SessionFacts = { wsrepOn: undefined };
  const connection: Record<string, unknown> = {
    charset: mysqlCharset(target.charset),
    connectTimeout: timeoutMs,
    // Nova's timestamps are naive UTC; read and write them as such.
    timezone: 'Z',
    dateStrings: true,
    supportBigNumbers: true,
    multipleStatements: batching,
  };
  if (target.socketPath !== undefined) connection['socketPath'] = target.socketPath;
  else connection['host'] = target.host ?? 'localhost';
  if (target.port !== undefined) connection['port'] = target.port;
  if (target.user !== undefined) connection['user'] = target.user;
  if (target.password !== undefined) connection['password'] = target.password;
  if (target.database !== undefined) connection['database'] = target.database;
  const knex = createKnex({
    client: 'mysql2',
    connection,
    pool: {
      min: 0,
      max: poolMax,
      afterCreate: (conn: MysqlConn, done: (err: Error | null, conn: MysqlConn) => void) => {
        // oslo.db sets sql_mode per session; UTC keeps NOW() comparable with Nova's naive UTC.
        // On a Galera node, wsrep_sync_wait=1 makes every read wait until the
        // node has applied what the cluster committed before it (causal
        // reads): a plan, and each compare-and-swap's read, sees the writes
        // made through other nodes. Same round trip; a server without the
        // variable (Oracle MySQL, 1193) gets the plain settings.
        const settled = (err: Error | null): void => (err !== null || !batching ? done(err, conn) : checkEscapingSession(conn, (err4) => done(err4, conn)));
        conn.query(`${SESSION_SETTINGS}, wsrep_sync_wait = IF(@@wsrep_on, 1, 0)`, (err) => {
          if (err !== null) {
            if ((err as { errno?: number }).errno !== 1193) return done(err, conn);
            return conn.query(SESSION_SETTINGS, (err2) => settled(err2));
          }
          // A Galera node outside the primary component still answers SET and
          // SHOW (and SELECT 1): refuse it here, in one line, rather than at
          // the first real query. Raw queries: not counted by --stats.
          checkGaleraSession(conn, session, (err3) => settled(err3));
        });
      },
    },
    acquireConnectionTimeout: timeoutMs,
    log: KNEX_LOG,
  });
  sessionFacts.set(knex, session);
  return knex;
}

const SESSION_SETTINGS = "SET SESSION sql_mode = 'TRADITIONAL', time_zone = '+00:00'";

/**
 * mysql2 escapes values on the client as if backslashes escape (it is not
 * told the session's sql_mode). Under NO_BACKSLASH_ESCAPES a value ending in
 * a backslash would end its literal early, and on a connection that takes
 * several statements that is an injected statement. SESSION_SETTINGS has
 * just set the mode; this reads it back rather than trusting the SET.
 */
function checkEscapingSession(conn: MysqlConn, done: (err: Error | null) => void): void {
  conn.query('SELECT @@SESSION.sql_mode AS sql_mode', (err, rows) => {
    if (err !== null) return done(err);
    const mode = Array.isArray(rows) ? (rows[0] as Record<string, unknown> | undefined)?.['sql_mode'] : undefined;
    done(escapingProblem(mode));
  });
}

/** Why a session with this sql_mode must not run batched statements, as an error; null when it may. Exported for the unit test. */
export function escapingProblem(mode: unknown): Error | null {
  if (typeof mode !== 'string') return new Error(`the session's sql_mode could not be read back (got ${String(mode)}); refusing a connection that batches statements`);
  if (mode.toUpperCase().split(',').includes('NO_BACKSLASH_ESCAPES'))
    return new Error(`the session's sql_mode is ${mode}: with NO_BACKSLASH_ESCAPES the client's escaping of values is wrong; refusing a connection that batches statements`);
  return null;
}

interface MysqlConn {
  query(sql: string, cb: (err: Error | null, rows?: unknown) => void): void;
}

function sqliteKnex(target: Extract<DbTarget, { kind: 'sqlite' }>, label: string, timeoutMs: number): Knex {
  return createKnex({
    client: sqliteClient(sqliteDriver(`the ${label}`).Database),
    connection: { filename: target.filename },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: { pragma(s: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
        try {
          conn.pragma('foreign_keys = ON');
          // Concurrent runs wait for the file lock instead of failing at once.
          conn.pragma(`busy_timeout = ${timeoutMs}`);
          done(null, conn);
        } catch (err) {
          done(err as Error, conn);
        }
      },
    },
    acquireConnectionTimeout: timeoutMs,
    log: KNEX_LOG,
  });
}

/** SQLAlchemy/PyMySQL charset names to mysql2's collation-flavoured names. */
function mysqlCharset(charset: string): string {
  const c = charset.toLowerCase();
  // utf8mb3 columns are read through a utf8mb4 connection: the server
  // converts losslessly, and mysql2 then decodes plain UTF-8 instead of
  // running every string through its slow CESU-8 path.
  if (c === 'utf8' || c === 'utf8mb3' || c === 'utf8mb4') return 'UTF8MB4_GENERAL_CI';
  return c.toUpperCase();
}

function connectionHint(target: DbTarget): string {
  if (target.kind === 'sqlite') return `check that ${target.filename} exists and is readable`;
  return 'check the host, port, credentials and database name in the connection URL, and that the server is running';
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
