// Shared by the migrations of migrations/<kind>/. It lives one level up so
// that src/db/migrate.ts, which runs every module of a kind's folder, never
// mistakes it for a migration.
import type { Knex } from 'knex';

export type MigrationDialect = 'mysql' | 'sqlite';

// knex's own dialect name (`client` is `any` in knex's types): 'mysql' for
// mysql2 too, 'sqlite3' for better-sqlite3 too and for the tool's SQLite
// client (src/db/knex-factory.ts sqliteClient), whose config names a class.
export function dialectOf(knex: Knex): MigrationDialect {
  const dialect: unknown = (knex.client as { dialect?: unknown }).dialect;
  if (dialect === 'mysql') return 'mysql';
  if (dialect === 'sqlite3') return 'sqlite';
  throw new Error(`nova-reconcile migrations support MySQL/MariaDB and SQLite, not ${String(dialect)}`);
}

/**
 * MySQL DDL copied from reference/nova-zed-schema/*.sql. A template literal
 * cannot hold the dump's backticks, so identifiers are written with double
 * quotes and turned back into backticks here; the dumps contain no double
 * quote of their own, so this is exact.
 */
export function mysqlDdl(strings: TemplateStringsArray): string {
  return strings.raw.join('').replaceAll('"', '`');
}

export async function runStatements(knex: Knex, statements: readonly string[]): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function dropTables(knex: Knex, tablesInDropOrder: readonly string[]): Promise<void> {
  for (const table of tablesInDropOrder) await knex.schema.dropTableIfExists(table);
}
