// One planned change, as one compare-and-swap inside the caller's transaction;
// or the changes of an apply batch's units (applyChanges).
import type { Knex } from 'knex';
import type { Change } from '../domain/plan.js';
import { assertNever } from '../errors.js';
import type { Dialect } from './connect.js';
import { restoreComputeNode, softDeleteComputeNode, softDeleteComputeNodes } from './cell/cas-writes.js';
import { putAllocations } from './placement/put-allocations.js';
import { deleteProvider, deleteProviders, rekeyProvider, removeProviderAllocations, removeProviderAllocationsOfMany } from './placement/cas-writes.js';
import { moveInstance, rehomeComputeNode } from './cell/rebalance-writes.js';
import { moveAllocations, renameProvider } from './placement/move-allocations.js';
import type { RowImage } from './row-images.js';
import { deleteHostMappingCas, remapHostMappingCas } from './api/host-mapping-writes.js';
import { markHostNodesMapped, releaseHostInCell } from './cell/host-release-writes.js';

export async function applyChange(trx: Knex.Transaction, dialect: Dialect, change: Change, now: string): Promise<RowImage[]> {
  switch (change.kind) {
    case 'soft-delete-compute-node':
      return softDeleteComputeNode(trx, dialect, change, now);
    case 'delete-provider':
      return deleteProvider(trx, dialect, change);
    case 'remove-provider-allocations':
      return removeProviderAllocations(trx, dialect, change, now);
    case 'rekey-provider':
      return rekeyProvider(trx, dialect, change, now);
    case 'move-allocations':
      return moveAllocations(trx, dialect, change, now);
    case 'rename-provider':
      return renameProvider(trx, dialect, change, now);
    case 'rehome-compute-node':
      return rehomeComputeNode(trx, dialect, change, now);
    case 'move-instance':
      return moveInstance(trx, dialect, change, now);
    case 'release-host-in-cell':
      return releaseHostInCell(trx, dialect, change);
    case 'delete-host-mapping':
      return deleteHostMappingCas(trx, dialect, change);
    case 'remap-host-mapping':
      return remapHostMappingCas(trx, dialect, change, now);
    case 'mark-host-nodes-mapped':
      return markHostNodesMapped(trx, dialect, change, now);
    case 'put-allocations':
      return putAllocations(trx, dialect, change, now);
    case 'restore-compute-node':
      return restoreComputeNode(trx, dialect, change);
    default:
      return assertNever(change, 'change kind');
  }
}

/** A change of an apply batch, with the unit it belongs to. */
export interface BatchedChange {
  readonly unit: string;
  readonly change: Change;
}

/**
 * The changes of an apply batch in the caller's transaction, in the order
 * writeOrder gives: each change's index in `changes` and its row images, in
 * the order they were written, which is the order to journal them in (undo
 * then restores in exactly the reverse of the writes). The batch's units
 * have disjoint footprints, so none of them reads what another writes, and
 * only each unit's own order matters (a consumer's allocations removed
 * before its provider is deleted, a child provider deleted before its
 * parent); writeOrder keeps it and gathers the changes of one kind from
 * several units into one run: deletions of providers, removals of a
 * consumer's allocations from a provider, soft-deletions of compute nodes
 * are each written as one (two round trips and one for the whole run). Any
 * conflict throws, and the caller rolls the transaction back.
 */
export async function applyChanges(trx: Knex.Transaction, dialect: Dialect, changes: readonly BatchedChange[], now: string): Promise<Array<{ readonly index: number; readonly rows: RowImage[] }>> {
  const out: Array<{ index: number; rows: RowImage[] }> = [];
  for (const run of writeOrder(changes)) {
    const images = await applyRun(
      trx,
      dialect,
      run.map((i) => (changes[i] as BatchedChange).change),
      now,
    );
    run.forEach((index, k) => out.push({ index, rows: images[k] as RowImage[] }));
  }
  return out;
}

type Kind = Change['kind'];

/** The kinds of change that have a form for several at once. */
const RUN_KINDS: ReadonlySet<Kind> = new Set<Kind>(['delete-provider', 'remove-provider-allocations', 'soft-delete-compute-node']);

/**
 * The order in which applyChanges writes `changes`: runs of indexes into
 * them, each run at most one change of a unit and all of one kind. Every
 * unit's changes keep their order. A change without a form for several
 * (RUN_KINDS) is written alone, as soon as it is at the head of its unit;
 * when every unit left has a change of such a kind at its head, the kind
 * most of them have (the first unit's on a tie) goes next, as one run.
 */
export function writeOrder(changes: readonly BatchedChange[]): number[][] {
  const queues = new Map<string, number[]>();
  changes.forEach(({ unit }, i) => {
    const queue = queues.get(unit);
    if (queue === undefined) queues.set(unit, [i]);
    else queue.push(i);
  });
  let heads = [...queues.values()];
  const kindOf = (queue: readonly number[]): Kind => (changes[queue[0] as number] as BatchedChange).change.kind;
  const runs: number[][] = [];
  while (heads.length > 0) {
    const alone = heads.filter((q) => !RUN_KINDS.has(kindOf(q)));
    let taken: number[][];
    if (alone.length > 0) {
      taken = alone;
      for (const q of alone) runs.push([q[0] as number]);
    } else {
      const counts = new Map<Kind, number>();
      for (const q of heads) counts.set(kindOf(q), (counts.get(kindOf(q)) ?? 0) + 1);
      let kind = kindOf(heads[0] as number[]);
      for (const [k, n] of counts) if (n > (counts.get(kind) ?? 0)) kind = k;
      taken = heads.filter((q) => kindOf(q) === kind);
      runs.push(taken.map((q) => q[0] as number));
    }
    for (const q of taken) q.shift();
    heads = heads.filter((q) => q.length > 0);
  }
  return runs;
}

/** Changes of one kind, each of another unit, as one write where that kind has a form for several. */
async function applyRun(trx: Knex.Transaction, dialect: Dialect, run: readonly Change[], now: string): Promise<RowImage[][]> {
  const [first] = run;
  if (first === undefined) return [];
  if (run.length === 1) return [await applyChange(trx, dialect, first, now)];
  const ofKind = <K extends Kind>(kind: K): Array<Extract<Change, { kind: K }>> =>
    run.map((c) => {
      if (c.kind !== kind) throw new Error(`internal: a run of ${kind} changes holds a ${c.kind} change`);
      return c as Extract<Change, { kind: K }>;
    });
  switch (first.kind) {
    case 'delete-provider':
      return deleteProviders(trx, dialect, ofKind('delete-provider'));
    case 'remove-provider-allocations':
      return removeProviderAllocationsOfMany(trx, dialect, ofKind('remove-provider-allocations'), now);
    case 'soft-delete-compute-node':
      return softDeleteComputeNodes(trx, dialect, ofKind('soft-delete-compute-node'), now);
    default:
      throw new Error(`internal: ${first.kind} changes have no form for several`);
  }
}
