// The MariaDB tier: scratch databases per test file, the availability probe
// that decides whether the tier runs, and the schema comparison that keeps
// migrations/ identical to the real Zed/Placement schemas.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import knexFactory, { type Knex } from 'knex';
import { describe, it } from 'vitest';

export const MYSQL_URL = process.env['TEST_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306';

/**
 * The server of the MariaDB tier, read from TEST_MYSQL_URL at each use: the
 * Galera tier points it at its cluster's node 1 after this module has loaded.
 */
function currentServerUrl(): string {
  return process.env['TEST_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306';
}

export type MysqlCharset = 'utf8mb3' | 'utf8mb4';

interface ServerAddress {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string | undefined;
}

function serverAddress(): ServerAddress {
  const url = new URL(currentServerUrl());
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port === '' ? 3306 : Number(url.port),
    user: decodeURIComponent(url.username || 'root'),
    password: url.password === '' ? undefined : decodeURIComponent(url.password),
  };
}

/** For messages: the server, never the password. */
function serverDisplay(): string {
  const { host, port } = serverAddress();
  return `${host}:${port}`;
}

/** A knex handle on the server (database optional), with oslo.db's session settings. */
export function mysqlKnex(database?: string, options: { multipleStatements?: boolean } = {}): Knex {
  const { host, port, user, password } = serverAddress();
  const connection: Knex.MySql2ConnectionConfig = {
    host,
    port,
    user,
    connectTimeout: 2000,
    timezone: 'Z',
    dateStrings: true,
    supportBigNumbers: true,
  };
  if (password !== undefined) connection.password = password;
  if (database !== undefined) connection.database = database;
  if (options.multipleStatements === true) connection.multipleStatements = true;
  return knexFactory({
    client: 'mysql2',
    connection,
    pool: {
      min: 0,
      max: 4,
      afterCreate: (conn: SessionConn, done: (err: Error | null, conn: SessionConn) => void) => {
        // Same session as src/db/connect.ts, so tests see what the tool sees.
        conn.query("SET SESSION sql_mode = 'TRADITIONAL', time_zone = '+00:00'", (err) => done(err, conn));
      },
    },
  });
}

interface SessionConn {
  query(sql: string, cb: (err: Error | null) => void): void;
}

let availability: Promise<boolean> | undefined;

/** Whether the MariaDB server answers a query within 2 s; asked once per process. */
export function mysqlAvailable(): Promise<boolean> {
  availability ??= (async () => {
    const db = mysqlKnex();
    try {
      await Promise.race([
        db.raw('SELECT 1'),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
      ]);
      return true;
    } catch {
      return false;
    } finally {
      await db.destroy().catch(() => undefined);
    }
  })();
  return availability;
}

let probed: boolean | undefined;

/**
 * vitest's describe cannot await, so the decision is made by a blocking probe
 * in a child process: connect to the port and wait for the server's greeting
 * packet (a bare open port is not a MariaDB server). At most ~2 s.
 */
function mysqlAnswersSync(): boolean {
  if (probed !== undefined) return probed;
  const { host, port } = serverAddress();
  const script = `
    const s = require('node:net').connect({ host: ${JSON.stringify(host)}, port: ${port} });
    const t = setTimeout(() => process.exit(1), 1800);
    s.once('data', () => { clearTimeout(t); s.destroy(); process.exit(0); });
    s.once('error', () => process.exit(1));
  `;
  const result = spawnSync(process.execPath, ['-e', script], { timeout: 2500, stdio: 'ignore' });
  probed = result.status === 0;
  return probed;
}

/**
 * A describe block for the MariaDB tier. It runs when the server answers.
 * When not: with CI=true it fails (the tier is required there); elsewhere it
 * is skipped with a loud notice, so a laptop without MariaDB still runs the
 * SQLite tier.
 */
export function describeMysql(name: string, fn: () => void): void {
  describeRequired('MariaDB', mysqlAnswersSync() ? undefined : `no server answers at ${serverDisplay()} (TEST_MYSQL_URL)`, name, fn);
}

/**
 * A tier that needs a service: it runs when `missing` is undefined; in CI
 * (CI=true) a missing service is a failure; elsewhere the suite is skipped
 * with a loud notice.
 */
export function describeRequired(tier: string, missing: string | undefined, name: string, fn: () => void): void {
  if (missing === undefined) {
    describe(name, fn);
    return;
  }
  if (process.env['CI'] === 'true') {
    describe(name, () => {
      it(`${tier} is required in CI`, () => {
        throw new Error(`${tier} is required in CI: ${missing}`);
      });
    });
    return;
  }
  console.warn(`\n*** ${tier} tier SKIPPED: ${missing}; "${name}" did not run ***\n`);
  describe.skip(name, fn);
}

export interface ScratchDatabases {
  /** Logical name → real database name. */
  readonly dbNames: Record<string, string>;
  /** SQLAlchemy URL, as nova.conf and cell_mappings would hold it. */
  url(name: string): string;
  /** A knex handle on the database, created on first use and destroyed by drop(). */
  knex(name: string): Knex;
  drop(): Promise<void>;
}

const MAX_DB_NAME = 64;

/**
 * Creates one uniquely named database per name, `nr_<prefix>_<name>_<random6>`.
 * Charsets follow the real deployments: utf8mb4 for placement, utf8mb3 for
 * Nova's own (a name containing "placement" is taken as placement).
 */
export async function createScratchDatabases(
  prefix: string,
  names: readonly string[],
  charsets: Readonly<Record<string, MysqlCharset>> = {},
): Promise<ScratchDatabases> {
  const suffix = randomBytes(3).toString('hex');
  const dbNames: Record<string, string> = {};
  for (const name of names) {
    const tail = `_${sanitize(name)}_${suffix}`;
    const head = `nr_${sanitize(prefix)}`.slice(0, MAX_DB_NAME - tail.length);
    dbNames[name] = `${head}${tail}`.slice(0, MAX_DB_NAME);
  }
  const admin = mysqlKnex();
  const handles = new Map<string, Knex>();
  const created: string[] = [];
  try {
    for (const name of names) {
      const charset = charsets[name] ?? (name.includes('placement') ? 'utf8mb4' : 'utf8mb3');
      const real = realName(dbNames, name);
      await admin.raw(`CREATE DATABASE \`${real}\` CHARACTER SET ${charset} COLLATE ${charset}_general_ci`);
      created.push(real);
    }
  } catch (err) {
    // Leave no half-made set behind on a shared server.
    for (const real of created) await admin.raw(`DROP DATABASE IF EXISTS \`${real}\``).catch(() => undefined);
    throw err;
  } finally {
    await admin.destroy();
  }
  const { host, port, user, password } = serverAddress();
  const credentials = password === undefined ? encodeURIComponent(user) : `${encodeURIComponent(user)}:${encodeURIComponent(password)}`;
  return {
    dbNames,
    url: (name) => `mysql+pymysql://${credentials}@${host}:${port}/${realName(dbNames, name)}`,
    knex: (name) => {
      let handle = handles.get(name);
      if (handle === undefined) {
        handle = mysqlKnex(realName(dbNames, name));
        handles.set(name, handle);
      }
      return handle;
    },
    drop: async () => {
      for (const handle of handles.values()) await handle.destroy();
      handles.clear();
      const db = mysqlKnex();
      try {
        for (const real of Object.values(dbNames)) await db.raw(`DROP DATABASE IF EXISTS \`${real}\``);
      } finally {
        await db.destroy();
      }
    },
  };
}

function sanitize(part: string): string {
  return part.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

function realName(dbNames: Record<string, string>, name: string): string {
  const real = dbNames[name];
  if (real === undefined) throw new Error(`no scratch database named ${name}`);
  return real;
}

// ---------------------------------------------------------------------------
// The reference dumps and the schema comparison.

/** The reference dumps, in the repository (test/fixtures/nova-zed-schema/README.md says where they come from). */
export const REFERENCE_SCHEMA_DIR = fileURLToPath(new URL('../fixtures/nova-zed-schema/', import.meta.url));

export type ReferenceDump = 'nova_api' | 'nova_cell' | 'placement';

export function readReferenceDump(dump: ReferenceDump): string {
  const path = `${REFERENCE_SCHEMA_DIR.replace(/\/?$/, '/')}${dump}.sql`;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the reference schema ${path}: it is part of the repository (test/fixtures/nova-zed-schema/)`, {
      cause: err,
    });
  }
}

/** Loads a `mysqldump --no-data --compact` file, its /*!40101 ... *\/ lines included, into a database. */
export async function loadDump(database: string, sql: string): Promise<void> {
  // One multi-statement query runs on one connection, so the dump's
  // SET FOREIGN_KEY_CHECKS=0 covers every CREATE TABLE after it, as in mysql(1).
  const db = mysqlKnex(database, { multipleStatements: true });
  try {
    await db.raw(sql);
  } finally {
    await db.destroy();
  }
}

export interface ColumnShape {
  readonly type: string;
  readonly nullable: string;
  readonly default: string | null;
  readonly charset: string | null;
  readonly collation: string | null;
  readonly extra: string;
}

export interface TableShape {
  readonly collation: string | null;
  readonly engine: string | null;
  readonly columns: ReadonlyMap<string, ColumnShape>;
  /** Index name → ordered columns, prefix lengths as "col(100)"; PRIMARY included. */
  readonly uniqueKeys: ReadonlyMap<string, string>;
  readonly otherKeys: ReadonlyMap<string, string>;
  /** Constraint name → "col -> table(col)". */
  readonly foreignKeys: ReadonlyMap<string, string>;
}

export type SchemaShape = ReadonlyMap<string, TableShape>;

/** Reads, from information_schema, how the given tables of a database are built. */
export async function readMysqlSchema(db: Knex, tables: readonly string[]): Promise<SchemaShape> {
  const list = [...tables];
  const tableRows = (await db
    .select({ name: 'TABLE_NAME', collation: 'TABLE_COLLATION', engine: 'ENGINE' })
    .from('information_schema.TABLES')
    .whereRaw('TABLE_SCHEMA = DATABASE()')
    .whereIn('TABLE_NAME', list)) as { name: string; collation: string | null; engine: string | null }[];
  const columnRows = (await db
    .select({
      table: 'TABLE_NAME',
      name: 'COLUMN_NAME',
      type: 'COLUMN_TYPE',
      nullable: 'IS_NULLABLE',
      default: 'COLUMN_DEFAULT',
      charset: 'CHARACTER_SET_NAME',
      collation: 'COLLATION_NAME',
      extra: 'EXTRA',
    })
    .from('information_schema.COLUMNS')
    .whereRaw('TABLE_SCHEMA = DATABASE()')
    .whereIn('TABLE_NAME', list)
    .orderBy(['TABLE_NAME', 'ORDINAL_POSITION'])) as ({ table: string; name: string } & ColumnShape)[];
  const indexRows = (await db
    .select({ table: 'TABLE_NAME', name: 'INDEX_NAME', nonUnique: 'NON_UNIQUE', column: 'COLUMN_NAME', subPart: 'SUB_PART' })
    .from('information_schema.STATISTICS')
    .whereRaw('TABLE_SCHEMA = DATABASE()')
    .whereIn('TABLE_NAME', list)
    .orderBy(['TABLE_NAME', 'INDEX_NAME', 'SEQ_IN_INDEX'])) as {
    table: string;
    name: string;
    nonUnique: number | string;
    column: string;
    subPart: number | string | null;
  }[];
  const fkRows = (await db
    .select({
      table: 'TABLE_NAME',
      name: 'CONSTRAINT_NAME',
      column: 'COLUMN_NAME',
      refTable: 'REFERENCED_TABLE_NAME',
      refColumn: 'REFERENCED_COLUMN_NAME',
    })
    .from('information_schema.KEY_COLUMN_USAGE')
    .whereRaw('TABLE_SCHEMA = DATABASE()')
    .whereNotNull('REFERENCED_TABLE_NAME')
    .whereIn('TABLE_NAME', list)
    .orderBy(['TABLE_NAME', 'CONSTRAINT_NAME', 'ORDINAL_POSITION'])) as {
    table: string;
    name: string;
    column: string;
    refTable: string;
    refColumn: string;
  }[];

  const shapes = new Map<string, TableShape>();
  for (const t of tableRows) {
    const columns = new Map<string, ColumnShape>();
    for (const c of columnRows.filter((r) => r.table === t.name)) {
      columns.set(c.name, {
        type: c.type,
        nullable: c.nullable,
        // MariaDB reports DEFAULT NULL as the string 'NULL', MySQL as NULL.
        default: c.default === null || c.default === 'NULL' ? null : String(c.default),
        charset: c.charset,
        collation: c.collation,
        extra: c.extra,
      });
    }
    const uniqueKeys = new Map<string, string[]>();
    const otherKeys = new Map<string, string[]>();
    for (const i of indexRows.filter((r) => r.table === t.name)) {
      const target = Number(i.nonUnique) === 0 ? uniqueKeys : otherKeys;
      const cols = target.get(i.name) ?? [];
      cols.push(i.subPart === null ? i.column : `${i.column}(${i.subPart})`);
      target.set(i.name, cols);
    }
    const foreignKeys = new Map<string, string>();
    for (const f of fkRows.filter((r) => r.table === t.name)) {
      const prev = foreignKeys.get(f.name);
      const part = `${f.column} -> ${f.refTable}(${f.refColumn})`;
      foreignKeys.set(f.name, prev === undefined ? part : `${prev}, ${part}`);
    }
    shapes.set(t.name, {
      collation: t.collation,
      engine: t.engine,
      columns,
      uniqueKeys: joinValues(uniqueKeys),
      otherKeys: joinValues(otherKeys),
      foreignKeys,
    });
  }
  return shapes;
}

function joinValues(m: Map<string, string[]>): Map<string, string> {
  return new Map([...m].map(([k, v]) => [k, v.join(',')]));
}

/**
 * Every difference between the reference and ours, for the tables of the
 * manifest: each column's full type, nullability, default, charset,
 * collation and auto-increment; unique keys (PRIMARY included), other keys
 * and foreign keys by name and ordered columns; the table's collation and
 * engine. Also reports manifest entries the reference itself lacks, so the
 * manifest cannot drift from the real schema.
 */
export function diffMysqlSchemas(
  reference: SchemaShape,
  ours: SchemaShape,
  manifest: Readonly<Record<string, readonly string[]>>,
): string[] {
  const diffs: string[] = [];
  for (const [table, manifestColumns] of Object.entries(manifest)) {
    const ref = reference.get(table);
    const our = ours.get(table);
    if (ref === undefined) {
      diffs.push(`${table}: in the manifest but not in the reference schema`);
      continue;
    }
    if (our === undefined) {
      diffs.push(`${table}: missing from our migrations`);
      continue;
    }
    for (const column of manifestColumns) {
      if (!ref.columns.has(column)) diffs.push(`${table}.${column}: in the manifest but not in the reference schema`);
    }
    compareValue(diffs, `${table}: table collation`, ref.collation, our.collation);
    compareValue(diffs, `${table}: engine`, ref.engine, our.engine);
    for (const [column, refColumn] of ref.columns) {
      const ourColumn = our.columns.get(column);
      if (ourColumn === undefined) {
        diffs.push(`${table}.${column}: missing from our migrations`);
        continue;
      }
      for (const key of ['type', 'nullable', 'default', 'charset', 'collation', 'extra'] as const) {
        compareValue(diffs, `${table}.${column}: ${key}`, refColumn[key], ourColumn[key]);
      }
    }
    for (const column of our.columns.keys()) {
      if (!ref.columns.has(column)) diffs.push(`${table}.${column}: not in the reference schema`);
    }
    compareKeys(diffs, `${table}: unique key`, ref.uniqueKeys, our.uniqueKeys);
    compareKeys(diffs, `${table}: key`, ref.otherKeys, our.otherKeys);
    compareKeys(diffs, `${table}: foreign key`, ref.foreignKeys, our.foreignKeys);
  }
  return diffs;
}

function compareValue(diffs: string[], what: string, ref: string | null, ours: string | null): void {
  if (ref !== ours) diffs.push(`${what} is ${JSON.stringify(ours)}, reference has ${JSON.stringify(ref)}`);
}

function compareKeys(diffs: string[], what: string, ref: ReadonlyMap<string, string>, ours: ReadonlyMap<string, string>): void {
  for (const [name, columns] of ref) {
    const mine = ours.get(name);
    if (mine === undefined) diffs.push(`${what} ${name} (${columns}) is missing`);
    else if (mine !== columns) diffs.push(`${what} ${name} is (${mine}), reference has (${columns})`);
  }
  for (const [name, columns] of ours) {
    if (!ref.has(name)) diffs.push(`${what} ${name} (${columns}) is not in the reference schema`);
  }
}

// ---------------------------------------------------------------------------
// The reference dumps read as text, for the SQLite tier (which must not need
// a MariaDB server to know what the real schema is).

export interface DumpColumn {
  /** As dumped: "int(11)", "varchar(255)", "enum('owner','admin')". */
  readonly type: string;
  readonly notNull: boolean;
  /** The DEFAULT clause's value, NULL as null; undefined when there is none. */
  readonly default: string | null | undefined;
  readonly autoIncrement: boolean;
  /** An explicit per-column COLLATE, if any (the table's otherwise). */
  readonly collation: string | undefined;
}

export interface DumpTable {
  readonly columns: ReadonlyMap<string, DumpColumn>;
  readonly primaryKey: readonly string[];
  /** Index name → columns, prefix lengths dropped. */
  readonly uniqueKeys: ReadonlyMap<string, readonly string[]>;
  readonly otherKeys: ReadonlyMap<string, readonly string[]>;
  /** "col -> table(col)" */
  readonly foreignKeys: ReadonlySet<string>;
  readonly charset: string;
  readonly collation: string;
}

/** Parses the CREATE TABLE statements of a `mysqldump --no-data --compact` file. */
export function parseDump(sql: string): ReadonlyMap<string, DumpTable> {
  const tables = new Map<string, DumpTable>();
  const statement = /CREATE TABLE `(\w+)` \(\n([\s\S]*?)\n\) ENGINE=\w+(?: AUTO_INCREMENT=\d+)? DEFAULT CHARSET=(\w+) COLLATE=(\w+);/g;
  for (const [, name, body, charset, collation] of sql.matchAll(statement)) {
    if (name === undefined || body === undefined || charset === undefined || collation === undefined) continue;
    const columns = new Map<string, DumpColumn>();
    let primaryKey: string[] = [];
    const uniqueKeys = new Map<string, string[]>();
    const otherKeys = new Map<string, string[]>();
    const foreignKeys = new Set<string>();
    for (const raw of body.split('\n')) {
      const line = raw.trim().replace(/,$/, '');
      let m: RegExpMatchArray | null;
      if ((m = line.match(/^`(\w+)` (\w+(?:\([^)]*\))?(?: unsigned)?)(.*)$/)) !== null) {
        const [, column = '', type = '', rest = ''] = m;
        const def = rest.match(/ DEFAULT (NULL|'[^']*'|\S+)/)?.[1];
        columns.set(column, {
          type,
          notNull: rest.includes('NOT NULL'),
          default: def === undefined ? undefined : def === 'NULL' ? null : def.replace(/^'(.*)'$/, '$1'),
          autoIncrement: rest.includes('AUTO_INCREMENT'),
          collation: rest.match(/ COLLATE (\w+)/)?.[1],
        });
      } else if ((m = line.match(/^PRIMARY KEY \((.*)\)$/)) !== null) {
        primaryKey = keyColumns(m[1] ?? '');
      } else if ((m = line.match(/^(UNIQUE )?KEY `(\w+)` \((.*)\)$/)) !== null) {
        (m[1] === undefined ? otherKeys : uniqueKeys).set(m[2] ?? '', keyColumns(m[3] ?? ''));
      } else if ((m = line.match(/^CONSTRAINT `\w+` FOREIGN KEY \(`(\w+)`\) REFERENCES `(\w+)` \(`(\w+)`\)$/)) !== null) {
        foreignKeys.add(`${m[1]} -> ${m[2]}(${m[3]})`);
      } else {
        throw new Error(`parseDump: cannot read line of ${name}: ${line}`);
      }
    }
    tables.set(name, { columns, primaryKey, uniqueKeys, otherKeys, foreignKeys, charset, collation });
  }
  return tables;
}

function keyColumns(list: string): string[] {
  return list.split(',').map((c) => c.replace(/`/g, '').replace(/\(\d+\)$/, '').trim());
}

/**
 * Wait until a statement on `database` waits for a row lock (SELECT ... FOR
 * UPDATE: an apply reached its guard while a test's transaction holds the
 * row). Polls on a connection of its own, for up to 20 s.
 */
export async function waitForLockWait(database: string): Promise<void> {
  const k = mysqlKnex();
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const rows = (await k.raw(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST p WHERE p.DB = ? AND p.COMMAND = 'Query' AND p.INFO LIKE '%for update%'",
        [database],
      )) as [Array<{ n: number }>];
      if (Number(rows[0][0]?.n ?? 0) > 0) return;
      if (Date.now() > deadline) throw new Error(`no lock wait on ${database} within 20 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await k.destroy();
  }
}
