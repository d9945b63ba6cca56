// The apply lock on a Galera cluster. GET_LOCK is not replicated (MariaDB's
// "Galera Cluster known limitations"), so two runs through two nodes would
// both get "the" lock. What Galera does replicate, in one total order, is a
// committed write: a lease is a row, taken and renewed by single-statement
// transactions that Galera certifies. Two runs that take the row through two
// nodes at the same moment both write it locally; certification lets the
// first commit and fails the second with 1213 (ER_LOCK_DEADLOCK), so exactly
// one of them holds it.
//
// Time is the database's: `expires_at` is written as UTC_TIMESTAMP(6) + the
// lease on the node that runs the statement, and a lease is taken over only
// when `expires_at < UTC_TIMESTAMP(6)` on the node that takes it over. The
// client's clock is never compared with anything. The nodes' clocks must agree
// within LEASE_SECONDS - RENEW_EVERY (16 s): any NTP-run cluster does.
//
// A holder renews every RENEW_EVERY_MS; a holder that dies (SIGKILL, its node
// gone) stops renewing and its lease expires LEASE_SECONDS after its last
// renewal, after which the next run takes it over. Release deletes the row.
//
// A waiting run watches the holder's renewal count. When lock_timeout runs
// out and the holder has not renewed for two renewal periods, it is taken
// for dead and the wait extends to its lease's expiry (by the database's
// clock), once: a re-run started right after a crash then takes the lease
// over instead of failing on a dead run's lease. A holder
// that renews is alive, and the run fails at lock_timeout, saying so.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { ReconcileError } from '../errors.js';
import { describeDriverError, isDeadlockError } from './driver-errors.js';
import { quoteIdentifier, rowsOf } from './mysql-results.js';

/** How long a lease lasts without renewal. */
export const LEASE_SECONDS = 20;
/** How often the holder renews it. */
export const RENEW_EVERY_MS = 4_000;
/** How often a waiting run tries again. */
const POLL_MS = 500;

/** The table, created on first use (CREATE TABLE is replicated by Galera as TOI). */
export const LEASE_TABLE = 'nova_reconcile_locks';

export interface LeaseOptions {
  /** The database that holds LEASE_TABLE; undefined: the connection's default database. */
  readonly database: string | undefined;
  readonly name: string;
  readonly timeoutSec: number;
  /** Tests shorten the lease; production uses LEASE_SECONDS / RENEW_EVERY_MS. */
  readonly leaseSeconds?: number;
  readonly renewEveryMs?: number;
}

interface Holder {
  readonly owner: string;
  readonly holder: string;
  readonly expiresIn: number;
  readonly renewals: number;
}

/** What a waiting run saw of the holder: the same owner and renewal count since `since` (ms). */
interface Watch {
  owner: string;
  renewals: number;
  since: number;
  /** Whether it was seen to renew during the wait. */
  renewed: boolean;
}

/** How the wait ended, for the message (leaseHeld). */
type WaitVerdict = { readonly kind: 'alive' } | { readonly kind: 'unknown' } | { readonly kind: 'outwaited'; readonly deadHolder: string };

export async function withLeaseLock<T>(knex: Knex, options: LeaseOptions, fn: () => Promise<T>): Promise<T> {
  const table = qualified(options.database);
  const leaseSeconds = options.leaseSeconds ?? LEASE_SECONDS;
  const renewEveryMs = options.renewEveryMs ?? RENEW_EVERY_MS;
  await ensureTable(knex, options.database, table);
  const owner = randomUUID();
  // Names the holder in a waiting run's message; the random part tells two runs of one host apart.
  const who = `${hostname()} run ${owner.slice(0, 8)}`.slice(0, 255);
  await acquire(knex, table, options, owner, who, leaseSeconds, renewEveryMs);

  let lost: string | undefined;
  let lastRenewed = Date.now();
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = (async () => {
      try {
        const res = await knex.raw(`UPDATE ${table} SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? SECOND, renewals = renewals + 1 WHERE name = ? AND owner = ?`, [leaseSeconds, options.name, owner]);
        if (affected(res) === 1) lastRenewed = Date.now();
        else lost ??= 'another run took it over';
      } catch (err) {
        // A node gone or a certification conflict: try again at the next tick;
        // the lease outlives a few missed renewals.
        if (Date.now() - lastRenewed > leaseSeconds * 1000) lost ??= `it could not be renewed for ${leaseSeconds} s (${describeDriverError(err)})`;
      }
    })();
  }, renewEveryMs);
  timer.unref();
  let result: T;
  try {
    result = await fn();
  } finally {
    clearInterval(timer);
    await renewing;
    await release(knex, table, options.name, owner);
  }
  if (lost !== undefined)
    throw new ReconcileError('lock', `the apply lock "${options.name}" (a lease in ${table}) was lost during the run: ${lost}; another run may have applied beside this one`, {
      hint: 'every change was a compare-and-swap, so nothing was overwritten; re-run the command to see what is left',
      tag: 'lock-lost',
    });
  return result;
}

async function acquire(knex: Knex, table: string, options: LeaseOptions, owner: string, who: string, leaseSeconds: number, renewEveryMs: number): Promise<void> {
  let deadline = Date.now() + options.timeoutSec * 1000;
  let watch: Watch | undefined;
  let outwaited: string | undefined;
  for (;;) {
    try {
      const inserted = await knex.raw(
        `INSERT IGNORE INTO ${table} (name, owner, holder, taken_at, expires_at, renewals) VALUES (?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? SECOND, 0)`,
        [options.name, owner, who, leaseSeconds],
      );
      if (affected(inserted) === 1) return;
      const takenOver = await knex.raw(
        `UPDATE ${table} SET owner = ?, holder = ?, taken_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL ? SECOND, renewals = 0 WHERE name = ? AND expires_at < UTC_TIMESTAMP(6)`,
        [owner, who, leaseSeconds, options.name],
      );
      if (affected(takenOver) === 1) return;
    } catch (err) {
      // Certification failed: another run took the row through another node at the same moment.
      if (!isDeadlockError(err)) throw err;
    }
    const holder = await currentHolder(knex, table, options.name);
    const now = Date.now();
    if (holder !== undefined) {
      if (watch === undefined || watch.owner !== holder.owner) watch = { owner: holder.owner, renewals: holder.renewals, since: now, renewed: false };
      else if (watch.renewals !== holder.renewals) watch = { ...watch, renewals: holder.renewals, since: now, renewed: true };
    }
    if (deadline - now <= 0) {
      // A holder silent for two renewal periods has stopped renewing (killed): wait for its lease to expire, once.
      const silent = holder !== undefined && watch !== undefined && now - watch.since >= 2 * renewEveryMs;
      if (silent && outwaited === undefined) {
        outwaited = holder.holder;
        deadline = now + (holder.expiresIn + 1) * 1000;
        continue;
      }
      const verdict: WaitVerdict = outwaited !== undefined ? { kind: 'outwaited', deadHolder: outwaited } : watch?.renewed === true ? { kind: 'alive' } : { kind: 'unknown' };
      throw leaseHeld(options, table, holder, verdict);
    }
    await sleep(Math.min(POLL_MS, deadline - now));
  }
}

async function release(knex: Knex, table: string, name: string, owner: string): Promise<void> {
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    try {
      await knex.raw(`DELETE FROM ${table} WHERE name = ? AND owner = ?`, [name, owner]);
      return;
    } catch (err) {
      // Not released (the node went away): the lease expires by itself.
      if (!isDeadlockError(err)) return;
    }
  }
}

async function currentHolder(knex: Knex, table: string, name: string): Promise<Holder | undefined> {
  try {
    const res = await knex.raw(`SELECT owner, holder, renewals, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), expires_at) AS expires_in FROM ${table} WHERE name = ?`, [name]);
    const row = rowsOf(res)[0];
    if (row === undefined) return undefined;
    return { owner: String(row['owner']), holder: String(row['holder']), expiresIn: Math.max(0, Number(row['expires_in'])), renewals: Number(row['renewals']) };
  } catch {
    return undefined;
  }
}

function leaseHeld(options: LeaseOptions, table: string, holder: Holder | undefined, verdict: WaitVerdict): ReconcileError {
  const alive = verdict.kind === 'alive' ? ', which is renewing it' : '';
  const by = holder === undefined ? '' : `, held by ${holder.holder}${alive}, lease expires in ${holder.expiresIn} s unless renewed`;
  const waited =
    verdict.kind === 'outwaited'
      ? `waited ${options.timeoutSec} s, then until the lease of ${verdict.deadHolder}, which had stopped renewing it, expired`
      : `waited ${options.timeoutSec} s`;
  return new ReconcileError('lock', `another run holds the lock "${options.name}" (a lease in ${table}${by}; ${waited}); safe to retry`, {
    hint: `wait for the other run to finish, or raise [nova_reconcile] lock_timeout; a run that died leaves a lease that expires within ${LEASE_SECONDS} s, and a run waits for it once the holder has stopped renewing`,
    tag: 'lock-held',
  });
}

async function ensureTable(knex: Knex, database: string | undefined, table: string): Promise<void> {
  const exists = rowsOf(
    await knex.raw('SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?', [database ?? null, LEASE_TABLE]),
  )[0];
  if (Number(exists?.['n'] ?? 0) > 0) return;
  try {
    await knex.raw(
      `CREATE TABLE IF NOT EXISTS ${table} (` +
        'name VARCHAR(64) NOT NULL PRIMARY KEY, owner CHAR(36) NOT NULL, holder VARCHAR(255) NOT NULL, ' +
        'taken_at DATETIME(6) NOT NULL, expires_at DATETIME(6) NOT NULL, renewals INT NOT NULL DEFAULT 0' +
        ') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4',
    );
  } catch (err) {
    throw new ReconcileError('connection', `cannot create the lock table ${table} that --apply needs on a Galera cluster: ${describeDriverError(err)}`, {
      hint: 'grant CREATE on that database, create the table as docs/operations/galera.md shows, or set [nova_reconcile] lock_database to a database the tool may write',
      cause: err,
    });
  }
}

function qualified(database: string | undefined): string {
  return database === undefined || database === '' ? quoteIdentifier(LEASE_TABLE) : `${quoteIdentifier(database)}.${quoteIdentifier(LEASE_TABLE)}`;
}

function affected(res: unknown): number {
  const head = Array.isArray(res) ? res[0] : res;
  const n = (head as { affectedRows?: unknown } | undefined)?.affectedRows;
  return typeof n === 'number' ? n : 0;
}


function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
