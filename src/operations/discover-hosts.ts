// cell_v2 discover_hosts, set-based and safe in parallel. Per cell: one
// candidate query, batched collation-aware lookups of existing mappings,
// multi-row inserts that survive a concurrent run, and batched UPDATEs of
// compute_nodes.mapped. Cells run concurrently (bounded); results keep
// nova's cell order so the verbose output is byte-identical.
import type { Knex } from 'knex';
import type { Database, Dialect } from '../db/connect.js';
import type { CellMapping, Deployment } from '../db/deployment-databases.js';
import { cellIdByCandidate, findHostMappings, insertHostMappings, readExactHostMappings, splitByExactMappings, type ExactHostMappings } from '../db/api/host-mappings.js';
import { listMappedComputeNodeHosts, listUnmappedComputeNodes, markComputeNodesMapped, readLiveComputeNodes, type NodeRef } from '../db/cell/compute-nodes.js';
import { listComputeServiceHosts, type ServiceHostRow } from '../db/cell/services.js';
import { listMappedNodesWithoutMapping, listServicesNotMappedHere, sameServerProbe, type SameServerProbe, type ServiceNotMappedHere } from '../db/host-mapping-join.js';
import { BATCH_SIZE, chunk } from '../db/batches.js';
import { describeDriverError, isDuplicateKeyError } from '../db/driver-errors.js';
import { utcNowString } from '../db/time.js';
import {
  buildDiscoveryEvents,
  classifyHosts,
  firstNodePerHost,
  selectNodesToMark,
  type DiscoveryCandidate,
  type DiscoveryEvent,
} from '../domain/host-discovery.js';
import { ReconcileError } from '../errors.js';
import { fanOutInOrder, type Settled } from './fan-out.js';

export interface DiscoverOptions {
  readonly cellUuid: string | undefined;
  readonly byService: boolean;
  readonly dryRun: boolean;
  readonly concurrency: number;
  /** List live nova-compute services still without a mapping after the run (the JSON document's warning). */
  readonly reportUnmappedServices?: boolean;
}

export interface MappedElsewhere {
  readonly host: string;
  readonly cellUuid: string;
}

export type CellDiscovery =
  | { readonly kind: 'skipped-cell0'; readonly cell: CellMapping }
  | {
      readonly kind: 'discovered';
      readonly cell: CellMapping;
      /** One per candidate in nova's order (nodes by id, or services). */
      readonly events: readonly DiscoveryEvent[];
      /** Hosts whose mapping this run created (or would create, with dryRun). */
      readonly created: readonly string[];
      /** Hosts found mapped to another cell than the one holding them. */
      readonly mappedElsewhere: readonly MappedElsewhere[];
      /** Hosts a concurrent run mapped to this cell while we ran. */
      readonly mappedConcurrently: readonly string[];
      /** Nodes whose mapped flag was (or would be) set to 1. */
      readonly nodesMarked: number;
      /** Nodes skipped because their host column is NULL. */
      readonly nodesWithoutHost: number;
      /** With reportUnmappedServices: live nova-compute services that have no mapping and were not mapped by this run. */
      readonly unmappedServices?: readonly string[];
      /** How the hosts without a mapping were found, for the --debug log. */
      readonly hostMappingRead: string;
    }
  | { readonly kind: 'failed'; readonly cell: CellMapping; readonly error: unknown };

export interface DiscoverResult {
  /** True when every cell was listed (no --cell_uuid): nova then prints "Found N cell mappings.". */
  readonly listedAll: boolean;
  readonly cellMappingCount: number;
  readonly cells: readonly CellDiscovery[];
  readonly dryRun: boolean;
}

export async function discoverHosts(deployment: Deployment, options: DiscoverOptions): Promise<DiscoverResult> {
  let mappings: readonly CellMapping[];
  if (options.cellUuid !== undefined && options.cellUuid !== '') {
    const one = await deployment.cellMapping(options.cellUuid);
    // Nova's CellMappingNotFound text, which ends in the generic 255 handler.
    if (one === undefined) throw new ReconcileError('not-found', `Cell ${options.cellUuid} has no mapping.`);
    mappings = [one];
  } else {
    mappings = await deployment.cellMappings();
  }
  const api = await deployment.api();
  if (!options.dryRun) await deployment.assertWritable({ placement: false });
  const lookup = hostMappingLookup(api);
  const cellIdToUuid = new Map(mappings.map((m) => [m.id, m.uuid]));
  // One user lock proves, for every cell, whether it shares the API database's server.
  const probe = sameServerProbe(api);
  let settled: Array<Settled<CellDiscovery> | undefined>;
  try {
    settled = await fanOutInOrder(mappings, options.concurrency, async (cell): Promise<CellDiscovery> => {
      if (cell.isCell0) return { kind: 'skipped-cell0', cell };
      const db = await deployment.cell(cell);
      return discoverInCell(api, probe, lookup, db, cell, options, (id) => cellIdToUuid.get(id) ?? `id ${id}`);
    });
  } finally {
    await probe.close();
  }
  const cells: CellDiscovery[] = [];
  settled.forEach((s, i) => {
    if (s === undefined) return;
    const cell = mappings[i] as CellMapping;
    cells.push(s.ok ? s.value : { kind: 'failed', cell, error: s.error });
  });
  return { listedAll: options.cellUuid === undefined || options.cellUuid === '', cellMappingCount: mappings.length, cells, dryRun: options.dryRun };
}

/** Looks up the mappings of candidate hosts; see readExactHostMappings for when the whole table is read once. */
interface HostMappingLookup {
  /** Each of these hosts that has a mapping → its cell id. */
  find(hosts: readonly string[]): Promise<Map<string, number>>;
  /** The hosts, of these distinct ones, that have no mapping, in their order. */
  unmapped(hosts: readonly string[]): Promise<string[]>;
}

function hostMappingLookup(api: Database): HostMappingLookup {
  let exact: Promise<ExactHostMappings> | undefined;
  const wholeTable = (hosts: readonly string[]): Promise<ExactHostMappings> | undefined =>
    api.dialect !== 'mysql' || hosts.length <= BATCH_SIZE ? undefined : (exact ??= readExactHostMappings(api.knex));
  return {
    async find(hosts) {
      const known = wholeTable(hosts);
      if (known === undefined) return cellIdByCandidate(await findHostMappings(api.knex, api.dialect, hosts));
      const { exact, rest } = splitByExactMappings(hosts, await known);
      return rest.length === 0 ? exact : cellIdByCandidate(await findHostMappings(api.knex, api.dialect, rest), exact);
    },
    async unmapped(hosts) {
      // As splitByExactMappings, without building the map of the found.
      const known = wholeTable(hosts);
      const rest = known === undefined ? hosts : hosts.filter(isUnknownTo(await known));
      if (rest.length === 0) return [];
      const found = cellIdByCandidate(await findHostMappings(api.knex, api.dialect, rest));
      return rest.filter((h) => !found.has(h));
    },
  };
}

function isUnknownTo(known: ExactHostMappings): (host: string) => boolean {
  return (host) => !known.has(host);
}

async function discoverInCell(
  api: Database,
  probe: SameServerProbe,
  lookup: HostMappingLookup,
  cellDb: Database,
  cell: CellMapping,
  options: DiscoverOptions,
  cellUuidOf: (id: number) => string,
): Promise<CellDiscovery> {
  const unmappedNodes = withHost(await listUnmappedComputeNodes(cellDb.knex));
  const nodeHosts = unmappedNodes.nodes.map((n) => n.host);
  const { candidates, services, mappedTo, read } = await findCandidates(probe, lookup, cellDb, cell, options.byService, unmappedNodes.nodes);
  const candidateHosts = candidates.map((c) => c.host);
  const classification = classifyHosts(candidateHosts, mappedTo, cell.id);

  const now = utcNowString();
  const outcome = options.dryRun
    ? { created: classification.unmapped, sameCell: [] as string[], elsewhere: new Map<string, number>() }
    : await createMappings(api.knex, api.dialect, cell.id, classification.unmapped, now);

  const elsewhere = new Map([...classification.elsewhere, ...outcome.elsewhere]);
  // Which of the unmapped nodes' hosts now map to this cell: the ones already
  // there, the ones just created, and the ones a concurrent run created.
  const nodeClass = classifyHosts(nodeHosts, mappedTo, cell.id);
  const mappedHere = new Set<string>([...nodeClass.inCell, ...outcome.created, ...outcome.sameCell]);
  const toMark = selectNodesToMark(unmappedNodes.nodes, mappedHere);
  const nodesMarked = options.dryRun || toMark.length === 0 ? toMark.length : await markComputeNodesMapped(cellDb.knex, toMark, now);
  const unmappedServices = options.reportUnmappedServices === true ? await listUnmappedServices(lookup, services ?? (await listComputeServiceHosts(cellDb.knex)), outcome.created) : undefined;

  return {
    kind: 'discovered',
    cell,
    events: buildDiscoveryEvents(candidates, new Set(outcome.created)),
    created: outcome.created,
    mappedElsewhere: [...elsewhere].map(([host, cellId]) => ({ host, cellUuid: cellUuidOf(cellId) })),
    mappedConcurrently: outcome.sameCell,
    nodesMarked,
    nodesWithoutHost: unmappedNodes.withoutHost,
    ...(unmappedServices === undefined ? {} : { unmappedServices }),
    hostMappingRead: read,
  };
}

interface Candidates {
  /** nova's walk, in its order; --by-service joined: only the services not mapped to this cell (the others are silent in it). */
  readonly candidates: DiscoveryCandidate[];
  /** --by-service: the services read (those of `candidates`). */
  readonly services: ServiceHostRow[] | undefined;
  /** Each candidate's and unmapped node's host that has a mapping → its cell id. */
  readonly mappedTo: Map<string, number>;
  /** How the hosts without a mapping were found, for the --debug log. */
  readonly read: string;
}

/**
 * The candidates and what their hosts map to: asked of the cell's server in
 * one join where that is proved to mean the same (db/host-mapping-join.ts),
 * else from both tables read, as before. A join that fails all the same (a
 * grant that shows the table but does not allow SELECT on it, say) falls back
 * to the reads, which report any error that is not the join's own.
 */
async function findCandidates(probe: SameServerProbe, lookup: HostMappingLookup, cellDb: Database, cell: CellMapping, byService: boolean, unmappedNodes: readonly DiscoveryCandidate[]): Promise<Candidates> {
  const nodeHosts = unmappedNodes.map((n) => n.host);
  const join = await probe.join(cellDb, byService ? 'services' : 'compute_nodes');
  let why = join.joined ? '' : join.reason;
  if (join.joined) {
    // Only the join's own statement falls back; the API lookups after it fail as they would without it.
    let joined: { services: ServiceNotMappedHere[] } | { lost: NodeRef[] } | undefined;
    try {
      joined = byService ? { services: await listServicesNotMappedHere(cellDb.knex, join.table, cell.id) } : { lost: await listMappedNodesWithoutMapping(cellDb.knex, join.table) };
    } catch (err) {
      why = `the join failed: ${describeDriverError(err)}`;
    }
    if (joined !== undefined && 'services' in joined) {
      const services = joined.services;
      const candidates = services.map((s) => ({ id: s.id, uuid: null, host: s.host }));
      // The join gave each candidate's mapping; only the unmapped nodes' other hosts are looked up.
      const known = new Set(candidates.map((c) => c.host));
      const mappedTo = await lookup.find([...new Set(nodeHosts.filter((h) => !known.has(h)))]);
      for (const s of services) if (s.mappedTo !== null) mappedTo.set(s.host, s.mappedTo);
      return { candidates, services, mappedTo, read: JOINED };
    }
    if (joined !== undefined) {
      const lost = withHost(firstNodePerHost(joined.lost)).nodes;
      return { ...(await withMappings(lookup, [...unmappedNodes, ...lost], nodeHosts)), services: undefined, read: JOINED };
    }
  }
  const read = `both tables read (${why})`;
  if (byService) {
    const services = await listComputeServiceHosts(cellDb.knex);
    const candidates = services.filter((s): s is { id: number; host: string } => s.host !== null).map((s) => ({ id: s.id, uuid: null, host: s.host }));
    return { ...(await withMappings(lookup, candidates, nodeHosts)), services, read };
  }
  // Bug 2085135: the lowest-id live node of each host flagged mapped = 1
  // whose host lost its mapping is a candidate too, so the host gets mapped again.
  const claimed = firstNodePerHost(await listMappedComputeNodeHosts(cellDb.knex));
  const lostHosts = new Set(await lookup.unmapped(claimed.map((c) => c.host)));
  const lost = lostHosts.size === 0 ? [] : withHost(await readLiveComputeNodes(cellDb.knex, claimed.filter((c) => lostHosts.has(c.host)).map((c) => Number(c.id)))).nodes;
  return { ...(await withMappings(lookup, [...unmappedNodes, ...lost], nodeHosts)), services: undefined, read };
}

const JOINED = "joined on the cell's server";

/** Candidates in id order, and the mappings of their hosts and of the unmapped nodes'. */
async function withMappings(lookup: HostMappingLookup, candidates: DiscoveryCandidate[], nodeHosts: readonly string[]): Promise<{ candidates: DiscoveryCandidate[]; mappedTo: Map<string, number> }> {
  candidates.sort((a, b) => a.id - b.id);
  const lookedUp = new Set(candidates.map((c) => c.host));
  for (const h of nodeHosts) lookedUp.add(h);
  return { candidates, mappedTo: await lookup.find([...lookedUp]) };
}

/** Services whose host has no mapping after the run, and that this run did not map (a dry run's would-be mappings included). */
async function listUnmappedServices(lookup: HostMappingLookup, services: readonly ServiceHostRow[], created: readonly string[]): Promise<string[]> {
  const hosts = [...new Set(services.map((s) => s.host).filter((h): h is string => h !== null))];
  const mappedNow = new Set(created);
  return (await lookup.unmapped(hosts)).filter((h) => !mappedNow.has(h));
}

function withHost(nodes: readonly NodeRef[]): { nodes: DiscoveryCandidate[]; withoutHost: number } {
  const out: DiscoveryCandidate[] = [];
  let withoutHost = 0;
  for (const n of nodes) {
    if (n.host === null) withoutHost += 1;
    else out.push({ id: Number(n.id), uuid: n.uuid, host: n.host });
  }
  return { nodes: out, withoutHost };
}

interface CreateOutcome {
  /** Exact host strings this run inserted. */
  readonly created: string[];
  /** Hosts that turned out to be mapped to this cell by someone else. */
  readonly sameCell: string[];
  /** Hosts that turned out to be mapped to another cell. */
  readonly elsewhere: Map<string, number>;
}

/**
 * Insert mappings in multi-row statements. A duplicate key fails the whole
 * statement, so on a conflict the batch is looked up again: hosts that now
 * exist were mapped by a concurrent run (or by an earlier host of this batch
 * that the collation deems equal) and are set aside; when nothing new turned
 * up, the batch is split so the insert order of nova (first host wins) is kept.
 */
async function createMappings(api: Knex, dialect: Dialect, cellId: number, hosts: readonly string[], now: string): Promise<CreateOutcome> {
  const out: CreateOutcome = { created: [], sameCell: [], elsewhere: new Map() };
  const pending: string[][] = chunk(hosts);
  while (pending.length > 0) {
    const batch = pending.shift() as string[];
    try {
      await insertHostMappings(api, cellId, batch, now);
      out.created.push(...batch);
      continue;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    const taken = cellIdByCandidate(await findHostMappings(api, dialect, batch));
    const rest = batch.filter((h) => !taken.has(h));
    for (const [host, owner] of taken) {
      if (owner === cellId) out.sameCell.push(host);
      else out.elsewhere.set(host, owner);
    }
    if (rest.length === 0) continue;
    if (taken.size > 0) {
      pending.unshift(rest);
    } else if (rest.length > 1) {
      const half = Math.ceil(rest.length / 2);
      pending.unshift(rest.slice(0, half), rest.slice(half));
    } else {
      // A single host that is neither insertable nor found: the database
      // disagrees with its own unique key. Refuse rather than guess.
      throw new ReconcileError('internal', `Host '${rest[0] ?? ''}' could not be mapped: duplicate key but no matching mapping found`);
    }
  }
  return out;
}
