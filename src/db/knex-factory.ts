// knex (and, through it, the drivers) is most of the process start. Commands
// that never open a database (--version, --help, completion, a bad option)
// must not pay for it, so it is loaded on the first connection. knex is a
// CommonJS package: a synchronous require keeps every caller synchronous.
import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const require = createRequire(import.meta.url);
let factory: ((config: Knex.Config) => Knex) | undefined;

/** knex(config), with knex loaded on first use. */
export function createKnex(config: Knex.Config): Knex {
  factory ??= require('knex') as (config: Knex.Config) => Knex;
  return factory(config);
}
