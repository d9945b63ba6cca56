// Large deployments for the benchmark and the scale tests: N compute hosts per
// cell, each a nova-compute `services` row and its `compute_nodes` row(s),
// written as Nova writes them. Rows go in with multi-row INSERTs, so 30,000
// hosts take seconds, not the minutes that row-at-a-time inserts would.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { knexDialect } from '../db/knex-factory.js';

export interface ScaleDatabases {
  readonly api: Knex;
  /** Cell databases (not cell0), in the order of cellIds. */
  readonly cells: readonly Knex[];
  /** cell_mappings.id of each entry of cells. */
  readonly cellIds: readonly number[];
}

export interface ScaleOptions {
  readonly hostsPerCell: number;
  /** Compute nodes per host; more than 1 makes ironic hosts (one node per ironic node). Default 1. */
  readonly nodesPerHost?: number;
  /**
   * Share of the hosts (0..1) left without a host mapping, as new hosts are
   * before discovery. Default 1: every host unmapped. The others get their
   * host_mappings row and mapped = 1 on all their nodes; the unmapped ones
   * are the most recently added, i.e. the highest-numbered hosts.
   */
  readonly unmappedFraction?: number;
}

export interface ScaleResult {
  /** Every host name, across cells. */
  readonly hosts: number;
  readonly services: number;
  readonly computeNodes: number;
  /** Hosts given a host mapping up front (see unmappedFraction). */
  readonly mappedHosts: number;
}

/**
 * Rows per INSERT. 2,000 rows of ~35 columns stay far below MariaDB's
 * max_allowed_packet (16 MB). SQLite's knex dialect writes a multi-row insert
 * as `SELECT ... UNION ALL ...`, capped at 500 terms, hence the smaller chunks.
 */
const MYSQL_CHUNK = 2000;
const SQLITE_CHUNK = 400;

/** Service version of a Zed (26.x) nova-compute: nova/objects/service.py SERVICE_VERSION. */
const ZED_SERVICE_VERSION = 64;

/** Zed's initial_*_allocation_ratio defaults, written explicitly. */
const CPU_ALLOCATION_RATIO = 16.0;
const RAM_ALLOCATION_RATIO = 1.5;
const DISK_ALLOCATION_RATIO = 1.0;

/** Libvirt/QEMU 6.2.0 as Nova encodes it (major * 1,000,000 + minor * 1,000 + micro). */
const QEMU_VERSION = 6_002_000;

export function hostName(cellId: number, n: number): string {
  return `c${cellId}-compute-${n}`;
}

export async function generateScale(dbs: ScaleDatabases, opts: ScaleOptions): Promise<ScaleResult> {
  const hostsPerCell = opts.hostsPerCell;
  const nodesPerHost = opts.nodesPerHost ?? 1;
  const unmappedFraction = opts.unmappedFraction ?? 1;
  if (!Number.isInteger(hostsPerCell) || hostsPerCell < 0) throw new RangeError(`hostsPerCell must be a non-negative integer, got ${hostsPerCell}`);
  if (!Number.isInteger(nodesPerHost) || nodesPerHost < 1) throw new RangeError(`nodesPerHost must be a positive integer, got ${nodesPerHost}`);
  if (!(unmappedFraction >= 0 && unmappedFraction <= 1)) throw new RangeError(`unmappedFraction must be within 0..1, got ${unmappedFraction}`);
  if (dbs.cells.length !== dbs.cellIds.length) throw new RangeError('cells and cellIds must have the same length');

  const now = utcNow();
  const mappedPerCell = hostsPerCell - Math.ceil(hostsPerCell * unmappedFraction);
  let services = 0;
  let computeNodes = 0;
  for (const [index, cell] of dbs.cells.entries()) {
    const cellId = dbs.cellIds[index];
    if (cellId === undefined) continue;
    const hosts = Array.from({ length: hostsPerCell }, (_, i) => hostName(cellId, i + 1));
    const mapped = new Set(hosts.slice(0, mappedPerCell));

    await insertChunked(cell, 'services', hosts.map((host) => serviceRow(host, now)));
    services += hosts.length;
    const serviceIds = await readServiceIds(cell, hosts);

    const nodes: Record<string, unknown>[] = [];
    for (const host of hosts) {
      const serviceId = serviceIds.get(host);
      if (serviceId === undefined) throw new Error(`generateScale: the services row of ${host} was not found after insert`);
      for (let k = 0; k < nodesPerHost; k += 1) nodes.push(computeNodeRow(host, serviceId, nodesPerHost > 1, mapped.has(host), now));
    }
    await insertChunked(cell, 'compute_nodes', nodes);
    computeNodes += nodes.length;

    await insertChunked(
      dbs.api,
      'host_mappings',
      [...mapped].map((host) => ({ created_at: now, updated_at: null, cell_id: cellId, host })),
    );
  }
  return { hosts: services, services, computeNodes, mappedHosts: mappedPerCell * dbs.cells.length };
}

/**
 * Puts the deployment back to "never discovered": no host mappings, every
 * node mapped = 0. Two statements per database, so first-run measurements
 * can be repeated without regenerating.
 */
export async function resetDiscovery(dbs: ScaleDatabases): Promise<void> {
  await dbs.api.raw('DELETE FROM host_mappings');
  await Promise.all(dbs.cells.map((cell) => cell.raw('UPDATE compute_nodes SET mapped = 0')));
}

function serviceRow(host: string, now: string): Record<string, unknown> {
  return {
    created_at: now,
    updated_at: now,
    deleted_at: null,
    host,
    binary: 'nova-compute',
    topic: 'compute',
    // A service that has been up a while, reporting every 10 s.
    report_count: 8640,
    disabled: 0,
    deleted: 0,
    disabled_reason: null,
    last_seen_up: now,
    forced_down: 0,
    version: ZED_SERVICE_VERSION,
    uuid: randomUUID(),
  };
}

function computeNodeRow(host: string, serviceId: number, ironic: boolean, mapped: boolean, now: string): Record<string, unknown> {
  const uuid = randomUUID();
  // The ironic driver reports no VCPU/MEMORY_MB/DISK_GB (a custom resource
  // class instead) and names the node after the ironic node's uuid.
  const vcpus = ironic ? 0 : 64;
  const memoryMb = ironic ? 0 : 257_579;
  const localGb = ironic ? 0 : 1_787;
  return {
    created_at: now,
    updated_at: now,
    deleted_at: null,
    service_id: serviceId,
    vcpus,
    memory_mb: memoryMb,
    local_gb: localGb,
    vcpus_used: 0,
    memory_mb_used: ironic ? 0 : 512,
    local_gb_used: 0,
    hypervisor_type: ironic ? 'ironic' : 'QEMU',
    hypervisor_version: ironic ? 1 : QEMU_VERSION,
    cpu_info: '{}',
    disk_available_least: ironic ? 0 : localGb - 20,
    free_ram_mb: memoryMb - (ironic ? 0 : 512),
    free_disk_gb: localGb,
    current_workload: 0,
    running_vms: 0,
    hypervisor_hostname: ironic ? uuid : host,
    deleted: 0,
    host_ip: null,
    supported_instances: ironic ? '[["x86_64", "baremetal", "hvm"]]' : '[["x86_64", "kvm", "hvm"]]',
    pci_stats: '{"nova_object.name": "PciDevicePoolList", "nova_object.namespace": "nova", "nova_object.version": "1.1", "nova_object.data": {"objects": []}, "nova_object.changes": ["objects"]}',
    metrics: '[]',
    extra_resources: null,
    stats: '{"failed_builds": "0"}',
    numa_topology: null,
    host,
    ram_allocation_ratio: RAM_ALLOCATION_RATIO,
    cpu_allocation_ratio: CPU_ALLOCATION_RATIO,
    uuid,
    disk_allocation_ratio: DISK_ALLOCATION_RATIO,
    mapped: mapped ? 1 : 0,
  };
}

/** Multi-row INSERTs of `rows`, in chunks sized for the engine. */
export async function insertChunked(db: Knex, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  const size = knexDialect(db) === 'sqlite' ? SQLITE_CHUNK : MYSQL_CHUNK;
  for (let i = 0; i < rows.length; i += size) await db(table).insert(rows.slice(i, i + size));
}

async function readServiceIds(db: Knex, hosts: readonly string[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  const size = knexDialect(db) === 'sqlite' ? SQLITE_CHUNK : MYSQL_CHUNK;
  for (let i = 0; i < hosts.length; i += size) {
    const rows = (await db('services')
      .select('id', 'host')
      .where({ binary: 'nova-compute', deleted: 0 })
      .whereIn('host', hosts.slice(i, i + size))) as { id: number | string; host: string }[];
    for (const row of rows) ids.set(row.host, Number(row.id));
  }
  return ids;
}

/** Nova's naive-UTC timestamp format. */
function utcNow(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}
