// services in a cell database.
import type { Knex } from 'knex';

export interface ServiceHostRow {
  readonly id: number;
  readonly host: string | null;
}

/**
 * Live nova-compute services, disabled ones included, as
 * service_get_all_by_binary(include_disabled=True). Nova has no ORDER BY;
 * the primary-key order is what InnoDB returns for that scan.
 */
export async function listComputeServiceHosts(db: Knex): Promise<ServiceHostRow[]> {
  return db('services').select('id', 'host').where('deleted', 0).andWhere('binary', 'nova-compute').orderBy('id');
}
