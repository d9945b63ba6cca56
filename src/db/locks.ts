// One writer at a time per operation. On MySQL a session lock (GET_LOCK) on
// one pinned connection of the API database: a killed process loses its
// session and so its lock. On a Galera cluster GET_LOCK is node-local (it is
// not replicated), so there the lock is a lease row (lease-lock.ts). On
// SQLite an exclusive write transaction held on a small lock file beside the
// API database: the OS releases it on exit.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { ReconcileError } from '../errors.js';
import { isGalera, type Database } from './connect.js';
import { createKnex, sqliteClient } from './knex-factory.js';
import { sqliteDriver } from './sqlite-driver.js';
import { withLeaseLock } from './lease-lock.js';

export interface SessionLockOptions {
  /** [nova_reconcile] lock_database: where a Galera cluster's lease table lives (default: the API database). */
  readonly lockDatabase?: string | undefined;
}

export async function withSessionLock<T>(api: Database, name: string, timeoutSec: number, fn: () => Promise<T>, options: SessionLockOptions = {}): Promise<T> {
  if (api.dialect === 'mysql' && api.target.kind === 'mysql') {
    const lockName = mysqlLockName(name, api.target.database);
    if (isGalera(api.knex)) {
      const database = options.lockDatabase !== undefined && options.lockDatabase !== '' ? options.lockDatabase : api.target.database;
      return withLeaseLock(api.knex, { database, name: lockName, timeoutSec }, fn);
    }
    return withMysqlLock(api.knex, lockName, timeoutSec, fn);
  }
  return withSqliteLock(api, name, timeoutSec, fn);
}

/**
 * GET_LOCK names are server-wide, and one MariaDB server often holds the
 * databases of several deployments: the lock is scoped to the API database
 * so that they do not wait for each other. Names are kept within MySQL's
 * 64 characters.
 */
export function mysqlLockName(name: string, database: string | undefined): string {
  const full = `${name}:${database ?? ''}`;
  if (full.length <= 64) return full;
  return `${name}:${createHash('sha256').update(database ?? '').digest('hex')}`.slice(0, 64);
}

export function lockHeld(name: string, timeoutSec: number): ReconcileError {
  return new ReconcileError('lock', `another run holds the lock "${name}" (waited ${timeoutSec} s); safe to retry`, {
    hint: 'wait for the other run to finish, or raise [nova_reconcile] lock_timeout',
    tag: 'lock-held',
  });
}

async function withMysqlLock<T>(knex: Knex, name: string, timeoutSec: number, fn: () => Promise<T>): Promise<T> {
  const conn: unknown = await knex.client.acquireConnection();
  try {
    const res: unknown = await knex.raw('SELECT GET_LOCK(?, ?) AS got', [name, timeoutSec]).connection(conn);
    const got = (res as Array<Array<{ got: number | null }>>)[0]?.[0]?.got;
    if (got !== 1) throw lockHeld(name, timeoutSec);
    try {
      return await fn();
    } finally {
      await knex.raw('SELECT RELEASE_LOCK(?)', [name]).connection(conn).catch(() => undefined);
    }
  } finally {
    await knex.client.releaseConnection(conn);
  }
}

async function withSqliteLock<T>(api: Database, name: string, timeoutSec: number, fn: () => Promise<T>): Promise<T> {
  if (api.target.kind !== 'sqlite') throw new ReconcileError('internal', 'sqlite lock on a non-sqlite database');
  const file = `${api.target.filename}.${name.replace(/[^A-Za-z0-9_-]/g, '_')}.lock`;
  const lockDb = createKnex({
    client: sqliteClient(sqliteDriver('the SQLite session lock').Database),
    connection: { filename: file },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: { pragma(s: string): unknown }, done: (err: Error | null, c: unknown) => void) => {
        conn.pragma(`busy_timeout = ${Math.round(timeoutSec * 1000)}`);
        done(null, conn);
      },
    },
  });
  try {
    try {
      await lockDb.raw('BEGIN IMMEDIATE');
    } catch (err) {
      if (/SQLITE_BUSY|database is locked/i.test(String(err))) throw lockHeld(name, timeoutSec);
      throw err;
    }
    try {
      return await fn();
    } finally {
      await lockDb.raw('ROLLBACK').catch(() => undefined);
    }
  } finally {
    await lockDb.destroy();
  }
}
