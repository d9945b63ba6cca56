// placement audit's report, one cell at a time. nova's verdict on a
// consumer's allocations on a provider depends on the compute node that is
// the provider's root: the consumer is one of that node's live instances or
// in-progress migrations, or it is orphaned there. The node, its instances
// and its migrations are all in one cell, so each cell is read, its
// providers' allocations are checked against it, and it is let go before the
// next; only the consumers that are not related to the node on some provider
// (the suspects: orphans, and what nova would call orphaned but is kept) are
// remembered, by uuid. Across cells the walk holds the live compute nodes'
// uuids (UuidSet, 16 bytes each) and the suspects. Then the providers no live
// node roots (stale, sharing, foreign) are listed, and every consumer on them
// is a suspect too. Last, the suspects are judged whole, by the very code
// that judges a whole snapshot (openPlacementAudit), on a snapshot that holds
// only their allocations and consumer rows, the providers involved and their
// roots, the nodes with those roots' uuids, and the suspects' instances and
// migrations in every cell: the report is the whole snapshot's, less the
// providers that have nothing to say.
import type { CellMapping, Deployment } from '../../db/deployment-databases.js';
import { readActiveMigrations, readActiveMigrationsOf, readComputeNodes, readComputeNodesOf, readLiveInstances, readScopedInstances } from '../../db/cell/snapshot-reads.js';
import { eachAllocationOn, eachListedProvider, readTreesOfRoots } from '../../db/placement/audit-reads.js';
import { readAllocationsOfConsumers, readConsumersOf, readNames, readProvidersById } from '../../db/placement/snapshot-reads.js';
import type { Database } from '../../db/connect.js';
import { StringPool } from '../../db/string-pool.js';
import { auditPlacementAllocations, NOVA_RESOURCE_CLASSES, type PlacementAuditOptions, type PlacementAuditReport } from '../../domain/audit/nova-orphaned-allocations.js';
import type { ComputeNodeRec, InstanceRec, MigrationRec, ProviderRec, Snapshot } from '../../domain/model.js';
import { nodeKey } from '../../domain/snapshot-index.js';
import { UuidSet } from '../../domain/uuid-set.js';
import { cellFailure, toCellRec } from './cells.js';
import { collectGarbage } from './collect-garbage.js';
import { readingPlacement } from './placement.js';
import { boundHeapGrowth } from './snapshot.js';

/** The report, and how many providers placement lists (the report holds only those with something to say). */
export type CellByCellReport = Extract<PlacementAuditReport, { kind: 'audited' }> & { readonly providersChecked: number };

/** What the walk keeps from cell to cell. */
interface Walk {
  readonly placementDb: Database;
  /** Whether a resource class id is audited. */
  readonly counts: (resourceClassId: number) => boolean;
  /** The live compute nodes' uuids seen so far: the first cell to hold a uuid has its node (as nova's scatter-gather takes one). */
  readonly liveNodes: UuidSet;
  readonly suspects: Set<string>;
}

/** placement audit's report without --resource_provider, read and judged one cell at a time. */
export async function auditPlacementByCell(deployment: Deployment, options: PlacementAuditOptions): Promise<CellByCellReport> {
  boundHeapGrowth();
  // Opened before any cell is read, so a missing [placement_database] or an unreachable server fails at once.
  const placementDb = await deployment.placement();
  const mappings = await deployment.cellMappings();
  const cells = mappings.filter((m) => !m.isCell0);
  const classNames = await readingPlacement(placementDb, () => readNames(placementDb.knex, 'resource_classes'));
  const counts = (id: number): boolean => options.allResourceClasses || NOVA_RESOURCE_CLASSES.includes(classNames.get(id) ?? `#${id}`);
  const walk: Walk = { placementDb, counts, liveNodes: new UuidSet(), suspects: new Set() };
  for (const cell of cells) {
    await judgeCell(deployment, cell, walk);
    // The cell just judged is unreachable now (judgeCell's frame is gone): let it go before the next is read.
    if (cells.length > 1) collectGarbage();
  }
  const { providersChecked, unrooted } = await readingPlacement(placementDb, () => listUnrootedProviders(walk));
  const snapshot = await suspectsSnapshot(deployment, cells, walk, classNames, unrooted);
  const report = auditPlacementAllocations({ ...snapshot, cells: mappings.map(toCellRec) }, options);
  if (report.kind !== 'audited') throw new Error('internal: placement audit by cell without --resource_provider named one');
  return { ...report, providers: report.providers.filter((p) => !p.computeNodeFound || p.orphans.length > 0 || p.kept.length > 0), providersChecked };
}

/** One cell: its live nodes claimed, then every allocation on their provider trees checked against the node's instances and migrations. */
async function judgeCell(deployment: Deployment, cell: CellMapping, walk: Walk): Promise<void> {
  const { claimed, related } = await readRelations(deployment, cell, walk);
  const { placementDb, counts, suspects } = walk;
  await readingPlacement(placementDb, async () => {
    const nodeOfProvider = new Map<number, string>();
    for (const tree of await readTreesOfRoots(placementDb.knex, [...claimed.keys()])) {
      const key = claimed.get(tree.rootUuid);
      if (key !== undefined) nodeOfProvider.set(tree.id, key);
    }
    await eachAllocationOn(placementDb.knex, [...nodeOfProvider.keys()], (providerId, consumerUuid, classId) => {
      if (counts(classId) && !related.has(pair(nodeOfProvider.get(providerId) as string, consumerUuid))) suspects.add(consumerUuid);
    });
  });
}

/**
 * A cell's live nodes that no earlier cell claimed (their uuid: their node
 * key), and the (node, consumer) pairs nova keeps: the node's live instances
 * and the migrations from or to it (nova matches host and node). A function
 * of its own so that the cell's rows are let go when it returns, before
 * placement is read: held in judgeCell's frame, they lived across its awaits.
 */
async function readRelations(deployment: Deployment, cell: CellMapping, walk: Walk): Promise<{ claimed: Map<string, string>; related: Set<string> }> {
  const pool = new StringPool();
  let nodes: ComputeNodeRec[];
  let instances: InstanceRec[];
  let migrations: MigrationRec[];
  try {
    const db = await deployment.cell(cell);
    // One after the other, on one connection: each cell's pool keeps its connections (and their buffers) to the end of the run.
    nodes = await readComputeNodes(db.knex, cell.uuid, pool);
    instances = await readLiveInstances(db.knex, cell.uuid, pool);
    migrations = await readActiveMigrations(db.knex, cell.uuid);
  } catch (err) {
    throw cellFailure(cell, err);
  }
  const claimed = new Map<string, string>();
  for (const n of nodes) {
    if (n.deleted || n.uuid === null || walk.liveNodes.has(n.uuid)) continue;
    walk.liveNodes.add(n.uuid);
    claimed.set(n.uuid, nodeKey(n.cellUuid, n.host, n.hypervisorHostname));
  }
  const related = new Set<string>();
  for (const i of instances) related.add(pair(nodeKey(i.cellUuid, i.host, i.node), i.uuid));
  for (const m of migrations) {
    if (m.uuid === null) continue;
    related.add(pair(nodeKey(m.cellUuid, m.sourceCompute, m.sourceNode), m.uuid));
    related.add(pair(nodeKey(m.cellUuid, m.destCompute, m.destNode), m.uuid));
  }
  return { claimed, related };
}

function pair(nodeKeyText: string, consumerUuid: string): string {
  return `${nodeKeyText}\u0001${consumerUuid}`;
}

/** Every listed provider counted; those whose root is no live compute node kept (nova says their node "can not be found"), and every consumer on them a suspect. */
async function listUnrootedProviders(walk: Walk): Promise<{ providersChecked: number; unrooted: number[] }> {
  let providersChecked = 0;
  const unrooted: number[] = [];
  await eachListedProvider(walk.placementDb.knex, (rows) => {
    providersChecked += rows.length;
    for (const r of rows) if (!walk.liveNodes.has(r.rootUuid)) unrooted.push(r.id);
  });
  await eachAllocationOn(walk.placementDb.knex, unrooted, (_providerId, consumerUuid, classId) => {
    if (walk.counts(classId)) walk.suspects.add(consumerUuid);
  });
  return { providersChecked, unrooted };
}

/**
 * The snapshot the suspects are judged on: their allocations and consumer
 * rows, the providers those allocations are on and the unrooted ones, with
 * their roots; the compute nodes (live or deleted) with those roots' uuids,
 * and the suspects' live instances and active migrations, cell by cell in
 * cell order.
 */
async function suspectsSnapshot(
  deployment: Deployment,
  cells: readonly CellMapping[],
  walk: Walk,
  classNames: ReadonlyMap<number, string>,
  unrooted: readonly number[],
): Promise<Omit<Snapshot, 'cells'>> {
  const { placementDb } = walk;
  const pool = new StringPool();
  const suspects = [...walk.suspects];
  const { allocations, consumers, providers } = await readingPlacement(placementDb, async () => {
    const [allocations, consumers] = await Promise.all([readAllocationsOfConsumers(placementDb.knex, pool, classNames, suspects), readConsumersOf(placementDb.knex, pool, suspects)]);
    const involved = await readProvidersById(placementDb.knex, pool, [...new Set([...allocations.map((a) => a.providerId), ...unrooted])]);
    const held = new Set(involved.map((rp) => rp.id));
    const roots = involved.flatMap((rp) => (rp.rootId === null || held.has(rp.rootId) ? [] : [rp.rootId]));
    const all: ProviderRec[] = [...involved, ...(roots.length === 0 ? [] : await readProvidersById(placementDb.knex, pool, roots))];
    return { allocations, consumers, providers: all.sort((a, b) => a.id - b.id) };
  });
  const byId = new Map(providers.map((rp) => [rp.id, rp]));
  const rootUuids = [
    ...new Set(
      providers.flatMap((rp) => {
        const root = rp.rootId === null ? undefined : byId.get(rp.rootId);
        return root === undefined ? [] : [root.uuid];
      }),
    ),
  ];
  const computeNodes: ComputeNodeRec[] = [];
  const instances: InstanceRec[] = [];
  const migrations: MigrationRec[] = [];
  for (const cell of cells) {
    try {
      const db = await deployment.cell(cell);
      // One after the other, on the one connection the cell's walk used.
      computeNodes.push(...(await readComputeNodesOf(db.knex, cell.uuid, pool, rootUuids)));
      instances.push(...(await readScopedInstances(db.knex, db.dialect, cell.uuid, pool, { keys: [], raw: [] }, suspects)));
      migrations.push(...(await readActiveMigrationsOf(db.knex, cell.uuid, suspects)));
    } catch (err) {
      throw cellFailure(cell, err);
    }
  }
  return {
    takenAt: Date.now(),
    serviceDownTime: deployment.config.serviceDownTime,
    hostMappings: [],
    services: [],
    computeNodes,
    instances,
    migrations,
    placement: { providers, inventories: [], allocations, consumers },
    ironicNodes: undefined,
  };
}
