// Builds Nova-compatible schemas for tests, the sandbox and the benchmark.
// The tool owns no schema in a real deployment: this is never run against a
// database that nova-manage or placement-manage created.
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { ReconcileError } from '../errors.js';
import { knexDialect } from './knex-factory.js';

export type SchemaKind = 'api' | 'cell' | 'placement';

/**
 * Our own bookkeeping table. It is not knex's default name so that it can
 * never be mistaken for (or collide with) anything Nova or another tool keeps.
 */
export const MIGRATIONS_TABLE = 'nova_reconcile_migrations';

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

interface MigrationFile {
  /** Recorded in the migrations table without extension, so a run from dist/ (.js) and one under vitest (.ts) agree. */
  readonly name: string;
  readonly url: URL;
}

/** Bring the database up to the latest migration of its kind; a no-op when it already is. */
export async function migrateSchema(db: Knex, kind: SchemaKind): Promise<void> {
  const files = await listMigrationFiles(kind);
  const source: Knex.MigrationSource<MigrationFile> = {
    getMigrations: async () => files,
    getMigrationName: (file) => file.name,
    getMigration: async (file) => loadMigration(file),
  };
  await db.migrate.latest({
    tableName: MIGRATIONS_TABLE,
    migrationSource: source,
    // MySQL commits every CREATE TABLE implicitly, so a transaction around a
    // migration would only pretend to be atomic (knex warns about it, #805).
    // SQLite's DDL is transactional: keep it there.
    disableTransactions: knexDialect(db) === 'mysql',
    // The directory differs between dist/ and the sources, and a sandbox may
    // be migrated by an older build: never refuse because of that.
    disableMigrationsListValidation: true,
  });
}

function migrationsDir(kind: SchemaKind): URL {
  // Compiled: dist/src/db/migrate.js -> dist/migrations/<kind>/ (rootDir is the
  // repo root). Under vitest: src/db/migrate.ts -> migrations/<kind>/.
  return new URL(`../../migrations/${kind}/`, import.meta.url);
}

async function listMigrationFiles(kind: SchemaKind): Promise<MigrationFile[]> {
  const dir = migrationsDir(kind);
  let entries: string[];
  try {
    entries = await readdir(fileURLToPath(dir));
  } catch (err) {
    throw new ReconcileError('internal', `the ${kind} migrations are missing from ${fileURLToPath(dir)}`, {
      hint: 'reinstall nova-reconcile, or run `npm run build` in a source checkout',
      cause: err,
    });
  }
  const js = entries.filter((f) => f.endsWith('.js'));
  // Only the sources exist when running under vitest (or tsx): use them then.
  const chosen = js.length > 0 ? js : entries.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  if (chosen.length === 0) {
    throw new ReconcileError('internal', `no ${kind} migrations found in ${fileURLToPath(dir)}`, {
      hint: 'reinstall nova-reconcile, or run `npm run build` in a source checkout',
    });
  }
  return chosen.sort().map((f) => ({ name: f.replace(/\.(js|ts)$/, ''), url: new URL(f, dir) }));
}

async function loadMigration(file: MigrationFile): Promise<MigrationModule> {
  const mod: unknown = await import(file.url.href);
  if (!isMigrationModule(mod)) {
    throw new ReconcileError('internal', `migration ${file.name} does not export up() and down()`);
  }
  return mod;
}

function isMigrationModule(mod: unknown): mod is MigrationModule {
  if (typeof mod !== 'object' || mod === null) return false;
  const m = mod as Record<string, unknown>;
  return typeof m['up'] === 'function' && typeof m['down'] === 'function';
}
