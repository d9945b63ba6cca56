// Several statements of one transaction in one round trip. A
// change's compare-and-swap reads its rows under lock, checks them, then
// writes: each step is a list of statements that do not depend on each
// other's results, so each can be one packet instead of one round trip per
// statement. docs/SQL-BINDING.md is the security review this follows:
//
// - only the writer pool's connections take several statements in a packet
//   (connect.ts, `multipleStatements`); on any other connection, and on
//   SQLite, the statements run one after another, with the same results;
// - a batch is made of knex query builders only (compiled here, never text
//   from data), each a SELECT, UPDATE, DELETE or INSERT: no COMMIT or any
//   other statement can be in one, so a compare-and-swap still commits only
//   after the caller has checked every affected-row count;
// - every bound value is checked to be a string, a finite number or null
//   before anything is sent, and a compiled statement holding a `;` is
//   refused (only an identifier could put one there).
//
// The server runs the statements of a packet in order and stops at the first
// that fails; the caller's transaction is then rolled back, as when a
// statement sent on its own fails.
import type { Knex } from 'knex';
import { normaliseRow, type Row } from './row-images.js';

type Method = 'select' | 'update' | 'del' | 'insert';
const METHODS: ReadonlySet<string> = new Set<Method>(['select', 'update', 'del', 'insert']);

interface Compiled {
  readonly method: Method;
  readonly sql: string;
  readonly bindings: readonly BoundValue[];
}

type BoundValue = string | number | null;

/** What each statement of a batch gave, in order. */
export class StatementResults {
  /** Rows of a SELECT, the count of an UPDATE or DELETE, null for an INSERT (it writes every row or fails). */
  constructor(private readonly results: ReadonlyArray<readonly Row[] | number | null>) {}

  /** The rows of the SELECT at `index`. */
  rows(index: number): Row[] {
    const r = this.results[index];
    if (!Array.isArray(r)) throw new Error(`internal: statement ${index} of the batch is not a SELECT`);
    return r as Row[];
  }

  /** The rows changed by the UPDATE or DELETE at `index`. */
  affected(index: number): number {
    const r = this.results[index];
    if (typeof r !== 'number') throw new Error(`internal: statement ${index} of the batch is not an UPDATE or DELETE`);
    return r;
  }
}

/**
 * Run `statements` in order inside `trx`, in one round trip when its
 * connection takes several statements (a MySQL writer pool), else one at a
 * time. A SELECT gives its rows (normalised as the row images are), a write
 * the number of rows it changed.
 */
export async function runStatements(trx: Knex.Transaction, statements: readonly Knex.QueryBuilder[]): Promise<StatementResults> {
  const compiled = statements.map(compile);
  if (compiled.length === 0) return new StatementResults([]);
  if (compiled.length === 1 || !takesSeveralStatements(trx)) {
    const out: Array<readonly Row[] | number | null> = [];
    for (const [i, statement] of statements.entries()) out.push(resultOf((compiled[i] as Compiled).method, await statement, false));
    return new StatementResults(out);
  }
  const sql = compiled.map((c) => c.sql).join(';\n');
  const bindings = compiled.flatMap((c) => c.bindings);
  // knex's raw gives mysql2's [results, fields]; with several statements, results holds one entry per statement.
  const response = (await trx.raw(sql, bindings as BoundValue[])) as unknown;
  const results = Array.isArray(response) ? (response[0] as unknown) : undefined;
  if (!Array.isArray(results) || results.length !== compiled.length) {
    throw new Error(`internal: a batch of ${compiled.length} statements gave ${Array.isArray(results) ? results.length : 'no'} results`);
  }
  return new StatementResults(compiled.map((c, i) => resultOf(c.method, results[i], true)));
}

/** Whether the transaction's connections take several statements in one packet (the MySQL writer pool). */
function takesSeveralStatements(trx: Knex.Transaction): boolean {
  const connection = (trx.client as { config?: { client?: unknown; connection?: unknown } }).config;
  return connection?.client === 'mysql2' && (connection.connection as { multipleStatements?: unknown } | undefined)?.multipleStatements === true;
}

function compile(statement: Knex.QueryBuilder): Compiled {
  const native = statement.toSQL();
  const method = native.method;
  if (!METHODS.has(method)) throw new Error(`internal: a batch holds only SELECT, UPDATE, DELETE and INSERT, not ${method}`);
  const sql = native.sql;
  if (sql.includes(';')) throw new Error('internal: a batched statement holds a ";"');
  return { method: method as Method, sql, bindings: native.bindings.map(checkBinding) };
}

/** A value bound into a batched statement: only a string, a finite number or null (docs/SQL-BINDING.md, condition 4). */
export function checkBinding(value: unknown): BoundValue {
  if (value === null || typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const what = Array.isArray(value) ? 'an array' : value === undefined ? 'undefined' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  throw new Error(`internal: a batched statement binds ${what}; only strings, finite numbers and null are sent`);
}

/**
 * @param packet the result came from a multi-statement packet (mysql2's raw
 *   shape: rows, or a ResultSetHeader); else from knex's builder (rows, or a
 *   count).
 */
function resultOf(method: Method, result: unknown, packet: boolean): readonly Row[] | number | null {
  if (method === 'select') {
    if (!Array.isArray(result)) throw new Error('internal: a SELECT of a batch gave no rows');
    return (result as Array<Record<string, unknown>>).map(normaliseRow);
  }
  // knex gives an insert's ids, not its count (SQLite: the last id only).
  if (method === 'insert') return null;
  const n = packet ? (result as { affectedRows?: unknown } | undefined)?.affectedRows : result;
  if (typeof n !== 'number') throw new Error(`internal: a ${method} of a batch gave no row count`);
  return n;
}
