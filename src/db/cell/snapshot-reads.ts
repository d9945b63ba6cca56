// The cell tables of a Snapshot, read whole and in keyset pages: one
// statement per 5,000 rows and table, never one per host or node. Nova's
// soft-delete convention decides what is live (deleted = 0); rows whose
// `deleted` is NULL are invisible to Nova (nova-facts §8.1) and skipped here too.
import type { Knex } from 'knex';
import type { ComputeNodeRec, InstanceRec, MigrationRec, ServiceRec } from '../../domain/model.js';
import { FINAL_MIGRATION_STATES } from '../../domain/model.js';
import { eachByKeyset, readByKeyset, readTable } from '../keyset.js';
import { chunk } from '../batches.js';
import type { Dialect } from '../connect.js';
import type { StringPool } from '../string-pool.js';

type Value = string | number | null;

interface ServiceRow {
  readonly id: number;
  readonly uuid: string | null;
  readonly host: string | null;
  readonly binary: string;
  readonly disabled: Value;
  readonly forced_down: Value;
  readonly last_seen_up: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly deleted: Value;
}

const SERVICE_COLUMNS = ['id', 'uuid', 'host', 'binary', 'disabled', 'forced_down', 'last_seen_up', 'created_at', 'updated_at', 'deleted'] as const;

/** Every service, soft-deleted ones included, so "service deleted" can be told from "never existed". */
export async function readServices(db: Knex, cellUuid: string, pool: StringPool): Promise<ServiceRec[]> {
  return readTable(db, { table: 'services', columns: [...SERVICE_COLUMNS], where: (q) => q.whereNotNull('deleted') }, (r: ServiceRow) => serviceRecord(r, cellUuid, pool));
}

/** The services (any binary, soft-deleted ones included) on these hosts (ScopedHosts), in id order. */
export async function readServicesOfHosts(db: Knex, dialect: Dialect, cellUuid: string, pool: StringPool, hosts: ScopedHosts): Promise<ServiceRec[]> {
  const byId = new Map<number, ServiceRec>();
  for (const batch of hostBatches(dialect, hosts)) {
    const rows = (await whereHostIn(db('services').select(...SERVICE_COLUMNS).whereNotNull('deleted'), dialect, batch)) as ServiceRow[];
    for (const r of rows) byId.set(Number(r.id), serviceRecord(r, cellUuid, pool));
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

function serviceRecord(r: ServiceRow, cellUuid: string, pool: StringPool): ServiceRec {
  return {
    cellUuid,
    id: Number(r.id),
    uuid: r.uuid,
    host: pool.nullable(r.host),
    binary: pool.get(r.binary),
    disabled: flag(r.disabled),
    forcedDown: flag(r.forced_down),
    // Heartbeats: every live service writes them each report_interval, so a few dozen values at a time.
    lastSeenUp: pool.nullable(r.last_seen_up),
    createdAt: r.created_at,
    updatedAt: pool.nullable(r.updated_at),
    deleted: Number(r.deleted) !== 0,
  };
}

/**
 * Hosts asked by name (readScopedInstances, readServicesOfHosts): `keys`
 * folded by hostKey, all plain ASCII, and `raw` as the rows that named them
 * spell them.
 */
export interface ScopedHosts {
  readonly keys: readonly string[];
  readonly raw: readonly string[];
}

/**
 * The IN lists that ask for these hosts. MySQL compares `host` with the
 * column's collation, utf8mb3_general_ci in Nova's schema, which folds ASCII
 * case and ignores trailing spaces as hostKey does, so the folded names are
 * asked as they are, on the column's index; the raw names are asked beside
 * them for a column of a binary collation. SQLite compares bytes, so there
 * the column is folded (whereHostIn): the sandbox is small.
 */
function hostBatches(dialect: Dialect, hosts: ScopedHosts): string[][] {
  return chunk(dialect === 'sqlite' ? hosts.keys : [...new Set([...hosts.keys, ...hosts.raw])]);
}

function whereHostIn(q: Knex.QueryBuilder, dialect: Dialect, batch: readonly string[]): Knex.QueryBuilder {
  return dialect === 'sqlite' ? q.whereRaw(`rtrim(lower(host)) in (${batch.map(() => '?').join(', ')})`, [...batch]) : q.whereIn('host', [...batch]);
}

interface ComputeNodeRow {
  readonly id: number;
  readonly uuid: string | null;
  readonly host: string | null;
  readonly hypervisor_hostname: string | null;
  readonly hypervisor_type: string;
  readonly service_id: Value;
  readonly mapped: Value;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly deleted: Value;
}

const COMPUTE_NODE_COLUMNS = ['id', 'uuid', 'host', 'hypervisor_hostname', 'hypervisor_type', 'service_id', 'mapped', 'created_at', 'updated_at', 'deleted'] as const;

/**
 * Live compute nodes and soft-deleted ones: a stale provider is recognised by
 * carrying the uuid of a deleted node, and Nova restores such rows by uuid.
 */
export async function readComputeNodes(db: Knex, cellUuid: string, pool: StringPool): Promise<ComputeNodeRec[]> {
  return readTable(db, { table: 'compute_nodes', columns: [...COMPUTE_NODE_COLUMNS], where: (q) => q.whereNotNull('deleted') }, (r: ComputeNodeRow) => computeNodeRecord(r, cellUuid, pool));
}

/**
 * What placement cleanup_providers judges every live compute node by: its
 * uuid (pooled: the providers read later share it) and its lower-cased
 * hypervisor_hostname, in keyset pages of three columns instead of whole
 * records (Snapshot.nodeKeys).
 */
export async function readLiveNodeKeys(db: Knex, pool: StringPool): Promise<{ readonly uuids: string[]; readonly names: string[]; readonly notPlain: string[] }> {
  const uuids: string[] = [];
  const names: string[] = [];
  // The lower-cased names of the nodes whose name is not plain ASCII (SQL's LOWER() and String.toLowerCase may differ there).
  const notPlain: string[] = [];
  await eachByKeyset(
    async (afterId, limit) =>
      (await db('compute_nodes').select('id', 'uuid', 'hypervisor_hostname').where('deleted', 0).andWhere('id', '>', afterId).orderBy('id').limit(limit)) as Array<{
        id: number;
        uuid: string | null;
        hypervisor_hostname: string | null;
      }>,
    (r) => {
      if (r.uuid !== null) uuids.push(pool.get(r.uuid));
      if (r.hypervisor_hostname === null) return;
      const name = r.hypervisor_hostname.toLowerCase();
      names.push(name);
      if (!/^[\x20-\x7e]*$/.test(r.hypervisor_hostname)) notPlain.push(name);
    },
  );
  return { uuids, names, notPlain };
}

/** The soft-deleted compute nodes only (deleted = id in Nova's convention, any non-zero value here). */
export async function readDeletedComputeNodes(db: Knex, cellUuid: string, pool: StringPool): Promise<ComputeNodeRec[]> {
  return readTable(db, { table: 'compute_nodes', columns: [...COMPUTE_NODE_COLUMNS], where: (q) => q.whereNotNull('deleted').andWhere('deleted', '<>', 0) }, (r: ComputeNodeRow) =>
    computeNodeRecord(r, cellUuid, pool),
  );
}

/**
 * The live compute nodes whose lower-cased hypervisor_hostname is one of
 * `lowerNames` (plain ASCII), in id order. The column is lower-cased in SQL
 * too, so the match holds whatever its collation: a case-insensitive one
 * (Nova's) only adds the names it folds further (trailing spaces, accents),
 * which the index's lookup by lower-cased name never asks for. No index
 * leads with the column: one scan per 1,000 names.
 */
export async function readLiveNodesNamed(db: Knex, cellUuid: string, pool: StringPool, lowerNames: readonly string[]): Promise<ComputeNodeRec[]> {
  // A row has one name, so it comes in one batch of the distinct names.
  const out: ComputeNodeRec[] = [];
  for (const batch of chunk([...new Set(lowerNames)])) {
    const rows = (await db('compute_nodes')
      .select(...COMPUTE_NODE_COLUMNS)
      .where('deleted', 0)
      .whereRaw(`lower(hypervisor_hostname) in (${batch.map(() => '?').join(', ')})`, [...batch])) as ComputeNodeRow[];
    for (const r of rows) out.push(computeNodeRecord(r, cellUuid, pool));
  }
  return out.sort((a, b) => a.id - b.id);
}

/**
 * The live compute nodes that may be orphans (Snapshot.nodeScope,
 * domain/orphan-nodes.ts orphanReason), in keyset pages, on MySQL: every
 * ironic node (the ironic truth and the conductor groups judge those),
 * every node whose host is NULL or not plain ASCII, and every node without
 * a live nova-compute service (the binary compared byte for byte) on its
 * host. "On its host" is the database's
 * comparison, counted only between ASCII names (a name equal to its
 * conversion to ascii), where the collation (utf8mb3_general_ci: ASCII case
 * and trailing spaces folded) and hostKey agree; a collation that compares
 * more strictly only lists more nodes. The list is thus every node
 * orphanReason could name, and more, which the planner judges with the
 * services of their hosts (readServicesOfHosts). An anti-join, not NOT
 * EXISTS: MariaDB 10.11 materializes the subquery and probes it per node.
 */
export async function readOrphanCandidateNodes(db: Knex, cellUuid: string, pool: StringPool): Promise<ComputeNodeRec[]> {
  const nodes = await readByKeyset(
    async (afterId, limit) =>
      (await db('compute_nodes as cn')
        .select(...COMPUTE_NODE_COLUMNS.map((c) => `cn.${c}`))
        .leftJoin('services as s', (on) =>
          on
            .on('s.host', '=', 'cn.host')
            // Byte for byte, as the planner compares it: the collation would take 'NOVA-COMPUTE ' for it.
            .andOn(db.raw('cast(s.`binary` as binary) = ?', ['nova-compute']))
            .andOnVal('s.deleted', '=', 0)
            .andOn(db.raw('s.host = convert(s.host using ascii)')),
        )
        .where('cn.deleted', 0)
        .andWhere('cn.id', '>', afterId)
        .andWhere((w) => w.whereNull('s.id').orWhere('cn.hypervisor_type', 'ironic').orWhereNull('cn.host').orWhereRaw('cn.host <> convert(cn.host using ascii)'))
        .orderBy('cn.id')
        .limit(limit)) as ComputeNodeRow[],
    (r: ComputeNodeRow) => computeNodeRecord(r, cellUuid, pool),
  );
  // A node matched by several services (a binary collation) comes once; its rows are adjacent (ordered by id).
  return nodes.filter((n, i) => i === 0 || (nodes[i - 1] as ComputeNodeRec).id !== n.id);
}

/**
 * The hosts, as spelt, of the services (soft-deleted too) and compute nodes
 * (live or soft-deleted) that may have one of these hosts, two of the tables
 * checkScopeNames searches (the live instances of a scope's host are read
 * anyway: PlanReadRecipe.instanceHostsOf). Asked as readServicesOfHosts
 * asks (a superset: the caller compares by hostKey).
 */
export async function readHostsNamed(db: Knex, dialect: Dialect, hosts: ScopedHosts): Promise<string[]> {
  const out: string[] = [];
  for (const batch of hostBatches(dialect, hosts)) {
    for (const table of ['services', 'compute_nodes']) {
      const rows = (await whereHostIn(db(table).distinct('host'), dialect, batch).whereNotNull('deleted')) as Array<{ host: string | null }>;
      for (const r of rows) if (r.host !== null) out.push(r.host);
    }
  }
  return out;
}

/** The uuid and hypervisor_hostname of the compute nodes (live or soft-deleted) that may have one of these as either (a superset: the caller compares folded). */
export async function readNodeNamesNamed(db: Knex, names: ScopedHosts): Promise<Array<{ uuid: string | null; hypervisor_hostname: string | null }>> {
  const out: Array<{ uuid: string | null; hypervisor_hostname: string | null }> = [];
  for (const batch of chunk([...new Set([...names.keys, ...names.raw])])) {
    out.push(
      ...((await db('compute_nodes')
        .select('uuid', 'hypervisor_hostname')
        .whereNotNull('deleted')
        .andWhere((w) => w.whereIn('uuid', batch).orWhereIn('hypervisor_hostname', batch))) as Array<{ uuid: string | null; hypervisor_hostname: string | null }>),
    );
  }
  return out;
}

/**
 * What checkGroundTruth needs of a cell whose tables were read in part: services (any), live compute nodes; and
 * its live nova-compute services with a host (whether a soft-deleted node comes back, domain/returning-node.ts).
 */
export async function countCellRows(db: Knex): Promise<{ readonly services: number; readonly liveComputeNodes: number; readonly liveComputeServices: number }> {
  const [services, nodes, computes] = await Promise.all([
    db('services').whereNotNull('deleted').count({ n: '*' }).first() as Promise<{ n: number | string } | undefined>,
    db('compute_nodes').where('deleted', 0).count({ n: '*' }).first() as Promise<{ n: number | string } | undefined>,
    db('services').where({ deleted: 0, binary: 'nova-compute' }).whereNotNull('host').count({ n: '*' }).first() as Promise<{ n: number | string } | undefined>,
  ]);
  return { services: Number(services?.n ?? 0), liveComputeNodes: Number(nodes?.n ?? 0), liveComputeServices: Number(computes?.n ?? 0) };
}

/** The columns that say which node a row is (heal_allocations reads only these: db/cell/heal-reads.ts). */
export const NODE_NAME_COLUMNS = ['id', 'uuid', 'host', 'hypervisor_hostname', 'hypervisor_type'] as const;

/**
 * A live node's cell, id, uuid, host, name and type, its strings pooled:
 * the record of a read of NODE_NAME_COLUMNS (the heal walk's).
 */
export function liveNodeNames(r: Pick<ComputeNodeRow, (typeof NODE_NAME_COLUMNS)[number]>, cellUuid: string, pool: StringPool): Pick<ComputeNodeRec, 'cellUuid' | 'id' | 'uuid' | 'host' | 'hypervisorHostname' | 'hypervisorType' | 'deleted'> {
  return { cellUuid, id: Number(r.id), uuid: pool.nullable(r.uuid), host: pool.nullable(r.host), hypervisorHostname: pool.nullable(r.hypervisor_hostname), hypervisorType: pool.get(r.hypervisor_type), deleted: false };
}

/**
 * Each record is one object literal. Made as `{ ...liveNodeNames(r), serviceId, … }`,
 * every record had a hidden class of its own in V8 (a map, its descriptors
 * and a property array: about 430 bytes a node, 13 MB at 30,000 nodes, seen
 * in heap snapshots of `audit`); a literal's records share one.
 */
function computeNodeRecord(r: ComputeNodeRow, cellUuid: string, pool: StringPool): ComputeNodeRec {
  // The uuid and name are its provider's too, the name its instances' node: pooled.
  return {
    cellUuid,
    id: Number(r.id),
    uuid: pool.nullable(r.uuid),
    host: pool.nullable(r.host),
    hypervisorHostname: pool.nullable(r.hypervisor_hostname),
    hypervisorType: pool.get(r.hypervisor_type),
    serviceId: nullableNumber(r.service_id),
    mapped: nullableNumber(r.mapped),
    createdAt: r.created_at,
    // Rewritten by every update_available_resource run (once a minute), so few values at a time.
    updatedAt: pool.nullable(r.updated_at),
    deleted: Number(r.deleted) !== 0,
  };
}

interface InstanceRow {
  readonly id: number;
  readonly uuid: string;
  readonly host: string | null;
  readonly node: string | null;
  readonly vm_state: string | null;
  readonly task_state: string | null;
  /** Nova 28.0.0+ (instances.compute_id); absent from the row on older schemas. */
  readonly compute_id?: number | null;
}

const INSTANCE_COLUMNS = ['id', 'uuid', 'host', 'node', 'vm_state', 'task_state'] as const;

/** The columns read of an instance: compute_id too where the schema has it (Nova 28.0.0+). */
function instanceColumns(computeId: boolean): string[] {
  return computeId ? [...INSTANCE_COLUMNS, 'compute_id'] : [...INSTANCE_COLUMNS];
}

/** Live instances (any vm_state: a DB-deleted instance is not vm_state 'soft-delete', nova-facts §8.1). */
export async function readLiveInstances(db: Knex, cellUuid: string, pool: StringPool, computeId = false): Promise<InstanceRec[]> {
  return readTable(db, { table: 'instances', columns: instanceColumns(computeId), where: (q) => q.where('deleted', 0) }, (r: InstanceRow) => instanceRecord(r, cellUuid, pool));
}

/**
 * The live instances of a planner's scope (Snapshot.instanceScope): those on
 * these hosts (ScopedHosts, asked as hostBatches says) and those of `uuids`,
 * by IN lists of at most BATCH_SIZE, in id order as readLiveInstances gives
 * them.
 */
export async function readScopedInstances(db: Knex, dialect: Dialect, cellUuid: string, pool: StringPool, hosts: ScopedHosts, uuids: readonly string[], computeId = false): Promise<InstanceRec[]> {
  const byId = new Map<number, InstanceRec>();
  const keep = (rows: readonly InstanceRow[]): void => {
    for (const r of rows) if (!byId.has(Number(r.id))) byId.set(Number(r.id), instanceRecord(r, cellUuid, pool));
  };
  const live = (): Knex.QueryBuilder => db('instances').select(...instanceColumns(computeId)).where('deleted', 0);
  for (const batch of hostBatches(dialect, hosts)) keep((await whereHostIn(live(), dialect, batch)) as InstanceRow[]);
  for (const batch of chunk(uuids)) keep((await live().whereIn('uuid', batch)) as InstanceRow[]);
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

function instanceRecord(r: InstanceRow, cellUuid: string, pool: StringPool): InstanceRec {
  return {
    cellUuid,
    id: Number(r.id),
    // Its consumer's uuid in placement, held by each of its allocations too.
    uuid: pool.get(r.uuid),
    host: pool.nullable(r.host),
    node: pool.nullable(r.node),
    vmState: pool.nullable(r.vm_state),
    taskState: pool.nullable(r.task_state),
    ...(r.compute_id === undefined ? {} : { computeId: r.compute_id === null ? null : Number(r.compute_id) }),
  };
}

interface MigrationRow {
  readonly id: number;
  readonly uuid: string | null;
  readonly instance_uuid: string | null;
  readonly source_compute: string | null;
  readonly dest_compute: string | null;
  readonly source_node: string | null;
  readonly dest_node: string | null;
  readonly status: string | null;
  readonly migration_type: string | null;
}

/**
 * Live migrations whose status is not final, as nova's placement audit lists
 * them (nova-facts §3.1). NOT IN drops a NULL status, as it does in nova's query.
 */
export async function readActiveMigrations(db: Knex, cellUuid: string): Promise<MigrationRec[]> {
  return readTable(db, { table: 'migrations', columns: MIGRATION_COLUMNS, where: activeMigrations }, (r: MigrationRow) => migrationRecord(r, cellUuid));
}

/** readActiveMigrations of these migration uuids only, by IN lists of at most BATCH_SIZE, in id order. */
export async function readActiveMigrationsOf(db: Knex, cellUuid: string, uuids: readonly string[]): Promise<MigrationRec[]> {
  const out: MigrationRec[] = [];
  for (const batch of chunk(uuids)) out.push(...((await activeMigrations(db('migrations').select(...MIGRATION_COLUMNS)).whereIn('uuid', batch)) as MigrationRow[]).map((r) => migrationRecord(r, cellUuid)));
  return out.sort((a, b) => a.id - b.id);
}

/** Compute nodes, live and soft-deleted, of these uuids only (by IN lists of at most BATCH_SIZE), in id order. */
export async function readComputeNodesOf(db: Knex, cellUuid: string, pool: StringPool, uuids: readonly string[]): Promise<ComputeNodeRec[]> {
  const out: ComputeNodeRec[] = [];
  for (const batch of chunk(uuids))
    out.push(...((await db('compute_nodes').select(...COMPUTE_NODE_COLUMNS).whereNotNull('deleted').whereIn('uuid', batch)) as ComputeNodeRow[]).map((r) => computeNodeRecord(r, cellUuid, pool)));
  return out.sort((a, b) => a.id - b.id);
}

const MIGRATION_COLUMNS = ['id', 'uuid', 'instance_uuid', 'source_compute', 'dest_compute', 'source_node', 'dest_node', 'status', 'migration_type'];

function activeMigrations(q: Knex.QueryBuilder): Knex.QueryBuilder {
  return q.where('deleted', 0).whereNotIn('status', [...FINAL_MIGRATION_STATES]);
}

function migrationRecord(r: MigrationRow, cellUuid: string): MigrationRec {
  return {
    cellUuid,
    id: Number(r.id),
    uuid: r.uuid,
    instanceUuid: r.instance_uuid,
    sourceCompute: r.source_compute,
    destCompute: r.dest_compute,
    sourceNode: r.source_node,
    destNode: r.dest_node,
    status: r.status,
    migrationType: r.migration_type,
  };
}

function flag(value: Value): boolean {
  return value !== null && Number(value) !== 0;
}

function nullableNumber(value: Value): number | null {
  return value === null ? null : Number(value);
}
