// Refuses, before any command reads a row, a database that is not the Nova
// database the configuration says it is: an empty database, a cell URL that
// points at nova_api, a placement URL that points at a cell, or a schema too
// old to have a column the tool uses. One query per database, whatever the
// deployment's size.
import type { Knex } from 'knex';
import { ReconcileError } from '../errors.js';
import { knexDialect } from './knex-factory.js';
import type { SchemaKind } from './migrate.js';
import { REQUIRED_SCHEMA, type SchemaManifest } from './schema-manifest.js';

/** Present tables and their columns, as the database reports them. */
export type PresentSchema = ReadonlyMap<string, ReadonlySet<string>>;

/** What the check learnt: the columns of the tables the tool uses (optional ones too), and the alembic head. */
export interface SchemaFacts {
  readonly present: PresentSchema;
  /** alembic_version's revision; null when the table is absent (the sandbox, or a schema older than Zed). */
  readonly head: string | null;
}

/** Nova and Placement keep one row in alembic_version: the head their `db sync` reached. */
async function readAlembicHead(db: Knex, display: string): Promise<string | null> {
  let rows: unknown;
  try {
    rows = await db.select('version_num').from('alembic_version');
  } catch (err) {
    throw new ReconcileError('connection', `cannot read alembic_version of ${display}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const heads = (Array.isArray(rows) ? rows : []).map((r: unknown) => String((r as Record<string, unknown>)['version_num']));
  if (heads.length > 1)
    throw new ReconcileError('schema', `${display} has ${heads.length} alembic heads (${heads.join(', ')}): its schema is between branches, which no Nova release leaves`, {
      hint: 'finish the schema upgrade (`nova-manage db sync`, `nova-manage api_db sync` or `placement-manage db sync`) and re-run',
    });
  return heads[0] ?? null;
}

export type MissingSchemaItem =
  | { readonly kind: 'table'; readonly table: string }
  | { readonly kind: 'column'; readonly table: string; readonly column: string };

/** How many missing items one message names before it says "and N more". */
const MAX_NAMED = 10;

const KIND_LABEL: Readonly<Record<SchemaKind, string>> = Object.freeze({ api: 'API', cell: 'cell', placement: 'placement' });

const WRONG_DATABASE_HINT: Readonly<Record<SchemaKind, string>> = Object.freeze({
  api: 'check [api_database] connection in nova.conf: it must name the Nova API database (usually nova_api), upgraded with `nova-manage api_db sync`',
  cell:
    "check the cell's database_connection (`nova-manage cell_v2 list_cells --verbose`) and [database] connection in nova.conf: each must name a Nova cell database (nova, nova_cell1, ...), upgraded with `nova-manage db sync`",
  placement:
    'check [placement_database] connection in placement.conf (or the files given): it must name the Placement database, upgraded with `placement-manage db sync`',
});

const EMPTY_DATABASE_HINT: Readonly<Record<SchemaKind, string>> = Object.freeze({
  api: 'check [api_database] connection in nova.conf; a new deployment needs `nova-manage api_db sync` first',
  cell: "check the cell's database_connection (`nova-manage cell_v2 list_cells --verbose`) and [database] connection in nova.conf; a new cell needs `nova-manage db sync` first",
  placement: 'check [placement_database] connection in placement.conf; a new deployment needs `placement-manage db sync` first',
});

/**
 * Throws a 'schema' ReconcileError naming every missing table and column
 * (the first few, if there are many) unless `db` has all that the tool needs
 * of a `kind` database. `display` names the database in the message and must
 * already be free of passwords.
 */
export async function checkSchema(db: Knex, kind: SchemaKind, display: string): Promise<SchemaFacts> {
  const required = REQUIRED_SCHEMA[kind];
  const { present, hasForeignTables, hasAlembic } = await readPresentSchema(db, Object.keys(required), display);
  const missing = findMissingSchema(required, present);
  if (missing.length === 0) return { present, head: hasAlembic ? await readAlembicHead(db, display) : null };
  if (present.size === 0 && !hasForeignTables) {
    throw new ReconcileError('schema', `${display} is empty: it has no Nova tables`, { hint: EMPTY_DATABASE_HINT[kind] });
  }
  throw new ReconcileError('schema', `${display} is not a Nova ${KIND_LABEL[kind]} database: ${describeMissing(missing)}`, {
    hint: WRONG_DATABASE_HINT[kind],
  });
}

/** Tables first, in manifest order; a missing table's columns are not listed again. */
export function findMissingSchema(required: SchemaManifest[SchemaKind], present: PresentSchema): MissingSchemaItem[] {
  const missingTables: MissingSchemaItem[] = [];
  const missingColumns: MissingSchemaItem[] = [];
  for (const [table, columns] of Object.entries(required)) {
    const have = present.get(table);
    if (have === undefined) {
      missingTables.push({ kind: 'table', table });
      continue;
    }
    for (const column of columns) {
      if (!have.has(column)) missingColumns.push({ kind: 'column', table, column });
    }
  }
  return [...missingTables, ...missingColumns];
}

function describeMissing(missing: readonly MissingSchemaItem[]): string {
  const [only] = missing;
  if (missing.length === 1 && only !== undefined) {
    return only.kind === 'table' ? `table "${only.table}" is missing` : `column "${only.table}.${only.column}" is missing`;
  }
  const named = missing.slice(0, MAX_NAMED).map((m) => (m.kind === 'table' ? m.table : `${m.table}.${m.column}`));
  const more = missing.length > MAX_NAMED ? `, and ${missing.length - MAX_NAMED} more` : '';
  return `missing: ${named.join(', ')}${more}`;
}

interface ColumnRow {
  readonly table_name: string;
  readonly column_name: string;
}

async function readPresentSchema(
  db: Knex,
  tables: readonly string[],
  display: string,
): Promise<{ present: PresentSchema; hasForeignTables: boolean; hasAlembic: boolean }> {
  const dialect = knexDialect(db);
  let rows: readonly ColumnRow[];
  try {
    rows = dialect === 'mysql' ? await readMysqlColumns(db, tables) : await readSqliteColumns(db);
  } catch (err) {
    throw new ReconcileError('connection', `cannot read the schema of ${display}: ${err instanceof Error ? err.message : String(err)}`, {
      hint: 'check that the database exists and that the configured user may read it',
      cause: err,
    });
  }
  const wanted = new Set(tables);
  const present = new Map<string, Set<string>>();
  let hasForeignTables = false;
  let hasAlembic = false;
  for (const row of rows) {
    if (row.table_name === 'alembic_version') hasAlembic = true;
    if (!wanted.has(row.table_name)) {
      // Our own migration bookkeeping does not make a database "not empty".
      if (!row.table_name.startsWith('nova_reconcile_') && !row.table_name.startsWith('sqlite_')) hasForeignTables = true;
      continue;
    }
    let columns = present.get(row.table_name);
    if (columns === undefined) {
      columns = new Set();
      present.set(row.table_name, columns);
    }
    columns.add(row.column_name);
  }
  return { present, hasForeignTables, hasAlembic };
}

async function readMysqlColumns(db: Knex, tables: readonly string[]): Promise<ColumnRow[]> {
  // Every column of the tables we need, plus one row for each other table,
  // so that "empty" and "some other database" tell apart in the same query.
  const rows: unknown = await db
    .select({ table_name: 'TABLE_NAME', column_name: 'COLUMN_NAME' })
    .from('information_schema.COLUMNS')
    .whereRaw('TABLE_SCHEMA = DATABASE()')
    .andWhere((q) => {
      void q.whereIn('TABLE_NAME', [...tables]).orWhere('ORDINAL_POSITION', 1);
    });
  return toColumnRows(rows);
}

async function readSqliteColumns(db: Knex): Promise<ColumnRow[]> {
  const rows: unknown = await db.raw(
    "select m.name as table_name, p.name as column_name from sqlite_master m join pragma_table_info(m.name) p where m.type = 'table'",
  );
  return toColumnRows(rows);
}

function toColumnRows(rows: unknown): ColumnRow[] {
  if (!Array.isArray(rows)) throw new Error('unexpected answer to the schema query');
  return rows.map((row: unknown) => {
    const r = (typeof row === 'object' && row !== null ? row : {}) as Record<string, unknown>;
    const table = r['table_name'];
    const column = r['column_name'];
    if (typeof table !== 'string' || typeof column !== 'string') throw new Error('unexpected row in the schema query');
    return { table_name: table, column_name: column };
  });
}
