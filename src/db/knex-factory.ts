// knex (and, through it, the drivers) is most of the process start. Commands
// that never open a database (--version, --help, completion, a bad option)
// must not pay for it, so it is loaded on the first connection. knex is a
// CommonJS package: a synchronous require keeps every caller synchronous.
import { createRequire } from 'node:module';
import type { Knex } from 'knex';

// In the bundle (scripts/bundle.mjs) knex and mysql2 are one file beside this
// module, named here by the bundler; run from tsc's output or the sources,
// this is the knex package itself.
declare const __NOVA_RECONCILE_KNEX_MODULE__: string | undefined;
const KNEX_MODULE = typeof __NOVA_RECONCILE_KNEX_MODULE__ === 'string' ? __NOVA_RECONCILE_KNEX_MODULE__ : 'knex';

const require = createRequire(import.meta.url);
let factory: ((config: Knex.Config) => Knex) | undefined;

/** knex(config), with knex loaded on first use. */
export function createKnex(config: Knex.Config): Knex {
  factory ??= require(KNEX_MODULE) as (config: Knex.Config) => Knex;
  return factory(config);
}
