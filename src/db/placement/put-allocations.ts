// A consumer's allocations replaced as PUT /allocations/{consumer} replaces
// them (Placement 8.0.0), written directly: used by
// `placement heal_allocations`. Under lock, in the caller's transaction:
// the consumer (absent, or at its planned generation), its current rows (as
// planned), every provider of the new set (at its planned generation) and
// the capacity of each (provider, class) are re-checked; then the old rows
// go, the new ones are inserted, projects and users are get-or-created, the
// consumer is created at generation 1 (Placement creates it at 0 and bumps
// it in the same transaction) or bumped, and each provider of the new set is
// bumped once. Returns the row images for the journal; undo is generic.
import type { Knex } from 'knex';
import { checkCapacity } from '../../domain/capacity.js';
import type { Change } from '../../domain/plan.js';
import type { Dialect } from '../connect.js';
import { CasConflict, normaliseRow, selectForUpdate, updatedImage, type Row, type RowImage } from '../row-images.js';
import { inventoryLimits } from './move-allocations.js';

export type PutAllocationsExpect = Omit<Extract<Change, { kind: 'put-allocations' }>, 'kind' | 'target'>;

export async function putAllocations(trx: Knex.Transaction, dialect: Dialect, expect: PutAllocationsExpect, now: string): Promise<RowImage[]> {
  const c = expect.consumerUuid;
  const [consumer] = await selectForUpdate(trx, dialect, 'consumers', { uuid: c });
  if (expect.consumerGeneration === null && consumer !== undefined) throw new CasConflict(`consumer ${c} appeared since planning (generation ${String(consumer['generation'])})`);
  if (expect.consumerGeneration !== null) {
    if (consumer === undefined) throw new CasConflict(`consumer ${c} no longer exists`);
    if (Number(consumer['generation']) !== expect.consumerGeneration)
      throw new CasConflict(`consumer ${c} generation is ${String(consumer['generation'])}, planned ${expect.consumerGeneration}`);
  }
  const held = await selectForUpdate(trx, dialect, 'allocations', { consumer_id: c });
  const key = (p: unknown, rc: unknown, used: unknown): string => `${Number(p)}:${Number(rc)}:${Number(used)}`;
  const heldKeys = held.map((r) => key(r['resource_provider_id'], r['resource_class_id'], r['used'])).sort();
  const plannedKeys = expect.replaces.map((r) => key(r.providerId, r.resourceClassId, r.used)).sort();
  if (heldKeys.join(',') !== plannedKeys.join(',')) throw new CasConflict(`the allocations of consumer ${c} changed since planning`);

  const providers = new Map<number, Row>();
  for (const a of expect.allocations) {
    if (providers.has(a.providerId)) continue;
    const [rp] = await selectForUpdate(trx, dialect, 'resource_providers', { id: a.providerId });
    if (rp === undefined) throw new CasConflict(`resource provider ${a.providerUuid} no longer exists`);
    if (rp['uuid'] !== a.providerUuid) throw new CasConflict(`resource provider ${a.providerUuid} was re-keyed to ${String(rp['uuid'])}`);
    if (Number(rp['generation']) !== a.providerGeneration)
      throw new CasConflict(`resource provider ${a.providerUuid} generation is ${String(rp['generation'])}, planned ${a.providerGeneration}`);
    providers.set(a.providerId, rp);
  }
  await checkCapacities(trx, dialect, expect);

  const images: RowImage[] = [];
  const project = await getOrCreate(trx, 'projects', expect.projectExternalId, now);
  const user = await getOrCreate(trx, 'users', expect.userExternalId, now);

  for (const row of held) images.push({ table: 'allocations', key: { id: Number(row['id']) }, before: row, after: null });
  if (held.length > 0)
    await trx('allocations')
      .delete()
      .whereIn(
        'id',
        held.map((r) => Number(r['id'])),
      );
  for (const a of expect.allocations) {
    const row = { created_at: now, updated_at: null, resource_provider_id: a.providerId, consumer_id: c, resource_class_id: a.resourceClassId, used: a.used };
    const id = await insertId(trx, 'allocations', row);
    images.push({ table: 'allocations', key: { id }, before: null, after: normaliseRow({ id, ...row }) });
  }

  if (consumer === undefined) {
    const row = { created_at: now, updated_at: now, uuid: c, project_id: project, user_id: user, generation: 1, consumer_type_id: null };
    const id = await insertId(trx, 'consumers', row);
    images.push({ table: 'consumers', key: { id }, before: null, after: normaliseRow({ id, ...row }) });
  } else {
    const generation = Number(consumer['generation']);
    const values = { project_id: project, user_id: user, generation: generation + 1, updated_at: now };
    const n = await trx('consumers').update(values).where({ id: Number(consumer['id']), generation });
    if (n !== 1) throw new CasConflict(`consumer ${c} changed while its allocations were written`);
    images.push({ table: 'consumers', key: { id: Number(consumer['id']) }, before: consumer, after: updatedImage(consumer, values) });
  }

  for (const [id, rp] of [...providers].sort(([a], [b]) => a - b)) {
    const generation = Number(rp['generation']);
    const values = { generation: generation + 1, updated_at: now };
    const n = await trx('resource_providers').update(values).where({ id, generation });
    if (n !== 1) throw new CasConflict(`resource provider ${String(rp['uuid'])} generation changed`);
    images.push({ table: 'resource_providers', key: { id }, before: rp, after: updatedImage(rp, values) });
  }
  return images;
}

async function checkCapacities(trx: Knex.Transaction, dialect: Dialect, expect: PutAllocationsExpect): Promise<void> {
  const sums = new Map<string, { providerId: number; providerUuid: string; classId: number; name: string; amount: number }>();
  for (const a of expect.allocations) {
    const k = `${a.providerId}:${a.resourceClassId}`;
    const cur = sums.get(k);
    sums.set(k, { providerId: a.providerId, providerUuid: a.providerUuid, classId: a.resourceClassId, name: a.resourceClass, amount: (cur?.amount ?? 0) + a.used });
  }
  for (const s of [...sums.values()].sort((a, b) => a.providerId - b.providerId || a.classId - b.classId)) {
    const [inv] = await selectForUpdate(trx, dialect, 'inventories', { resource_provider_id: s.providerId, resource_class_id: s.classId });
    const others = await trx('allocations')
      .sum({ used: 'used' })
      .where({ resource_provider_id: s.providerId, resource_class_id: s.classId })
      .andWhereNot('consumer_id', expect.consumerUuid)
      .first();
    const verdict = checkCapacity(
      inv === undefined ? undefined : inventoryLimits(inv),
      {
        resourceClass: s.name,
        providerUuid: s.providerUuid,
        amount: s.amount,
        usedByOthers: Number((others as { used?: unknown } | undefined)?.used ?? 0),
        ownIronicInstance: expect.capacityException !== null,
      },
    );
    if (!verdict.ok) throw new CasConflict(verdict.reason);
  }
}

/**
 * Placement get-or-creates projects and users on allocation writes and never
 * deletes them. Their rows are not journaled, so undo leaves them too: once
 * created, another consumer may point at them, and deleting a row a consumer
 * references would break every read of that consumer.
 */
async function getOrCreate(trx: Knex.Transaction, table: 'projects' | 'users', externalId: string, now: string): Promise<number> {
  const found = (await trx(table).select('id').where('external_id', externalId).first()) as { id: unknown } | undefined;
  if (found !== undefined) return Number(found.id);
  return insertId(trx, table, { created_at: now, updated_at: null, external_id: externalId });
}

async function insertId(trx: Knex.Transaction, table: string, row: Readonly<Record<string, unknown>>): Promise<number> {
  const result: unknown = await trx(table).insert(row);
  const id = Array.isArray(result) ? Number(result[0]) : Number.NaN;
  if (!Number.isInteger(id) || id <= 0) throw new Error(`insert into ${table} returned no id`);
  return id;
}
