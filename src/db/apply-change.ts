// One planned change, as one compare-and-swap inside the caller's transaction.
import type { Knex } from 'knex';
import type { Change } from '../domain/plan.js';
import { assertNever } from '../errors.js';
import type { Dialect } from './connect.js';
import { restoreComputeNode, softDeleteComputeNode } from './cell/cas-writes.js';
import { putAllocations } from './placement/put-allocations.js';
import { deleteProvider, rekeyProvider, removeProviderAllocations } from './placement/cas-writes.js';
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
