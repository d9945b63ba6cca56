// A whole cloud at scale for the benchmark: the hosts of generateScale, plus
// what the reconciliation commands read (a compute-node provider per node
// with its inventory and COMPUTE_NODE trait, instances with their mappings,
// consumers and allocations) and chosen fractions of the broken states that
// the commands exist for. Everything goes in with multi-row INSERTs and
// set-based UPDATEs, and looks like what Nova and Placement write:
// a generated cloud must plan exactly the
// units a real cloud in that state would.
//
// The broken states:
//  - unmapped hosts (discover_hosts): see generateScale;
//  - orphan hosts (cleanup_orphans): the nova-compute service was deleted
//    (soft-deleted row, host mapping gone) while its compute nodes and their
//    providers stayed;
//  - stale providers (cleanup_providers): a provider whose compute node is
//    soft-deleted, still holding an orphaned consumer's allocations;
//  - failed-over ironic hosts (rebalance, bug 1714248): the service is dead
//    and forced down; each of its nodes has a duplicate compute node on the
//    live host that Nova's hash ring picks, whose provider could not be
//    created (the name is held: the 409), while the instance and its
//    allocation stay with the dead host's node.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { chunk } from '../db/batches.js';
import { buildHashRing, ringOwner } from '../domain/hash-ring.js';
import { HOUR, scenarioClock } from './clock.js';
import { COMPUTE_NODE_TRAIT } from './builders.js';
import { generateScale, insertChunked, type ScaleDatabases } from './scale-generator.js';
import {
  ensureTrait,
  getOrCreateProject,
  getOrCreateUser,
  insertAllocations,
  insertComputeNodes,
  insertInstanceExtras,
  insertInstances,
  insertInventories,
  insertResourceProviders,
  type AllocationSpec,
  type InventorySpec,
} from './rows.js';

export interface CloudDatabases extends ScaleDatabases {
  readonly placement: Knex;
}

export interface CloudOptions {
  readonly hostsPerCell: number;
  /** Compute nodes per host; more than 1 makes ironic hosts. Default 1 (libvirt). */
  readonly nodesPerHost?: number;
  /** Instances per cell, spread over the live nodes (ironic: at most one per node). Default: one per node. */
  readonly instancesPerCell?: number;
  /** Share of hosts without a host mapping (see generateScale). Default 0. */
  readonly unmappedFraction?: number;
  /** Share of hosts whose service was deleted: their nodes are orphans. Default 0. */
  readonly orphanFraction?: number;
  /** Stale providers to add, as a share of the compute nodes. Default 0. */
  readonly staleProviderFraction?: number;
  /** Ironic only: share of hosts that died and failed over (duplicates). Default 0. */
  readonly failedOverFraction?: number;
}

export interface CloudResult {
  readonly hosts: number;
  readonly computeNodes: number;
  readonly providers: number;
  readonly instances: number;
  readonly allocations: number;
  readonly unmappedHosts: number;
  readonly orphanNodes: number;
  readonly staleProviders: number;
  readonly duplicateNodes: number;
}

/** The baremetal flavor's resource class (the ironic node's resource_class, upper-cased, CUSTOM_ prefixed). */
export const BAREMETAL_CLASS = 'CUSTOM_BAREMETAL_GOLD';
const PROJECT = '8d2f6a1c0b3e4f5a9c7d1e2b3a4f5c6d';
const USER = '2b7e9c4a1d3f4e6b8a0c5d7e9f1a3b5c';
const ORPHANED_PROJECT = '0e1f2a3b4c5d4e6f8a9b0c1d2e3f4a5b';
/** A libvirt flavor: what an instance allocates (MEMORY_MB, DISK_GB, VCPU). */
const FLAVOR = { vcpus: 2, memoryMb: 4096, rootGb: 20 } as const;
/** The baremetal flavor: the node's one unit of its class, and no VCPU/RAM/disk. */
const BAREMETAL_FLAVOR = {
  id: 7,
  vcpus: 32,
  memoryMb: 262144,
  rootGb: 900,
  extraSpecs: { [`resources:${BAREMETAL_CLASS}`]: '1', 'resources:VCPU': '0', 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0' },
} as const;

interface NodeRow {
  readonly id: number;
  readonly uuid: string;
  readonly host: string;
  readonly hypervisorHostname: string;
}

export async function generateCloud(dbs: CloudDatabases, opts: CloudOptions): Promise<CloudResult> {
  const nodesPerHost = opts.nodesPerHost ?? 1;
  const ironic = nodesPerHost > 1;
  const fractions = brokenFractions(opts, ironic);

  const scale = await generateScale(dbs, { hostsPerCell: opts.hostsPerCell, nodesPerHost, unmappedFraction: opts.unmappedFraction ?? 0 });
  const placement = dbs.placement;
  const clock = scenarioClock();
  const now = clock.now;
  const trait = await ensureTrait(placement, COMPUTE_NODE_TRAIT);
  // Placement get-or-creates these on the first allocation write.
  await getOrCreateProject(placement, PROJECT);
  await getOrCreateUser(placement, USER);
  await getOrCreateProject(placement, ORPHANED_PROJECT);

  const totals = { providers: 0, instances: 0, allocations: 0, orphanNodes: 0, staleProviders: 0, duplicateNodes: 0 };
  for (const [index, cell] of dbs.cells.entries()) {
    const cellId = dbs.cellIds[index];
    if (cellId === undefined) continue;
    const nodes = await readNodes(cell);
    const hosts = [...new Set(nodes.map((n) => n.host))].sort(byHostNumber);
    // Broken hosts are taken from the front, unmapped ones from the back (generateScale).
    const failedOver = new Set(hosts.slice(0, Math.floor(hosts.length * fractions.failedOver)));
    const orphans = new Set(hosts.slice(failedOver.size, failedOver.size + Math.floor(hosts.length * fractions.orphan)));
    const liveHosts = hosts.filter((h) => !failedOver.has(h) && !orphans.has(h));
    if (failedOver.size > 0 && liveHosts.length === 0) throw new RangeError('every ironic host failed over: no live host can take the nodes');

    // Instances go on nodes whose service is (or was) in use: not on orphan hosts.
    const eligible = interleaveByHost(nodes.filter((n) => !orphans.has(n.host)));
    const wanted = opts.instancesPerCell ?? eligible.length;
    const instances = placeInstances(eligible, wanted, ironic);
    const used = new Map<string, number>();
    for (const i of instances) used.set(i.node.uuid, (used.get(i.node.uuid) ?? 0) + 1);

    // One provider per node, named after its hypervisor_hostname; generation
    // counts Placement's writes: inventory, trait, then one per allocation.
    const providerIds = await insertResourceProviders(
      placement,
      nodes.map((n) => ({ uuid: n.uuid, name: n.hypervisorHostname, generation: 2 + (used.get(n.uuid) ?? 0), createdAt: now })),
    );
    const providerOf = new Map(nodes.map((n, i) => [n.uuid, providerIds[i] as number]));
    await insertInventories(placement, nodes.flatMap((n) => inventoriesOf(providerOf.get(n.uuid) as number, ironic, used.has(n.uuid), now)));
    await insertTraitLinks(placement, trait, providerIds, now);
    totals.providers += providerIds.length;

    const allocations = await writeInstances(dbs, cell, cellId, instances, providerOf, ironic, now);
    totals.instances += instances.length;
    totals.allocations += allocations;

    // Orphans: the service was deleted (soft-deleted row, and its host
    // mapping removed as the service DELETE API does); nodes and providers stay.
    for (const batch of chunk([...orphans])) {
      await cell('services').whereIn('host', batch).update({ deleted: cell.raw('??', ['id']), deleted_at: now });
      await dbs.api('host_mappings').whereIn('host', batch).delete();
    }
    totals.orphanNodes += nodes.filter((n) => orphans.has(n.host)).length;

    if (failedOver.size > 0) totals.duplicateNodes += await failOver(cell, nodes, failedOver, liveHosts, clock.now, clock.ago(2 * HOUR));

    const stale = Math.floor(nodes.length * fractions.stale);
    if (stale > 0) {
      await addStaleProviders(cell, placement, trait, cellId, stale, ironic, now);
      totals.staleProviders += stale;
      totals.providers += stale;
      totals.allocations += stale * (ironic ? 1 : 3);
    }
  }
  return {
    hosts: scale.hosts,
    computeNodes: scale.computeNodes + totals.duplicateNodes,
    providers: totals.providers,
    instances: totals.instances,
    allocations: totals.allocations,
    unmappedHosts: scale.hosts - scale.mappedHosts,
    orphanNodes: totals.orphanNodes,
    staleProviders: totals.staleProviders,
    duplicateNodes: totals.duplicateNodes,
  };
}


/** The shares of broken hosts and nodes asked for, refused when they cannot be built. */
function brokenFractions(opts: CloudOptions, ironic: boolean): { readonly orphan: number; readonly stale: number; readonly failedOver: number } {
  const fractions = { orphan: opts.orphanFraction ?? 0, stale: opts.staleProviderFraction ?? 0, failedOver: opts.failedOverFraction ?? 0 };
  for (const [name, value] of Object.entries(fractions)) {
    if (!(value >= 0 && value <= 1)) throw new RangeError(`${name} fraction must be within 0..1, got ${value}`);
  }
  if (fractions.failedOver > 0 && !ironic) throw new RangeError('failed-over hosts need ironic hosts (nodesPerHost > 1)');
  if (fractions.orphan + fractions.failedOver > 1) throw new RangeError('orphan and failed-over hosts together exceed every host');
  return fractions;
}

/** Instances spread over the nodes, host by host: at most one per ironic node. */
function placeInstances(eligible: readonly NodeRow[], wanted: number, ironic: boolean): Array<{ uuid: string; node: NodeRow }> {
  const perNode = ironic ? Math.min(1, Math.ceil(wanted / Math.max(1, eligible.length))) : Math.ceil(wanted / Math.max(1, eligible.length));
  const instances: { uuid: string; node: NodeRow }[] = [];
  for (let round = 0; round < perNode && instances.length < wanted; round += 1) {
    for (const node of eligible) {
      if (instances.length >= wanted) break;
      instances.push({ uuid: randomUUID(), node });
    }
  }
  return instances;
}

/** The instances of a cell with their flavor, mappings, consumers and allocations; returns the allocations written. */
async function writeInstances(
  dbs: CloudDatabases,
  cell: Knex,
  cellId: number,
  instances: ReadonlyArray<{ uuid: string; node: NodeRow }>,
  providerOf: ReadonlyMap<string, number>,
  ironic: boolean,
  now: string,
): Promise<number> {
  const placement = dbs.placement;
  await insertInstances(
    cell,
    instances.map((i) => ({
      uuid: i.uuid,
      host: i.node.host,
      node: i.node.hypervisorHostname,
      vmState: 'active',
      projectId: PROJECT,
      userId: USER,
      ...(ironic ? { vcpus: 32, memoryMb: 262144, rootGb: 900 } : FLAVOR),
      createdAt: now,
    })),
  );
  // The embedded flavor (instance_extra.flavor), which heal_allocations reads.
  await insertInstanceExtras(
    cell,
    instances.map((i) => ({ instanceUuid: i.uuid, flavor: ironic ? BAREMETAL_FLAVOR : { id: 2, ...FLAVOR }, createdAt: now })),
  );
  await insertChunked(
    dbs.api,
    'instance_mappings',
    instances.map((i) => ({ created_at: now, updated_at: now, instance_uuid: i.uuid, cell_id: cellId, project_id: PROJECT, user_id: USER, queued_for_delete: 0 })),
  );
  await insertConsumers(placement, instances.map((i) => i.uuid), PROJECT, USER, now);
  const allocations: AllocationSpec[] = instances.flatMap((i) => allocationsOf(providerOf.get(i.node.uuid) as number, i.uuid, ironic, now));
  await insertAllocations(placement, allocations);
  return allocations.length;
}

/**
 * The dead hosts stopped two hours ago and were forced down; each of their
 * nodes was taken over by the live host that owns it on the ring of the live
 * hosts, which created a duplicate compute node (new uuid, same
 * hypervisor_hostname) and got a 409 for its provider.
 */
async function failOver(cell: Knex, nodes: readonly NodeRow[], dead: ReadonlySet<string>, liveHosts: readonly string[], now: string, twoHoursAgo: string): Promise<number> {
  await cell('services').whereIn('host', [...dead]).update({ forced_down: 1, last_seen_up: twoHoursAgo, updated_at: twoHoursAgo });
  const ring = buildHashRing(liveHosts);
  const byLower = new Map(liveHosts.map((h) => [h.toLowerCase(), h]));
  const serviceIds = new Map(
    ((await cell('services').select('id', 'host').whereIn('host', liveHosts).where({ deleted: 0 })) as { id: number; host: string }[]).map((s) => [s.host, Number(s.id)]),
  );
  const duplicates = nodes
    .filter((n) => dead.has(n.host))
    .map((n) => {
      const owner = byLower.get(ringOwner(ring, n.hypervisorHostname) ?? '') as string;
      return {
        uuid: randomUUID(),
        host: owner,
        hypervisorHostname: n.hypervisorHostname,
        hypervisorType: 'ironic' as const,
        serviceId: serviceIds.get(owner) ?? null,
        mapped: 1,
        vcpus: 0,
        memoryMb: 0,
        localGb: 0,
        createdAt: now,
      };
    });
  await insertComputeNodes(cell, duplicates);
  return duplicates.length;
}

/** Providers of deleted compute nodes, each still holding an orphaned consumer's allocations. */
async function addStaleProviders(cell: Knex, placement: Knex, trait: number, cellId: number, count: number, ironic: boolean, now: string): Promise<void> {
  const gone = Array.from({ length: count }, (_, i) => {
    const uuid = randomUUID();
    return { uuid, host: `c${cellId}-gone-${i + 1}`, name: ironic ? uuid : `c${cellId}-gone-${i + 1}` };
  });
  await insertComputeNodes(
    cell,
    gone.map((g) => ({ uuid: g.uuid, host: g.host, hypervisorHostname: g.name, hypervisorType: ironic ? ('ironic' as const) : ('QEMU' as const), mapped: 1, createdAt: now })),
  );
  for (const batch of chunk(gone.map((g) => g.uuid))) {
    await cell('compute_nodes').whereIn('uuid', batch).update({ deleted: cell.raw('??', ['id']), deleted_at: now });
  }
  const ids = await insertResourceProviders(placement, gone.map((g) => ({ uuid: g.uuid, name: g.name, generation: 3, createdAt: now })));
  await insertInventories(placement, ids.flatMap((id) => inventoriesOf(id, ironic, true, now)));
  await insertTraitLinks(placement, trait, ids, now);
  const consumers = gone.map(() => randomUUID());
  await insertConsumers(placement, consumers, ORPHANED_PROJECT, USER, now);
  await insertAllocations(placement, consumers.flatMap((c, i) => allocationsOf(ids[i] as number, c, ironic, now)));
}

function inventoriesOf(providerId: number, ironic: boolean, inUse: boolean, now: string): InventorySpec[] {
  if (ironic) {
    // The ironic driver reports reserved = 1 while the node is in use.
    return [{ providerId, resourceClass: BAREMETAL_CLASS, total: 1, reserved: inUse ? 1 : 0, maxUnit: 1, createdAt: now }];
  }
  return [
    { providerId, resourceClass: 'VCPU', total: 64, maxUnit: 64, allocationRatio: 16, createdAt: now },
    { providerId, resourceClass: 'MEMORY_MB', total: 257_579, reserved: 512, maxUnit: 257_579, allocationRatio: 1.5, createdAt: now },
    { providerId, resourceClass: 'DISK_GB', total: 1_787, maxUnit: 1_787, createdAt: now },
  ];
}

function allocationsOf(providerId: number, consumerUuid: string, ironic: boolean, now: string): AllocationSpec[] {
  if (ironic) return [{ providerId, consumerUuid, resourceClass: BAREMETAL_CLASS, used: 1, createdAt: now }];
  return [
    { providerId, consumerUuid, resourceClass: 'VCPU', used: FLAVOR.vcpus, createdAt: now },
    { providerId, consumerUuid, resourceClass: 'MEMORY_MB', used: FLAVOR.memoryMb, createdAt: now },
    { providerId, consumerUuid, resourceClass: 'DISK_GB', used: FLAVOR.rootGb, createdAt: now },
  ];
}

/** Consumers as the first allocation write leaves them: generation 1, consumer_type_id NULL. */
async function insertConsumers(placement: Knex, uuids: readonly string[], project: string, user: string, now: string): Promise<void> {
  const projectId = await getOrCreateProject(placement, project);
  const userId = await getOrCreateUser(placement, user);
  await insertChunked(
    placement,
    'consumers',
    uuids.map((uuid) => ({ created_at: now, updated_at: now, uuid, project_id: projectId, user_id: userId, generation: 1, consumer_type_id: null })),
  );
}

async function insertTraitLinks(placement: Knex, trait: number, providerIds: readonly number[], now: string): Promise<void> {
  await insertChunked(placement, 'resource_provider_traits', providerIds.map((id) => ({ trait_id: trait, resource_provider_id: id, created_at: now, updated_at: null })));
}

async function readNodes(cell: Knex): Promise<NodeRow[]> {
  const rows = (await cell('compute_nodes').select('id', 'uuid', 'host', 'hypervisor_hostname').where({ deleted: 0 }).orderBy('id')) as {
    id: number;
    uuid: string;
    host: string;
    hypervisor_hostname: string;
  }[];
  return rows.map((r) => ({ id: Number(r.id), uuid: r.uuid, host: r.host, hypervisorHostname: r.hypervisor_hostname }));
}

/** The k-th node of every host before the (k+1)-th of any, so instances spread over hosts. */
function interleaveByHost(nodes: readonly NodeRow[]): NodeRow[] {
  const byHost = new Map<string, NodeRow[]>();
  for (const n of nodes) {
    const list = byHost.get(n.host);
    if (list === undefined) byHost.set(n.host, [n]);
    else list.push(n);
  }
  const lists = [...byHost.values()];
  const out: NodeRow[] = [];
  for (let k = 0; out.length < nodes.length; k += 1) for (const list of lists) if (list[k] !== undefined) out.push(list[k] as NodeRow);
  return out;
}

/** c1-compute-2 before c1-compute-10. */
function byHostNumber(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}
