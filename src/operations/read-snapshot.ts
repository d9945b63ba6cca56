// Read a Snapshot: the API's mappings, every cell's services, compute nodes,
// instances and active migrations, placement, and the ironic truth the
// operator gave. Cells are read concurrently ([nova_reconcile]
// cell_concurrency), each table in keyset pages. A cell that cannot be read
// fails the whole snapshot: a reconciliation that missed a cell would call
// that cell's nodes "missing" and act on it.
import { OPTIONAL_COLUMNS } from '../db/schema-manifest.js';
import { setFlagsFromString } from 'node:v8';
import type { Database } from '../db/connect.js';
import type { CellMapping, Deployment } from '../db/deployment.js';
import { readHostMappings, readMappedHostsNamed } from '../db/api/snapshot-reads.js';
import {
  countCellRows,
  readActiveMigrations,
  readComputeNodes,
  readDeletedComputeNodes,
  readHostsNamed,
  readLiveInstances,
  readLiveNodeKeys,
  readLiveNodesNamed,
  readNodeNamesNamed,
  readOrphanCandidateNodes,
  readScopedInstances,
  readServices,
  readServicesOfHosts,
  type ScopedHosts,
} from '../db/cell/snapshot-reads.js';
import {
  readPlacement,
  readPlacementScope,
  readProvidersById,
  readProvidersByUuid,
  readRootProviderUuids,
  streamAllocationsByConsumer,
  withRootInventories,
  type PlacementRead,
} from '../db/placement/snapshot-reads.js';
import { StringPool } from '../db/string-pool.js';
import { describeDriverError } from '../db/driver-errors.js';
import { implausibleList, ironicListCoverage, parseIronicNodes } from '../domain/ironic-nodes.js';
import { ConsumerSplit } from '../domain/audit/nova-orphaned-allocations.js';
import type { AllocationRec, CellRec, ComputeNodeRec, InstanceRec, IronicNodeRec, IronicOrigin, MigrationRec, PlacementSnapshot, ServiceRec, Snapshot } from '../domain/model.js';
import { ReconcileError, isReconcileError } from '../errors.js';
import { describeFileError, errnoOf, readTextFile } from '../files.js';
import { fanOutInOrder } from './fan-out.js';
import { hostKey, indexSnapshot, indexWithPlacementRows, type SnapshotIndex } from '../domain/snapshot-index.js';
import type { IronicSettings } from '../config/ironic-settings.js';
import { listIronicNodes } from '../ironic/list-nodes.js';

/** Where the ironic truth comes from; absent means none was given. */
export type IronicSource =
  /** --ironic-nodes FILE */
  | { readonly kind: 'file'; readonly file: string }
  /** The Ironic API, reached as nova.conf [ironic] says (src/ironic/). */
  | { readonly kind: 'api'; readonly settings: IronicSettings }
  /** Already read (before the apply lock is taken, so a failing Ironic holds nothing). */
  | { readonly kind: 'read'; readonly nodes: readonly IronicNodeRec[]; readonly origin: IronicOrigin };

export interface ReadSnapshotOptions {
  /**
   * Read placement too; without it Snapshot.placement is undefined. 'audit':
   * without allocations and consumers, which the audit streams afterwards
   * (PlacementSnapshot.streamed). 'placement-audit': the providers and
   * consumer rows only (placement audit streams the allocations). A
   * ScopedPlacement: the 'audit' read, then
   * the rows of the providers a planner names (PlacementSnapshot.scope).
   */
  readonly placement: boolean | 'audit' | 'placement-audit' | ScopedPlacement;
  readonly ironic?: IronicSource;
  /**
   * Read only this cell's databases, for per-cell views (compute_node list).
   * Such a snapshot cannot tell a stale provider or mapping from one that
   * belongs to another cell, so the audit and the planners read every cell.
   */
  readonly cellUuid?: string;
  /**
   * Refuse a cell whose services table is empty while it has live compute
   * nodes (checkGroundTruth). Default true; false for views that judge no
   * node by its service (compute_node list, placement audit).
   */
  readonly requireServices?: boolean;
  /** Progress lines ("reading cell 'cell1' (mysql://host:3306/nova_cell1)…"), for stderr. */
  readonly progress?: (line: string) => void;
  /**
   * Take nova.conf's Ironic partitions and shard into the snapshot (default
   * true): reading them fails on a bad [ironic] (load-config.ts,
   * failingOnIronic), so the commands nova-manage also has, which judge no
   * node by its conductor group (prune_host_mappings, discover_hosts --remap,
   * placement heal_allocations and audit), say false.
   */
  readonly ironicSettings?: boolean;
}

/**
 * A planner's read (issue 20): placement as 'audit' reads it, then only the
 * allocations, consumers and inventories of the providers `scopeOf` names
 * for the snapshot read so far (db/placement/snapshot-reads.ts
 * readPlacementScope; PlacementSnapshot.scope). A planner that asks the
 * index beyond them fails instead of planning on a partial view.
 */
export interface ScopedPlacement {
  /** The provider ids (trees included) whose placement rows the planner will look at, from the index of the snapshot without them. */
  readonly scopeOf: (ix: SnapshotIndex) => readonly number[];
  /**
   * When given, the live instances are read only for the planner's scope
   * too (Snapshot.instanceScope): those on the hosts this names (a host
   * without a cell: in every cell), from the index of the snapshot without
   * instances and placement's rows, and those whose uuid is a consumer of
   * the scoped placement read. A host that is NULL or not plain ASCII (whose
   * folding the database and hostKey might not share) makes every instance
   * read, as without it.
   */
  readonly instanceHostsOf?: (ix: SnapshotIndex) => ReadonlyArray<{ readonly cellUuid?: string; readonly host: string | null }>;
  /**
   * 'orphan-candidates': read the cells' compute nodes and services, and
   * placement's providers, only for the live nodes that may be orphans
   * (readCandidates; Snapshot.nodeScope), no host mapping, and its --host
   * and --node looked up by name (`names`). For compute_node
   * cleanup_orphans. 'no-services': every compute
   * node, but of the services only the counts checkGroundTruth needs, and
   * no host mapping (Snapshot.nodeScope), for a planner that judges no node
   * by its service and takes no --host (placement cleanup_providers with
   * --resource_provider). 'stale-provider-candidates': as 'no-services', and
   * on MySQL of the nodes only their uuids and names, the soft-deleted ones,
   * and the live ones whose name a candidate provider holds; of placement's
   * providers only the root ones whose uuid no live node has, with their
   * trees (readStaleProviderCandidates), for placement cleanup_providers.
   */
  readonly nodes?: 'orphan-candidates' | 'no-services' | 'stale-provider-candidates';
  /**
   * With 'orphan-candidates': the --host and --node values the planner's
   * scope will check (checkScopeNames), looked up in every table it
   * searches (Snapshot.scopeNames); a value that is not plain ASCII makes
   * the read whole.
   */
  readonly names?: { readonly host?: string; readonly nodes?: readonly string[] };
}

/** What a partial read of the cells and placement works with (readCandidates, readStaleProviderCandidates). */
interface PartialRead {
  readonly deployment: Deployment;
  readonly cells: readonly CellMapping[];
  readonly placementDb: Database;
  /** The snapshot read's string pool (db/string-pool.ts). */
  readonly pool: StringPool;
  /** checkGroundTruth on the cells' parts, as the whole read runs it. */
  readonly groundTruth: (parts: readonly CellPart[]) => void;
  readonly progress: (line: string) => void;
}

/** A partial read's snapshot, before the fields every read shares. */
type PartialSnapshot = Omit<Snapshot, 'takenAt' | 'serviceDownTime' | 'cells' | 'ironicNodes'>;

interface CellPart {
  readonly services: ServiceRec[];
  readonly computeNodes: ComputeNodeRec[];
  readonly instances: InstanceRec[];
  readonly migrations: MigrationRec[];
  /** When the tables were read in part (readCandidates): what checkGroundTruth counts. */
  readonly counts?: { readonly services: number; readonly liveComputeNodes: number; readonly liveComputeServices: number };
}

export async function readSnapshot(deployment: Deployment, options: ReadSnapshotOptions): Promise<Snapshot> {
  boundHeapGrowth();
  // Bad input is reported before any database is touched.
  const progress = options.progress ?? (() => undefined);
  const ironic = options.ironic === undefined ? undefined : await readIronicTruth(options.ironic, progress);
  const ironicNodes = ironic?.nodes;
  // A sandbox is judged as of its creation (its heartbeats stopped then): see [nova_reconcile] sandbox_created_at.
  const takenAt = deployment.config.reconcile.sandboxCreatedAt ?? Date.now();
  const mappings = await deployment.cellMappings();
  let toRead = mappings.filter((m) => !m.isCell0);
  if (options.cellUuid !== undefined) {
    const wanted = await deployment.cellMapping(options.cellUuid);
    if (wanted === undefined) throw unknownCell(options.cellUuid);
    toRead = toRead.filter((m) => m.uuid === wanted.uuid);
  }
  const api = await deployment.api();
  // Opened before any cell is read, so a missing [placement_database] or an
  // unreachable server fails at once.
  const placementDb = options.placement === false ? undefined : await deployment.placement();

  // Shared by every database read, so that a uuid or host held by several tables is one string (db/string-pool.ts).
  const pool = new StringPool();
  const scoped = typeof options.placement === 'object' ? options.placement : undefined;
  const common = {
    takenAt,
    serviceDownTime: deployment.config.serviceDownTime,
    cells: mappings.map(toCellRec),
    ironicNodes,
    ...(ironic === undefined ? {} : { ironicOrigin: ironic.origin }),
    ...(options.ironicSettings === false ? {} : ironicSettingsOf(deployment.config.reconcile)),
  };
  const groundTruth = (parts: readonly CellPart[]): void =>
    checkGroundTruth(toRead, parts, options.requireServices !== false, ironicNodes, ironic?.origin.label, deployment.config.reconcile.minIronicFraction);
  const partial = placementDb === undefined ? undefined : { deployment, cells: toRead, placementDb, pool, groundTruth, progress };
  const candidates =
    partial === undefined
      ? undefined
      : scoped?.nodes === 'orphan-candidates'
        ? await readCandidates(partial, scoped.names)
        : scoped?.nodes === 'stale-provider-candidates'
          ? await readStaleProviderCandidates(partial)
          : undefined;
  // Instances are read after placement's scope when the planner scopes them (ScopedPlacement.instanceHostsOf).
  const laterInstances = scoped?.instanceHostsOf !== undefined && placementDb !== undefined;
  const snapshot: Snapshot = candidates === undefined ? await readWhole() : { ...common, ...candidates };
  async function readWhole(): Promise<Snapshot> {
    const placementRead = placementDb === undefined ? Promise.resolve(undefined) : readPlacementOf(placementDb, pool, options.placement === true ? 'whole' : options.placement === 'placement-audit' ? 'placement-audit' : 'audit', progress);
    // Handled right away so that a failure here cannot go unhandled while the cells are read.
    placementRead.catch(() => undefined);
    const noServices = scoped?.nodes === 'no-services' || scoped?.nodes === 'stale-provider-candidates';
    if (!noServices) progress(`reading host mappings from the API database (${api.target.display})…`);
    const [hostMappings, parts] = await Promise.all([
      noServices ? [] : readHostMappings(api.knex, pool),
      readEveryCell(deployment, toRead, (db, cell) => readCell(db, cell, pool, progress, { instances: !laterInstances, services: !noServices, computeId: hasComputeId(deployment, db) })),
    ]);
    const placement = await placementRead;
    groundTruth(parts);
    return {
      ...common,
      ...(noServices ? { nodeScope: 'no-services' as const, computeServiceCells: computeServiceCells(toRead, parts) } : {}),
      hostMappings,
      services: parts.flatMap((p) => p.services),
      computeNodes: parts.flatMap((p) => p.computeNodes),
      instances: parts.flatMap((p) => p.instances),
      migrations: parts.flatMap((p) => p.migrations),
      placement,
    };
  }
  const placement = snapshot.placement;
  if (scoped === undefined || placementDb === undefined || placement === undefined) return withRelease(snapshot);
  // The planner indexes the snapshot again; only placement's rows are new (indexWithPlacementRows).
  const base = indexSnapshot(snapshot);
  const providerIds = scoped.scopeOf(base);
  progress(`reading the allocations of ${new Set(providerIds).size} resource provider(s) from the placement database (${placementDb.target.display})…`);
  const rows = await readingPlacement(placementDb, async (): Promise<PlacementSnapshot> => {
    const read = await readPlacementScope(placementDb.knex, pool, placement, providerIds);
    // A read by uuid (readCandidates) holds the providers its consumers are allocated on elsewhere too: their generations are planned on.
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
  const instances = laterInstances ? await readInstancesOfScope(deployment, toRead, pool, scoped.instanceHostsOf?.(base) ?? [], rows.scope?.consumerUuids ?? new Set(), progress) : undefined;
  const scopedSnapshot: Snapshot = { ...snapshot, placement: rows, ...instances, release: deployment.openedRelease() };
  indexWithPlacementRows(base, scopedSnapshot);
  return scopedSnapshot;

  // The release of the databases read: where releases differ, the planners decide by it.
  function withRelease(s: Snapshot): Snapshot {
    return { ...s, release: deployment.openedRelease() };
  }
}

/**
 * compute_node cleanup_orphans' read (ScopedPlacement.nodes): each cell's
 * live nodes that may be orphans (readOrphanCandidateNodes), the services on
 * their hosts, its active migrations and the counts checkGroundTruth needs,
 * no host mapping, and placement's providers of those nodes' uuids with
 * their trees (readProvidersByUuid). Undefined, so that everything is read
 * as without it, when a candidate's host is NULL or not plain ASCII (whose
 * folding the database and hostKey might not share).
 */
async function readCandidates(
  { deployment, cells, placementDb, pool, groundTruth, progress }: PartialRead,
  names: NonNullable<ScopedPlacement['names']> = {},
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
 * scope's: ScopedPlacement.instanceHostsOf); a node as the uuid or
 * hypervisor_hostname of any compute node. Asked by IN lists the collation
 * folds as hostKey does (plain ASCII names only: readCandidates), then
 * compared by hostKey, so a name the collation alone takes for another
 * (an accent) is not found, as in the whole read.
 */
async function probeScopeNames(
  deployment: Deployment,
  cells: readonly CellMapping[],
  names: NonNullable<ScopedPlacement['names']>,
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

/**
 * placement cleanup_providers' read (ScopedPlacement.nodes), on MySQL: a
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
async function readStaleProviderCandidates({ deployment, cells, placementDb, pool, groundTruth, progress }: PartialRead): Promise<PartialSnapshot | undefined> {
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

/** Hosts to ask by name: folded and as spelt (db/cell/snapshot-reads.ts ScopedHosts). */
function scopedHosts(hosts: readonly string[]): ScopedHosts {
  return { keys: [...new Set(hosts.map(hostKey))], raw: [...new Set(hosts)] };
}

/** Each cell's part, read on cell_concurrency connections; a cell that cannot be read fails the whole snapshot. */
async function readEveryCell<T>(deployment: Deployment, cells: readonly CellMapping[], read: (db: Database, cell: CellMapping) => Promise<T>): Promise<T[]> {
  const settled = await fanOutInOrder(cells, deployment.config.reconcile.cellConcurrency, async (cell) => read(await deployment.cell(cell), cell));
  const out: T[] = [];
  settled.forEach((s, i) => {
    if (s === undefined) return;
    if (!s.ok) throw cellFailure(cells[i] as CellMapping, s.error);
    out.push(s.value);
  });
  // fanOutInOrder starts no new cell after a failure; a cell left unread is a failure too.
  if (out.length !== cells.length) throw new ReconcileError('internal', 'not every cell was read');
  return out;
}

/** A host name whose case folding hostKey and the database agree on (ASCII, no control characters). */
const PLAIN_HOST = /^[\x20-\x7e]+$/;

/**
 * The live instances a planner's scope needs (ScopedPlacement.instanceHostsOf),
 * with the Snapshot.instanceScope that says what they are; every live
 * instance, without a scope, when a host is NULL or not plain ASCII.
 */
async function readInstancesOfScope(
  deployment: Deployment,
  cells: readonly CellMapping[],
  pool: StringPool,
  hosts: ReadonlyArray<{ readonly cellUuid?: string; readonly host: string | null }>,
  consumerUuids: ReadonlySet<string>,
  progress: (line: string) => void,
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

function ironicSettingsOf(reconcile: Deployment['config']['reconcile']): Pick<Snapshot, 'ironicPartitions' | 'ironicShard'> {
  const { ironicPartitions, ironicShard } = reconcile;
  return { ...(ironicPartitions === undefined ? {} : { ironicPartitions }), ...(ironicShard === undefined ? {} : { ironicShard }) };
}

/**
 * A snapshot is read once and held to the end of the command, so V8's
 * default heap growth (up to four times what survived the last full
 * collection) lets garbage pile up to twice the live data: the audit of
 * 100,000 hosts peaked at 620 MB with 260 MB live. Growing by 30% at a time
 * holds it to 460-500 MB, for about 0.8 s more collection there and nothing
 * measurable at 30,000 hosts (bench/README.md, "Memory"). Set here rather
 * than at process start: a changed flag makes V8 refuse the code cache of
 * Node's built-in modules loaded after it (the drivers, and the built-ins
 * they need, are loaded by the time a snapshot is read), and commands that
 * read no snapshot (discover_hosts) keep the default. The flag
 * only feeds the heap's limit computation; an engine that does not know it
 * ignores it.
 */
function boundHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=30');
}

/** The whole node list, from the file or the API; an interrupted listing throws (nothing is judged on part of it). */
export async function readIronicTruth(source: IronicSource, progress: (line: string) => void): Promise<{ nodes: IronicNodeRec[]; origin: IronicOrigin }> {
  if (source.kind === 'read') return { nodes: [...source.nodes], origin: source.origin };
  if (source.kind === 'file') {
    const nodes = await readIronicNodesFile(source.file);
    return { nodes, origin: { kind: 'file', label: `--ironic-nodes ${source.file}`, location: source.file, nodes: nodes.length } };
  }
  const listing = await listIronicNodes(source.settings, { progress });
  return {
    nodes: [...listing.nodes],
    origin: { kind: 'api', label: `the Ironic API at ${listing.endpoint}`, location: listing.endpoint, nodes: listing.nodes.length },
  };
}

/** An export of 300,000 nodes is about 50 MB. */
const IRONIC_NODES_MAX_BYTES = 256 * 1024 * 1024;

/** Read and parse --ironic-nodes FILE; every problem is one ReconcileError('input') line. */
export async function readIronicNodesFile(path: string): Promise<IronicNodeRec[]> {
  let text: string;
  try {
    text = readTextFile(path, IRONIC_NODES_MAX_BYTES);
  } catch (err) {
    const why = errnoOf(err) === 'ENOENT' ? 'no such file' : describeFileError(err);
    throw new ReconcileError('input', `--ironic-nodes ${path}: cannot read the file (${why})`, { cause: err });
  }
  return parseIronicNodes(text, path);
}

/**
 * Empty or implausible ground truth is an error, not a verdict (issue 23):
 * with it every compute node would look orphaned.
 *  - A cell whose services table has no row at all (deleted ones included:
 *    Nova soft-deletes services, so a cell that ever ran nova-compute keeps
 *    them) while it has live compute nodes: a truncated table, a restore from
 *    the wrong backup, or the wrong database.
 *  - An --ironic-nodes list that holds fewer than min_ironic_fraction of the
 *    live ironic compute nodes the cells know (an empty list, another
 *    region's, a project-scoped listing).
 */
function checkGroundTruth(
  cells: readonly CellMapping[],
  parts: readonly CellPart[],
  requireServices: boolean,
  ironicNodes: readonly IronicNodeRec[] | undefined,
  ironicLabel: string | undefined,
  minIronicFraction: number,
): void {
  if (requireServices) parts.forEach((p, i) => {
    const live = p.counts?.liveComputeNodes ?? p.computeNodes.filter((n) => !n.deleted).length;
    const cell = cells[i] as CellMapping;
    if ((p.counts?.services ?? p.services.length) === 0 && live > 0)
      throw new ReconcileError('implausible', `cell ${cellLabel(cell)} (${cell.uuid}) has ${live} live compute node(s) but its services table is empty; refusing to judge its nodes`, {
        hint: 'check that the cell database is the live one (not a restored backup or another deployment\'s) and re-run',
      });
  });
  if (ironicNodes === undefined || ironicLabel === undefined) return;
  const knownIronic = parts.flatMap((p) => p.computeNodes.filter((n) => !n.deleted && n.hypervisorType === 'ironic' && n.hypervisorHostname !== null).map((n) => n.hypervisorHostname as string));
  const { known, held } = ironicListCoverage(ironicNodes, knownIronic);
  if (known === 0) return;
  if (ironicNodes.length === 0) throw implausibleList(ironicLabel, `the list is empty, but the cells know ${known} live ironic compute node(s)`);
  if (held < minIronicFraction * known)
    throw implausibleList(
      ironicLabel,
      `the list holds ${held} of the ${known} live ironic compute node(s) the cells know (${percent(held / known)}, below min_ironic_fraction ${minIronicFraction})`,
    );
}

/** The cells (of those read, in order) whose counts hold a live nova-compute service (Snapshot.computeServiceCells). */
function computeServiceCells(cells: readonly CellMapping[], parts: readonly CellPart[]): string[] {
  return parts.flatMap((p, i) => ((p.counts?.liveComputeServices ?? 0) > 0 ? [(cells[i] as CellMapping).uuid] : []));
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

export function unknownCell(uuid: string): ReconcileError {
  return new ReconcileError('not-found', `cell ${uuid} has no mapping`, { hint: 'run `nova-reconcile cell_v2 list_cells` to see the cells' });
}

/**
 * A cell's tables; its instances only with `read.instances` (else read for
 * the planner's scope, later), its services only with `read.services` (else
 * counted, for checkGroundTruth).
 */
async function readCell(
  db: Database,
  cell: CellMapping,
  pool: StringPool,
  progress: (line: string) => void,
  read: { readonly instances: boolean; readonly services: boolean; readonly computeId: boolean },
): Promise<CellPart> {
  progress(`reading cell ${cellLabel(cell)} (${db.target.display})…`);
  const [services, computeNodes, instances, migrations, counts] = await Promise.all([
    read.services ? readServices(db.knex, cell.uuid, pool) : [],
    readComputeNodes(db.knex, cell.uuid, pool),
    read.instances ? readLiveInstances(db.knex, cell.uuid, pool, read.computeId) : [],
    readActiveMigrations(db.knex, cell.uuid),
    read.services ? undefined : countCellRows(db.knex),
  ]);
  return { services, computeNodes, instances, migrations, ...(counts === undefined ? {} : { counts }) };
}

async function readPlacementOf(db: Database, pool: StringPool, read: PlacementRead, progress: (line: string) => void): Promise<PlacementSnapshot> {
  progress(`reading the placement database (${db.target.display})…`);
  return readingPlacement(db, () => readPlacement(db.knex, pool, read));
}

/** A read of the placement database; a failure of it is a connection error naming the database. */
async function readingPlacement<T>(db: Database, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new ReconcileError('connection', `cannot read the ${db.label}: ${describeDriverError(err)}`, { cause: err });
  }
}

/**
 * Every allocation in placement, one consumer at a time (the audit's read:
 * streamAllocationsByConsumer), after a readSnapshot with placement 'audit'.
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

/** Whether the cell's instances have compute_id (Nova 28.0.0+). */
function hasComputeId(deployment: Deployment, db: Database): boolean {
  return OPTIONAL_COLUMNS.instances.some((column) => deployment.schemaOf(db)?.present.get('instances')?.has(column) === true);
}

function cellFailure(cell: CellMapping, err: unknown): ReconcileError {
  const reason = isReconcileError(err) ? err.message : describeDriverError(err);
  const kind = isReconcileError(err) && (err.kind === 'config' || err.kind === 'schema') ? err.kind : 'connection';
  return new ReconcileError(kind, `cannot read cell ${cellLabel(cell)} (${cell.uuid}): ${reason}`, {
    hint: 'every cell must be readable: nova-reconcile never reconciles on partial knowledge; fix the cell database or its database_connection and re-run',
    cause: err,
  });
}

function cellLabel(cell: CellMapping): string {
  return cell.name === null || cell.name === '' ? cell.uuid : `'${cell.name}'`;
}

function toCellRec(m: CellMapping): CellRec {
  return { id: m.id, uuid: m.uuid, name: m.name, isCell0: m.isCell0 };
}
