// What `placement heal_allocations` reads from placement: the Keystone ids
// of projects and users (a consumer stores their internal ids), and for each cell, when the walk
// reaches it, only what its instances need (readHealPlacement).
import type { Knex } from 'knex';
import type { HealCapacity, HealPlacement, HealProvider } from '../../domain/heal-allocations.js';
import type { InventoryRec } from '../../domain/model.js';
import { chunk } from '../batches.js';
import { readByKeyset } from '../keyset.js';
import type { StringPool } from '../string-pool.js';
import { INVENTORY_COLUMNS, inventoryRecord, readAllocationsOfConsumers, readConsumersOf, type InventoryRow } from './snapshot-reads.js';

export async function readExternalIds(db: Knex, table: 'projects' | 'users'): Promise<Map<number, string>> {
  const rows = await readByKeyset(
    async (afterId, limit) => (await db(table).select('id', 'external_id').where('id', '>', afterId).orderBy('id').limit(limit)) as Array<{ id: number; external_id: string }>,
    (r) => [Number(r.id), r.external_id] as const,
  );
  return new Map(rows);
}

/**
 * One cell's placement rows (HealPlacement) but the allocation rows: the
 * providers whose uuid is one of the cell's live compute nodes', the consumer
 * rows of its instances, and which of them hold any allocation (the distinct
 * consumer ids, not the rows). Each is asked by IN lists of at most
 * BATCH_SIZE, as the database compares them, so an id its collation takes
 * for another brings that one's rows too: the planner looks rows up by exact
 * id, so the extra ones are never used.
 */
export async function readHealPlacement(db: Knex, pool: StringPool, nodeUuids: readonly string[], instanceUuids: readonly string[]): Promise<HealPlacement> {
  const providers = new Map<number, HealProvider>();
  const withAllocations = new Set<string>();
  const wanted = [...new Set(instanceUuids)];
  // The providers of the nodes, the instances' consumer rows and which of them hold allocations are independent: asked side by side.
  const [, consumers] = await Promise.all([
    (async () => {
      for (const batch of chunk([...new Set(nodeUuids)])) keepProviders(providers, pool, await db('resource_providers').select('id', 'uuid', 'generation').whereIn('uuid', batch));
    })(),
    readConsumersOf(db, pool, wanted),
    (async () => {
      for (const batch of chunk(wanted)) for (const r of (await db('allocations').distinct('consumer_id').whereIn('consumer_id', batch)) as Array<{ consumer_id: string }>) withAllocations.add(pool.get(r.consumer_id));
    })(),
  ]);
  return { providers: [...providers.values()].sort((a, b) => a.id - b.id), consumers, withAllocations, allocations: [] };
}

/** `placement` with the allocation rows of these consumers (allocationRowsScope), and the providers they are on. */
export async function withHealAllocationRows(db: Knex, pool: StringPool, classNames: ReadonlyMap<number, string>, placement: HealPlacement, consumerUuids: readonly string[]): Promise<HealPlacement> {
  if (consumerUuids.length === 0) return placement;
  const allocations = await readAllocationsOfConsumers(db, pool, classNames, consumerUuids);
  const providers = new Map(placement.providers.map((rp) => [rp.id, rp]));
  const elsewhere = [...new Set(allocations.map((a) => a.providerId))].filter((id) => !providers.has(id));
  for (const batch of chunk(elsewhere)) keepProviders(providers, pool, await db('resource_providers').select('id', 'uuid', 'generation').whereIn('id', batch));
  return { ...placement, providers: [...providers.values()].sort((a, b) => a.id - b.id), allocations };
}

function keepProviders(into: Map<number, HealProvider>, pool: StringPool, rows: ReadonlyArray<{ id: number; uuid: string; generation: number | null }>): void {
  for (const r of rows) into.set(Number(r.id), { id: Number(r.id), uuid: pool.get(r.uuid), generation: r.generation === null ? 0 : Number(r.generation) });
}

/** The inventories of these providers, and their usage by every consumer summed per provider and class (HealCapacity). */
export async function readHealCapacity(db: Knex, classNames: ReadonlyMap<number, string>, providerIds: readonly number[]): Promise<HealCapacity> {
  const inventories: InventoryRec[] = [];
  const used = new Map<string, number>();
  for (const batch of chunk(providerIds)) {
    const [inventoryRows, sums] = await Promise.all([
      db('inventories').select(...INVENTORY_COLUMNS).whereIn('resource_provider_id', batch) as Promise<InventoryRow[]>,
      db('allocations')
        .select('resource_provider_id', 'resource_class_id')
        .sum({ used: 'used' })
        .whereIn('resource_provider_id', batch)
        .groupBy('resource_provider_id', 'resource_class_id') as Promise<Array<{ resource_provider_id: number; resource_class_id: number; used: number | string | null }>>,
    ]);
    for (const r of inventoryRows) inventories.push(inventoryRecord(r, classNames));
    for (const s of sums) used.set(`${Number(s.resource_provider_id)}:${Number(s.resource_class_id)}`, Number(s.used ?? 0));
  }
  return { providerIds: new Set(providerIds), inventories: inventories.sort((a, b) => a.id - b.id), used };
}
