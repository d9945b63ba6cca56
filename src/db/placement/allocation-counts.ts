// Counting allocation rows in the placement database.
import type { Knex } from 'knex';

/** The allocation rows (one per resource class) a consumer holds on a provider. */
export async function countConsumerAllocations(db: Knex, consumerUuid: string, providerId: number): Promise<number> {
  const row = await db('allocations').count({ n: '*' }).where({ consumer_id: consumerUuid, resource_provider_id: providerId }).first();
  return Number((row as { n?: unknown } | undefined)?.n ?? 0);
}
