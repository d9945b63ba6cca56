// Before- and after-images of the rows a change touched: what the journal
// records and what undo compares against. Values are normalised to JSON
// types (numbers, strings, null) so an image read back from either driver
// compares equal to the one written.
import type { Knex } from 'knex';
import type { Dialect } from './connect.js';

export type RowValue = string | number | null;
export type Row = Readonly<Record<string, RowValue>>;

export interface RowImage {
  readonly table: string;
  /** Primary key columns and values. */
  readonly key: Readonly<Record<string, string | number>>;
  /** null: the row did not exist before (it was inserted). */
  readonly before: Row | null;
  /** null: the row does not exist after (it was deleted). */
  readonly after: Row | null;
}

/** A compare-and-swap miss: the row is not what the plan (or the journal) expected. */
export class CasConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CasConflict';
  }
}

/**
 * A change that lost to concurrent writers (deadlock victim, Galera
 * certification failure) on every attempt: each attempt was rolled back, so
 * nothing of it was written. Handled as a conflict: its unit is skipped and
 * a re-run finishes it.
 */
export class Contention extends CasConflict {
  constructor(message: string) {
    super(message);
    this.name = 'Contention';
  }
}

export function normaliseRow(raw: Readonly<Record<string, unknown>>): Row {
  const out: Record<string, RowValue> = {};
  for (const [k, v] of Object.entries(raw)) out[k] = normaliseValue(v);
  return out;
}

function normaliseValue(v: unknown): RowValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Date) return v.toISOString().slice(0, 19).replace('T', ' ');
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return String(v);
}

/**
 * The row as an UPDATE leaves it, for a row this transaction holds under an
 * exclusive lock since it read `before`, and whose UPDATE matched it (one
 * affected row): nobody else could write it in between and Nova's tables
 * have no triggers or ON UPDATE columns, so it is `before` with `values`
 * written over it. Saves re-reading the row; undo still compares it as a
 * compare-and-swap, so a wrong image could only make undo refuse.
 */
export function updatedImage(before: Row, values: Readonly<Record<string, unknown>>): Row {
  return { ...before, ...normaliseRow(values) };
}

export function rowsEqual(a: Row | null, b: Row | null): boolean {
  if (a === null || b === null) return a === b;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (!valuesEqual(a[k] ?? null, b[k] ?? null)) return false;
  return true;
}

function valuesEqual(a: RowValue, b: RowValue): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  // A FLOAT read back may be 1.5 or "1.5"; integers may come back as strings from big columns.
  const na = Number(a);
  const nb = Number(b);
  if (!Number.isNaN(na) && !Number.isNaN(nb) && String(a).trim() !== '' && String(b).trim() !== '') return Math.abs(na - nb) <= 1e-6 * Math.max(1, Math.abs(na));
  return false;
}

/** Select rows for update (a row lock on MySQL; SQLite's write transaction already excludes writers). */
export async function selectForUpdate(trx: Knex.Transaction, dialect: Dialect, table: string, where: Readonly<Record<string, string | number>>): Promise<Row[]> {
  return selectLocked(trx, dialect, table, where, 'update');
}

/**
 * Select rows under a shared lock: nobody can change them until the
 * transaction ends, while other transactions that only read-lock them (the
 * re-homes of other nodes onto the same service) go on side by side.
 */
export async function selectForShare(trx: Knex.Transaction, dialect: Dialect, table: string, where: Readonly<Record<string, string | number>>): Promise<Row[]> {
  return selectLocked(trx, dialect, table, where, 'share');
}

async function selectLocked(trx: Knex.Transaction, dialect: Dialect, table: string, where: Readonly<Record<string, string | number>>, mode: 'update' | 'share'): Promise<Row[]> {
  const rows: Array<Record<string, unknown>> = await lockedSelect(trx, dialect, table, where, mode);
  return rows.map(normaliseRow);
}

/** The statement selectForUpdate (or selectForShare) runs, for a batch (statement-batch.ts). */
export function lockedSelect(trx: Knex.Transaction, dialect: Dialect, table: string, where: Readonly<Record<string, string | number>>, mode: 'update' | 'share' = 'update'): Knex.QueryBuilder {
  return withLock(trx(table).select('*').where(where), dialect, mode);
}

/** `q` reading under a row lock on MySQL; as it is on SQLite, whose write transaction already excludes writers. */
export function withLock(q: Knex.QueryBuilder, dialect: Dialect, mode: 'update' | 'share' = 'update'): Knex.QueryBuilder {
  if (dialect === 'mysql') {
    if (mode === 'update') q.forUpdate();
    else q.forShare();
  }
  return q;
}
