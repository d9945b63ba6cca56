// compute_node cleanup_orphans' read of the cells and placement, on MySQL:
// only the live nodes that may be orphans, the services on their hosts, and
// their providers (CellRecipe.nodes 'orphan-candidates').
import type { CellMapping, Deployment } from '../../db/deployment-databases.js';
import { readMappedHostsNamed } from '../../db/api/snapshot-reads.js';
import type { Database } from '../../db/connect.js';
import { countCellRows, readActiveMigrations, readHostsNamed, readNodeNamesNamed, readOrphanCandidateNodes, readServicesOfHosts } from '../../db/cell/snapshot-reads.js';
import { readProvidersByUuid } from '../../db/placement/snapshot-reads.js';
import type { Snapshot } from '../../domain/model.js';
import { hostKey } from '../../domain/snapshot-index.js';
import { cellLabel, PLAIN_HOST, readEveryCell, scopedHosts, type CellPart, type PartialSnapshot, type ReadContext } from './cells.js';
import { readingPlacement } from './placement.js';
import type { ScopeNames } from './recipe.js';

/**
 * Each cell's live nodes that may be orphans (readOrphanCandidateNodes), the
 * services on their hosts, its active migrations and the counts
 * checkGroundTruth needs, no host mapping, and placement's providers of those
 * nodes' uuids with their trees (readProvidersByUuid). Undefined, so that everything is read
 * as without it, when a candidate's host is NULL or not plain ASCII (whose
 * folding the database and hostKey might not share).
 */
export async function readOrphanCandidates(
  { deployment, cells, pool, groundTruth, progress }: ReadContext,
  placementDb: Database,
  names: ScopeNames = {},
): Promise<PartialSnapshot | undefined> {
  const asked = [...(names.host === undefined ? [] : [names.host]), ...(names.nodes ?? [])];
  if (asked.some((n) => !PLAIN_HOST.test(n))) {
    progress('a --host or --node that is not plain ASCII: reading every cell whole…');
    return undefined;
  }
  const parts = await readEveryCell(deployment, cells, async (db, cell): Promise<CellPart | 'sqlite' | 'not plain'> => {
    // SQLite compares hosts by bytes, so its anti-join would fold both sides and use no index: the sandbox is read whole.
    if (db.dialect === 'sqlite') return 'sqlite';
    progress(`reading the compute nodes that may be orphans from cell ${cellLabel(cell)} (${db.target.display})…`);
    const [computeNodes, migrations, counts] = await Promise.all([readOrphanCandidateNodes(db.knex, cell.uuid, pool), readActiveMigrations(db.knex, cell.uuid), countCellRows(db.knex)]);
    if (computeNodes.some((n) => n.host === null || !PLAIN_HOST.test(n.host))) return 'not plain';
    const services = await readServicesOfHosts(db.knex, db.dialect, cell.uuid, pool, scopedHosts(computeNodes.map((n) => n.host as string)));
    return { services, computeNodes, instances: [], migrations, counts };
  });
  if (parts.includes('not plain')) progress('a compute node that may be an orphan has a host that is NULL or not plain ASCII: reading every cell whole…');
  if (parts.some((p) => typeof p === 'string')) return undefined;
  const held = parts as CellPart[];
  groundTruth(held);
  const computeNodes = held.flatMap((p) => p.computeNodes);
  progress(`reading the resource providers of ${computeNodes.length} compute node(s) from the placement database (${placementDb.target.display})…`);
  const placement = await readingPlacement(placementDb, () => readProvidersByUuid(placementDb.knex, pool, computeNodes.flatMap((n) => (n.uuid === null ? [] : [n.uuid]))));
  const scopeNames = await probeScopeNames(deployment, cells, names, progress);
  return {
    hostMappings: [],
    services: held.flatMap((p) => p.services),
    computeNodes,
    instances: [],
    migrations: held.flatMap((p) => p.migrations),
    placement,
    nodeScope: 'orphan-candidates',
    ...(scopeNames === undefined ? {} : { scopeNames }),
  };
}

/**
 * Whether the --host and each --node exist where checkScopeNames looks for
 * them in a whole read: the host in any service, compute node (live or
 * soft-deleted) or host mapping (its live instances are read with the
 * scope's: PlanReadRecipe.instanceHostsOf); a node as the uuid or
 * hypervisor_hostname of any compute node. Asked by IN lists the collation
 * folds as hostKey does (plain ASCII names only: readOrphanCandidates), then
 * compared by hostKey, so a name the collation alone takes for another
 * (an accent) is not found, as in the whole read.
 */
async function probeScopeNames(
  deployment: Deployment,
  cells: readonly CellMapping[],
  names: ScopeNames,
  progress: (line: string) => void,
): Promise<Snapshot['scopeNames']> {
  if (names.host === undefined && names.nodes === undefined) return undefined;
  progress('looking up the --host and --node values in every cell and the API database…');
  const host = names.host;
  const nodeKeys = [...new Set((names.nodes ?? []).map(hostKey))];
  const perCell = await readEveryCell(deployment, cells, async (db) => ({
    hosts: host === undefined ? [] : await readHostsNamed(db.knex, db.dialect, scopedHosts([host])),
    nodes: nodeKeys.length === 0 ? [] : await readNodeNamesNamed(db.knex, scopedHosts(names.nodes ?? [])),
  }));
  const mapped = host === undefined ? [] : await readMappedHostsNamed((await deployment.api()).knex, [hostKey(host), host]);
  const nodeNames = new Set(perCell.flatMap((c) => c.nodes.flatMap((n) => [n.uuid, n.hypervisor_hostname].flatMap((v) => (v === null ? [] : [hostKey(v)])))));
  return {
    ...(host === undefined ? {} : { host: { key: hostKey(host), known: [...perCell.flatMap((c) => c.hosts), ...mapped].some((h) => hostKey(h) === hostKey(host)) } }),
    ...(names.nodes === undefined ? {} : { nodes: new Map(nodeKeys.map((k) => [k, nodeNames.has(k)])) }),
  };
}

