// Rows of the placement database: resource classes, traits, providers,
// inventories, consumers and allocations.
import type { Knex } from 'knex';
import { utcNowString } from '../../db/time.js';
import { chunk } from '../../db/batches.js';
import { FIRST_CUSTOM_RESOURCE_CLASS_ID, STANDARD_RESOURCE_CLASSES } from '../../domain/resource-classes.js';
import { knexDialect } from '../../db/knex-factory.js';
import { INSERT_CHUNK, insertMany, insertManyReturningIds, insertOne, type Row } from './common.js';

export { FIRST_CUSTOM_RESOURCE_CLASS_ID, STANDARD_RESOURCE_CLASSES };

/**
 * The id of a resource class, creating it if missing: a standard class at its
 * standard id, a CUSTOM_ one at max(10000, max(id) + 1) as Placement's
 * ResourceClass._get_next_id does.
 */
export async function ensureResourceClass(placement: Knex, name: string): Promise<number> {
  const existing = await placement('resource_classes').select('id').where('name', name).first();
  if (existing !== undefined) return Number((existing as { id: number }).id);
  const standardId = STANDARD_RESOURCE_CLASSES.indexOf(name);
  if (standardId < 0 && !name.startsWith('CUSTOM_')) {
    throw new Error(`resource class ${name} is neither a standard class nor CUSTOM_*`);
  }
  return placement.transaction(async (trx) => {
    let id = standardId;
    if (id < 0) {
      const row = (await trx('resource_classes').max({ max: 'id' }).first()) as { max: number | string | null } | undefined;
      const max = row?.max === null || row?.max === undefined ? -1 : Number(row.max);
      id = Math.max(FIRST_CUSTOM_RESOURCE_CLASS_ID, max + 1);
    }
    const row: Row = { id, name, created_at: utcNowString(), updated_at: null };
    if (id === 0 && knexDialect(trx) === 'mysql') {
      // VCPU's id 0 would mean "next auto-increment value" to MySQL; Placement
      // inserts it under NO_AUTO_VALUE_ON_ZERO. The transaction pins the
      // connection, so the session change stays on it and is undone below.
      await trx.raw('SET @nr_saved_sql_mode = @@SESSION.sql_mode');
      await trx.raw("SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO')");
      try {
        await trx('resource_classes').insert(row);
      } finally {
        await trx.raw('SET SESSION sql_mode = @nr_saved_sql_mode');
      }
    } else {
      await trx('resource_classes').insert(row);
    }
    return id;
  });
}

/** The ids of several resource classes, each created if missing. */
export async function ensureResourceClasses(placement: Knex, names: Iterable<string>): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const name of new Set(names)) ids.set(name, await ensureResourceClass(placement, name));
  return ids;
}

/** Get-or-create a trait by name (standard traits too: they are inserted at API start with auto-increment ids). */
export async function ensureTrait(placement: Knex, name: string): Promise<number> {
  const existing = await placement('traits').select('id').where('name', name).first();
  if (existing !== undefined) return Number((existing as { id: number }).id);
  return insertOne(placement, 'traits', { name, created_at: utcNowString(), updated_at: null });
}

async function getOrCreateExternal(placement: Knex, table: 'projects' | 'users', externalId: string): Promise<number> {
  const existing = await placement(table).select('id').where('external_id', externalId).first();
  if (existing !== undefined) return Number((existing as { id: number }).id);
  return insertOne(placement, table, { external_id: externalId, created_at: utcNowString(), updated_at: null });
}

/** Placement's projects row for a Keystone project id; rows are never deleted. */
export async function getOrCreateProject(placement: Knex, externalId: string): Promise<number> {
  return getOrCreateExternal(placement, 'projects', externalId);
}

export async function getOrCreateUser(placement: Knex, externalId: string): Promise<number> {
  return getOrCreateExternal(placement, 'users', externalId);
}

export interface ResourceProviderSpec {
  readonly uuid: string;
  /** Nova names a compute node's provider by its hypervisor_hostname. */
  readonly name: string;
  /** Placement starts at 0 and bumps it on every inventory, trait or allocation write (nova-facts §8.2). */
  readonly generation?: number;
  /** The parent provider's id; omitted for a root. */
  readonly parentId?: number;
  readonly createdAt?: string;
}

function providerRow(spec: ResourceProviderSpec, now: string): Row {
  const createdAt = spec.createdAt ?? now;
  return {
    created_at: createdAt,
    // Setting root_provider_id is an ORM save in the creating transaction, so
    // a new provider already has updated_at; so does every generation bump.
    updated_at: createdAt,
    uuid: spec.uuid,
    name: spec.name,
    generation: spec.generation ?? 0,
    root_provider_id: null,
    parent_provider_id: spec.parentId ?? null,
  };
}

/**
 * A provider as ResourceProvider._create_in_db makes it: a root gets
 * root_provider_id = its own id right after the insert, in the same
 * transaction; a child gets its parent's root.
 */
export async function insertResourceProvider(placement: Knex, spec: ResourceProviderSpec): Promise<number> {
  return placement.transaction(async (trx) => {
    const id = await insertOne(trx, 'resource_providers', providerRow(spec, utcNowString()));
    const rootId = spec.parentId === undefined ? id : await rootOf(trx, spec.parentId);
    await trx('resource_providers').update({ root_provider_id: rootId }).where('id', id);
    return id;
  });
}

async function rootOf(placement: Knex, providerId: number): Promise<number> {
  const row = (await placement('resource_providers').select('root_provider_id').where('id', providerId).first()) as
    | { root_provider_id: number | null }
    | undefined;
  if (row === undefined || row.root_provider_id === null) throw new Error(`parent resource provider ${providerId} has no root`);
  return Number(row.root_provider_id);
}

/** Many providers: one multi-row insert and one root update per chunk, in one transaction. */
export async function insertResourceProviders(placement: Knex, specs: readonly ResourceProviderSpec[]): Promise<number[]> {
  if (specs.length === 0) return [];
  const now = utcNowString();
  return placement.transaction(async (trx) => {
    const ids = await insertManyReturningIds(trx, 'resource_providers', 'uuid', specs.map((s) => providerRow(s, now)));
    const roots: number[] = [];
    const children: Array<{ id: number; parentId: number }> = [];
    specs.forEach((s, i) => {
      const id = ids[i];
      if (id === undefined) return;
      if (s.parentId === undefined) roots.push(id);
      else children.push({ id, parentId: s.parentId });
    });
    for (const batch of chunk(roots, INSERT_CHUNK)) {
      await trx('resource_providers').update({ root_provider_id: trx.ref('id') }).whereIn('id', batch);
    }
    for (const c of children) {
      await trx('resource_providers').update({ root_provider_id: await rootOf(trx, c.parentId) }).where('id', c.id);
    }
    return ids;
  });
}

export interface InventorySpec {
  readonly providerId: number;
  readonly resourceClass: string;
  readonly total: number;
  readonly reserved?: number;
  readonly minUnit?: number;
  /** Default: total (what Nova's drivers report); Placement's own default is 2147483647. */
  readonly maxUnit?: number;
  readonly stepSize?: number;
  readonly allocationRatio?: number;
  readonly createdAt?: string;
}

function inventoryRow(spec: InventorySpec, classId: number, now: string): Row {
  return {
    created_at: spec.createdAt ?? now,
    updated_at: null,
    resource_provider_id: spec.providerId,
    resource_class_id: classId,
    total: spec.total,
    reserved: spec.reserved ?? 0,
    min_unit: spec.minUnit ?? 1,
    max_unit: spec.maxUnit ?? spec.total,
    step_size: spec.stepSize ?? 1,
    allocation_ratio: spec.allocationRatio ?? 1.0,
  };
}

export async function insertInventories(placement: Knex, specs: readonly InventorySpec[]): Promise<void> {
  const classes = await ensureResourceClasses(placement, specs.map((s) => s.resourceClass));
  const now = utcNowString();
  await insertMany(placement, 'inventories', specs.map((s) => inventoryRow(s, classes.get(s.resourceClass) ?? -1, now)));
}

/** resource_provider_traits rows (no timestamps are read, but Placement writes created_at). */
export async function insertProviderTraits(placement: Knex, providerId: number, traitNames: readonly string[]): Promise<void> {
  const now = utcNowString();
  const rows: Row[] = [];
  for (const name of new Set(traitNames)) {
    rows.push({ trait_id: await ensureTrait(placement, name), resource_provider_id: providerId, created_at: now, updated_at: null });
  }
  await insertMany(placement, 'resource_provider_traits', rows);
}

export interface ConsumerSpec {
  /** The instance or migration uuid. */
  readonly uuid: string;
  /** Keystone ids; the projects/users rows are get-or-created. */
  readonly projectId: string;
  readonly userId: string;
  /** 1 after the first allocation write (created at 0 and bumped in the same transaction). */
  readonly generation?: number;
  readonly createdAt?: string;
}

/** A consumer as the first allocation write creates it; consumer_type_id stays NULL for Nova's consumers. */
export async function insertConsumer(placement: Knex, spec: ConsumerSpec): Promise<number> {
  const projectId = await getOrCreateProject(placement, spec.projectId);
  const userId = await getOrCreateUser(placement, spec.userId);
  const createdAt = spec.createdAt ?? utcNowString();
  const generation = spec.generation ?? 1;
  return insertOne(placement, 'consumers', {
    created_at: createdAt,
    updated_at: generation > 0 ? createdAt : null,
    uuid: spec.uuid,
    project_id: projectId,
    user_id: userId,
    generation,
    consumer_type_id: null,
  });
}

export interface AllocationSpec {
  readonly providerId: number;
  /** allocations.consumer_id holds the consumer's uuid. */
  readonly consumerUuid: string;
  readonly resourceClass: string;
  readonly used: number;
  readonly createdAt?: string;
}

function allocationRow(spec: AllocationSpec, classId: number, now: string): Row {
  return {
    created_at: spec.createdAt ?? now,
    updated_at: null,
    resource_provider_id: spec.providerId,
    consumer_id: spec.consumerUuid,
    resource_class_id: classId,
    used: spec.used,
  };
}

export async function insertAllocation(placement: Knex, spec: AllocationSpec): Promise<number> {
  const classId = await ensureResourceClass(placement, spec.resourceClass);
  return insertOne(placement, 'allocations', allocationRow(spec, classId, utcNowString()));
}

export async function insertAllocations(placement: Knex, specs: readonly AllocationSpec[]): Promise<void> {
  const classes = await ensureResourceClasses(placement, specs.map((s) => s.resourceClass));
  const now = utcNowString();
  await insertMany(placement, 'allocations', specs.map((s) => allocationRow(s, classes.get(s.resourceClass) ?? -1, now)));
}
