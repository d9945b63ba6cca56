// `audit` one cell at a time (issue 41): memory bounded by the largest cell,
// not by the cloud. The first pass (audit-keys.ts) learns which cell holds
// each host, node name and node uuid, and where each host mapping and
// provider belongs. Then each cell is read whole with what it owns: its host
// mappings, the provider trees its nodes name, the allocations on them and
// its instances' allocations, and beside them the providers no node names
// that those consumers hold allocations on. That snapshot is audited by the
// very code that audits a whole one (domain/audit), the cell's findings are
// kept (domain/audit/partitions.ts), and the cell is let go before the next.
// Last, what no cell owns is audited the same way: the providers no node
// names with the consumers on their stale trees, the host mappings no cell
// holds with the instances on their hosts, and the consumers that are no
// cell's. Across cells the walk holds the node names' owners (8 bytes
// each), the providers' (6), the consumers' (8, hashed; those beside a cell
// exactly), and the few rows of the last part.
//
// What a cell's snapshot cannot judge alone is not guessed: a key two cells
// hold, a provider two cells' nodes name, a consumer with allocations in two
// cells or that is an instance of another, an instance on a node name of
// another cell, a consumer id that is not plain ASCII (whose grouping the
// database's collation decides). Any of them returns `whole`, and the
// caller audits the whole snapshot, as before.
import type { Database } from '../../db/connect.js';
import type { CellMapping, Deployment } from '../../db/deployment-databases.js';
import { readHostMappingsOfCell } from '../../db/api/snapshot-reads.js';
import { readComputeNodes, readLiveInstances, readServices } from '../../db/cell/snapshot-reads.js';
import { eachAllocationOn, eachAllocationRowOf, eachAllocationRowOn } from '../../db/placement/audit-reads.js';
import { className, readAllocationsOfConsumers, readNames, readProvidersById, readRootInventoriesOf } from '../../db/placement/snapshot-reads.js';
import { AllocationColumns } from '../../domain/allocation-columns.js';
import { StringPool } from '../../db/string-pool.js';
import { openAudit, selectFindings, type AuditOptions, type Finding } from '../../domain/audit/index.js';
import { cellFindings, lastPartFindings } from '../../domain/audit/partitions.js';
import { KeyOwnersBuilder, NO_OWNER, type KeyOwners } from '../../domain/key-owners.js';
import type { DeploymentRelease } from '../../domain/nova-release.js';
import type { AllocationRec, ComputeNodeRec, HostMappingRec, InstanceRec, InventoryRec, MigrationRec, ProviderRec, ServiceRec, Snapshot } from '../../domain/model.js';
import { hostKey, indexSnapshot, providerTree } from '../../domain/snapshot-index.js';
import { isStaleComputeProvider } from '../../domain/stale-providers.js';
import { pushTo } from '../../domain/text-and-maps.js';
import { UuidSet } from '../../domain/uuid-set.js';
import { readCloudKeys, splitHostMappings, splitProviders, type MappingSplit, type ProviderOwners } from './audit-keys.js';
import { cellFailure, cellLabel, hasComputeId } from './cells.js';
import { collectGarbage } from './collect-garbage.js';
import { readingPlacement } from './placement.js';

/** The fields of every snapshot of the walk (the whole read's, less the rows). */
export type CommonFields = Pick<Snapshot, 'takenAt' | 'serviceDownTime' | 'cells' | 'ironicNodes' | 'ironicOrigin' | 'ironicPartitions' | 'ironicShard'>;

export interface ByCellInput {
  readonly deployment: Deployment;
  /** The cells to walk, in order (never cell0). */
  readonly cells: readonly CellMapping[];
  readonly common: CommonFields;
  readonly ironicLabel: string | undefined;
  /** The checks' options; the scope (--cell, --host, --kind) selects at the end. */
  readonly options: AuditOptions;
  readonly progress: (line: string) => void;
}

/** The findings and the release the databases say, or why the cloud must be read whole. */
export type ByCellOutcome = { readonly findings: Finding[]; readonly release: DeploymentRelease } | { readonly whole: string };

/** What the walk keeps from cell to cell. */
interface Walk {
  readonly input: ByCellInput;
  /** The fields every part's snapshot has. */
  readonly common: CommonFields & { readonly release: DeploymentRelease };
  readonly placementDb: Database;
  readonly classNames: ReadonlyMap<number, string>;
  /** Lower-cased node names, by the cell that holds them. */
  readonly names: KeyOwners;
  /** Every cell's active migrations. */
  readonly migrations: readonly MigrationRec[];
  readonly mappings: MappingSplit;
  readonly providers: ProviderOwners;
  readonly last: LastPart;
  /** Every consumer a cell judged, by that cell (hashed: only to find one that two cells judged). */
  readonly consumers: KeyOwnersBuilder;
  /** Exactly, the consumers a cell judged that hold an allocation on a provider no node names: the others there are the last part's. */
  readonly judgedBeside: UuidSet;
  readonly findings: Finding[];
  hostSeen: boolean;
}

/** The providers no node names, read whole, and what the last part gathers. */
interface LastPart {
  readonly providers: ReadonlyMap<number, ProviderRec>;
  readonly inventories: readonly InventoryRec[];
  /** Consumers holding an allocation on any of these providers. */
  readonly consumers: UuidSet;
  /** Consumers on their stale trees: their instances are kept for the last part. */
  readonly staleConsumers: ReadonlySet<string>;
  /** The folded hosts of the host mappings no cell holds: the instances on them are kept. */
  readonly unheldHosts: ReadonlySet<string>;
  readonly instances: InstanceRec[];
}

export async function auditByCell(input: ByCellInput): Promise<ByCellOutcome> {
  const { cells, options } = input;
  const walk = await openWalk(input);
  if ('whole' in walk) return walk;
  for (const [i, cell] of cells.entries()) {
    const whole = await judgeCell(walk, i, cell);
    if (whole !== undefined) return { whole };
    collectGarbage();
  }
  const owners = walk.consumers.build();
  if (owners.shared > 0) return { whole: `${owners.shared} consumer(s) hold allocations in two cells, or are instances of two` };
  if (options.host !== undefined && !walk.hostSeen) return { whole: 'the --host asked is no row of any cell' };
  await judgeLastPart(walk);
  return { findings: selectFindings(walk.findings, options, input.common.cells), release: walk.common.release };
}

/**
 * The first pass and the sweeps of the mappings and providers. Of the keys,
 * the walk keeps only the node names (an instance on another cell's node
 * name is not judged apart); the hosts and node uuids have done their work.
 */
async function openWalk(input: ByCellInput): Promise<Walk | { readonly whole: string }> {
  const { deployment, cells, progress, options } = input;
  const api = await deployment.api();
  const placementDb = await deployment.placement();
  const host = options.host === undefined ? undefined : hostKey(options.host);
  const ironic = input.common.ironicNodes === undefined || input.ironicLabel === undefined ? undefined : { nodes: input.common.ironicNodes, label: input.ironicLabel };
  const keys = await readCloudKeys({ deployment, cells, ironic, progress, ...(host === undefined ? {} : { host }) });
  if ('shared' in keys) return { whole: keys.shared };
  // Every cell is open now: the release is every database's (nova-release.ts).
  const common = { ...input.common, release: deployment.openedRelease() };
  const pool = new StringPool();
  progress(`reading host mappings from the API database (${api.target.display})…`);
  const mappings = await splitHostMappings(api.knex, await deployment.cellMappings(), cells, keys, host);
  progress(`reading the placement database (${placementDb.target.display})…`);
  const split = await readingPlacement(placementDb, async () => {
    const providers = await splitProviders(placementDb.knex, keys);
    if ('shared' in providers) return providers;
    const classNames = await readNames(placementDb.knex, 'resource_classes');
    return { providers, classNames, last: await readLastProviders(placementDb, pool, classNames, providers, mappings) };
  });
  if ('shared' in split) return { whole: split.shared };
  return {
    input,
    common,
    placementDb,
    ...split,
    names: keys.names,
    migrations: keys.migrations,
    mappings,
    consumers: new KeyOwnersBuilder(),
    judgedBeside: new UuidSet(),
    findings: [],
    hostSeen: keys.hostSeen || mappings.hostSeen,
  };
}

/** The providers no node names, their inventories, the consumers on them, and which of those are on stale trees. */
async function readLastProviders(placementDb: Database, pool: StringPool, classNames: ReadonlyMap<number, string>, owners: ProviderOwners, mappings: MappingSplit): Promise<LastPart> {
  const db = placementDb.knex;
  const ids = owners.idsOf(NO_OWNER);
  const providers = await readProvidersById(db, pool, ids);
  const inventories = await readRootInventoriesOf(db, classNames, providers);
  // No node of any cell has their uuids or names: their staleness is judged without nodes, as the whole index would judge it.
  const ix = indexSnapshot({ takenAt: 0, serviceDownTime: 0, cells: [], hostMappings: [], services: [], computeNodes: [], instances: [], migrations: [], ironicNodes: undefined, placement: { providers, inventories, allocations: [], consumers: [] } });
  const staleTrees = providers.filter((rp) => isStaleComputeProvider(ix, rp)).flatMap((rp) => providerTree(ix, rp).map((p) => p.id));
  const staleTree = new Set(staleTrees);
  const consumers = new UuidSet();
  const staleConsumers = new Set<string>();
  await eachAllocationOn(db, ids, (providerId, consumerUuid) => {
    consumers.add(consumerUuid);
    if (staleTree.has(providerId)) staleConsumers.add(pool.get(consumerUuid));
  });
  return { providers: new Map(providers.map((rp) => [rp.id, rp])), inventories, consumers, staleConsumers, unheldHosts: new Set(mappings.unheld.map((m) => hostKey(m.host))), instances: [] };
}

/** One cell: read, checked for what it cannot judge alone, audited, let go. A reason to read the cloud whole, or undefined. */
async function judgeCell(walk: Walk, i: number, cell: CellMapping): Promise<string | undefined> {
  const { input } = walk;
  const pool = new StringPool();
  // Bound, not closures: a closure would keep this frame's rows alive after it returns (V8 holds the context).
  const [rows, ownPart] = await Promise.all([readCellRows(walk, i, cell, pool), readingPlacement(walk.placementDb, readOwnPlacement.bind(undefined, walk, i, pool))]);
  for (const inst of rows.instances) {
    if (input.options.host !== undefined && hostKey(inst.host) === hostKey(input.options.host)) walk.hostSeen = true;
    const owner = inst.node === null ? NO_OWNER : walk.names.ownerOf(inst.node.toLowerCase());
    if (owner !== NO_OWNER && owner !== i) return `instance ${inst.uuid} of cell ${cellLabel(cell)} is on a node name of another cell`;
    if (walk.last.staleConsumers.has(inst.uuid) || walk.last.unheldHosts.has(hostKey(inst.host))) walk.last.instances.push(inst);
    judged(walk, inst.uuid, i);
  }
  const stray = strayMapping(cellLabel(cell), rows);
  if (stray !== undefined) return stray;
  const placement = await readingPlacement(walk.placementDb, completeConsumers.bind(undefined, walk, i, rows.instances, pool, ownPart));
  if (typeof placement === 'string') return placement;
  const strayRp = strayProvider(cellLabel(cell), rows, placement.own);
  if (strayRp !== undefined) return strayRp;
  const snapshot: Snapshot = {
    ...walk.common,
    hostMappings: rows.mappings,
    services: rows.services,
    computeNodes: rows.computeNodes,
    instances: rows.instances,
    migrations: walk.migrations,
    placement: { providers: placement.providers, inventories: placement.inventories, allocations: [], consumers: [], streamed: true },
  };
  // The reads' garbage (the driver's packets, the rows made records) goes
  // before the audit's index is built on top of it: the peak held both
  // (10 x 30,000 hosts: 206 MB, 193 MB with this collection).
  collectGarbage();
  const findings = auditPart(snapshot, input.options, placement.allocations.groups());
  walk.findings.push(...cellFindings(findings, (id) => walk.providers.ownerOf(id) === i));
  return undefined;
}

/** A consumer judged by cell `i`. */
function judged(walk: Walk, consumerUuid: string, i: number): void {
  walk.consumers.add(consumerUuid, i);
  if (walk.last.consumers.has(consumerUuid)) walk.judgedBeside.add(consumerUuid);
}

/**
 * The first pass gave host mappings and providers to a cell by 48-bit
 * hashes (domain/key-owners.ts): each must hold a key of the cell's rows
 * exactly, or the cloud is read whole rather than judged on a collision.
 */
function strayMapping(cell: string, rows: CellRows): string | undefined {
  const held = heldHosts(rows.services, rows.computeNodes);
  const stray = rows.mappings.find((m) => !held.has(hostKey(m.host)));
  return stray === undefined ? undefined : `host mapping ${stray.id} was given to cell ${cell} by a hash one of its hosts has too`;
}

/** The folded hosts a cell holds: a live nova-compute service or a live compute node is on them (as the audit's mapping checks say). */
function heldHosts(services: readonly ServiceRec[], nodes: readonly ComputeNodeRec[]): Set<string> {
  const held = new Set<string>();
  for (const svc of services) if (!svc.deleted && svc.binary === 'nova-compute' && svc.host !== null) held.add(hostKey(svc.host));
  for (const n of nodes) if (!n.deleted && n.host !== null) held.add(hostKey(n.host));
  return held;
}

/** strayMapping's check of the providers given to the cell: each has the uuid or name of one of its nodes, or its root has. */
function strayProvider(cell: string, rows: CellRows, providers: readonly ProviderRec[]): string | undefined {
  const keys = new Set<string>();
  for (const n of rows.computeNodes) {
    if (n.uuid !== null) keys.add(`u ${n.uuid}`);
    if (n.hypervisorHostname !== null) keys.add(`n ${n.hypervisorHostname.toLowerCase()}`);
  }
  const named = (rp: ProviderRec | undefined): boolean => rp !== undefined && (keys.has(`u ${rp.uuid}`) || (rp.name !== null && keys.has(`n ${rp.name.toLowerCase()}`)));
  const byId = new Map(providers.map((rp) => [rp.id, rp]));
  const stray = providers.find((rp) => !named(rp) && !named(rp.rootId === null ? undefined : byId.get(rp.rootId)));
  return stray === undefined ? undefined : `resource provider ${stray.uuid} was given to cell ${cell} by a hash one of its nodes has too`;
}

type CellRows = Pick<Snapshot, 'services' | 'computeNodes'> & { readonly instances: InstanceRec[]; readonly mappings: HostMappingRec[] };

/** A cell's tables and the host mappings it owns (its own, less those of hosts another cell holds, and those of its hosts mapped elsewhere). */
async function readCellRows(walk: Walk, i: number, cell: CellMapping, pool: StringPool): Promise<CellRows> {
  const { deployment } = walk.input;
  try {
    const db = await deployment.cell(cell);
    walk.input.progress(`reading cell ${cellLabel(cell)} (${db.target.display})…`);
    // One after the other, on one connection: each cell's pool keeps its connections (and their buffers) to the end of the run.
    const services = await readServices(db.knex, cell.uuid, pool);
    const computeNodes = await readComputeNodes(db.knex, cell.uuid, pool);
    const instances = await readLiveInstances(db.knex, cell.uuid, pool, hasComputeId(deployment, db));
    const api = await deployment.api();
    // The cell's own mappings of the hosts it holds; those of its hosts mapped elsewhere came from the sweep.
    const held = heldHosts(services, computeNodes);
    const own = (await readHostMappingsOfCell(api.knex, pool, cell.id)).filter((m) => held.has(hostKey(m.host)));
    const mappings = [...own, ...(walk.mappings.elsewhere[i] ?? [])].sort((a, b) => a.id - b.id);
    return { services, computeNodes, instances, mappings };
  } catch (err) {
    throw cellFailure(cell, err);
  }
}

interface CellPlacement {
  /** The providers given to the cell. */
  readonly own: readonly ProviderRec[];
  /** Those and the last part's providers its consumers hold allocations on, in id order. */
  readonly providers: readonly ProviderRec[];
  readonly inventories: readonly InventoryRec[];
  /** Every allocation of the cell's consumers. */
  readonly allocations: AllocationColumns;
}

/** The providers given to a cell, the inventories the audit reads of them, and every allocation on them. */
interface OwnPlacement {
  readonly own: readonly ProviderRec[];
  readonly inventories: readonly InventoryRec[];
  readonly allocations: AllocationColumns;
}

/** Read beside the cell's tables: it needs only the provider ids the first pass gave the cell. */
async function readOwnPlacement(walk: Walk, i: number, pool: StringPool): Promise<OwnPlacement> {
  const db = walk.placementDb.knex;
  const ids = walk.providers.idsOf(i);
  const allocations = new AllocationColumns((id) => className(walk.classNames, id));
  const [own] = await Promise.all([
    readProvidersById(db, pool, ids),
    eachAllocationRowOn(db, ids, (id, providerId, consumerUuid, classId, used) => allocations.push(id, providerId, pool.get(consumerUuid), classId, used)),
  ]);
  return { own, inventories: await readRootInventoriesOf(db, walk.classNames, own), allocations };
}

/**
 * The cell's consumers made whole: its instances' allocations and its
 * consumers' on providers no node names, which join the snapshot beside the
 * cell's own. A reason to read whole when a consumer reaches another cell's
 * provider or its id is not plain ASCII.
 */
async function completeConsumers(walk: Walk, i: number, instances: readonly InstanceRec[], pool: StringPool, part: OwnPlacement): Promise<CellPlacement | string> {
  const { own, allocations } = part;
  const onOwn = allocations.consumerUuids();
  const wanted = new Set([...onOwn, ...instances.map((inst) => inst.uuid)]);
  const elsewhere = [...wanted].filter((c) => walk.last.consumers.has(c));
  await eachAllocationRowOf(walk.placementDb.knex, elsewhere, (id, providerId, consumerUuid, classId, used) => {
    if (wanted.has(consumerUuid) && walk.providers.ownerOf(providerId) !== i) allocations.push(id, providerId, pool.get(consumerUuid), classId, used);
  });
  const instanceUuids = new Set(instances.map((inst) => inst.uuid));
  for (const consumerUuid of allocations.consumerUuids()) {
    if (!/^[\x20-\x7e]*$/.test(consumerUuid)) return `consumer id ${JSON.stringify(consumerUuid)} is not plain ASCII`;
    // The cell's instances are registered already (judgeCell).
    if (!instanceUuids.has(consumerUuid)) judged(walk, consumerUuid, i);
  }
  const context = new Map<number, ProviderRec>();
  let reaches: string | undefined;
  allocations.forEachRow((providerId, consumerUuid) => {
    const owner = walk.providers.ownerOf(providerId);
    if (owner === i || reaches !== undefined) return;
    const rp = owner === NO_OWNER ? walk.last.providers.get(providerId) : undefined;
    if (rp === undefined) {
      reaches = `consumer ${consumerUuid} holds allocations on providers of two cells`;
      return;
    }
    // With its root: whether the tree is stale or sharing is the root's.
    const root = rp.rootId === null ? undefined : walk.last.providers.get(rp.rootId);
    for (const p of [rp, root]) if (p !== undefined) context.set(p.id, p);
  });
  if (reaches !== undefined) return reaches;
  const contextIds = new Set(context.keys());
  const inventories = [...part.inventories, ...walk.last.inventories.filter((inv) => contextIds.has(inv.providerId))];
  return { own, providers: [...own, ...context.values()].sort((a, b) => a.id - b.id), inventories: inventories.sort((a, b) => a.id - b.id), allocations };
}

/** openAudit on one part's snapshot, every consumer handed over whole; its findings unscoped. */
function auditPart(snapshot: Snapshot, options: AuditOptions, groups: Iterable<readonly [string, AllocationRec[]]>): Finding[] {
  const { cellUuid: _cell, host: _host, kinds: _kinds, ...checks } = options;
  const audit = openAudit(snapshot, checks);
  const kept: AllocationRec[] = [];
  for (const [consumerUuid, rows] of groups) if (audit.consumer(consumerUuid, rows.sort((a, b) => a.id - b.id))) kept.push(...rows);
  return audit.finish(kept);
}

/** What no cell owns: the providers no node names, the host mappings no cell holds, the consumers no cell judged. */
async function judgeLastPart(walk: Walk): Promise<void> {
  const { last, input } = walk;
  const db = walk.placementDb.knex;
  const pool = new StringPool();
  const byConsumer = await readingPlacement(walk.placementDb, async () => {
    const own = new Set<string>();
    await eachAllocationOn(db, [...last.providers.keys()], (_providerId, consumerUuid) => {
      if (!walk.judgedBeside.has(consumerUuid)) own.add(consumerUuid);
    });
    const wanted = new Set([...own, ...last.staleConsumers]);
    const out = new Map<string, AllocationRec[]>();
    for (const a of await readAllocationsOfConsumers(db, pool, walk.classNames, [...wanted])) if (wanted.has(a.consumerUuid)) pushTo(out, a.consumerUuid, a);
    return { out, own };
  });
  const snapshot: Snapshot = {
    ...walk.common,
    hostMappings: walk.mappings.unheld,
    services: [],
    computeNodes: [],
    instances: last.instances,
    migrations: walk.migrations,
    placement: { providers: [...last.providers.values()], inventories: last.inventories, allocations: [], consumers: [], streamed: true },
  };
  const findings = auditPart(snapshot, input.options, byConsumer.out);
  walk.findings.push(...lastPartFindings(findings, (c) => byConsumer.own.has(c)));
}
