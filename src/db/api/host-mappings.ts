// host_mappings in the API database. Host names are compared by the
// database, never in JavaScript: Nova's column is utf8mb3_general_ci, so
// 'C1-A ' and 'c1-a' are the same host. On SQLite the
// sandbox schema declares the column NOCASE and lookups also ignore trailing
// spaces with rtrim().
import type { Knex } from 'knex';
import { chunk } from '../batches.js';
import type { Dialect } from '../connect.js';

export interface HostMappingMatch {
  /** The host string that was looked up, exactly as given. */
  readonly candidate: string;
  /** The host as stored in the mapping (may differ in case or trailing spaces). */
  readonly host: string;
  readonly cellId: number;
}

export interface HostMappingListRow {
  readonly host: string;
  readonly cell_id: number;
  readonly cell_uuid: string;
  readonly cell_name: string | null;
}

/**
 * Find the mappings of many hosts, in batches. The database's collation
 * decides what "the same host" means; the result says which candidate
 * matched which mapping.
 */
export async function findHostMappings(db: Knex, dialect: Dialect, hosts: readonly string[], known?: ExactHostMappings): Promise<HostMappingMatch[]> {
  const unique = [...new Set(hosts)];
  const { exact, rest } = dialect === 'mysql' && known !== undefined ? splitByExactMappings(unique, known) : { exact: new Map<string, number>(), rest: unique };
  const found: HostMappingMatch[] = [...exact].map(([h, cellId]) => ({ candidate: h, host: h, cellId }));
  const batches = chunk(rest);
  // On MySQL two batches are in flight at once (the API pool holds two
  // connections), which hides one round trip behind the other; results are
  // kept in batch order.
  const results: HostMappingMatch[][] = new Array<HostMappingMatch[]>(batches.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < batches.length) {
      const index = next++;
      results[index] = await findBatch(db, dialect, batches[index] as string[]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(dialect === 'mysql' ? 2 : 1, batches.length) }, worker));
  return [...found, ...results.flat()];
}

/**
 * MySQL only: a candidate spelled exactly like a stored host is that mapping
 * (MySQL's unique key holds one per collation class), and only the others
 * (`rest`, in their order) need the database. `exact`: those found, → cell id.
 */
export function splitByExactMappings(hosts: readonly string[], known: ExactHostMappings): { readonly exact: Map<string, number>; readonly rest: string[] } {
  const exact = new Map<string, number>();
  const rest: string[] = [];
  for (const h of hosts) {
    const cellId = known.get(h);
    if (cellId === undefined) rest.push(h);
    else exact.set(h, cellId);
  }
  return { exact, rest };
}

/** Each candidate of `matches` → the cell id of its (first) mapping, added to `into`. */
export function cellIdByCandidate(matches: readonly HostMappingMatch[], into: Map<string, number> = new Map()): Map<string, number> {
  for (const m of matches) if (!into.has(m.candidate)) into.set(m.candidate, m.cellId);
  return into;
}

/** Stored host (exactly as written) → cell id. */
export type ExactHostMappings = ReadonlyMap<string, number>;

/**
 * Every mapping's host exactly as stored, with its cell id, in one statement.
 * discover_hosts reads it once per run when a cell has more candidates than
 * one batch: one scan of host_mappings instead of an indexed lookup per 1,000
 * hosts. It only ever confirms a mapping
 * (MySQL only, see findHostMappings); a candidate it does not hold is still
 * looked up by the database, whose collation decides. Mappings are never
 * deleted by discover_hosts, so one read at the start of a run stays true for
 * the hosts it holds.
 */
export async function readExactHostMappings(db: Knex): Promise<ExactHostMappings> {
  const rows: Array<{ host: string; cell_id: number }> = await db('host_mappings').select('host', 'cell_id');
  const out = new Map<string, number>();
  for (const r of rows) out.set(String(r.host), Number(r.cell_id));
  return out;
}

async function findBatch(db: Knex, dialect: Dialect, batch: readonly string[]): Promise<HostMappingMatch[]> {
  if (dialect === 'mysql') return findMysqlBatch(db, batch);
  const rows: Array<{ candidate: string; host: string; cell_id: number }> = await rawRows(
    db,
    'SELECT j.value AS candidate, hm.host AS host, hm.cell_id AS cell_id FROM json_each(?) AS j ' +
      'JOIN host_mappings hm ON rtrim(hm.host) = rtrim(j.value) COLLATE NOCASE',
    [JSON.stringify(batch)],
  );
  return rows.map((r) => ({ candidate: String(r.candidate), host: String(r.host), cellId: Number(r.cell_id) }));
}

/**
 * One batch on MySQL. `host IN (...)` uses the unique index and the column's
 * collation, and is about three times cheaper than joining a derived table,
 * so it comes first: a candidate spelled exactly like a returned mapping is
 * that mapping (one row per collation class, by the unique key). Only when
 * the IN query found mappings that leave some candidates unexplained (a
 * mapping spelled in another case, say) are those candidates joined one by
 * one against host_mappings, so that the collation decides which is which.
 * In the common cases (nothing mapped yet, or everything already mapped)
 * that second query never runs.
 */
async function findMysqlBatch(db: Knex, batch: readonly string[]): Promise<HostMappingMatch[]> {
  const found: Array<{ host: string; cell_id: number }> = await db('host_mappings').select('host', 'cell_id').whereIn('host', batch);
  if (found.length === 0) return [];
  const exact = new Map(found.map((r) => [String(r.host), Number(r.cell_id)]));
  const out: HostMappingMatch[] = [];
  const rest: string[] = [];
  for (const h of batch) {
    const cellId = exact.get(h);
    if (cellId === undefined) rest.push(h);
    else out.push({ candidate: h, host: h, cellId });
  }
  if (rest.length === 0) return out;
  const rows: Array<{ candidate: string; host: string; cell_id: number }> = await rawRows(
    db,
    `SELECT c.h AS candidate, hm.host AS host, hm.cell_id AS cell_id FROM (${rest.map(() => 'SELECT ? AS h').join(' UNION ALL ')}) AS c JOIN host_mappings hm ON hm.host = c.h`,
    rest,
  );
  for (const r of rows) out.push({ candidate: String(r.candidate), host: String(r.host), cellId: Number(r.cell_id) });
  return out;
}

/**
 * Insert mappings for hosts in one multi-row statement. A duplicate key fails
 * the whole statement (it is atomic on both engines), which lets the caller
 * tell "someone else mapped it" from "we mapped it".
 */
export async function insertHostMappings(db: Knex, cellId: number, hosts: readonly string[], now: string): Promise<void> {
  if (hosts.length === 0) return;
  await db('host_mappings').insert(hosts.map((host) => ({ created_at: now, updated_at: null, cell_id: cellId, host })));
}

/** Every mapping with its cell, optionally for one cell id; unsorted (callers sort as Nova does). */
export async function listHostMappings(db: Knex, cellId?: number): Promise<HostMappingListRow[]> {
  const q = db('host_mappings as hm')
    .join('cell_mappings as cm', 'cm.id', 'hm.cell_id')
    .select('hm.host as host', 'hm.cell_id as cell_id', 'cm.uuid as cell_uuid', 'cm.name as cell_name')
    .orderBy('hm.id');
  if (cellId !== undefined) q.where('hm.cell_id', cellId);
  return q;
}

/** The mapping of one host (collation-based), with its cell uuid. */
export async function findHostMapping(db: Knex, dialect: Dialect, host: string): Promise<HostMappingListRow | undefined> {
  const q = db('host_mappings as hm')
    .join('cell_mappings as cm', 'cm.id', 'hm.cell_id')
    .select('hm.host as host', 'hm.cell_id as cell_id', 'cm.uuid as cell_uuid', 'cm.name as cell_name')
    .orderBy('hm.id')
    .limit(1);
  if (dialect === 'mysql') q.where('hm.host', host);
  else q.whereRaw('rtrim(hm.host) = rtrim(?) COLLATE NOCASE', [host]);
  const rows: HostMappingListRow[] = await q;
  return rows[0];
}

/** Hard-delete the mapping of a host (API tables are never soft-deleted). */
export async function deleteHostMapping(db: Knex, dialect: Dialect, host: string): Promise<number> {
  const q = db('host_mappings');
  if (dialect === 'mysql') q.where('host', host);
  else q.whereRaw('rtrim(host) = rtrim(?) COLLATE NOCASE', [host]);
  return q.delete();
}

async function rawRows<T>(db: Knex, sql: string, bindings: readonly unknown[]): Promise<T[]> {
  const result: unknown = await db.raw(sql, bindings as Knex.RawBinding[]);
  // mysql2 returns [rows, fields]; better-sqlite3 returns rows.
  if (Array.isArray(result) && Array.isArray(result[0])) return result[0] as T[];
  return result as T[];
}
