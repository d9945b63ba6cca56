// instances in a cell database.
import type { Knex } from 'knex';

/** Live instances with host = H (any vm_state), as InstanceList.get_by_host. */
export async function countLiveInstancesOnHost(db: Knex, host: string): Promise<number> {
  const row = (await db('instances').count({ n: '*' }).where('host', host).andWhere('deleted', 0).first()) as { n?: number | string } | undefined;
  return Number(row?.n ?? 0);
}
