// Random cloud histories (issue 22): a sequence of the events that change
// Nova's and Placement's bookkeeping, applied to a small cloud through the
// project's own scenario builders, so the rows are written as Nova and
// Placement write them (the same builders the sandbox scenarios use).
//
// An event is data: a kind and a few small numbers that pick its subjects
// among what exists when it is applied (`pick(n, list)` wraps around). A
// history is therefore valid whatever fast-check shrinks it to: an event
// with nothing to act on is a no-op. The model below keeps what the events
// need to find their subjects; the databases hold the truth.
import fc from 'fast-check';
import type { Knex } from 'knex';
import { addComputeService, addIronicNode, addLibvirtHost, COMPUTE_NODE_TRAIT } from '../../src/sandbox/builders.js';
import { scenarioClock, type ScenarioClock } from '../../src/sandbox/clock.js';
import {
  insertAllocations,
  insertComputeNode,
  insertConsumer,
  insertHostMapping,
  insertInstance,
  insertInstanceMapping,
  insertInventories,
  insertProviderTraits,
  insertResourceProvider,
  softDeleteRow,
} from '../../src/sandbox/rows.js';
import { utcNowString } from '../../src/db/time.js';

export type CellName = 'cell1' | 'cell2';

export interface CloudDatabases {
  readonly api: Knex;
  readonly cells: Readonly<Record<CellName, Knex>>;
  readonly placement: Knex;
  readonly cellIds: Readonly<Record<CellName, number>>;
}

export const EVENT_KINDS = [
  'start-ironic-service',
  'start-libvirt-host',
  'service-dies',
  'service-heartbeats',
  'service-forced-down',
  'service-deleted-via-api',
  'service-row-deleted-by-hand',
  'ironic-node-created',
  'ironic-node-deleted',
  'ironic-node-conductor-group',
  'ironic-node-maintenance',
  'ring-rebalance',
  'ring-rebalance-409',
  'instance-built',
  'instance-deleted',
  'instance-local-deleted',
  'instance-evacuated',
  'instance-disk-on-sharing-provider',
  'provider-renamed',
  'provider-recreated',
  'allocation-lost',
  'host-mapped',
  'host-unmapped',
  'host-redeployed-other-cell',
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

export interface CloudEvent {
  readonly kind: EventKind;
  readonly a: number;
  readonly b: number;
}

/** How often each event is drawn: the ones that create things more often, so that most events find a subject. */
const WEIGHTS: Partial<Record<EventKind, number>> = {
  'start-ironic-service': 3,
  'start-libvirt-host': 3,
  'ironic-node-created': 4,
  'instance-built': 4,
  'service-forced-down': 2,
  'service-deleted-via-api': 2,
  'service-row-deleted-by-hand': 2,
  'ironic-node-deleted': 3,
  'ring-rebalance-409': 3,
  'instance-local-deleted': 2,
  'instance-evacuated': 2,
  'instance-disk-on-sharing-provider': 2,
  'provider-recreated': 2,
};

export const eventArb: fc.Arbitrary<CloudEvent> = fc.oneof(
  ...EVENT_KINDS.map((kind) => ({
    weight: WEIGHTS[kind] ?? 1,
    arbitrary: fc.record({ kind: fc.constant(kind), a: fc.nat({ max: 15 }), b: fc.nat({ max: 15 }) }),
  })),
);

const SETUP_KINDS = ['start-ironic-service', 'start-libvirt-host', 'ironic-node-created', 'instance-built'] as const satisfies readonly EventKind[];

/**
 * A history: a small cloud built first (services, then nodes, then
 * instances, so that most later events find a subject), then random events.
 */
export function historyArb(maxEvents: number): fc.Arbitrary<CloudEvent[]> {
  const setupEvent = fc.record({ kind: fc.constantFrom(...SETUP_KINDS), a: fc.nat({ max: 15 }), b: fc.nat({ max: 15 }) });
  const rank = (e: CloudEvent): number => SETUP_KINDS.indexOf(e.kind as (typeof SETUP_KINDS)[number]);
  return fc
    .tuple(fc.array(setupEvent, { minLength: 3, maxLength: 10 }), fc.array(eventArb, { minLength: 1, maxLength: maxEvents }))
    .map(([setup, events]) => [...[...setup].sort((x, y) => rank(x) - rank(y)), ...events]);
}

export function describeHistory(events: readonly CloudEvent[]): string {
  return events.map((e, i) => `${String(i + 1).padStart(2)}. ${e.kind}(${e.a},${e.b})`).join('\n');
}

interface ServiceRec {
  host: string;
  cell: CellName;
  kind: 'ironic' | 'libvirt';
  id: number;
  live: boolean;
}

interface NodeRec {
  uuid: string;
  /** hypervisor_hostname: the ironic node uuid for ironic (a duplicate row shares it), the host's FQDN for libvirt. */
  hh: string;
  host: string;
  cell: CellName;
  kind: 'ironic' | 'libvirt';
  providerId: number | null;
  /** In ironic's node list (ironic nodes only). */
  inIronic: boolean;
  conductorGroup: string;
  maintenance: boolean;
  live: boolean;
}

interface InstanceRec {
  uuid: string;
  cell: CellName;
  host: string;
  node: string;
  live: boolean;
}

const PROJECT = '6f1c2b3a4d5e4f60718293a4b5c6d7e8';
const USER = '0a1b2c3d4e5f40718293a4b5c6d7e8f9';
const FLAVOR = { id: 2, vcpus: 2, memoryMb: 2048, rootGb: 20 } as const;
const IRONIC_RC = 'CUSTOM_BAREMETAL_GOLD';

/** uuid-shaped, deterministic per history: the kind digit and a counter. */
function fakeUuid(kind: number, n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `${kind.toString(16).padStart(8, '0')}-0000-4000-8000-${hex}`;
}

function pick<T>(n: number, list: readonly T[]): T | undefined {
  return list.length === 0 ? undefined : list[n % list.length];
}

/** A small cloud whose state changes by events; rows go to the databases as Nova writes them. */
export class CloudModel {
  private readonly clock: ScenarioClock = scenarioClock();
  private readonly services: ServiceRec[] = [];
  private readonly nodes: NodeRec[] = [];
  private readonly instances: InstanceRec[] = [];
  private counter = 0;

  constructor(private readonly dbs: CloudDatabases) {}

  /** The ironic node list as `openstack baremetal node list -f json` would print it, or null with no ironic node ever. */
  ironicNodeList(): Array<Record<string, unknown>> | null {
    const ironic = this.nodes.filter((n) => n.kind === 'ironic' && n.uuid === n.hh);
    if (ironic.length === 0) return null;
    return ironic
      .filter((n) => n.inIronic)
      .map((n) => ({
        UUID: n.uuid,
        'Instance UUID': this.instances.find((i) => i.live && i.node === n.hh)?.uuid ?? null,
        Maintenance: n.maintenance,
        'Provisioning State': this.instances.some((i) => i.live && i.node === n.hh) ? 'active' : 'available',
        'Conductor Group': n.conductorGroup,
      }));
  }

  async apply(event: CloudEvent): Promise<void> {
    const { a, b } = event;
    const liveServices = this.services.filter((s) => s.live);
    switch (event.kind) {
      case 'start-ironic-service':
      case 'start-libvirt-host': {
        const cell: CellName = a % 2 === 0 ? 'cell1' : 'cell2';
        const kind = event.kind === 'start-ironic-service' ? 'ironic' : 'libvirt';
        const host = `${kind}-${this.next()}`;
        if (kind === 'ironic') {
          const id = await addComputeService(this.dbs.cells[cell], { uuid: fakeUuid(1, this.counter), host, clock: this.clock });
          this.services.push({ host, cell, kind, id, live: true });
        } else {
          const nodeUuid = fakeUuid(2, this.counter);
          const rows = await addLibvirtHost(this.dbs.cells[cell], this.dbs.placement, {
            host,
            serviceUuid: fakeUuid(1, this.counter),
            nodeUuid,
            hypervisorHostname: `${host}.example.org`,
            hostIp: `192.0.2.${this.counter % 250}`,
            clock: this.clock,
          });
          this.services.push({ host, cell, kind, id: rows.serviceId, live: true });
          this.nodes.push({ uuid: nodeUuid, hh: `${host}.example.org`, host, cell, kind, providerId: rows.providerId, inIronic: false, conductorGroup: '', maintenance: false, live: true });
        }
        if (b % 3 !== 0) await insertHostMapping(this.dbs.api, { cellId: this.dbs.cellIds[cell], host });
        return;
      }
      case 'service-dies':
      case 'service-heartbeats': {
        const s = pick(a, liveServices);
        if (s === undefined) return;
        const seen = event.kind === 'service-dies' ? this.clock.ago(600 + b * 60) : utcNowString();
        await this.dbs.cells[s.cell]('services').where({ id: s.id }).update({ last_seen_up: seen, updated_at: seen, report_count: this.dbs.cells[s.cell].raw('report_count + 1') });
        return;
      }
      case 'service-forced-down': {
        const s = pick(a, liveServices);
        if (s === undefined) return;
        await this.dbs.cells[s.cell]('services').where({ id: s.id }).update({ forced_down: 1, updated_at: utcNowString() });
        return;
      }
      case 'service-deleted-via-api': {
        // DELETE /os-services/{id}: 409 with instances on the host; else the
        // providers of its nodes are deleted (cascade), the host mapping goes,
        // and the service and its nodes are soft-deleted (§5.1).
        const s = pick(a, liveServices);
        if (s === undefined) return;
        if (this.instances.some((i) => i.live && i.host === s.host && i.cell === s.cell)) return;
        for (const n of this.nodes.filter((x) => x.live && x.host === s.host && x.cell === s.cell)) {
          await this.deleteProviderCascade(n);
          await this.softDeleteNode(n);
        }
        await this.dbs.api('host_mappings').where({ host: s.host }).del();
        await softDeleteRow(this.dbs.cells[s.cell], 'services', s.id, utcNowString());
        s.live = false;
        return;
      }
      case 'service-row-deleted-by-hand': {
        const s = pick(a, liveServices);
        if (s === undefined) return;
        await softDeleteRow(this.dbs.cells[s.cell], 'services', s.id, utcNowString());
        s.live = false;
        return;
      }
      case 'ironic-node-created': {
        const s = pick(a, liveServices.filter((x) => x.kind === 'ironic'));
        if (s === undefined) return;
        const uuid = fakeUuid(3, this.next());
        const rows = await addIronicNode(this.dbs.cells[s.cell], this.dbs.placement, { nodeUuid: uuid, host: s.host, resourceClass: IRONIC_RC, clock: this.clock });
        this.nodes.push({ uuid, hh: uuid, host: s.host, cell: s.cell, kind: 'ironic', providerId: rows.providerId, inIronic: true, conductorGroup: '', maintenance: false, live: true });
        return;
      }
      case 'ironic-node-deleted': {
        // Deleted in ironic while its nova-compute keeps heartbeating (seed bug 2013): nova's rows stay.
        const n = pick(a, this.nodes.filter((x) => x.kind === 'ironic' && x.inIronic));
        if (n !== undefined) n.inIronic = false;
        return;
      }
      case 'ironic-node-conductor-group': {
        const n = pick(a, this.nodes.filter((x) => x.kind === 'ironic' && x.inIronic));
        if (n !== undefined) n.conductorGroup = b % 2 === 0 ? '' : `cg-${b}`;
        return;
      }
      case 'ironic-node-maintenance': {
        // The driver reports reserved = 1 for an unavailable node (§6).
        const n = pick(a, this.nodes.filter((x) => x.kind === 'ironic' && x.inIronic && x.providerId !== null));
        if (n === undefined || n.providerId === null) return;
        n.maintenance = !n.maintenance;
        await this.setIronicReserved(n);
        return;
      }
      case 'ring-rebalance': {
        // The resource tracker of another ironic service takes a node without
        // an instance (§5.4): the row's host changes, its uuid and provider stay.
        const n = pick(a, this.nodes.filter((x) => x.live && x.kind === 'ironic' && !this.instances.some((i) => i.live && i.node === x.hh)));
        const to = pick(b, liveServices.filter((x) => x.kind === 'ironic' && n !== undefined && x.cell === n.cell && x.host !== n.host));
        if (n === undefined || to === undefined) return;
        // The new owner already has a row for this node (a 409 duplicate): its
        // resource tracker uses that row, and the (host, node) key could not
        // take a second one.
        if (this.nodes.some((x) => x.live && x.hh === n.hh && x.host === to.host && x.cell === n.cell)) return;
        const now = utcNowString();
        await this.dbs.cells[n.cell]('compute_nodes').where({ uuid: n.uuid, deleted: 0 }).update({ host: to.host, updated_at: now });
        n.host = to.host;
        return;
      }
      case 'ring-rebalance-409': {
        // Seed bug 1714248: the new owner creates a duplicate compute node for
        // the same ironic node under a random uuid (pre-Rocky), and its
        // provider create fails with a 409 because the node's provider holds
        // the name. The old row, its instance and its allocation stay.
        const n = pick(a, this.nodes.filter((x) => x.live && x.kind === 'ironic' && x.uuid === x.hh));
        const to = pick(b, liveServices.filter((x) => x.kind === 'ironic' && n !== undefined && x.cell === n.cell && x.host !== n.host));
        if (n === undefined || to === undefined) return;
        if (this.nodes.some((x) => x.live && x.hh === n.hh && x.host === to.host)) return;
        const uuid = fakeUuid(7, this.next());
        await insertComputeNode(this.dbs.cells[n.cell], { uuid, host: to.host, hypervisorHostname: n.hh, hypervisorType: 'ironic' });
        this.nodes.push({ uuid, hh: n.hh, host: to.host, cell: n.cell, kind: 'ironic', providerId: null, inIronic: false, conductorGroup: n.conductorGroup, maintenance: n.maintenance, live: true });
        return;
      }
      case 'instance-built': {
        const n = pick(a, this.nodes.filter((x) => x.live && x.providerId !== null && this.services.some((s) => s.live && s.host === x.host && s.cell === x.cell)));
        if (n === undefined || n.providerId === null) return;
        if (n.kind === 'ironic' && (n.maintenance || this.instances.some((i) => i.live && i.node === n.hh))) return;
        const uuid = fakeUuid(4, this.next());
        const cell = this.dbs.cells[n.cell];
        const node = n.hh;
        await insertInstance(cell, { uuid, host: n.host, node, vmState: 'active', projectId: PROJECT, userId: USER, vcpus: FLAVOR.vcpus, memoryMb: FLAVOR.memoryMb, rootGb: FLAVOR.rootGb, flavorId: FLAVOR.id });
        await insertInstanceMapping(this.dbs.api, { instanceUuid: uuid, cellId: this.dbs.cellIds[n.cell], projectId: PROJECT, userId: USER });
        const parts =
          n.kind === 'ironic'
            ? [{ resourceClass: IRONIC_RC, used: 1 }]
            : [
                { resourceClass: 'VCPU', used: FLAVOR.vcpus },
                { resourceClass: 'MEMORY_MB', used: FLAVOR.memoryMb },
                { resourceClass: 'DISK_GB', used: FLAVOR.rootGb },
              ];
        await this.writeAllocations(uuid, n.providerId, parts);
        this.instances.push({ uuid, cell: n.cell, host: n.host, node, live: true });
        if (n.kind === 'ironic') await this.setIronicReserved(n);
        return;
      }
      case 'instance-deleted':
      case 'instance-local-deleted': {
        // A normal delete releases the allocations; a local delete while the
        // compute is down leaves them (orphaned consumer).
        const inst = pick(a, this.instances.filter((i) => i.live));
        if (inst === undefined) return;
        const cell = this.dbs.cells[inst.cell];
        const row = (await cell('instances').where({ uuid: inst.uuid, deleted: 0 }).first('id')) as { id: number } | undefined;
        if (row !== undefined) await softDeleteRow(cell, 'instances', row.id, utcNowString());
        inst.live = false;
        if (event.kind === 'instance-deleted') await this.releaseAllocations(inst.uuid);
        const n = this.nodes.find((x) => x.live && x.kind === 'ironic' && x.hh === inst.node && x.providerId !== null);
        if (n !== undefined) await this.setIronicReserved(n);
        return;
      }
      case 'instance-evacuated': {
        // Evacuation to another libvirt host of the cell: allocations on both
        // providers until the source comes back (§5.2 step 2), and a
        // migration row of type evacuation in status done.
        const inst = pick(a, this.instances.filter((i) => i.live && this.nodes.some((n) => n.live && n.kind === 'libvirt' && n.host === i.host)));
        if (inst === undefined) return;
        const dest = pick(b, this.nodes.filter((n) => n.live && n.kind === 'libvirt' && n.cell === inst.cell && n.host !== inst.host && n.providerId !== null));
        if (dest === undefined || dest.providerId === null) return;
        const cell = this.dbs.cells[inst.cell];
        const now = utcNowString();
        await cell('migrations').insert({
          created_at: now, updated_at: now, deleted: 0, source_compute: inst.host, dest_compute: dest.host, dest_host: dest.host,
          source_node: inst.node, dest_node: `${dest.host}.example.org`, status: 'done', migration_type: 'evacuation', instance_uuid: inst.uuid, hidden: 0,
          uuid: fakeUuid(5, this.next()),
        });
        await cell('instances').where({ uuid: inst.uuid, deleted: 0 }).update({ host: dest.host, node: `${dest.host}.example.org`, updated_at: now });
        await this.writeAllocations(inst.uuid, dest.providerId, [
          { resourceClass: 'VCPU', used: FLAVOR.vcpus },
          { resourceClass: 'MEMORY_MB', used: FLAVOR.memoryMb },
          { resourceClass: 'DISK_GB', used: FLAVOR.rootGb },
        ]);
        inst.host = dest.host;
        inst.node = `${dest.host}.example.org`;
        return;
      }
      case 'instance-disk-on-sharing-provider': {
        // A live instance's DISK_GB on a sharing provider (MISC_SHARES_VIA_AGGREGATE): never a compute-node provider.
        const inst = pick(a, this.instances.filter((i) => i.live && this.nodes.some((n) => n.kind === 'libvirt' && n.host === i.host)));
        if (inst === undefined) return;
        const p = this.dbs.placement;
        let share = (await p('resource_providers').where({ name: 'shared-disk' }).first('id')) as { id: number } | undefined;
        if (share === undefined) {
          const id = await insertResourceProvider(p, { uuid: fakeUuid(6, this.next()), name: 'shared-disk', generation: 1 });
          await insertInventories(p, [{ providerId: id, resourceClass: 'DISK_GB', total: 10000, reserved: 0, maxUnit: 10000, allocationRatio: 1.0 }]);
          await insertProviderTraits(p, id, ['MISC_SHARES_VIA_AGGREGATE']);
          share = { id };
        }
        if ((await p('allocations').where({ consumer_id: inst.uuid, resource_provider_id: share.id }).first()) !== undefined) return;
        await this.writeAllocations(inst.uuid, share.id, [{ resourceClass: 'DISK_GB', used: 10 }]);
        return;
      }
      case 'provider-renamed': {
        const n = pick(a, this.nodes.filter((x) => x.providerId !== null));
        if (n === undefined || n.providerId === null) return;
        await this.dbs.placement('resource_providers').where({ id: n.providerId }).update({ name: `renamed-${this.next()}`, updated_at: utcNowString() });
        return;
      }
      case 'provider-recreated': {
        // Deleted (only possible without allocations) and created again by the
        // resource tracker under the same uuid and name, generation from 0.
        const n = pick(a, this.nodes.filter((x) => x.live && x.providerId !== null));
        if (n === undefined || n.providerId === null) return;
        if ((await this.dbs.placement('allocations').where({ resource_provider_id: n.providerId }).first()) !== undefined) return;
        const old = (await this.dbs.placement('resource_providers').where({ id: n.providerId }).first('uuid', 'name')) as { uuid: string; name: string };
        await this.deleteProviderRows(n.providerId);
        const id = await insertResourceProvider(this.dbs.placement, { uuid: old.uuid, name: old.name, generation: 2 });
        await insertInventories(
          this.dbs.placement,
          n.kind === 'ironic'
            ? [{ providerId: id, resourceClass: IRONIC_RC, total: 1, reserved: n.maintenance ? 1 : 0, maxUnit: 1 }]
            : [
                { providerId: id, resourceClass: 'VCPU', total: 16, maxUnit: 16, allocationRatio: 16 },
                { providerId: id, resourceClass: 'MEMORY_MB', total: 65536, reserved: 512, maxUnit: 65536, allocationRatio: 1.5 },
                { providerId: id, resourceClass: 'DISK_GB', total: 500, maxUnit: 500 },
              ],
        );
        await insertProviderTraits(this.dbs.placement, id, [COMPUTE_NODE_TRAIT]);
        n.providerId = id;
        return;
      }
      case 'allocation-lost': {
        // An earlier cascade removed a live instance's allocations (bug 1841481).
        const inst = pick(a, this.instances.filter((i) => i.live));
        if (inst !== undefined) await this.releaseAllocations(inst.uuid);
        return;
      }
      case 'host-mapped': {
        const s = pick(a, this.services.filter((x) => x.live));
        if (s === undefined) return;
        if ((await this.dbs.api('host_mappings').where({ host: s.host }).first()) !== undefined) return;
        await insertHostMapping(this.dbs.api, { cellId: this.dbs.cellIds[s.cell], host: s.host });
        return;
      }
      case 'host-unmapped': {
        const s = pick(a, this.services);
        if (s !== undefined) await this.dbs.api('host_mappings').where({ host: s.host }).del();
        return;
      }
      case 'host-redeployed-other-cell': {
        // The host's old service row is deleted by hand and it starts again in
        // the other cell; its host mapping still points at the old cell.
        const s = pick(a, liveServices.filter((x) => !this.instances.some((i) => i.live && i.host === x.host)));
        if (s === undefined) return;
        await softDeleteRow(this.dbs.cells[s.cell], 'services', s.id, utcNowString());
        s.live = false;
        const cell: CellName = s.cell === 'cell1' ? 'cell2' : 'cell1';
        const id = await addComputeService(this.dbs.cells[cell], { uuid: fakeUuid(1, this.next()), host: s.host, clock: this.clock });
        this.services.push({ host: s.host, cell, kind: s.kind, id, live: true });
        return;
      }
      default: {
        const never: never = event.kind;
        throw new Error(`unknown event ${String(never)}`);
      }
    }
  }

  private next(): number {
    this.counter += 1;
    return this.counter;
  }

  /** A consumer's allocation write as Placement does it: consumer get-or-create (generation + 1), provider generation + 1. */
  private async writeAllocations(consumer: string, providerId: number, parts: ReadonlyArray<{ resourceClass: string; used: number }>): Promise<void> {
    await this.dbs.placement.transaction(async (trx) => {
      const existing = (await trx('consumers').where({ uuid: consumer }).first('id')) as { id: number } | undefined;
      if (existing === undefined) await insertConsumer(trx, { uuid: consumer, projectId: PROJECT, userId: USER, generation: 1 });
      else await trx('consumers').where({ id: existing.id }).update({ generation: trx.raw('generation + 1') });
      await insertAllocations(trx, parts.map((p) => ({ providerId, consumerUuid: consumer, resourceClass: p.resourceClass, used: p.used })));
      await trx('resource_providers').where({ id: providerId }).update({ generation: trx.raw('generation + 1') });
    });
  }

  /** DELETE /allocations/{consumer}: every allocation and the consumer row; the providers are not bumped. */
  private async releaseAllocations(consumer: string): Promise<void> {
    await this.dbs.placement.transaction(async (trx) => {
      await trx('allocations').where({ consumer_id: consumer }).del();
      await trx('consumers').where({ uuid: consumer }).del();
    });
  }

  private async setIronicReserved(n: NodeRec): Promise<void> {
    if (n.providerId === null) return;
    const inUse = this.instances.some((i) => i.live && i.node === n.hh);
    await this.dbs.placement('inventories').where({ resource_provider_id: n.providerId }).update({ reserved: n.maintenance || inUse ? 1 : 0 });
    await this.dbs.placement('resource_providers').where({ id: n.providerId }).update({ generation: this.dbs.placement.raw('generation + 1') });
  }

  /** delete_resource_provider(cascade=True) (§5.2): instances' allocations, then the provider unless placement says 409. */
  private async deleteProviderCascade(n: NodeRec): Promise<void> {
    if (n.providerId === null) return;
    for (const i of this.instances.filter((x) => x.live && x.host === n.host)) await this.releaseAllocations(i.uuid);
    if ((await this.dbs.placement('allocations').where({ resource_provider_id: n.providerId }).first()) !== undefined) return; // 409, ignored
    await this.deleteProviderRows(n.providerId);
    n.providerId = null;
  }

  private async deleteProviderRows(providerId: number): Promise<void> {
    await this.dbs.placement.transaction(async (trx) => {
      await trx('inventories').where({ resource_provider_id: providerId }).del();
      await trx('resource_provider_traits').where({ resource_provider_id: providerId }).del();
      await trx('resource_provider_aggregates').where({ resource_provider_id: providerId }).del();
      // A root provider references itself (root_provider_id): Placement clears it first, or MariaDB's FK refuses the delete.
      await trx('resource_providers').where({ id: providerId }).update({ root_provider_id: null });
      await trx('resource_providers').where({ id: providerId }).del();
    });
  }

  private async softDeleteNode(n: NodeRec): Promise<void> {
    const cell = this.dbs.cells[n.cell];
    const row = (await cell('compute_nodes').where({ uuid: n.uuid, deleted: 0 }).first('id')) as { id: number } | undefined;
    if (row !== undefined) await softDeleteRow(cell, 'compute_nodes', row.id, utcNowString());
    n.live = false;
  }
}
