// placement cleanup_providers' read of the cells and placement, on MySQL:
// every live node's uuid and name, and whole only the providers that may be
// stale and the nodes of their names (CellRecipe.nodes 'stale-provider-candidates').
import type { Database } from '../../db/connect.js';
import { countCellRows, readActiveMigrations, readDeletedComputeNodes, readLiveNodeKeys, readLiveNodesNamed } from '../../db/cell/snapshot-reads.js';
import { readProvidersByUuid, readRootProviderUuids, withRootInventories } from '../../db/placement/snapshot-reads.js';
import type { PlacementSnapshot } from '../../domain/model.js';
import { cellLabel, computeServiceCells, readEveryCell, type CellPart, type PartialSnapshot, type ReadContext } from './cells.js';
import { readingPlacement } from './placement.js';

/**
 * On MySQL: a
 * stale provider is a root provider whose uuid no live compute node has,
 * so each cell gives the uuids and lower-cased names of its live nodes
 * (three columns, not whole records), its soft-deleted nodes whole, its
 * active migrations and the counts checkGroundTruth needs; placement the
 * uuids of its root providers, then whole (with their trees, traits and the
 * inventories isTraitlessComputeProvider looks at) only the candidates,
 * those whose uuid is no live node's. Then the live nodes whose name a
 * candidate's tree holds (blockedNode), and the providers of those nodes'
 * uuids (whether the node has one decides re-key against delete). No
 * service, no host mapping. Undefined, so that everything is read as
 * without it, on SQLite (the sandbox is small) and when a candidate's name
 * is not plain ASCII (whose lower-casing SQL and the index might not share).
 */
export async function readStaleProviderCandidates({ deployment, cells, pool, groundTruth, progress }: ReadContext, placementDb: Database): Promise<PartialSnapshot | undefined> {
  const read = await readEveryCell(deployment, cells, async (db, cell) => {
    if (db.dialect === 'sqlite') return 'sqlite' as const;
    progress(`reading the uuids and names of the live compute nodes, and the soft-deleted ones, from cell ${cellLabel(cell)} (${db.target.display})…`);
    const [keys, deleted, migrations, counts] = await Promise.all([readLiveNodeKeys(db.knex, pool), readDeletedComputeNodes(db.knex, cell.uuid, pool), readActiveMigrations(db.knex, cell.uuid), countCellRows(db.knex)]);
    return { keys, part: { services: [], computeNodes: deleted, instances: [], migrations, counts } satisfies CellPart };
  });
  const parts = read.flatMap((p) => (p === 'sqlite' ? [] : [p]));
  if (parts.length !== read.length) return undefined;
  groundTruth(parts.map((p) => p.part));
  const serviceCells = computeServiceCells(cells, parts.map((p) => p.part));
  const liveUuids = new Set(parts.flatMap((p) => p.keys.uuids));
  const names = new Set(parts.flatMap((p) => [...p.keys.names, ...p.part.computeNodes.flatMap((n) => (n.hypervisorHostname === null ? [] : [n.hypervisorHostname.toLowerCase()]))]));
  progress(`reading the root resource providers that no live compute node has the uuid of from the placement database (${placementDb.target.display})…`);
  const candidates = await readingPlacement(placementDb, async () => (await readRootProviderUuids(placementDb.knex, pool)).filter((uuid) => !liveUuids.has(uuid)));
  const byUuid = await readingPlacement(placementDb, () => readProvidersByUuid(placementDb.knex, pool, candidates));
  const wanted = [...new Set(byUuid.providers.flatMap((rp) => (rp.name === null ? [] : [rp.name.toLowerCase()])))];
  // A name SQL's LOWER() might lower-case otherwise than the index: a provider's that is not plain ASCII, or a live node's
  // that is not and that String.toLowerCase makes one of them (only the Kelvin sign becomes ASCII 'k').
  const notPlain = new Set(parts.flatMap((p) => p.keys.notPlain));
  if (wanted.some((name) => !PLAIN_NAME.test(name) || notPlain.has(name))) {
    progress('a resource provider that may be stale, or a live compute node of its name, has a name that is not plain ASCII: reading every cell whole…');
    return undefined;
  }
  const named = await readEveryCell(deployment, cells, async (db, cell) => {
    progress(`reading the live compute nodes of ${wanted.length} provider name(s) from cell ${cellLabel(cell)} (${db.target.display})…`);
    return readLiveNodesNamed(db.knex, cell.uuid, pool, wanted);
  });
  // Whether a live node named by a candidate has a provider of its own: read those too (they are known, not guessed).
  const ofNamed = named.flat().flatMap((n) => (n.uuid === null ? [] : [n.uuid]));
  const more = ofNamed.length === 0 ? undefined : await readingPlacement(placementDb, () => readProvidersByUuid(placementDb.knex, pool, ofNamed));
  const placement = await readingPlacement(placementDb, () => withRootInventories(placementDb.knex, more === undefined ? byUuid : mergeReadsByUuid(byUuid, more)));
  return {
    hostMappings: [],
    services: [],
    // Per cell in id order, live and soft-deleted together, as the whole read lists them (blockedNode takes the first of a name).
    computeNodes: parts.flatMap((p, i) => [...p.part.computeNodes, ...(named[i] ?? [])].sort((a, b) => a.id - b.id)),
    instances: [],
    migrations: parts.flatMap((p) => p.part.migrations),
    placement,
    nodeScope: 'stale-provider-candidates',
    computeServiceCells: serviceCells,
    nodeKeys: { liveUuids, names, namesRead: new Set(wanted) },
  };
}

/** Two reads by uuid (readProvidersByUuid) as one. */
function mergeReadsByUuid(a: PlacementSnapshot, b: PlacementSnapshot): PlacementSnapshot {
  const providers = new Map([...a.providers, ...b.providers].map((rp) => [rp.id, rp]));
  return {
    ...a,
    providers: [...providers.values()].sort((x, y) => x.id - y.id),
    named: { uuids: new Set([...(a.named?.uuids ?? []), ...(b.named?.uuids ?? [])]), ids: new Set([...(a.named?.ids ?? []), ...(b.named?.ids ?? [])]) },
  };
}

/** A provider name whose lower-casing SQL's LOWER() and String.toLowerCase agree on (ASCII, no control characters). */
const PLAIN_NAME = /^[\x20-\x7e]*$/;
