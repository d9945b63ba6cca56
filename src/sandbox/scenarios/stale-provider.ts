// A stale resource provider left holding a live compute node's name: the
// after-effects of seed bug 1714248 and of Nova ignoring the 409 when it
// deletes a provider that still holds allocations (nova-facts §5.2). Zed gives a
// re-created libvirt compute node a new random uuid but the same name, so its
// provider create fails with "Conflicting resource provider name" for as long
// as the old provider exists. Shown twice: once without allocations on the
// stale provider, once with.
import type { Knex } from 'knex';
import { DAY, HOUR, scenarioClock, type ScenarioClock } from '../clock.js';
import { COMPUTE_NODE_TRAIT, addComputeService, type Flavor } from '../builders.js';
import {
  RESERVED_HOST_MEMORY_MB,
  ZED_INITIAL_ALLOCATION_RATIOS,
  insertAllocations,
  insertComputeNode,
  insertConsumer,
  insertHostMappings,
  insertInstance,
  insertInstanceMapping,
  insertInventories,
  insertProviderTraits,
  insertResourceProvider,
  softDeleteRow,
} from '../rows.js';
import type { Scenario, ScenarioDatabases } from '../scenario.js';
import { libvirtHypervisorHostname } from './libvirt.js';

interface BlockedHost {
  readonly cell: 'cell1' | 'cell2';
  readonly host: string;
  readonly serviceUuid: string;
  /** The compute node nova-compute created two days ago, which has no provider. */
  readonly liveNodeUuid: string;
  /** The uuid of the soft-deleted compute node, and of the provider that outlived it. */
  readonly staleUuid: string;
  readonly hostIp: string;
}

const PROJECT = 'c2a5b1f0e6a44a3f8f6f3a9d2b7e4c11';
const USER = '9d1e4f2a7b3c4d5e8f6a1b2c3d4e5f60';

export const STALE_PROVIDER = Object.freeze({
  /** Without allocations: the stale provider only holds the name. */
  empty: Object.freeze({
    cell: 'cell1',
    host: 'compute-7',
    serviceUuid: 'd0cdc6b0-b3fa-4b9c-8cfb-124351b2a57f',
    liveNodeUuid: 'eb5393b7-9fee-4ec1-877a-d033b9509089',
    staleUuid: 'b8828977-02e0-44a6-b5df-477773c72fe7',
    hostIp: '192.0.2.17',
  }) satisfies BlockedHost,
  /** With allocations: those of a live server on the host, and of an orphaned consumer. */
  withAllocations: Object.freeze({
    cell: 'cell2',
    host: 'compute-8',
    serviceUuid: 'fd86f950-e1d9-4327-a631-111df6b1de20',
    liveNodeUuid: '9c1de281-ff06-4b14-9ec9-5e6a77d1ae11',
    staleUuid: 'b277f79d-2ead-48be-bb03-209fe5979f50',
    hostIp: '192.0.2.18',
  }) satisfies BlockedHost,
  /** Runs on compute-8; its allocations are still on the stale provider. */
  server: Object.freeze({ uuid: 'd9c37ec1-defa-476a-96c2-afe0313cff5a', displayName: 'db-1', flavor: Object.freeze({ id: 3, vcpus: 4, memoryMb: 8192, rootGb: 40 }) }),
  /** A server deleted while placement was unreachable: instance soft-deleted, allocations never released. */
  orphan: Object.freeze({ uuid: 'efc0e261-036a-4143-8b13-52eb4f5e1e49', displayName: 'tmp-1', flavor: Object.freeze({ id: 1, vcpus: 1, memoryMb: 2048, rootGb: 20 }) }),
});

const S = STALE_PROVIDER;

export const staleProviderScenario: Scenario = {
  name: 'stale-provider',
  summary: 'stale providers holding the names of live compute nodes, with and without allocations (bug 1714248 after-effects)',
  story: [
    `${S.empty.host} (cell1) and ${S.withAllocations.host} (cell2) are libvirt hosts whose compute node Nova once deleted as an orphan (their hypervisor name changed for a moment) ` +
      'and re-created under a new random uuid, as Zed does. The old compute node rows are soft-deleted; their providers were not removed, so each still holds the name the new node needs, ' +
      'and nova-compute fails to create its provider with a 409 "Conflicting resource provider name" every minute. The new nodes have no provider at all: the scheduler cannot use them.',
    `Without allocations: the stale provider of ${S.empty.host} (${S.empty.staleUuid}) still has its inventory but nobody uses it; ` +
      'placement was briefly unreachable when Nova tried to delete it, and Nova only logged the failure. It can simply be deleted, and nova-compute then creates the right one.',
    `With allocations: the stale provider of ${S.withAllocations.host} (${S.withAllocations.staleUuid}) kept the allocations of server ${S.server.displayName} (${S.server.uuid}), which still runs on ${S.withAllocations.host}, ` +
      `so Nova's delete got a 409 and gave up. It also holds the allocations of ${S.orphan.uuid}, a server deleted while placement was unreachable: an orphaned consumer. ` +
      "This provider must not just be deleted: it is re-keyed to the live node's uuid (keeping the server's allocations) once the orphaned allocations are gone.",
    `Both hosts are mapped to their cells, as discover_hosts left them. audit reports provider-without-node, provider-name-conflict and node-without-provider for each host, and the two stale allocations on ${S.withAllocations.host}'s provider: live-instance-on-node and orphaned.`,
  ],
  tryNext: ['audit', 'compute_node list', 'placement cleanup_providers'],
  async populate(dbs) {
    const clock = scenarioClock();
    await addBlockedHost(dbs, clock, S.empty, []);
    await addBlockedHost(dbs, clock, S.withAllocations, [S.server.flavor]);
    await mapHostsAsDiscovered(dbs, clock);
  },
};

async function addBlockedHost(dbs: ScenarioDatabases, clock: ScenarioClock, h: BlockedHost, running: readonly Flavor[]): Promise<void> {
  const cell: Knex = dbs.cells[h.cell];
  const hypervisorHostname = libvirtHypervisorHostname(h.host);
  const common = { host: h.host, hypervisorHostname, hypervisorType: 'QEMU' as const, hostIp: h.hostIp, vcpus: 16, memoryMb: 65536, localGb: 500 };
  await addComputeService(cell, { uuid: h.serviceUuid, host: h.host, clock, age: 30 * DAY });
  const oldId = await insertComputeNode(cell, { ...common, uuid: h.staleUuid, createdAt: clock.ago(30 * DAY), updatedAt: clock.ago(2 * DAY + HOUR), mapped: 1 });
  await softDeleteRow(cell, 'compute_nodes', oldId, clock.ago(2 * DAY));
  const sum = (f: (x: Flavor) => number): number => running.reduce((n, x) => n + f(x), 0);
  await insertComputeNode(cell, {
    ...common,
    uuid: h.liveNodeUuid,
    vcpusUsed: sum((x) => x.vcpus),
    memoryMbUsed: RESERVED_HOST_MEMORY_MB + sum((x) => x.memoryMb),
    localGbUsed: sum((x) => x.rootGb),
    runningVms: running.length,
    createdAt: clock.ago(2 * DAY - 60),
    updatedAt: clock.ago(60),
    mapped: 1,
  });
  const createdAt = clock.ago(30 * DAY);
  // Generation 2: the inventory write and the trait write (nova-facts §8.2).
  const staleProviderId = await insertResourceProvider(dbs.placement, { uuid: h.staleUuid, name: hypervisorHostname, generation: 2, createdAt });
  await insertInventories(dbs.placement, [
    { providerId: staleProviderId, resourceClass: 'VCPU', total: 16, maxUnit: 16, allocationRatio: ZED_INITIAL_ALLOCATION_RATIOS.cpu, createdAt },
    { providerId: staleProviderId, resourceClass: 'MEMORY_MB', total: 65536, reserved: RESERVED_HOST_MEMORY_MB, maxUnit: 65536, allocationRatio: ZED_INITIAL_ALLOCATION_RATIOS.ram, createdAt },
    { providerId: staleProviderId, resourceClass: 'DISK_GB', total: 500, maxUnit: 500, allocationRatio: ZED_INITIAL_ALLOCATION_RATIOS.disk, createdAt },
  ]);
  await insertProviderTraits(dbs.placement, staleProviderId, [COMPUTE_NODE_TRAIT]);
  if (running.length > 0) await addServersOnStaleProvider(dbs, clock, h, staleProviderId);
}

/** db-1 (live, on the host) and tmp-1 (deleted in Nova, not in placement), both allocated on the stale provider. */
async function addServersOnStaleProvider(dbs: ScenarioDatabases, clock: ScenarioClock, h: BlockedHost, providerId: number): Promise<void> {
  const cell: Knex = dbs.cells[h.cell];
  const cellId = dbs.cellIds[h.cell];
  const node = libvirtHypervisorHostname(h.host);
  for (const server of [S.server, S.orphan]) {
    const createdAt = clock.ago(server === S.server ? 10 * DAY : 5 * DAY);
    const id = await insertInstance(cell, {
      uuid: server.uuid,
      displayName: server.displayName,
      host: h.host,
      node,
      vmState: 'active',
      projectId: PROJECT,
      userId: USER,
      vcpus: server.flavor.vcpus,
      memoryMb: server.flavor.memoryMb,
      rootGb: server.flavor.rootGb,
      flavorId: server.flavor.id,
      createdAt,
      launchedAt: createdAt,
    });
    await insertInstanceMapping(dbs.api, { instanceUuid: server.uuid, cellId, projectId: PROJECT, userId: USER, createdAt, queuedForDelete: server === S.orphan });
    await dbs.placement.transaction(async (trx: Knex.Transaction) => {
      await insertConsumer(trx, { uuid: server.uuid, projectId: PROJECT, userId: USER, generation: 1, createdAt });
      await insertAllocations(trx, [
        { providerId, consumerUuid: server.uuid, resourceClass: 'VCPU', used: server.flavor.vcpus, createdAt },
        { providerId, consumerUuid: server.uuid, resourceClass: 'MEMORY_MB', used: server.flavor.memoryMb, createdAt },
        { providerId, consumerUuid: server.uuid, resourceClass: 'DISK_GB', used: server.flavor.rootGb, createdAt },
      ]);
      await trx('resource_providers').update({ generation: trx.raw('generation + 1'), updated_at: createdAt }).where('id', providerId);
    });
    // tmp-1 was deleted a day ago; Nova could not reach placement to release its allocations.
    if (server === S.orphan) await softDeleteRow(cell, 'instances', id, clock.ago(DAY));
  }
}

/** Both hosts were mapped when first discovered; discover_hosts later flagged the new nodes mapped too. */
async function mapHostsAsDiscovered(dbs: ScenarioDatabases, clock: ScenarioClock): Promise<void> {
  await insertHostMappings(dbs.api, [
    { cellId: dbs.cellIds.cell1, host: S.empty.host, createdAt: clock.ago(30 * DAY) },
    { cellId: dbs.cellIds.cell2, host: S.withAllocations.host, createdAt: clock.ago(30 * DAY) },
  ]);
}
