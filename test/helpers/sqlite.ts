// The SQLite tier: one temporary directory per test file with one database
// file per logical name, and the comparison of a migrated SQLite schema with
// the reference dump. This tier always runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { DumpTable } from './mysql.js';

export interface SqliteDatabases {
  readonly dir: string;
  /** Logical name → absolute file path. */
  readonly paths: Record<string, string>;
  /** SQLAlchemy URL (`sqlite:////abs/path`), as nova.conf would hold it. */
  url(name: string): string;
  /** A knex handle on the file, created on first use and destroyed by cleanup(). */
  knex(name: string): Knex;
  cleanup(): Promise<void>;
}

/** Opens a SQLite file the way src/db/connect.ts does: one connection, foreign keys enforced. */
export function sqliteKnex(filename: string): Knex {
  return knexFactory({
    client: 'better-sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: { pragma(s: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
        try {
          conn.pragma('foreign_keys = ON');
          done(null, conn);
        } catch (err) {
          done(err instanceof Error ? err : new Error(String(err)), conn);
        }
      },
    },
  });
}

export function createSqliteDatabases(names: readonly string[]): SqliteDatabases {
  const dir = mkdtempSync(join(tmpdir(), 'nova-reconcile-'));
  const paths: Record<string, string> = {};
  for (const name of names) paths[name] = join(dir, `${name.replace(/[^A-Za-z0-9_-]/g, '_')}.sqlite`);
  const handles = new Map<string, Knex>();
  const pathOf = (name: string): string => {
    const path = paths[name];
    if (path === undefined) throw new Error(`no SQLite database named ${name}`);
    return path;
  };
  return {
    dir,
    paths,
    url: (name) => `sqlite:///${pathOf(name)}`,
    knex: (name) => {
      let handle = handles.get(name);
      if (handle === undefined) {
        handle = sqliteKnex(pathOf(name));
        handles.set(name, handle);
      }
      return handle;
    },
    cleanup: async () => {
      for (const handle of handles.values()) await handle.destroy();
      handles.clear();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface SqliteColumn {
  readonly type: string;
  readonly notNull: boolean;
  readonly default: string | null;
  readonly pk: number;
}

interface SqliteTable {
  readonly columns: ReadonlyMap<string, SqliteColumn>;
  readonly uniqueIndexes: ReadonlyMap<string, readonly string[]>;
  readonly otherIndexes: readonly (readonly string[])[];
  readonly foreignKeys: ReadonlySet<string>;
}

async function all<T>(db: Knex, sql: string, bindings: readonly string[] = []): Promise<T[]> {
  return (await db.raw(sql, [...bindings])) as T[];
}

export async function readSqliteSchema(db: Knex, tables: readonly string[]): Promise<ReadonlyMap<string, SqliteTable>> {
  const result = new Map<string, SqliteTable>();
  for (const table of tables) {
    const info = await all<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>(
      db,
      'select * from pragma_table_info(?)',
      [table],
    );
    if (info.length === 0) continue;
    const columns = new Map<string, SqliteColumn>(
      info.map((c) => [
        c.name,
        { type: c.type, notNull: c.notnull === 1, default: c.dflt_value === 'NULL' ? null : c.dflt_value, pk: c.pk },
      ]),
    );
    const indexes = await all<{ name: string; unique: number; origin: string }>(db, 'select * from pragma_index_list(?)', [table]);
    const uniqueIndexes = new Map<string, string[]>();
    const otherIndexes: string[][] = [];
    for (const index of indexes) {
      // The automatic index of a composite PRIMARY KEY is compared as the primary key.
      if (index.origin === 'pk') continue;
      const cols = (await all<{ name: string }>(db, 'select name from pragma_index_info(?) order by seqno', [index.name])).map((c) => c.name);
      if (index.unique === 1) uniqueIndexes.set(index.name, cols);
      else otherIndexes.push(cols);
    }
    const fks = await all<{ from: string; table: string; to: string }>(db, 'select * from pragma_foreign_key_list(?)', [table]);
    result.set(table, {
      columns,
      uniqueIndexes,
      otherIndexes,
      foreignKeys: new Set(fks.map((f) => `${f.from} -> ${f.table}(${f.to})`)),
    });
  }
  return result;
}

/** The SQLite type we write for a MySQL column type. */
function expectedSqliteType(column: { type: string; autoIncrement: boolean }): string {
  // Only the exact type name INTEGER makes a column the rowid alias that
  // auto-increments.
  if (column.autoIncrement) return 'INTEGER';
  const enumValues = column.type.match(/^enum\((.*)\)$/)?.[1];
  if (enumValues !== undefined) {
    const longest = Math.max(...enumValues.split(',').map((v) => v.length - 2));
    return `varchar(${longest})`;
  }
  return column.type;
}

/**
 * Every difference between the reference dump and a migrated SQLite database
 * for the tables of the manifest: column set, declared types, NOT NULL,
 * defaults, the primary key, unique indexes by name and columns, other
 * indexes by columns (SQLite index names are per schema, so two are renamed),
 * and foreign keys.
 */
export function diffSqliteSchema(
  reference: ReadonlyMap<string, DumpTable>,
  ours: ReadonlyMap<string, SqliteTable>,
  manifest: Readonly<Record<string, readonly string[]>>,
): string[] {
  const diffs: string[] = [];
  for (const table of Object.keys(manifest)) {
    const ref = reference.get(table);
    const our = ours.get(table);
    if (ref === undefined) {
      diffs.push(`${table}: in the manifest but not in the reference schema`);
      continue;
    }
    if (our === undefined) {
      diffs.push(`${table}: missing from our SQLite migrations`);
      continue;
    }
    for (const [name, refColumn] of ref.columns) {
      const column = our.columns.get(name);
      if (column === undefined) {
        diffs.push(`${table}.${name}: missing from our SQLite migrations`);
        continue;
      }
      const type = expectedSqliteType(refColumn);
      if (column.type.toLowerCase() !== type.toLowerCase()) diffs.push(`${table}.${name}: type is ${column.type}, expected ${type}`);
      if (column.notNull !== refColumn.notNull) diffs.push(`${table}.${name}: NOT NULL is ${column.notNull}, reference has ${refColumn.notNull}`);
      const refDefault = refColumn.default ?? null;
      if (column.default !== refDefault) {
        diffs.push(`${table}.${name}: default is ${JSON.stringify(column.default)}, reference has ${JSON.stringify(refDefault)}`);
      }
    }
    for (const name of our.columns.keys()) {
      if (!ref.columns.has(name)) diffs.push(`${table}.${name}: not in the reference schema`);
    }
    const pk = [...our.columns].filter(([, c]) => c.pk > 0).sort(([, a], [, b]) => a.pk - b.pk).map(([n]) => n);
    if (pk.join(',') !== ref.primaryKey.join(',')) diffs.push(`${table}: primary key is (${pk.join(',')}), reference has (${ref.primaryKey.join(',')})`);
    for (const [name, cols] of ref.uniqueKeys) {
      const mine = our.uniqueIndexes.get(name);
      if (mine === undefined) diffs.push(`${table}: unique index ${name} (${cols.join(',')}) is missing`);
      else if (mine.join(',') !== cols.join(',')) diffs.push(`${table}: unique index ${name} is (${mine.join(',')}), reference has (${cols.join(',')})`);
    }
    for (const [name, cols] of our.uniqueIndexes) {
      if (!ref.uniqueKeys.has(name)) diffs.push(`${table}: unique index ${name} (${cols.join(',')}) is not in the reference schema`);
    }
    const refOther = [...ref.otherKeys.values()].map((c) => c.join(',')).sort();
    const ourOther = our.otherIndexes.map((c) => c.join(',')).sort();
    if (refOther.join(' | ') !== ourOther.join(' | ')) diffs.push(`${table}: indexes are [${ourOther.join(' | ')}], reference has [${refOther.join(' | ')}]`);
    const refFks = [...ref.foreignKeys].sort().join('; ');
    const ourFks = [...our.foreignKeys].sort().join('; ');
    if (refFks !== ourFks) diffs.push(`${table}: foreign keys are [${ourFks}], reference has [${refFks}]`);
  }
  return diffs;
}
