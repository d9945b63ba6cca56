// Compare-and-swap writes of the rebalance repair in the placement
// database: moving a consumer's allocation rows from a stale provider to the
// canonical one, and renaming a provider to its node's name. Both run in the
// caller's transaction, re-read every row they depend on under lock, and
// return before/after images for the journal (undo is generic over them).
import type { Knex } from 'knex';
import { checkCapacity, type InventoryLimits } from '../../domain/capacity.js';
import type { AllocationPart, Change } from '../../domain/plan.js';
import type { Dialect } from '../connect.js';
import { CasConflict, normaliseRow, selectForUpdate, type Row, type RowImage } from '../row-images.js';

/** What the plan expects, exactly the change's own fields. */
export type MoveAllocationsExpect = Omit<Extract<Change, { kind: 'move-allocations' }>, 'kind' | 'target'>;

/**
 * The rows keep their ids and amounts and change provider, which is what a
 * PUT of the consumer's allocations naming the canonical provider instead of
 * the stale one leaves behind. Generations move as Placement moves them: the
 * consumer + 1 and each provider of the new set + 1; the source is not bumped.
 */
export async function moveAllocations(trx: Knex.Transaction, dialect: Dialect, expect: MoveAllocationsExpect, now: string): Promise<RowImage[]> {
  const [consumer] = await selectForUpdate(trx, dialect, 'consumers', { uuid: expect.consumerUuid });
  if (consumer === undefined) throw new CasConflict(`consumer ${expect.consumerUuid} no longer exists`);
  if (Number(consumer['generation']) !== expect.consumerGeneration)
    throw new CasConflict(`consumer ${expect.consumerUuid} generation is ${String(consumer['generation'])}, planned ${expect.consumerGeneration}`);
  const [source] = await selectForUpdate(trx, dialect, 'resource_providers', { id: expect.fromProviderId });
  if (source === undefined || source['uuid'] !== expect.fromProviderUuid) throw new CasConflict(`resource provider ${expect.fromProviderUuid} changed or no longer exists`);
  const [target] = await selectForUpdate(trx, dialect, 'resource_providers', { id: expect.toProviderId });
  if (target === undefined) throw new CasConflict(`resource provider ${expect.toProviderUuid} no longer exists`);
  if (target['uuid'] !== expect.toProviderUuid) throw new CasConflict(`resource provider ${expect.toProviderUuid} was re-keyed to ${String(target['uuid'])}`);
  if (Number(target['generation']) !== expect.toGeneration)
    throw new CasConflict(`resource provider ${expect.toProviderUuid} generation is ${String(target['generation'])}, planned ${expect.toGeneration}`);

  const moving = await selectForUpdate(trx, dialect, 'allocations', { consumer_id: expect.consumerUuid, resource_provider_id: expect.fromProviderId });
  if (!sameAllocations(moving, expect.allocations))
    throw new CasConflict(`allocations of consumer ${expect.consumerUuid} on provider ${expect.fromProviderUuid} changed`);
  await checkTargetCapacity(trx, dialect, expect);

  const ids = moving.map((r) => Number(r['id']));
  await trx('allocations').update({ resource_provider_id: expect.toProviderId, updated_at: now }).whereIn('id', ids);
  const images: RowImage[] = [];
  const movedAfter = new Map((await trx('allocations').select('*').whereIn('id', ids)).map((r: Record<string, unknown>) => [Number(r['id']), normaliseRow(r)]));
  for (const before of moving) images.push({ table: 'allocations', key: { id: Number(before['id']) }, before, after: movedAfter.get(Number(before['id'])) ?? null });

  const consumerId = Number(consumer['id']);
  const bumped = await trx('consumers')
    .update({ generation: expect.consumerGeneration + 1, updated_at: now })
    .where({ id: consumerId, generation: expect.consumerGeneration });
  if (bumped !== 1) throw new CasConflict(`consumer ${expect.consumerUuid} changed while its allocations moved`);
  images.push({ table: 'consumers', key: { id: consumerId }, before: consumer, after: await readRow(trx, 'consumers', consumerId) });

  // Every provider of the consumer's new allocation set, the target first (CAS on the planned generation).
  const setIds = (await trx('allocations').distinct('resource_provider_id').where('consumer_id', expect.consumerUuid)).map((r: Record<string, unknown>) => Number(r['resource_provider_id']));
  const others = setIds.filter((id) => id !== expect.toProviderId).sort((a, b) => a - b);
  images.push(await bumpGeneration(trx, target, expect.toGeneration, now));
  for (const id of others) {
    const [rp] = await selectForUpdate(trx, dialect, 'resource_providers', { id });
    if (rp === undefined) throw new CasConflict(`resource provider ${id} disappeared`);
    images.push(await bumpGeneration(trx, rp, Number(rp['generation']), now));
  }
  return images;
}

async function checkTargetCapacity(trx: Knex.Transaction, dialect: Dialect, expect: MoveAllocationsExpect): Promise<void> {
  const amounts = new Map<number, { name: string; amount: number }>();
  for (const a of expect.allocations) {
    const cur = amounts.get(a.resourceClassId);
    amounts.set(a.resourceClassId, { name: a.resourceClass, amount: (cur?.amount ?? 0) + a.used });
  }
  for (const [classId, { name, amount }] of [...amounts].sort(([a], [b]) => a - b)) {
    const [inv] = await selectForUpdate(trx, dialect, 'inventories', { resource_provider_id: expect.toProviderId, resource_class_id: classId });
    const mine = await trx('allocations').count({ n: '*' }).where({ resource_provider_id: expect.toProviderId, resource_class_id: classId, consumer_id: expect.consumerUuid }).first();
    if (Number((mine as { n?: unknown } | undefined)?.n ?? 0) > 0)
      throw new CasConflict(`consumer ${expect.consumerUuid} already holds ${name} on resource provider ${expect.toProviderUuid}`);
    const others = await trx('allocations')
      .sum({ used: 'used' })
      .where({ resource_provider_id: expect.toProviderId, resource_class_id: classId })
      .andWhereNot('consumer_id', expect.consumerUuid)
      .first();
    const usedByOthers = Number((others as { used?: unknown } | undefined)?.used ?? 0);
    const verdict = checkCapacity(inv === undefined ? undefined : inventoryLimits(inv), {
      resourceClass: name,
      providerUuid: expect.toProviderUuid,
      amount,
      usedByOthers,
      ownIronicInstance: expect.capacityException !== null,
    });
    if (!verdict.ok) throw new CasConflict(verdict.reason);
  }
}

export interface RenameProviderExpect {
  readonly providerId: number;
  readonly uuid: string;
  readonly fromName: string | null;
  readonly toName: string;
  readonly generation: number;
}

/** A rename, as PUT /resource_providers/{uuid} with a new name: the generation is not bumped (nova-facts §8.2). */
export async function renameProvider(trx: Knex.Transaction, dialect: Dialect, expect: RenameProviderExpect, now: string): Promise<RowImage[]> {
  const [rp] = await selectForUpdate(trx, dialect, 'resource_providers', { id: expect.providerId });
  if (rp === undefined) throw new CasConflict(`resource provider ${expect.uuid} no longer exists`);
  if (rp['uuid'] !== expect.uuid) throw new CasConflict(`resource provider ${expect.uuid} was re-keyed to ${String(rp['uuid'])}`);
  if (Number(rp['generation']) !== expect.generation) throw new CasConflict(`resource provider ${expect.uuid} generation is ${String(rp['generation'])}, planned ${expect.generation}`);
  if ((rp['name'] ?? null) !== expect.fromName) throw new CasConflict(`resource provider ${expect.uuid} was renamed to ${String(rp['name'])}`);
  // The name column is case-insensitive in Placement's MySQL schema; compare the same way on SQLite.
  const taken = await trx('resource_providers').select('uuid').whereRaw('LOWER(name) = LOWER(?)', [expect.toName]).andWhereNot('id', expect.providerId).first();
  if (taken !== undefined) throw new CasConflict(`resource provider ${String((taken as { uuid: unknown }).uuid)} holds the name ${expect.toName}`);
  const n = await trx('resource_providers').update({ name: expect.toName, updated_at: now }).where({ id: expect.providerId, generation: expect.generation });
  if (n !== 1) throw new CasConflict(`resource provider ${expect.uuid} changed while being renamed`);
  return [{ table: 'resource_providers', key: { id: expect.providerId }, before: rp, after: await readRow(trx, 'resource_providers', expect.providerId) }];
}

async function bumpGeneration(trx: Knex.Transaction, rp: Row, generation: number, now: string): Promise<RowImage> {
  const id = Number(rp['id']);
  const n = await trx('resource_providers').update({ generation: generation + 1, updated_at: now }).where({ id, generation });
  if (n !== 1) throw new CasConflict(`resource provider ${String(rp['uuid'])} generation changed`);
  return { table: 'resource_providers', key: { id }, before: rp, after: await readRow(trx, 'resource_providers', id) };
}

async function readRow(trx: Knex.Transaction, table: string, id: number): Promise<Row | null> {
  const [row] = (await trx(table).select('*').where({ id })).map(normaliseRow);
  return row ?? null;
}

/** An inventories row's capacity columns, as checkCapacity (domain/capacity.ts) takes them. */
export function inventoryLimits(row: Row): InventoryLimits {
  return {
    total: Number(row['total']),
    reserved: Number(row['reserved']),
    minUnit: Number(row['min_unit']),
    maxUnit: Number(row['max_unit']),
    stepSize: Number(row['step_size']),
    allocationRatio: Number(row['allocation_ratio']),
  };
}

function sameAllocations(rows: readonly Row[], expected: readonly AllocationPart[]): boolean {
  const key = (rc: unknown, used: unknown): string => `${Number(rc)}:${Number(used)}`;
  const a = rows.map((r) => key(r['resource_class_id'], r['used'])).sort();
  const b = expected.map((e) => key(e.resourceClassId, e.used)).sort();
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
