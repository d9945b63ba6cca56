// The placement tables of a Snapshot, read whole and in keyset pages. The two
// small lookup tables (resource_classes, traits) are read once and their
// names attached in memory, so 100,000 allocation rows share a handful of
// class-name strings instead of carrying one each. Traits and aggregate
// counts are read per page of providers, by id range, never per provider.
//
// The audit reads less: no consumers, the inventories of the
// providers that could be pre-Train compute nodes only, and the allocations
// not at all: it streams them afterwards, one consumer at a time
// (streamAllocationsByConsumer), so they are never held whole.
import type { Knex } from 'knex';
import type { AllocationRec, ConsumerRec, InventoryRec, PlacementSnapshot, ProviderRec } from '../../domain/model.js';
import { COMPUTE_NODE_TRAIT } from '../../domain/model.js';
import { hostKey } from '../../domain/snapshot-index.js';
import { chunk } from '../batches.js';
import { KEYSET_BATCH, readTable } from '../keyset.js';
import { pushTo } from '../../domain/text-and-maps.js';
import type { StringPool } from '../string-pool.js';

type Value = string | number | null;

/**
 * `whole`: every table, for the planners. `audit`: providers, and the
 * inventories of root providers without the COMPUTE_NODE trait (the only
 * ones the audit looks at: isTraitlessComputeProvider); allocations and
 * consumers are left empty and PlacementSnapshot.streamed says so.
 * `placement-audit`: providers and consumer rows, no inventory and no
 * allocation (placement audit streams them: operations/placement-audit.ts).
 */
export type PlacementRead = 'whole' | 'audit' | 'placement-audit';

export async function readPlacement(db: Knex, pool: StringPool, read: PlacementRead = 'whole'): Promise<PlacementSnapshot> {
  const [classNames, traitNames] = await Promise.all([readNames(db, 'resource_classes'), readNames(db, 'traits')]);
  if (read === 'placement-audit') {
    const [providers, consumers] = await Promise.all([readProviders(db, traitNames, pool), readConsumers(db, pool)]);
    return { providers, inventories: [], allocations: [], consumers, streamed: true };
  }
  if (read === 'audit') {
    const [providers, inventories] = await Promise.all([readProviders(db, traitNames, pool), readInventories(db, classNames, withoutComputeNodeTrait(db, traitNames))]);
    return { providers, inventories, allocations: [], consumers: [], streamed: true };
  }
  // Concurrent on as many connections as the pool has; each table stays one keyset walk.
  const [providers, inventories, allocations, consumers] = await Promise.all([
    readProviders(db, traitNames, pool),
    readInventories(db, classNames),
    readAllocations(db, classNames, pool),
    readConsumers(db, pool),
  ]);
  return { providers, inventories, allocations, consumers };
}

/** Inventories of root providers that do not carry COMPUTE_NODE (a provider given the trait between the two reads is judged without inventory: not stale). */
function withoutComputeNodeTrait(db: Knex, traitNames: ReadonlyMap<number, string>): (q: Knex.QueryBuilder) => Knex.QueryBuilder {
  const traitId = [...traitNames].find(([, name]) => name === COMPUTE_NODE_TRAIT)?.[0];
  return (q) => {
    const roots = q.whereIn('resource_provider_id', db('resource_providers').select('id').whereNull('parent_provider_id'));
    return traitId === undefined ? roots : roots.whereNotIn('resource_provider_id', db('resource_provider_traits').select('resource_provider_id').where('trait_id', traitId));
  };
}

export async function readNames(db: Knex, table: 'resource_classes' | 'traits'): Promise<Map<number, string>> {
  const rows = (await db(table).select('id', 'name')) as Array<{ id: number; name: string }>;
  return new Map(rows.map((r) => [Number(r.id), r.name]));
}

/** A resource class id's name; `#id` for an id that has no resource_classes row (placement forbids it, but a hand-edited database may not). */
export function className(names: ReadonlyMap<number, string>, id: number): string {
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
      .select(...PROVIDER_COLUMNS)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(KEYSET_BATCH)) as ProviderRow[];
    const first = rows[0];
    const last = rows[rows.length - 1];
    if (first === undefined || last === undefined) return out;
    const range: [number, number] = [Number(first.id), Number(last.id)];
    out.push(...(await providerRecords(db, rows, traitNames, pool, (q) => q.whereBetween('resource_provider_id', range))));
    if (rows.length < KEYSET_BATCH) return out;
    afterId = range[1];
  }
}

const PROVIDER_COLUMNS = ['id', 'uuid', 'name', 'generation', 'root_provider_id', 'parent_provider_id'] as const;

/** The records of these provider rows, their traits and aggregate counts read for the providers `of` selects. */
async function providerRecords(
  db: Knex,
  rows: readonly ProviderRow[],
  traitNames: ReadonlyMap<number, string>,
  pool: StringPool,
  of: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
): Promise<ProviderRec[]> {
  const traits = new Map<number, string[]>();
  const traitRows = (await of(db('resource_provider_traits').select('resource_provider_id', 'trait_id')).orderBy(['resource_provider_id', 'trait_id'])) as Array<{
    resource_provider_id: number;
    trait_id: number;
  }>;
  for (const t of traitRows) {
    const id = Number(t.resource_provider_id);
    pushTo(traits, id, traitNames.get(Number(t.trait_id)) ?? `#${t.trait_id}`);
  }
  const aggregateRows = (await of(db('resource_provider_aggregates').select('resource_provider_id').count({ n: '*' })).groupBy('resource_provider_id')) as Array<{
    resource_provider_id: number;
    n: number | string;
  }>;
  const aggregates = new Map(aggregateRows.map((a) => [Number(a.resource_provider_id), Number(a.n)]));
  return rows.map((r) => {
    const id = Number(r.id);
    return {
      id,
      // A compute node's uuid and hypervisor_hostname.
      uuid: pool.get(r.uuid),
      name: pool.nullable(r.name),
      // NULL only on rows written outside placement; placement starts at 0.
      generation: r.generation === null ? 0 : Number(r.generation),
      rootId: r.root_provider_id === null ? null : Number(r.root_provider_id),
      parentId: r.parent_provider_id === null ? null : Number(r.parent_provider_id),
      traits: pool.list(traits.get(id) ?? []),
      aggregateCount: aggregates.get(id) ?? 0,
    };
  });
}

/** The providers of these ids (without their trees), in id order: those a scoped read's consumers hold allocations on elsewhere. */
export async function readProvidersById(db: Knex, pool: StringPool, ids: readonly number[]): Promise<ProviderRec[]> {
  const traitNames = await readNames(db, 'traits');
  const out: ProviderRec[] = [];
  for (const batch of chunk([...new Set(ids)].sort((a, b) => a - b))) {
    const rows = (await db('resource_providers').select(...PROVIDER_COLUMNS).whereIn('id', batch)) as ProviderRow[];
    out.push(...(await providerRecords(db, rows, traitNames, pool, (q) => q.whereIn('resource_provider_id', batch))));
  }
  return out.sort((a, b) => a.id - b.id);
}

/**
 * The providers whose uuid is one of `uuids` and every provider of their
 * trees (by root_provider_id), in id order, for a planner that names its
 * providers by their compute nodes (PlacementScope.providers 'named'). A
 * uuid is asked as the database compares it, so a superset may come back.
 */
export async function readProvidersByUuid(db: Knex, pool: StringPool, uuids: readonly string[]): Promise<PlacementSnapshot> {
  const traitNames = await readNames(db, 'traits');
  const roots = new Set<number>();
  for (const batch of chunk(uuids)) {
    const rows = (await db('resource_providers').select('id', 'root_provider_id').whereIn('uuid', batch)) as Array<{ id: number; root_provider_id: number | null }>;
    for (const r of rows) roots.add(Number(r.root_provider_id ?? r.id));
  }
  const out: ProviderRec[] = [];
  for (const batch of chunk([...roots].sort((a, b) => a - b))) {
    const rows = (await db('resource_providers').select(...PROVIDER_COLUMNS).whereIn('root_provider_id', batch).orWhereIn('id', batch)) as ProviderRow[];
    const ids = rows.map((r) => Number(r.id));
    out.push(...(await providerRecords(db, rows, traitNames, pool, (q) => q.whereIn('resource_provider_id', ids))));
  }
  const byId = new Map(out.map((rp) => [rp.id, rp]));
  return { providers: [...byId.values()].sort((a, b) => a.id - b.id), inventories: [], allocations: [], consumers: [], streamed: true, named: { uuids: new Set(uuids), ids: new Set() } };
}

/**
 * The uuid of every root provider (no parent), in keyset pages of two
 * columns: placement cleanup_providers reads whole only those whose uuid no
 * live compute node has (operations/read/stale-provider-candidates.ts).
 */
export async function readRootProviderUuids(db: Knex, pool: StringPool): Promise<string[]> {
  return readTable(db, { table: 'resource_providers', columns: ['id', 'uuid'], where: (q) => q.whereNull('parent_provider_id') }, (r: { id: number; uuid: string }) => pool.get(r.uuid));
}

/**
 * `read` (a read by uuid) with the inventories of its root providers that do
 * not carry COMPUTE_NODE, the ones isTraitlessComputeProvider looks at, as
 * the 'audit' read has them (PlacementSnapshot.named.rootInventories).
 */
export async function withRootInventories(db: Knex, read: PlacementSnapshot): Promise<PlacementSnapshot> {
  const named = read.named;
  if (named === undefined) throw new Error('internal: root inventories are added to a read by uuid only');
  const inventories = await readRootInventoriesOf(db, await readNames(db, 'resource_classes'), read.providers);
  return { ...read, inventories, named: { ...named, rootInventories: true } };
}

/** The inventories of those of `providers` that the 'audit' read has them of (roots without COMPUTE_NODE), in id order. */
export async function readRootInventoriesOf(db: Knex, classNames: ReadonlyMap<number, string>, providers: readonly ProviderRec[]): Promise<InventoryRec[]> {
  const ids = providers.filter((rp) => rp.parentId === null && !rp.traits.includes(COMPUTE_NODE_TRAIT)).map((rp) => rp.id);
  const inventories: InventoryRec[] = [];
  for (const batch of chunk(ids)) inventories.push(...(await readInventories(db, classNames, (q) => q.whereIn('resource_provider_id', batch))));
  return inventories.sort((a, b) => a.id - b.id);
}

export const INVENTORY_COLUMNS = ['id', 'resource_provider_id', 'resource_class_id', 'total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'] as const;

export interface InventoryRow {
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

async function readInventories(db: Knex, classNames: ReadonlyMap<number, string>, where?: (q: Knex.QueryBuilder) => Knex.QueryBuilder): Promise<InventoryRec[]> {
  return readTable(
    db,
    {
      table: 'inventories',
      columns: INVENTORY_COLUMNS,
      ...(where === undefined ? {} : { where }),
    },
    (r: InventoryRow) => inventoryRecord(r, classNames),
  );
}

export function inventoryRecord(r: InventoryRow, classNames: ReadonlyMap<number, string>): InventoryRec {
  return {
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
  };
}

export interface AllocationRow {
  readonly id: number;
  readonly resource_provider_id: number;
  readonly consumer_id: string;
  readonly resource_class_id: number;
  readonly used: number;
}

export const ALLOCATION_COLUMNS = ['id', 'resource_provider_id', 'consumer_id', 'resource_class_id', 'used'] as const;

function allocationRecord(r: AllocationRow, classNames: ReadonlyMap<number, string>, consumerUuid: string): AllocationRec {
  return {
    id: Number(r.id),
    providerId: Number(r.resource_provider_id),
    consumerUuid,
    resourceClassId: Number(r.resource_class_id),
    resourceClass: className(classNames, Number(r.resource_class_id)),
    used: Number(r.used),
  };
}

async function readAllocations(db: Knex, classNames: ReadonlyMap<number, string>, pool: StringPool): Promise<AllocationRec[]> {
  return readTable(db, { table: 'allocations', columns: ALLOCATION_COLUMNS }, (r: AllocationRow) => allocationRecord(r, classNames, pool.get(r.consumer_id)));
}

/**
 * Every allocation, handed to `onConsumer` one consumer at a time: all of a
 * consumer's rows in one call. The rows are read in keyset pages in
 * (consumer_id, id) order, which allocations_consumer_id_idx serves (InnoDB's
 * secondary index carries the primary key), the next page asked for while
 * the current one is checked. Only the consumer being gathered is held,
 * never the table.
 *
 * The database orders consumer_id by its collation (MariaDB:
 * utf8mb4_general_ci, case- and trailing-space-insensitive; SQLite: binary),
 * so a consumer's rows may be interleaved with those of an id that differs
 * only in case: rows are gathered per run of ids equal under that folding
 * (hostKey) and split by exact id when the run ends. For ids of ASCII
 * letters, digits and dashes (every uuid) that folding is the collation's,
 * and each consumer comes once. The collation also takes 'á' for 'a' and
 * 'x ' for 'x': a hand-written id that differs from another only so can make
 * a consumer come twice, which the caller must refuse (the audit does:
 * domain/audit/consumer-allocations.ts). Returns the number of rows read.
 */
export async function streamAllocationsByConsumer(
  db: Knex,
  onConsumer: (consumerUuid: string, allocations: AllocationRec[]) => void,
  batchSize: number = KEYSET_BATCH,
): Promise<number> {
  const classNames = await readNames(db, 'resource_classes');
  const page = (after: AllocationRow | undefined): Promise<AllocationRow[]> => {
    const q = db('allocations').select(...ALLOCATION_COLUMNS);
    // (consumer_id, id) > (after): written so that the range on consumer_id uses the index.
    if (after !== undefined)
      q.where('consumer_id', '>=', after.consumer_id).andWhere((w) => w.where('consumer_id', '>', after.consumer_id).orWhere('id', '>', Number(after.id)));
    return q.orderBy([{ column: 'consumer_id' }, { column: 'id' }]).limit(batchSize) as unknown as Promise<AllocationRow[]>;
  };
  let run = new Map<string, AllocationRec[]>();
  let runKey: string | undefined;
  const flush = (): void => {
    for (const [consumerUuid, rows] of run) onConsumer(consumerUuid, rows);
    run = new Map();
  };
  let total = 0;
  let next: Promise<AllocationRow[]> | undefined = page(undefined);
  while (next !== undefined) {
    const rows: AllocationRow[] = await next;
    const last = rows[rows.length - 1];
    // Asked for before this page is checked: the database works while we do.
    next = rows.length < batchSize || last === undefined ? undefined : page(last);
    // Handled now: a check that throws must not leave it to fail unhandled.
    next?.catch(() => undefined);
    total += rows.length;
    for (const r of rows) {
      const key = hostKey(r.consumer_id);
      if (key !== runKey) {
        flush();
        runKey = key;
      }
      pushTo(run, r.consumer_id, allocationRecord(r, classNames, r.consumer_id));
    }
  }
  flush();
  return total;
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
    { table: 'consumers', columns: CONSUMER_COLUMNS },
    (r: ConsumerRow) => consumerRecord(r, pool),
  );
}

const CONSUMER_COLUMNS = ['id', 'uuid', 'generation', 'project_id', 'user_id'] as const;

function consumerRecord(r: ConsumerRow, pool: StringPool): ConsumerRec {
  return { id: Number(r.id), uuid: pool.get(r.uuid), generation: Number(r.generation), projectId: Number(r.project_id), userId: Number(r.user_id) };
}

/**
 * Every allocation of these consumers, in id order, by IN lists of at most
 * BATCH_SIZE. An id is asked as the database compares it, so an id its
 * collation takes for another brings that one's rows too: callers look up
 * by exact id.
 */
export async function readAllocationsOfConsumers(db: Knex, pool: StringPool, classNames: ReadonlyMap<number, string>, uuids: readonly string[]): Promise<AllocationRec[]> {
  const byId = new Map<number, AllocationRec>();
  for (const batch of chunk(uuids))
    for (const r of (await db('allocations').select(...ALLOCATION_COLUMNS).whereIn('consumer_id', batch)) as AllocationRow[]) byId.set(Number(r.id), allocationRecord(r, classNames, pool.get(r.consumer_id)));
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** The consumer rows of these uuids, in id order (asked as readAllocationsOfConsumers asks). */
export async function readConsumersOf(db: Knex, pool: StringPool, uuids: readonly string[]): Promise<ConsumerRec[]> {
  const byId = new Map<number, ConsumerRec>();
  for (const batch of chunk(uuids)) for (const r of (await db('consumers').select(...CONSUMER_COLUMNS).whereIn('uuid', batch)) as ConsumerRow[]) byId.set(Number(r.id), consumerRecord(r, pool));
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/**
 * A planner's placement rows, after the 'audit' read of `base` (every
 * provider, the inventories of root providers without COMPUTE_NODE): the
 * allocations and inventories of `providerIds`, every consumer with an
 * allocation on one of them, and all of those consumers' allocations and
 * consumer rows (PlacementSnapshot.scope). Each table is asked by IN lists of
 * at most BATCH_SIZE. A consumer id is asked as the database compares it, so
 * an id its collation takes for another brings that one's rows too (MariaDB:
 * 'ABC' with 'abc'); both are then held whole and both are in the scope.
 */
export async function readPlacementScope(db: Knex, pool: StringPool, base: PlacementSnapshot, providerIds: readonly number[]): Promise<PlacementSnapshot> {
  const classNames = await readNames(db, 'resource_classes');
  const ids = [...new Set(providerIds)];
  const byId = new Map<number, AllocationRec>();
  const keep = (rows: readonly AllocationRow[]): void => {
    for (const r of rows) if (!byId.has(Number(r.id))) byId.set(Number(r.id), allocationRecord(r, classNames, pool.get(r.consumer_id)));
  };
  const inventories = new Map(base.inventories.map((inv) => [inv.id, inv]));
  for (const batch of chunk(ids)) {
    keep((await db('allocations').select(...ALLOCATION_COLUMNS).whereIn('resource_provider_id', batch)) as AllocationRow[]);
    for (const r of (await db('inventories').select(...INVENTORY_COLUMNS).whereIn('resource_provider_id', batch)) as InventoryRow[]) inventories.set(Number(r.id), inventoryRecord(r, classNames));
  }
  const asked = [...new Set([...byId.values()].map((a) => a.consumerUuid))];
  for (const batch of chunk(asked)) keep((await db('allocations').select(...ALLOCATION_COLUMNS).whereIn('consumer_id', batch)) as AllocationRow[]);
  const consumerUuids = new Set([...byId.values()].map((a) => a.consumerUuid));
  const consumers = new Map<number, ConsumerRec>();
  for (const batch of chunk([...consumerUuids])) {
    for (const r of (await db('consumers').select(...CONSUMER_COLUMNS).whereIn('uuid', batch)) as ConsumerRow[]) consumers.set(Number(r.id), consumerRecord(r, pool));
  }
  return {
    providers: base.providers,
    ...(base.named === undefined ? {} : { named: base.named }),
    inventories: [...inventories.values()].sort((a, b) => a.id - b.id),
    allocations: [...byId.values()].sort((a, b) => a.id - b.id),
    consumers: [...consumers.values()].sort((a, b) => a.id - b.id),
    scope: { providerIds: new Set(ids), consumerUuids },
  };
}
