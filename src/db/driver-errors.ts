// Driver errors become one line for people. mysql2 and better-sqlite3 put the
// useful part in `code`/`sqlMessage`; knex wraps timeouts in its own error.
// None of these strings contain a password (mysql2 reports "using password:
// YES", never the value), but they go through redactUrl anyway.
import { redactUrl } from '../config/mask-url.js';

interface DriverErrorLike {
  code?: unknown;
  errno?: unknown;
  sqlMessage?: unknown;
  message?: unknown;
}

export function describeDriverError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return redactUrl(String(err));
  const e = err as DriverErrorLike;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const raw = typeof e.sqlMessage === 'string' ? e.sqlMessage : typeof e.message === 'string' ? e.message : String(err);
  const msg = raw.split('\n')[0] ?? raw;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (is the server running and listening on that host and port?)';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not found';
    case 'ENOENT':
      return 'socket or file not found';
    case 'ER_ACCESS_DENIED_ERROR':
      return `access denied (${redactUrl(msg)})`;
    case 'ER_BAD_DB_ERROR':
      return `unknown database (${redactUrl(msg)})`;
    case 'SQLITE_CANTOPEN':
      return 'cannot open the database file';
    default:
      break;
  }
  if (isGaleraNotReadyError(err)) return `the Galera node is not ready (not part of the primary component): ${redactUrl(msg)}`;
  if (/Knex: Timeout acquiring a connection/.test(msg)) return 'timed out waiting for a connection';
  if (/directory does not exist|unable to open database/i.test(msg)) return 'cannot open the database file';
  return redactUrl(code !== undefined && !msg.includes(code) ? `${code}: ${msg}` : msg);
}

/** True for MySQL 1062 / SQLite UNIQUE constraint failures. */
export function isDuplicateKeyError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as DriverErrorLike;
  return e.code === 'ER_DUP_ENTRY' || e.errno === 1062 || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * True for a constraint a retry can never satisfy: a duplicate key (Nova
 * re-created a provider with the same name or uuid) or a missing referenced
 * row (MySQL 1062, 1451, 1452; SQLite UNIQUE, PRIMARYKEY, FOREIGNKEY).
 */
export function isConstraintError(err: unknown): boolean {
  if (isDuplicateKeyError(err)) return true;
  if (typeof err !== 'object' || err === null) return false;
  const e = err as DriverErrorLike;
  return e.code === 'ER_NO_REFERENCED_ROW_2' || e.code === 'ER_ROW_IS_REFERENCED_2' || e.errno === 1451 || e.errno === 1452 || e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** True when the connection to the server was lost mid-run. */
export function isConnectionLostError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as DriverErrorLike;
  const code = e.code;
  if (code === 'PROTOCOL_CONNECTION_LOST' || code === 'ECONNRESET' || code === 'ER_SERVER_SHUTDOWN' || code === 'EPIPE' || code === 'ER_CONNECTION_KILLED') return true;
  // mysql2 refuses a statement (knex's ROLLBACK after the failure) on a connection that already went.
  return typeof e.message === 'string' && e.message.includes("Can't add new command when connection is in closed state");
}

/**
 * True when InnoDB chose this transaction as a deadlock victim (MySQL 1213).
 * The server has already rolled it back, so it can simply be run again, as
 * oslo.db's wrap_db_retry does for Nova and Placement. On a Galera cluster
 * the same 1213 reports a certification failure at COMMIT (another node
 * committed a conflicting write first) and a brute-force abort (a replicated
 * write took the rows this transaction held): both rolled back, both safe to
 * re-run, as oslo.db treats them.
 */
export function isDeadlockError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as DriverErrorLike;
  return e.code === 'ER_LOCK_DEADLOCK' || e.errno === 1213;
}

/**
 * True for 1047 ER_UNKNOWN_COM_ERROR as a Galera node sends it while it is
 * outside the primary component or not yet synced: "WSREP has not yet
 * prepared node for application use". Nothing was done; another node may serve.
 */
export function isGaleraNotReadyError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as DriverErrorLike;
  return e.errno === 1047 || (typeof e.message === 'string' && e.message.includes('WSREP has not yet prepared node'));
}

/**
 * Deadlock victims are re-run (each attempt re-reads and re-checks every
 * row), up to this many attempts in all, after growing pauses (deadlockPause).
 * oslo.db's wrap_db_retry, as Nova and Placement use it, re-runs 5 times.
 */
export const DEADLOCK_ATTEMPTS = 6;

/**
 * The pause after the `attempt`th deadlock: about 20 ms doubling each time
 * (20, 40, 80, 160, 320 ms: 0.6 s in all), randomised by half either way so
 * that two losers do not collide again in step.
 */
export function deadlockPause(attempt: number): Promise<void> {
  const ms = 20 * 2 ** Math.min(attempt - 1, 5) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}
