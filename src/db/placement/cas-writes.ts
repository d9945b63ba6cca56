// Compare-and-swap writes in the placement database, with Placement's own
// rules: a provider is deleted only without
// allocations and children, together with its inventories, trait links and
// aggregate links; allocation writes bump the consumer's generation and the
// generation of every provider left in its allocation set (and, beyond
// Placement, of the provider that lost them); a consumer with no
// allocations left is deleted. Each function runs in the caller's
// transaction and returns row images for the journal.
import type { Knex } from 'knex';
import type { Dialect } from '../connect.js';
import { CasConflict, lockedSelect, withLock, type Row, type RowImage } from '../row-images.js';
import { runStatements } from '../statement-batch.js';

export interface DeleteProviderExpect {
  readonly providerId: number;
  readonly uuid: string;
  readonly generation: number;
}

export async function deleteProvider(trx: Knex.Transaction, dialect: Dialect, expect: DeleteProviderExpect): Promise<RowImage[]> {
  return (await deleteProviders(trx, dialect, [expect]))[0] as RowImage[];
}

/**
 * deleteProvider of several providers (an apply batch's units: their
 * footprints are disjoint, so none is another's parent), in two round trips
 * in all (statement-batch.ts): every provider under lock with what would
 * block its deletion and the rows that go with it, then every delete. Any
 * conflict throws, and the caller's transaction is rolled back whole.
 */
export async function deleteProviders(trx: Knex.Transaction, dialect: Dialect, expects: readonly DeleteProviderExpect[]): Promise<RowImage[][]> {
  const READS = 6;
  const read = await runStatements(
    trx,
    expects.flatMap(({ providerId: id }) => [
      lockedSelect(trx, dialect, 'resource_providers', { id }),
      trx('resource_providers').count({ n: '*' }).where('parent_provider_id', id),
      trx('allocations').count({ n: '*' }).where('resource_provider_id', id),
      trx('inventories').select('*').where('resource_provider_id', id).orderBy('id'),
      trx('resource_provider_traits').select('*').where('resource_provider_id', id).orderBy('trait_id'),
      trx('resource_provider_aggregates').select('*').where('resource_provider_id', id).orderBy('aggregate_id'),
    ]),
  );
  const found = expects.map((expect, k) => {
    const at = k * READS;
    const [rp] = read.rows(at);
    if (rp === undefined) throw new CasConflict(`resource provider ${expect.uuid} no longer exists`);
    checkProvider(rp, expect.uuid, expect.generation);
    if (countOf(read.rows(at + 1)) > 0) throw new CasConflict(`resource provider ${expect.uuid} has child providers`);
    if (countOf(read.rows(at + 2)) > 0) throw new CasConflict(`resource provider ${expect.uuid} has allocations`);
    return { rp, inventories: read.rows(at + 3), traits: read.rows(at + 4), aggregates: read.rows(at + 5) };
  });

  const WRITES = 5;
  const written = await runStatements(
    trx,
    expects.flatMap(({ providerId: id, generation }) => [
      trx('inventories').delete().where('resource_provider_id', id),
      trx('resource_provider_traits').delete().where('resource_provider_id', id),
      trx('resource_provider_aggregates').delete().where('resource_provider_id', id),
      // The self-referencing root FK must be cleared before the row can go, as Placement does.
      trx('resource_providers').update({ root_provider_id: null }).where('id', id),
      trx('resource_providers').delete().where({ id, generation }),
    ]),
  );
  return expects.map((expect, k) => {
    const id = expect.providerId;
    const { rp, inventories, traits, aggregates } = found[k] as (typeof found)[number];
    const at = k * WRITES;
    // A row added since it was read would go without its image in the journal, and undo could not bring it back.
    if (written.affected(at) !== inventories.length || written.affected(at + 1) !== traits.length || written.affected(at + 2) !== aggregates.length)
      throw new CasConflict(`the inventories, traits or aggregates of resource provider ${expect.uuid} changed while it was being deleted`);
    if (written.affected(at + 4) !== 1) throw new CasConflict(`resource provider ${expect.uuid} changed while being deleted`);
    const images: RowImage[] = [];
    for (const row of inventories) images.push({ table: 'inventories', key: { id: Number(row['id']) }, before: row, after: null });
    for (const row of traits) images.push({ table: 'resource_provider_traits', key: { resource_provider_id: id, trait_id: Number(row['trait_id']) }, before: row, after: null });
    for (const row of aggregates) images.push({ table: 'resource_provider_aggregates', key: { resource_provider_id: id, aggregate_id: Number(row['aggregate_id']) }, before: row, after: null });
    images.push({ table: 'resource_providers', key: { id }, before: rp, after: null });
    return images;
  });
}

function countOf(rows: readonly Row[]): number {
  return Number(rows[0]?.['n'] ?? 0);
}

export interface RemoveAllocationsExpect {
  readonly consumerUuid: string;
  readonly consumerGeneration: number;
  readonly providerId: number;
  readonly providerUuid: string;
  readonly allocations: ReadonlyArray<{ readonly resourceClassId: number; readonly used: number }>;
}

export async function removeProviderAllocations(trx: Knex.Transaction, dialect: Dialect, expect: RemoveAllocationsExpect, now: string): Promise<RowImage[]> {
  return (await removeProviderAllocationsOfMany(trx, dialect, [expect], now))[0] as RowImage[];
}

/**
 * removeProviderAllocations of several consumers (an apply batch's units:
 * their footprints are disjoint, so no two of them share a consumer or a
 * provider, the ones bumped included), in two round trips in all
 * (statement-batch.ts): every consumer's rows under lock, then every write.
 * Any conflict throws, and the caller's transaction is rolled back whole.
 */
export async function removeProviderAllocationsOfMany(trx: Knex.Transaction, dialect: Dialect, expects: readonly RemoveAllocationsExpect[], now: string): Promise<RowImage[][]> {
  // Per consumer: the consumer, every allocation it holds, the providers they
  // are on and the one losing them, all under lock, in that order. The
  // providers are reached through the consumer's allocations (a join driven
  // by allocations' consumer_id index, then the primary key): an IN subquery
  // OR'ed with the id could make the server scan, and lock, every provider row.
  const READS = 4;
  const read = await runStatements(
    trx,
    expects.flatMap((expect) => [
      lockedSelect(trx, dialect, 'consumers', { uuid: expect.consumerUuid }),
      withLock(trx('allocations').select('*').where('consumer_id', expect.consumerUuid).orderBy('id'), dialect),
      lockedThroughAllocations(trx, dialect, { table: 'resource_providers', key: 'id', via: 'resource_provider_id' }, { 'allocations.consumer_id': expect.consumerUuid }),
      lockedSelect(trx, dialect, 'resource_providers', { id: expect.providerId }),
    ]),
  );
  const removals = expects.map((expect, k) => planRemoval(trx, expect, [read.rows(k * READS), read.rows(k * READS + 1), read.rows(k * READS + 2), read.rows(k * READS + 3)], now));
  const written = await runStatements(
    trx,
    removals.flatMap((r) => r.writes),
  );
  let at = 0;
  return removals.map((r) => {
    const images = r.check((i) => written.affected(at + i));
    at += r.writes.length;
    return images;
  });
}

interface Removal {
  /** The allocations' delete, the consumer's delete or bump, then each provider's bump. */
  readonly writes: readonly Knex.QueryBuilder[];
  /** The row images, once each write's affected-row count (by its index in `writes`) was as planned. */
  readonly check: (affected: (index: number) => number) => RowImage[];
}

function planRemoval(trx: Knex.Transaction, expect: RemoveAllocationsExpect, [consumers, held, reached, losingRows]: readonly (readonly Row[])[], now: string): Removal {
  const [consumer] = consumers as readonly Row[];
  if (consumer === undefined) throw new CasConflict(`consumer ${expect.consumerUuid} no longer exists`);
  if (Number(consumer['generation']) !== expect.consumerGeneration)
    throw new CasConflict(`consumer ${expect.consumerUuid} generation is ${String(consumer['generation'])}, planned ${expect.consumerGeneration}`);
  const allocations = held as readonly Row[];
  const mine = allocations.filter((r) => Number(r['resource_provider_id']) === expect.providerId);
  if (!sameAllocations(mine, expect.allocations)) throw new CasConflict(`allocations of consumer ${expect.consumerUuid} on provider ${expect.providerUuid} changed`);
  const providerById = new Map([...(reached as readonly Row[]), ...(losingRows as readonly Row[])].map((rp) => [Number(rp['id']), rp] as const));
  const losing = providerById.get(expect.providerId);
  if (losing === undefined) throw new CasConflict(`resource provider ${expect.providerId} disappeared`);
  const rest = allocations.filter((r) => Number(r['resource_provider_id']) !== expect.providerId);
  const consumerId = Number(consumer['id']);
  // A PUT of the remaining allocations bumps every provider in the new set.
  const others = [...new Set(rest.map((r) => Number(r['resource_provider_id'])))].sort((a, b) => a - b);
  const bumped = others.map((id) => {
    const rp = providerById.get(id);
    if (rp === undefined) throw new CasConflict(`resource provider ${id} disappeared`);
    return rp;
  });

  // The provider that lost the allocations is bumped too.
  // Placement itself leaves it alone, but a nova cache
  // that compares the generation then sees that its allocations changed.
  const bump = (rp: Row): Knex.QueryBuilder =>
    trx('resource_providers')
      .update({ generation: Number(rp['generation']) + 1, updated_at: now })
      .where({ id: Number(rp['id']), generation: Number(rp['generation']) });
  const writes = [
    trx('allocations')
      .delete()
      .whereIn(
        'id',
        mine.map((r) => Number(r['id'])),
      ),
    rest.length === 0
      ? trx('consumers').delete().where({ id: consumerId, generation: expect.consumerGeneration })
      : trx('consumers').update({ generation: expect.consumerGeneration + 1, updated_at: now }).where({ id: consumerId, generation: expect.consumerGeneration }),
    ...[losing, ...bumped].map(bump),
  ];
  const check = (affected: (index: number) => number): RowImage[] => {
    if (affected(0) !== mine.length) throw new CasConflict(`allocations of consumer ${expect.consumerUuid} on provider ${expect.providerUuid} changed while being removed`);
    if (affected(1) !== 1) throw new CasConflict(`consumer ${expect.consumerUuid} changed while its allocations were rewritten`);
    [losing, ...bumped].forEach((rp, i) => {
      if (affected(2 + i) !== 1) throw new CasConflict(`resource provider ${String(rp['uuid'])} generation changed`);
    });

    const bumpedImage = (rp: Row): RowImage => ({
      table: 'resource_providers',
      key: { id: Number(rp['id']) },
      before: rp,
      after: { ...rp, generation: Number(rp['generation']) + 1, updated_at: now },
    });
    const images: RowImage[] = mine.map((row) => ({ table: 'allocations', key: { id: Number(row['id']) }, before: row, after: null }));
    images.push(bumpedImage(losing));
    if (rest.length === 0) {
      images.push({ table: 'consumers', key: { id: consumerId }, before: consumer, after: null });
      return images;
    }
    images.push({ table: 'consumers', key: { id: consumerId }, before: consumer, after: { ...consumer, generation: expect.consumerGeneration + 1, updated_at: now } });
    for (const rp of bumped) images.push(bumpedImage(rp));
    return images;
  };
  return { writes, check };
}

export interface RekeyProviderExpect {
  readonly providerId: number;
  readonly fromUuid: string;
  readonly toUuid: string;
  readonly generation: number;
}

export async function rekeyProvider(trx: Knex.Transaction, dialect: Dialect, expect: RekeyProviderExpect, now: string): Promise<RowImage[]> {
  // One round trip (statement-batch.ts): the provider under lock, whether the new uuid is taken, and every
  // consumer with allocations on it, under lock, reached through allocations' provider index.
  const read = await runStatements(trx, [
    lockedSelect(trx, dialect, 'resource_providers', { id: expect.providerId }),
    trx('resource_providers').select('id').where('uuid', expect.toUuid),
    lockedThroughAllocations(trx, dialect, { table: 'consumers', key: 'uuid', via: 'consumer_id' }, { 'allocations.resource_provider_id': expect.providerId }),
  ]);
  const [rp] = read.rows(0);
  if (rp === undefined) throw new CasConflict(`resource provider ${expect.fromUuid} no longer exists`);
  checkProvider(rp, expect.fromUuid, expect.generation);
  if (read.rows(1).length > 0) throw new CasConflict(`a resource provider with uuid ${expect.toUuid} already exists`);
  // Every consumer whose allocations now name another provider uuid gets its
  // generation bumped, as any Placement write of its allocations does: a
  // client holding the old generation must re-read. The set is
  // the planned one: a change of it would have bumped the provider's
  // generation, which was compared above. A consumer holding several
  // allocations on it is joined once per allocation; allocations without a
  // consumer row have nothing to bump (the API does not show them).
  const consumers = [...new Map(read.rows(2).map((c) => [String(c['uuid']), c] as const)).values()];
  const after = { ...rp, uuid: expect.toUuid, generation: expect.generation + 1, updated_at: now };
  const written = await runStatements(trx, [
    trx('resource_providers')
      .update({ uuid: expect.toUuid, generation: expect.generation + 1, updated_at: now })
      .where({ id: expect.providerId, uuid: expect.fromUuid, generation: expect.generation }),
    ...consumers.map((c) =>
      trx('consumers')
        .update({ generation: Number(c['generation']) + 1, updated_at: now })
        .where({ id: Number(c['id']), generation: Number(c['generation']) }),
    ),
  ]);
  if (written.affected(0) !== 1) throw new CasConflict(`resource provider ${expect.fromUuid} changed while being re-keyed`);
  const images: RowImage[] = [{ table: 'resource_providers', key: { id: expect.providerId }, before: rp, after }];
  consumers.forEach((c, k) => {
    if (written.affected(1 + k) !== 1) throw new CasConflict(`consumer ${String(c['uuid'])} changed while provider ${expect.fromUuid} was re-keyed`);
    const generation = Number(c['generation']);
    images.push({ table: 'consumers', key: { id: Number(c['id']) }, before: c, after: { ...c, generation: generation + 1, updated_at: now } });
  });
  return images;
}

/**
 * The rows of `table` that the allocations matching `where` point at
 * (`allocations.<via> = <table>.<key>`), under lock, one row per allocation,
 * ordered by the key: driven by an index of allocations, then the key, so
 * that no row the allocations do not name is read or locked.
 */
function lockedThroughAllocations(
  trx: Knex.Transaction,
  dialect: Dialect,
  join: { readonly table: 'resource_providers' | 'consumers'; readonly key: 'id' | 'uuid'; readonly via: 'resource_provider_id' | 'consumer_id' },
  where: Readonly<Record<string, string | number>>,
): Knex.QueryBuilder {
  const { table, key, via } = join;
  return withLock(trx(table).select(`${table}.*`).join('allocations', `allocations.${via}`, `${table}.${key}`).where(where).orderBy(`${table}.${key}`), dialect);
}

function checkProvider(rp: Row, uuid: string, generation: number): void {
  if (rp['uuid'] !== uuid) throw new CasConflict(`resource provider ${uuid} was re-keyed to ${String(rp['uuid'])}`);
  if (Number(rp['generation']) !== generation) throw new CasConflict(`resource provider ${uuid} generation is ${String(rp['generation'])}, planned ${generation}`);
}

function sameAllocations(rows: readonly Row[], expected: ReadonlyArray<{ resourceClassId: number; used: number }>): boolean {
  const key = (rc: unknown, used: unknown): string => `${Number(rc)}:${Number(used)}`;
  const a = rows.map((r) => key(r['resource_class_id'], r['used'])).sort();
  const b = expected.map((e) => key(e.resourceClassId, e.used)).sort();
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
