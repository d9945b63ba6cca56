// placement heal_allocations' read, one cell at a time: every cell nova's
// walk may reach is checked first (it answers, and its services table is not
// empty while it has live compute nodes: checkGroundTruth), then each cell is
// read only when the walk reaches it (its live compute nodes, its instances
// with their flavors, and placement's rows for them: readHealPlacement),
// judged, and let go before the next. Memory grows with the largest cell,
// not with the cloud.
import type { Database } from '../../db/connect.js';
import type { CellMapping, Deployment } from '../../db/deployment-databases.js';
import { readHealInstances, readHealNodes } from '../../db/cell/heal-reads.js';
import { countCellRows } from '../../db/cell/snapshot-reads.js';
import { describeDriverError } from '../../db/driver-errors.js';
import { readExternalIds, readHealCapacity, readHealPlacement, withHealAllocationRows } from '../../db/placement/heal-reads.js';
import { readNames } from '../../db/placement/snapshot-reads.js';
import { StringPool } from '../../db/string-pool.js';
import { allocationRowsScope, capacityScope, openHealWalk, type HealCellPart, type HealLookups, type HealOptions, type HealPlan } from '../../domain/heal-allocations.js';
import { ReconcileError } from '../../errors.js';
import { cellFailure, checkGroundTruth, readEveryCell } from './cells.js';
import { readingPlacement } from './placement.js';
import { boundHeapGrowth } from './snapshot.js';
import { collectGarbage } from './collect-garbage.js';

/** The plan of a heal over `cells` (cell_mappings order; cell0 is walked past, as nova does). */
export async function planHeal(deployment: Deployment, cells: readonly CellMapping[], options: HealOptions): Promise<HealPlan> {
  boundHeapGrowth();
  const live = cells.filter((c) => !c.isCell0);
  const onlyCell = live.length === 1 && live[0] !== undefined && cells.length === 1 ? live[0] : undefined;
  // Opened before any cell is read, so a missing [placement_database] or an unreachable server fails at once.
  const placementDb = await deployment.placement();
  await checkCells(deployment, onlyCell === undefined ? (await deployment.cellMappings()).filter((m) => !m.isCell0) : [onlyCell]);
  const [classNames, projects, users] = await readingPlacement(placementDb, () =>
    Promise.all([readNames(placementDb.knex, 'resource_classes'), readExternalIds(placementDb.knex, 'projects'), readExternalIds(placementDb.knex, 'users')]),
  );
  // resource_classes read once: by id for the rows read, by name for what a flavor asks.
  const lookups: HealLookups = { resourceClassIds: new Map([...classNames].map(([id, name]) => [name, id])), projects, users };
  const walk = openHealWalk(lookups, options);
  for (const cell of cells) {
    if (!walk.wants(cell)) continue;
    walk.cell(cell, await readHealCell(deployment, cell, placementDb, classNames, lookups, options));
    // The cell just judged is unreachable now (readHealCell's frame is gone): let it go before the next is read.
    if (cells.length > 1) collectGarbage();
  }
  return walk.finish();
}

/** One cell's part: its live compute nodes, its instances with their flavors, and placement's rows for them. */
async function readHealCell(
  deployment: Deployment,
  cell: CellMapping,
  placementDb: Database,
  classNames: ReadonlyMap<number, string>,
  lookups: HealLookups,
  options: HealOptions,
): Promise<HealCellPart> {
  const { instanceUuid } = options;
  const pool = new StringPool();
  const db = await deployment.cell(cell);
  const [computeNodes, instances] = await Promise.all([
    readHealNodes(db.knex, cell.uuid, pool).catch((err: unknown) => {
      throw cellFailure(cell, err);
    }),
    readHealInstances(db.knex, cell.uuid, instanceUuid, pool).catch((err: unknown) => {
      throw new ReconcileError('connection', `cannot read the instances of the ${db.label}: ${describeDriverError(err)}`, { cause: err });
    }),
  ]);
  const nodeUuids = computeNodes.flatMap((n) => (n.uuid === null ? [] : [n.uuid]));
  return readingPlacement(placementDb, async () => {
    const base = { instances, computeNodes, placement: await readHealPlacement(placementDb.knex, pool, nodeUuids, instances.map((i) => i.uuid)) };
    // The allocation rows only of the instances nova would re-write, then the inventories and usage only of the
    // providers the walk may write to: none of either in a healthy cell.
    const part = { ...base, placement: await withHealAllocationRows(placementDb.knex, pool, classNames, base.placement, allocationRowsScope(lookups, cell.uuid, base, options)) };
    return { ...part, capacity: await readHealCapacity(placementDb.knex, classNames, capacityScope(lookups, cell.uuid, part, options)) };
  });
}

/**
 * Every cell the walk may reach answers, and none has live compute nodes
 * with an empty services table (the cells' whole read refused it before any
 * was walked, so a walk that ends early still refuses it).
 */
async function checkCells(deployment: Deployment, cells: readonly CellMapping[]): Promise<void> {
  const parts = await readEveryCell(deployment, cells, async (db) => ({ services: [], computeNodes: [], instances: [], migrations: [], counts: await countCellRows(db.knex) }));
  checkGroundTruth(cells, parts, true, undefined, undefined, deployment.config.reconcile.minIronicFraction);
}

