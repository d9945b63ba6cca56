// The placement database's part of a read.
import type { Database } from '../../db/connect.js';
import type { Deployment } from '../../db/deployment-databases.js';
import { describeDriverError } from '../../db/driver-errors.js';
import { readPlacement, streamAllocationsByConsumer, type PlacementRead } from '../../db/placement/snapshot-reads.js';
import type { StringPool } from '../../db/string-pool.js';
import type { AllocationRec, PlacementSnapshot } from '../../domain/model.js';
import { ConsumerSplit } from '../../domain/audit/nova-orphaned-allocations.js';
import { ReconcileError, isReconcileError } from '../../errors.js';

export async function readPlacementOf(db: Database, pool: StringPool, read: PlacementRead, progress: (line: string) => void): Promise<PlacementSnapshot> {
  progress(`reading the placement database (${db.target.display})…`);
  return readingPlacement(db, () => readPlacement(db.knex, pool, read));
}

/** A read of the placement database; a failure of it is a connection error naming the database. */
export async function readingPlacement<T>(db: Database, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new ReconcileError('connection', `cannot read the ${db.label}: ${describeDriverError(err)}`, { cause: err });
  }
}

/**
 * Every allocation in placement, one consumer at a time (the audit's read:
 * streamAllocationsByConsumer), after a read whose placement is 'audit' or 'placement-audit'.
 */
export async function streamAllocations(
  deployment: Deployment,
  onConsumer: (consumerUuid: string, allocations: AllocationRec[]) => void,
  progress: (line: string) => void = () => undefined,
): Promise<number> {
  const db = await deployment.placement();
  progress(`reading the allocations from the placement database (${db.target.display}), one consumer at a time…`);
  try {
    return await streamAllocationsByConsumer(db.knex, onConsumer);
  } catch (err) {
    // The consumer's own refusal, not the database's.
    if (isReconcileError(err) || err instanceof ConsumerSplit) throw err;
    throw new ReconcileError('connection', `cannot read the ${db.label}: ${describeDriverError(err)}`, { cause: err });
  }
}
