// knex (and, through it, the drivers) is most of the process start. Commands
// that never open a database (--version, --help, completion, a bad option)
// must not pay for it, so it is loaded on the first connection. knex is a
// CommonJS package: a synchronous require keeps every caller synchronous.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { ReconcileError } from '../errors.js';
import { loadCommonJs } from './code-cache.js';

// In the bundle (scripts/bundle.mjs) knex and mysql2 are one file beside this
// module, named here by the bundler, and loaded with the V8 code cache the
// build wrote beside it (code-cache.ts); run from tsc's output or the
// sources, this is the knex package itself.
declare const __NOVA_RECONCILE_KNEX_MODULE__: string | undefined;
const BUNDLED_DRIVERS = typeof __NOVA_RECONCILE_KNEX_MODULE__ === 'string' ? __NOVA_RECONCILE_KNEX_MODULE__ : undefined;

/** The code cache of a bundled drivers file: its name plus this suffix (scripts/bundle.mjs writes it). */
export const CODE_CACHE_SUFFIX = '.v8-cache';

type KnexFactory = (config: Knex.Config) => Knex;
let factory: KnexFactory | undefined;

function loadKnex(): KnexFactory {
  if (BUNDLED_DRIVERS === undefined) return createRequire(import.meta.url)('knex') as KnexFactory;
  const file = fileURLToPath(new URL(BUNDLED_DRIVERS, import.meta.url));
  return loadCommonJs(file, `${file}${CODE_CACHE_SUFFIX}`).exports as KnexFactory;
}

/** knex(config), with knex loaded on first use. */
export function createKnex(config: Knex.Config): Knex {
  factory ??= loadKnex();
  return factory(config);
}

/** A knex client class: what `config.client` takes besides a dialect's name. */
export type KnexClientClass = typeof Knex.Client;
let sqliteDialect: KnexClientClass | undefined;

/**
 * knex's better-sqlite3 dialect, driving the SQLite driver given instead of
 * the better-sqlite3 package it would require (sqlite-driver.ts chooses:
 * better-sqlite3, or Node's built-in SQLite shaped as it). The dialect's
 * class is reached through a knex instance made without a connection, which
 * loads no driver (knex/lib/client.js initializes the driver only with a
 * connection); its `_driver()` is the one method that names the package.
 */
export function sqliteClient(driver: unknown): KnexClientClass {
  const made = sqliteClients.get(driver);
  if (made !== undefined) return made;
  factory ??= loadKnex();
  sqliteDialect ??= (factory({ client: 'better-sqlite3', useNullAsDefault: true }).client as { constructor: KnexClientClass }).constructor;
  const client = class NovaReconcileSqlite extends sqliteDialect {
    _driver(): unknown {
      return driver;
    }
  };
  sqliteClients.set(driver, client);
  return client;
}

const sqliteClients = new Map<unknown, KnexClientClass>();

/**
 * The dialect of a knex instance, as this tool names it: knex's own
 * `client.dialect`, the same for the drivers of one dialect (mysql2 extends
 * mysql; better-sqlite3, and the client of sqliteClient, extend sqlite3).
 */
export function knexDialect(db: Knex): 'mysql' | 'sqlite' {
  // knex types its client as `any`; read it into unknown at once.
  const dialect: unknown = (db.client as { dialect?: unknown }).dialect;
  if (dialect === 'mysql') return 'mysql';
  if (dialect === 'sqlite3') return 'sqlite';
  throw new ReconcileError('internal', `unsupported database dialect ${String(dialect)}: nova-reconcile opens MySQL/MariaDB and SQLite`);
}
