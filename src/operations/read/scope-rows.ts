// The second step of a plan's read (readForPlan): placement's rows, and the
// cells' live instances, of the scope the planner's pure functions named on
// the first read.
import type { Database } from '../../db/connect.js';
import { readLiveInstances, readScopedInstances } from '../../db/cell/snapshot-reads.js';
import { readPlacementScope, readProvidersById } from '../../db/placement/snapshot-reads.js';
import type { PlacementSnapshot, Snapshot } from '../../domain/model.js';
import { cellLabel, hasComputeId, PLAIN_HOST, readEveryCell, scopedHosts, type ReadContext } from './cells.js';
import { readingPlacement } from './placement.js';
import type { InstanceHost } from './recipe.js';

/**
 * The allocations, consumers and inventories of these providers
 * (readPlacementScope; PlacementSnapshot.scope) beside the first read's
 * providers. A read by uuid (the candidate reads) adds the providers its
 * consumers are allocated on elsewhere: their generations are planned on.
 */
export async function readScopedPlacement({ pool, progress }: ReadContext, placementDb: Database, placement: PlacementSnapshot, providerIds: readonly number[]): Promise<PlacementSnapshot> {
  progress(`reading the allocations of ${new Set(providerIds).size} resource provider(s) from the placement database (${placementDb.target.display})…`);
  return readingPlacement(placementDb, async (): Promise<PlacementSnapshot> => {
    const read = await readPlacementScope(placementDb.knex, pool, placement, providerIds);
    const held = new Set(placement.providers.map((rp) => rp.id));
    const elsewhere = placement.named === undefined ? [] : read.allocations.map((a) => a.providerId).filter((id) => !held.has(id));
    if (placement.named === undefined || elsewhere.length === 0) return read;
    return {
      ...read,
      providers: [...read.providers, ...(await readProvidersById(placementDb.knex, pool, elsewhere))].sort((a, b) => a.id - b.id),
      // Asked by id: one that does not exist (an allocation's dangling provider id) is known to be absent.
      named: { ...placement.named, ids: new Set(elsewhere) },
    };
  });
}

/**
 * The live instances a planner's scope needs (PlanReadRecipe.instanceHostsOf),
 * with the Snapshot.instanceScope that says what they are; every live
 * instance, without a scope, when a host is NULL or not plain ASCII.
 */
export async function readInstancesOfScope(
  { deployment, cells, pool, progress }: ReadContext,
  hosts: readonly InstanceHost[],
  consumerUuids: ReadonlySet<string>,
): Promise<Pick<Snapshot, 'instances' | 'instanceScope'>> {
  if (hosts.some((h) => h.host === null || !PLAIN_HOST.test(h.host))) {
    progress('reading the live instances of every cell (a host of the plan is not plain ASCII)…');
    const parts = await readEveryCell(deployment, cells, (db, cell) => readLiveInstances(db.knex, cell.uuid, pool, hasComputeId(deployment, db)));
    return { instances: parts.flat() };
  }
  const uuids = [...consumerUuids];
  const hostsOf = new Map(cells.map((cell) => [cell.uuid, scopedHosts(hosts.filter((h) => h.cellUuid === undefined || h.cellUuid === cell.uuid).map((h) => h.host as string))]));
  const parts = await readEveryCell(deployment, cells, (db, cell) => {
    const ofCell = hostsOf.get(cell.uuid) ?? scopedHosts([]);
    progress(`reading the live instances of ${ofCell.keys.length} host(s) and ${uuids.length} consumer(s) from cell ${cellLabel(cell)} (${db.target.display})…`);
    return readScopedInstances(db.knex, db.dialect, cell.uuid, pool, ofCell, uuids, hasComputeId(deployment, db));
  });
  const hostsByCell = new Map([...hostsOf].map(([cellUuid, h]) => [cellUuid, new Set(h.keys)] as const));
  return { instances: parts.flat(), instanceScope: { hostsByCell, uuids: consumerUuids } };
}
