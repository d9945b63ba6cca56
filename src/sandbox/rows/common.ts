// What every row writer shares: the insert helpers and Nova's JSON spelling.
import type { Knex } from 'knex';
import { chunk } from '../../db/batches.js';

/**
 * knex compiles a multi-row INSERT for SQLite as one compound
 * `SELECT ... UNION ALL SELECT ...`, and SQLite allows at most 500 terms in a
 * compound select (SQLITE_MAX_COMPOUND_SELECT). 500 rows of compute_nodes are
 * also well under both engines' placeholder limits.
 */
export const INSERT_CHUNK = 500;

export type Row = Record<string, string | number | null>;

/** Both drivers answer a single-row insert with [insertId]. */
export async function insertOne(db: Knex, table: string, row: Row): Promise<number> {
  const result: unknown = await db(table).insert(row);
  const id = Array.isArray(result) ? Number(result[0]) : Number.NaN;
  if (!Number.isInteger(id) || id <= 0) throw new Error(`insert into ${table} returned no id`);
  return id;
}

/** Insert rows in chunks; no ids are read back. */
export async function insertMany(db: Knex, table: string, rows: readonly Row[]): Promise<void> {
  for (const batch of chunk(rows, INSERT_CHUNK)) await db(table).insert(batch);
}

/**
 * Insert rows in chunks and return their ids in input order, read back by a
 * unique key (auto-increment ids of a multi-row insert are only guaranteed
 * consecutive under some innodb_autoinc_lock_mode settings).
 */
export async function insertManyReturningIds(db: Knex, table: string, key: string, rows: readonly Row[]): Promise<number[]> {
  const ids: number[] = [];
  for (const batch of chunk(rows, INSERT_CHUNK)) {
    await db(table).insert(batch);
    const keys = batch.map((r) => String(r[key]));
    const found: Array<{ id: number; key: string }> = await db(table).select('id', `${key} as key`).whereIn(key, keys);
    const byKey = new Map(found.map((f) => [String(f.key).toLowerCase(), Number(f.id)]));
    for (const k of keys) {
      const id = byKey.get(k.toLowerCase());
      if (id === undefined) throw new Error(`row ${table}.${key} = ${k} was inserted but cannot be read back`);
      ids.push(id);
    }
  }
  return ids;
}

export function flag(value: boolean): number {
  return value ? 1 : 0;
}

/**
 * JSON as Python's json.dumps writes it (", " and ": " separators), which is
 * what Nova stores through oslo.serialization's jsonutils.dumps.
 */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}
