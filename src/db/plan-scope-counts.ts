// The sizes the circuit breaker compares a plan against (src/domain/plan-limits.ts):
// one COUNT each, read at planning time.
import type { Knex } from 'knex';

/**
 * Live compute nodes of a cell, the rows of one ironic node counted once
 * (distinct hypervisor_hostname, case-insensitively), as the breaker counts
 * the plan's; a row without a hypervisor_hostname counts as itself.
 */
export async function countLiveComputeNodeObjects(db: Knex): Promise<number> {
  const named = (await db('compute_nodes').where('deleted', 0).whereNotNull('hypervisor_hostname').countDistinct({ n: db.raw('LOWER(hypervisor_hostname)') }).first()) as { n: unknown } | undefined;
  const unnamed = (await db('compute_nodes').where('deleted', 0).whereNull('hypervisor_hostname').count({ n: '*' }).first()) as { n: unknown } | undefined;
  return Number(named?.n ?? 0) + Number(unnamed?.n ?? 0);
}

export async function countResourceProviders(db: Knex): Promise<number> {
  const row = (await db('resource_providers').count({ n: '*' }).first()) as { n: unknown } | undefined;
  return Number(row?.n ?? 0);
}
