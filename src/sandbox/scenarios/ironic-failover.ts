// Seed bug 1714248: an ironic node fails over from a dead nova-compute
// service to another one, and the records diverge. The second service
// creates a duplicate compute node with a new uuid; its provider cannot be
// created because the first provider still holds the node's name (the 409);
// the node's instance and its allocation stay with the dead service.
// The renamed variant is the state an operator reaches by renaming the old
// provider to free the name: the duplicate's provider exists and is empty,
// while the allocation sits on the renamed, stale one.
import type { Knex } from 'knex';
import { DAY, HOUR, scenarioClock, type ScenarioClock } from '../clock.js';
import { COMPUTE_NODE_TRAIT, addComputeService } from '../builders.js';
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
} from '../rows.js';
import type { Scenario, ScenarioDatabases } from '../scenario.js';

export const IRONIC_FAILOVER = Object.freeze({
  /** The first service is dead and forced down; the second took the node over. */
  hosts: Object.freeze(['ironic-compute-0', 'ironic-compute-1'] as const),
  serviceUuids: Object.freeze(['0f4b8f2e-54f4-4c37-9a49-6b1e3e1c2a10', '7c1d9a55-2e3b-4f8c-b0a6-93d4e7f1a2b3']),
  /** The ironic node: compute node U1's uuid and hypervisor_hostname, provider U1's uuid and name. */
  nodeUuid: '1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
  /** The duplicate compute node U2 that ironic-compute-1 created for the same node. */
  duplicateUuid: 'd6a3c1f0-8b7e-4e21-9c55-0a4f2b6e7d19',
  resourceClass: 'CUSTOM_BAREMETAL_GOLD',
  /** The name the renamed variant gave provider U1. */
  renamedProviderName: 'stale-1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
  server: Object.freeze({
    uuid: '5e0a7c3d-91b4-4f6a-8d2e-c7b1f0a93e58',
    displayName: 'bm-db-1',
    projectId: '8d2f6a1c0b3e4f5a9c7d1e2b3a4f5c6d',
    userId: '2b7e9c4a1d3f4e6b8a0c5d7e9f1a3b5c',
    /** The baremetal flavor: resources:VCPU/MEMORY_MB/DISK_GB=0, resources:CUSTOM_BAREMETAL_GOLD=1. */
    flavor: Object.freeze({ id: 7, vcpus: 32, memoryMb: 262144, rootGb: 900 }),
  }),
});

interface FailoverRows {
  readonly providerU1: number;
}

/** The 409 state, shared by both scenarios. */
async function populateFailover(dbs: ScenarioDatabases, clock: ScenarioClock): Promise<FailoverRows> {
  const cell: Knex = dbs.cells.cell1;
  const f = IRONIC_FAILOVER;
  const [dead, live] = f.hosts;
  // ironic-compute-0 stopped two hours ago and the operator forced it down.
  await addComputeService(cell, { uuid: f.serviceUuids[0] as string, host: dead, clock, age: 90 * DAY, lastHeartbeatAgo: 2 * HOUR, forcedDown: true });
  await addComputeService(cell, { uuid: f.serviceUuids[1] as string, host: live, clock, age: 90 * DAY });
  for (const host of f.hosts) await insertHostMapping(dbs.api, { cellId: dbs.cellIds.cell1, host, createdAt: clock.ago(90 * DAY) });

  // U1: created by ironic-compute-0 a month ago, last saved when the server was booted.
  const bootedAt = clock.ago(3 * DAY);
  await insertComputeNode(cell, {
    uuid: f.nodeUuid,
    host: dead,
    hypervisorHostname: f.nodeUuid,
    hypervisorType: 'ironic',
    mapped: 1,
    runningVms: 1,
    createdAt: clock.ago(30 * DAY),
    updatedAt: clock.ago(2 * HOUR + 60),
  });
  // U2: ironic-compute-1's duplicate for the same ironic node, an hour ago.
  await insertComputeNode(cell, {
    uuid: f.duplicateUuid,
    host: live,
    hypervisorHostname: f.nodeUuid,
    hypervisorType: 'ironic',
    mapped: 1,
    createdAt: clock.ago(HOUR),
    updatedAt: clock.ago(HOUR),
  });

  // Provider U1: inventory and COMPUTE_NODE (generation 2), the allocation
  // (3), then reserved = 1 because the node is in use (4).
  const createdAt = clock.ago(30 * DAY);
  const providerU1 = await insertResourceProvider(dbs.placement, { uuid: f.nodeUuid, name: f.nodeUuid, generation: 4, createdAt });
  await insertInventories(dbs.placement, [{ providerId: providerU1, resourceClass: f.resourceClass, total: 1, reserved: 1, minUnit: 1, maxUnit: 1, stepSize: 1, allocationRatio: 1.0, createdAt }]);
  await insertProviderTraits(dbs.placement, providerU1, [COMPUTE_NODE_TRAIT]);

  const s = f.server;
  await insertInstance(cell, {
    uuid: s.uuid,
    displayName: s.displayName,
    host: dead,
    node: f.nodeUuid,
    vmState: 'active',
    projectId: s.projectId,
    userId: s.userId,
    vcpus: s.flavor.vcpus,
    memoryMb: s.flavor.memoryMb,
    rootGb: s.flavor.rootGb,
    flavorId: s.flavor.id,
    createdAt: bootedAt,
    launchedAt: bootedAt,
  });
  await insertInstanceMapping(dbs.api, { instanceUuid: s.uuid, cellId: dbs.cellIds.cell1, projectId: s.projectId, userId: s.userId, createdAt: bootedAt });
  await insertConsumer(dbs.placement, { uuid: s.uuid, projectId: s.projectId, userId: s.userId, generation: 1, createdAt: bootedAt });
  await insertAllocations(dbs.placement, [{ providerId: providerU1, consumerUuid: s.uuid, resourceClass: f.resourceClass, used: 1, createdAt: bootedAt }]);
  return { providerU1 };
}

const STORY = [
  `cell1 runs two ironic nova-compute services, ${IRONIC_FAILOVER.hosts.join(' and ')}, both mapped. ${IRONIC_FAILOVER.hosts[0]} died two hours ago and the operator forced it down.`,
  `Its ironic node ${IRONIC_FAILOVER.nodeUuid} carries server ${IRONIC_FAILOVER.server.displayName} (${IRONIC_FAILOVER.server.uuid}), whose ${IRONIC_FAILOVER.resourceClass}=1 allocation sits on provider U1 (= the node uuid, reserved 1 because the node is in use). The compute node U1 and the instance still say ${IRONIC_FAILOVER.hosts[0]}, where nothing can act on them.`,
  `${IRONIC_FAILOVER.hosts[1]} took the node over and created a duplicate compute node U2 (${IRONIC_FAILOVER.duplicateUuid}) for it: seed bug 1714248.`,
];

export const ironicFailoverScenario: Scenario = {
  name: 'ironic-failover',
  summary: 'an ironic node failed over to a second service: duplicate compute node, provider 409, instance on the dead host (bug 1714248)',
  story: [
    ...STORY,
    "U2's provider could not be created: provider U1 holds the node's name (409 \"Conflicting resource provider name\").",
    'compute_node rebalance keeps U1 (its provider holds the allocation), soft-deletes U2, re-homes U1 onto ironic-compute-1 and moves the server with it. Placement needs no change.',
  ],
  tryNext: ['audit', 'compute_node rebalance', 'compute_node rebalance --apply', 'audit'],
  async populate(dbs) {
    await populateFailover(dbs, scenarioClock());
  },
};

export const ironicFailoverRenamedScenario: Scenario = {
  name: 'ironic-failover-renamed',
  summary: 'ironic-failover after provider U1 was renamed to free the name: an empty duplicate provider U2 holds it',
  story: [
    ...STORY,
    `Someone renamed provider U1 to ${IRONIC_FAILOVER.renamedProviderName} to free the name, so ironic-compute-1 created provider U2, named after the node and empty, while the allocation stays on U1.`,
    "compute_node rebalance keeps U1 (its provider holds the allocation): it deletes the empty provider U2, gives provider U1 the node's name back, soft-deletes U2, re-homes U1 onto ironic-compute-1 and moves the server with it.",
  ],
  tryNext: ['audit', 'compute_node rebalance', 'compute_node rebalance --apply', 'audit'],
  async populate(dbs) {
    const clock = scenarioClock();
    const f = IRONIC_FAILOVER;
    const { providerU1 } = await populateFailover(dbs, clock);
    // A rename does not bump the generation (Placement, nova-facts §8.2).
    await dbs.placement('resource_providers').update({ name: f.renamedProviderName, updated_at: clock.ago(HOUR + 300) }).where('id', providerU1);
    const createdAt = clock.ago(HOUR);
    const providerU2 = await insertResourceProvider(dbs.placement, { uuid: f.duplicateUuid, name: f.nodeUuid, generation: 2, createdAt });
    // Ironic reports the node in use (it has an instance): reserved 1.
    await insertInventories(dbs.placement, [{ providerId: providerU2, resourceClass: f.resourceClass, total: 1, reserved: 1, minUnit: 1, maxUnit: 1, stepSize: 1, allocationRatio: 1.0, createdAt }]);
    await insertProviderTraits(dbs.placement, providerU2, [COMPUTE_NODE_TRAIT]);
  },
};
