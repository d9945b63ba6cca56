// knex (and, through it, the drivers) is most of the process start. Commands
// that never open a database (--version, --help, completion, a bad option)
// must not pay for it, so it is loaded on the first connection. knex is a
// CommonJS package: a synchronous require keeps every caller synchronous.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
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
