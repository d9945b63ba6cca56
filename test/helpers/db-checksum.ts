// "Nothing changed" for tests that must leave every database as it was: a
// snapshot of database contents and of the files around them, compared
// before and after a run.
//
// - MariaDB: `CHECKSUM TABLE` over every table of each database (the table
//   list is part of the snapshot, so a created or dropped table shows too).
// - SQLite: the sha256 of each database file's bytes.
// - Directories: the sorted list of every file below them (recursively), so a
//   stray file (a -journal, a mistyped database path that got created, a
//   journal written by a run that should not write) shows up.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { TestDeployment, DbName } from './test-deployment.js';
import { mysqlKnex } from './mysql.js';

export type Snapshot = Readonly<Record<string, string>>;

/** `db.table` → checksum, for every base table of the given MariaDB databases. */
export async function checksumMysqlDatabases(databases: readonly string[]): Promise<Snapshot> {
  const out: Record<string, string> = {};
  if (databases.length === 0) return out;
  const admin = mysqlKnex();
  try {
    const tables = (await admin
      .select({ db: 'TABLE_SCHEMA', name: 'TABLE_NAME' })
      .from('information_schema.TABLES')
      .whereIn('TABLE_SCHEMA', [...databases])
      .andWhere('TABLE_TYPE', 'BASE TABLE')
      .orderBy(['TABLE_SCHEMA', 'TABLE_NAME'])) as Array<{ db: string; name: string }>;
    for (const db of databases) out[`${db}.<tables>`] = tables.filter((t) => t.db === db).map((t) => t.name).join(',');
    if (tables.length > 0) {
      const list = tables.map((t) => `\`${t.db}\`.\`${t.name}\``).join(', ');
      const result = (await admin.raw(`CHECKSUM TABLE ${list} EXTENDED`)) as [Array<{ Table: string; Checksum: number | string | null }>, unknown];
      for (const row of result[0]) out[row.Table] = String(row.Checksum);
    }
  } finally {
    await admin.destroy();
  }
  return out;
}

/** path → sha256 of the file's bytes ("<missing>" if it does not exist). */
export function checksumFiles(paths: readonly string[]): Snapshot {
  const out: Record<string, string> = {};
  for (const path of paths) {
    out[path] = existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : '<missing>';
  }
  return out;
}

/** Every file and directory below dir, relative and sorted ("<missing>" if dir does not exist). */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return ['<missing>'];
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      const isDir = statSync(path).isDirectory();
      out.push(relative(dir, path) + (isDir ? '/' : ''));
      if (isDir) walk(path);
    }
  };
  walk(dir);
  return out.sort();
}

/** The real database name in a `mysql+pymysql://.../<db>[?...]` URL. */
export function mysqlDatabaseOf(url: string): string {
  const m = /^[a-z0-9+]+:\/\/[^/]*\/([^?]+)/i.exec(url);
  if (m?.[1] === undefined) throw new Error(`no database name in ${url}`);
  return decodeURIComponent(m[1]);
}

/** The file of a `sqlite:////abs/path` URL. */
export function sqliteFileOf(url: string): string {
  if (!url.startsWith('sqlite:///')) throw new Error(`not a SQLite file URL: ${url}`);
  return url.slice('sqlite:///'.length);
}

const DEPLOYMENT_DBS: readonly DbName[] = ['api', 'cell0', 'cell1', 'cell2', 'placement'];

export interface SnapshotExtras {
  /** More MariaDB databases (scratch databases a test made). */
  readonly mysqlDatabases?: readonly string[];
  /** More SQLite files. */
  readonly sqliteFiles?: readonly string[];
  /** More directories whose file lists must not change. */
  readonly dirs?: readonly string[];
}

/**
 * Everything a run could change in a test deployment: every database's
 * contents, the files of the deployment directory (nova.conf, journal/) and,
 * on SQLite, the files of the directory that holds the databases.
 */
export async function snapshotDeployment(d: TestDeployment, extras: SnapshotExtras = {}): Promise<Snapshot> {
  const out: Record<string, string> = {};
  const dirs = new Set<string>([d.dir, ...(extras.dirs ?? [])]);
  if (d.dialect === 'mysql') {
    Object.assign(out, await checksumMysqlDatabases([...DEPLOYMENT_DBS.map((n) => mysqlDatabaseOf(d.url(n))), ...(extras.mysqlDatabases ?? [])]));
  } else {
    const files = DEPLOYMENT_DBS.map((n) => sqliteFileOf(d.url(n)));
    for (const f of files) dirs.add(dirname(f));
    Object.assign(out, checksumFiles([...files, ...(extras.sqliteFiles ?? [])]));
  }
  if (d.dialect === 'mysql' && extras.sqliteFiles !== undefined) Object.assign(out, checksumFiles(extras.sqliteFiles));
  for (const dir of [...dirs].sort()) out[`files of ${dir}`] = listFiles(dir).join('\n');
  return out;
}
