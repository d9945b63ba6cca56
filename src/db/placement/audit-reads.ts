// What `placement audit` reads of placement when it judges one cell at a
// time (operations/read/placement-audit.ts): the provider trees of a cell's
// compute nodes, the allocations on them (three columns), and every listed
// provider in keyset pages of two columns. The rows of the consumers left to
// judge at the end are read in full by snapshot-reads.ts
// (readAllocationsOfConsumers, readConsumersOf, readProvidersById).
import type { Knex } from 'knex';
import { chunk } from '../batches.js';
import { KEYSET_BATCH } from '../keyset.js';
import { ALLOCATION_COLUMNS, type AllocationRow } from './snapshot-reads.js';

/** A provider and the uuid of its root: what GET /resource_providers lists (a provider whose root row is missing is not listed). */
export interface ListedProvider {
  readonly id: number;
  readonly rootUuid: string;
}

/**
 * The providers whose root's uuid is one of `rootUuids`, with that uuid,
 * by IN lists of at most BATCH_SIZE. A uuid is asked as the database
 * compares it, so a superset may come back: the caller matches exactly.
 */
export async function readTreesOfRoots(db: Knex, rootUuids: readonly string[]): Promise<ListedProvider[]> {
  const out: ListedProvider[] = [];
  for (const batch of chunk(rootUuids)) {
    const rows = (await db('resource_providers as p').join('resource_providers as r', 'r.id', 'p.root_provider_id').select('p.id', { root_uuid: 'r.uuid' }).whereIn('r.uuid', batch)) as Array<{ id: number; root_uuid: string }>;
    for (const r of rows) out.push({ id: Number(r.id), rootUuid: r.root_uuid });
  }
  return out;
}

/** Every allocation on these providers, as (provider, consumer, class) only, handed over batch by batch of providers. */
export async function eachAllocationOn(db: Knex, providerIds: readonly number[], onRow: (providerId: number, consumerUuid: string, resourceClassId: number) => void): Promise<void> {
  for (const batch of chunk(providerIds)) {
    const rows = (await db('allocations').select('resource_provider_id', 'consumer_id', 'resource_class_id').whereIn('resource_provider_id', batch)) as Array<{
      resource_provider_id: number;
      consumer_id: string;
      resource_class_id: number;
    }>;
    for (const r of rows) onRow(Number(r.resource_provider_id), r.consumer_id, Number(r.resource_class_id));
  }
}

/** Every listed provider (its root row exists), in id order, in keyset pages: `onPage` gets each page. */
export async function eachListedProvider(db: Knex, onPage: (rows: readonly ListedProvider[]) => void): Promise<void> {
  let afterId = -1;
  for (;;) {
    const rows = (await db('resource_providers as p')
      .join('resource_providers as r', 'r.id', 'p.root_provider_id')
      .select('p.id', { root_uuid: 'r.uuid' })
      .where('p.id', '>', afterId)
      .orderBy('p.id')
      .limit(KEYSET_BATCH)) as Array<{ id: number; root_uuid: string }>;
    const last = rows[rows.length - 1];
    if (last === undefined) return;
    onPage(rows.map((r) => ({ id: Number(r.id), rootUuid: r.root_uuid })));
    if (rows.length < KEYSET_BATCH) return;
    afterId = Number(last.id);
  }
}

/** A provider's keys and its root's, as the audit by cell sorts providers to cells (operations/read/audit-by-cell.ts). */
export interface ProviderKeys {
  readonly id: number;
  readonly uuid: string;
  readonly name: string | null;
  /** Null when the provider's root row is missing. */
  readonly rootUuid: string | null;
  readonly rootName: string | null;
}

/** Every provider with its root's uuid and name, in id order, in keyset pages: `onPage` gets each page. */
export async function eachProviderKeys(db: Knex, onPage: (rows: readonly ProviderKeys[]) => void): Promise<void> {
  let afterId = -1;
  for (;;) {
    const rows = (await db('resource_providers as p')
      .leftJoin('resource_providers as r', 'r.id', 'p.root_provider_id')
      .select('p.id', 'p.uuid', 'p.name', { root_uuid: 'r.uuid', root_name: 'r.name' })
      .where('p.id', '>', afterId)
      .orderBy('p.id')
      .limit(KEYSET_BATCH)) as Array<{ id: number; uuid: string; name: string | null; root_uuid: string | null; root_name: string | null }>;
    const last = rows[rows.length - 1];
    if (last === undefined) return;
    onPage(rows.map((r) => ({ id: Number(r.id), uuid: r.uuid, name: r.name, rootUuid: r.root_uuid, rootName: r.root_name })));
    if (rows.length < KEYSET_BATCH) return;
    afterId = Number(last.id);
  }
}

/** An allocation's columns, as the audit by cell holds them (domain/allocation-columns.ts). */
export type OnAllocationRow = (id: number, providerId: number, consumerUuid: string, resourceClassId: number, used: number) => void;


/** Every allocation on these providers, handed over row by row (by IN lists of at most BATCH_SIZE). */
export async function eachAllocationRowOn(db: Knex, providerIds: readonly number[], onRow: OnAllocationRow): Promise<void> {
  for (const batch of chunk(providerIds)) for (const r of (await db('allocations').select(...ALLOCATION_COLUMNS).whereIn('resource_provider_id', batch)) as AllocationRow[]) handOver(r, onRow);
}

/**
 * Every allocation of these consumers, row by row, each row once. An id is
 * asked as the database compares it, so the caller keeps the ids it asked
 * for exactly; and a row of 'ABC' comes back for 'abc' too (MariaDB), so one
 * that came for an id of an earlier batch is not handed over again.
 */
export async function eachAllocationRowOf(db: Knex, consumerUuids: readonly string[], onRow: OnAllocationRow): Promise<void> {
  const seen = new Set<number>();
  for (const batch of chunk(consumerUuids))
    for (const r of (await db('allocations').select(...ALLOCATION_COLUMNS).whereIn('consumer_id', batch)) as AllocationRow[]) {
      if (seen.has(Number(r.id))) continue;
      seen.add(Number(r.id));
      handOver(r, onRow);
    }
}

function handOver(r: AllocationRow, onRow: OnAllocationRow): void {
  onRow(Number(r.id), Number(r.resource_provider_id), r.consumer_id, Number(r.resource_class_id), Number(r.used));
}
