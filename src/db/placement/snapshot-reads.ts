// The placement tables of a Snapshot, read whole and in keyset pages. The two
// small lookup tables (resource_classes, traits) are read once and their
// names attached in memory, so 100,000 allocation rows share a handful of
// class-name strings instead of carrying one each. Traits and aggregate
// counts are read per page of providers, by id range, never per provider.
import type { Knex } from 'knex';
import type { AllocationRec, ConsumerRec, InventoryRec, PlacementSnapshot, ProviderRec } from '../../domain/model.js';
import { KEYSET_BATCH, readTable } from '../keyset.js';
import { pushTo } from '../../domain/text-and-maps.js';
import type { StringPool } from '../string-pool.js';

type Value = string | number | null;

export async function readPlacement(db: Knex, pool: StringPool): Promise<PlacementSnapshot> {
  const [classNames, traitNames] = await Promise.all([readNames(db, 'resource_classes'), readNames(db, 'traits')]);
  // Concurrent on as many connections as the pool has; each table stays one keyset walk.
  const [providers, inventories, allocations, consumers] = await Promise.all([
    readProviders(db, traitNames, pool),
    readInventories(db, classNames),
    readAllocations(db, classNames, pool),
    readConsumers(db, pool),
  ]);
  return { providers, inventories, allocations, consumers };
}

async function readNames(db: Knex, table: 'resource_classes' | 'traits'): Promise<Map<number, string>> {
  const rows = (await db(table).select('id', 'name')) as Array<{ id: number; name: string }>;
  return new Map(rows.map((r) => [Number(r.id), r.name]));
}

/** A class id that has no resource_classes row (placement forbids it, but a hand-edited database may not). */
function className(names: ReadonlyMap<number, string>, id: number): string {
  return names.get(id) ?? `#${id}`;
}

interface ProviderRow {
  readonly id: number;
  readonly uuid: string;
  readonly name: string | null;
  readonly generation: Value;
  readonly root_provider_id: Value;
  readonly parent_provider_id: Value;
}

async function readProviders(db: Knex, traitNames: ReadonlyMap<number, string>, pool: StringPool): Promise<ProviderRec[]> {
  const out: ProviderRec[] = [];
  let afterId = -1;
  for (;;) {
    const rows = (await db('resource_providers')
      .select('id', 'uuid', 'name', 'generation', 'root_provider_id', 'parent_provider_id')
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(KEYSET_BATCH)) as ProviderRow[];
    const first = rows[0];
    const last = rows[rows.length - 1];
    if (first === undefined || last === undefined) return out;
    const range: [number, number] = [Number(first.id), Number(last.id)];
    const traits = new Map<number, string[]>();
    const traitRows = (await db('resource_provider_traits')
      .select('resource_provider_id', 'trait_id')
      .whereBetween('resource_provider_id', range)
      .orderBy(['resource_provider_id', 'trait_id'])) as Array<{ resource_provider_id: number; trait_id: number }>;
    for (const t of traitRows) {
      const id = Number(t.resource_provider_id);
      pushTo(traits, id, traitNames.get(Number(t.trait_id)) ?? `#${t.trait_id}`);
    }
    const aggregateRows = (await db('resource_provider_aggregates')
      .select('resource_provider_id')
      .count({ n: '*' })
      .whereBetween('resource_provider_id', range)
      .groupBy('resource_provider_id')) as Array<{ resource_provider_id: number; n: number | string }>;
    const aggregates = new Map(aggregateRows.map((a) => [Number(a.resource_provider_id), Number(a.n)]));
    for (const r of rows) {
      const id = Number(r.id);
      out.push({
        id,
        // A compute node's uuid and hypervisor_hostname.
        uuid: pool.get(r.uuid),
        name: pool.nullable(r.name),
        // NULL only on rows written outside placement; placement starts at 0.
        generation: r.generation === null ? 0 : Number(r.generation),
        rootId: r.root_provider_id === null ? null : Number(r.root_provider_id),
        parentId: r.parent_provider_id === null ? null : Number(r.parent_provider_id),
        traits: traits.get(id) ?? [],
        aggregateCount: aggregates.get(id) ?? 0,
      });
    }
    if (rows.length < KEYSET_BATCH) return out;
    afterId = range[1];
  }
}

interface InventoryRow {
  readonly id: number;
  readonly resource_provider_id: number;
  readonly resource_class_id: number;
  readonly total: number;
  readonly reserved: number;
  readonly min_unit: number;
  readonly max_unit: number;
  readonly step_size: number;
  readonly allocation_ratio: number | string;
}

async function readInventories(db: Knex, classNames: ReadonlyMap<number, string>): Promise<InventoryRec[]> {
  return readTable(
    db,
    { table: 'inventories', columns: ['id', 'resource_provider_id', 'resource_class_id', 'total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'] },
    (r: InventoryRow) => ({
      id: Number(r.id),
      providerId: Number(r.resource_provider_id),
      resourceClassId: Number(r.resource_class_id),
      resourceClass: className(classNames, Number(r.resource_class_id)),
      total: Number(r.total),
      reserved: Number(r.reserved),
      minUnit: Number(r.min_unit),
      maxUnit: Number(r.max_unit),
      stepSize: Number(r.step_size),
      allocationRatio: Number(r.allocation_ratio),
    }),
  );
}

interface AllocationRow {
  readonly id: number;
  readonly resource_provider_id: number;
  readonly consumer_id: string;
  readonly resource_class_id: number;
  readonly used: number;
}

async function readAllocations(db: Knex, classNames: ReadonlyMap<number, string>, pool: StringPool): Promise<AllocationRec[]> {
  return readTable(
    db,
    { table: 'allocations', columns: ['id', 'resource_provider_id', 'consumer_id', 'resource_class_id', 'used'] },
    (r: AllocationRow) => ({
      id: Number(r.id),
      providerId: Number(r.resource_provider_id),
      consumerUuid: pool.get(r.consumer_id),
      resourceClassId: Number(r.resource_class_id),
      resourceClass: className(classNames, Number(r.resource_class_id)),
      used: Number(r.used),
    }),
  );
}

interface ConsumerRow {
  readonly id: number;
  readonly uuid: string;
  readonly generation: number;
  readonly project_id: number;
  readonly user_id: number;
}

async function readConsumers(db: Knex, pool: StringPool): Promise<ConsumerRec[]> {
  return readTable(
    db,
    { table: 'consumers', columns: ['id', 'uuid', 'generation', 'project_id', 'user_id'] },
    (r: ConsumerRow) => ({ id: Number(r.id), uuid: pool.get(r.uuid), generation: Number(r.generation), projectId: Number(r.project_id), userId: Number(r.user_id) }),
  );
}
