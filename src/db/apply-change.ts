// One planned change, as one compare-and-swap inside the caller's transaction;
// or the changes of an apply batch's units (applyChanges).
import type { Knex } from 'knex';
import type { Change } from '../domain/plan.js';
import { assertNever } from '../errors.js';
import type { Dialect } from './connect.js';
import { restoreComputeNode, softDeleteComputeNode, softDeleteComputeNodes } from './cell/cas-writes.js';
import { putAllocations } from './placement/put-allocations.js';
import { deleteProvider, deleteProviders, rekeyProvider, removeProviderAllocations } from './placement/cas-writes.js';
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
 * The changes of an apply batch, in order, in the caller's transaction: each
 * change's row images. A run of consecutive deletions of providers, or of
 * soft-deletions of compute nodes, each of another unit, is written as one
 * (deleteProviders, softDeleteComputeNodes: two round trips and one for the
 * whole run): the batch's units have disjoint footprints, so none of them
 * reads what another writes. Changes of one unit stay one after the other,
 * as the unit's own order may matter (a child provider deleted before its
 * parent). Any conflict throws, and the caller rolls the transaction back.
 */
export async function applyChanges(trx: Knex.Transaction, dialect: Dialect, changes: readonly BatchedChange[], now: string): Promise<RowImage[][]> {
  const out: RowImage[][] = [];
  for (let i = 0; i < changes.length; ) {
    const { change } = changes[i] as BatchedChange;
    const units = new Set<string>();
    let j = i;
    while (j < changes.length && (changes[j] as BatchedChange).change.kind === change.kind && !units.has((changes[j] as BatchedChange).unit)) {
      units.add((changes[j] as BatchedChange).unit);
      j += 1;
    }
    const run = changes.slice(i, j).map((c) => c.change);
    if (change.kind === 'delete-provider' && run.length > 1) out.push(...(await deleteProviders(trx, dialect, run as Array<typeof change>)));
    else if (change.kind === 'soft-delete-compute-node' && run.length > 1) out.push(...(await softDeleteComputeNodes(trx, dialect, run as Array<typeof change>, now)));
    else {
      out.push(await applyChange(trx, dialect, change, now));
      j = i + 1;
    }
    i = j;
  }
  return out;
}
