// Seed bug 2013: an ironic node deleted in ironic whose compute node (and
// provider) outlived it. The nova-compute service heartbeats for all of its
// nodes, so nothing about the dead node looks "down". Beside it, a healthy
// ironic node with a server, and a libvirt host whose service row was
// soft-deleted while its compute node stayed.
import type { Knex } from 'knex';
import { DAY, HOUR, scenarioClock, type ScenarioClock } from '../clock.js';
import { REPORT_INTERVAL, addComputeService, addIronicNode, addLibvirtHost } from '../builders.js';
import { insertAllocations, insertConsumer, insertHostMappings, insertInstance, insertInstanceMapping, softDeleteRow } from '../rows.js';
import type { Scenario, ScenarioDatabases } from '../scenario.js';
import { libvirtHypervisorHostname } from './libvirt.js';

export const DELETED_IRONIC_NODE = Object.freeze({
  host: 'ironic-compute-0',
  serviceUuid: '24381362-42a0-4e19-87c1-a0f5dc53825a',
  resourceClass: 'CUSTOM_BAREMETAL_GOLD',
  /** Deleted in ironic three days ago; its compute node and provider remain, with no instance. */
  goneNodeUuid: 'a646aa43-4e0b-4f0d-8b12-aa88157783d0',
  /** Still in ironic, deployed two hours ago with bm-1. */
  healthyNodeUuid: '57714aaa-ae8c-4f99-9593-c6b6b8e45a8e',
  server: Object.freeze({
    uuid: 'db591e1b-0a29-4d0d-a575-1afcf1c6c532',
    displayName: 'bm-1',
    projectId: '50ca9b45e9494755a732634b5835d170',
    userId: '1754ac2249374eccb9dbc60770f389a5',
  }),
  /** A libvirt host whose nova-compute service row was soft-deleted two days ago. */
  libvirt: Object.freeze({
    host: 'compute-9',
    serviceUuid: '868d4153-f317-421a-ae56-2dd1c28383dd',
    nodeUuid: '33509888-9e82-4645-b10f-8cf051fe7c31',
    hostIp: '192.0.2.19',
  }),
});

/**
 * The ironic nodes that do exist, as `openstack baremetal node list -f json`
 * prints them: only the healthy node. Tests and the demo write this to the
 * file they pass with --ironic-nodes.
 */
export function deletedIronicNodeIronicList(): string {
  const nodes = [
    {
      UUID: DELETED_IRONIC_NODE.healthyNodeUuid,
      Name: 'bm-gold-2',
      'Instance UUID': DELETED_IRONIC_NODE.server.uuid,
      'Power State': 'power on',
      'Provisioning State': 'active',
      Maintenance: false,
    },
  ];
  return JSON.stringify(nodes, null, 2) + '\n';
}

const S = DELETED_IRONIC_NODE;

/** The ironic node list the sandbox ships in DIR. */
export const IRONIC_NODES_FILE = 'ironic-nodes.json';

export const deletedIronicNodeScenario: Scenario = {
  name: 'deleted-ironic-node',
  summary: 'an ironic node deleted in ironic whose compute node and provider remain, and a libvirt node whose service was deleted (seed bug 2013)',
  story: [
    `cell1 runs one ironic nova-compute service, ${S.host}, heartbeating now. It had two ironic nodes (resource class baremetal-gold). ` +
      `${S.goneNodeUuid} was deleted in ironic three days ago, but its compute node and its resource provider are still there, without an instance. ` +
      `${S.healthyNodeUuid} is healthy: server ${S.server.displayName} (${S.server.uuid}) was deployed on it two hours ago and holds its one ${S.resourceClass} unit (reserved 1, as for every node in use).`,
    "Nothing looks wrong to Nova: a service's heartbeat covers all of its nodes, so the deleted node shows as up (seed bug 2013). " +
      "compute_node list shows each node's own health; audit lists the deleted node as a suspect, because it has not been saved for days while its service kept reporting. " +
      'Only ironic can say that it is gone: given the list of ironic nodes (--ironic-nodes, here containing only the healthy node), audit reports it as orphan-node-ironic-deleted.',
    `${S.libvirt.host} is a libvirt host whose nova-compute service row was soft-deleted two days ago (deleted = id), while its compute node and provider stayed behind: orphan-node-service-deleted.`,
    `Host mappings are as a discover_hosts left them when the hosts were added: ${S.host} and ${S.libvirt.host} are mapped to cell1.`,
    `To give the ironic truth: write \`openstack baremetal node list -f json\` to a file and pass it with --ironic-nodes FILE. The sandbox ships that file as ${IRONIC_NODES_FILE}: a list holding only the healthy node.`,
  ],
  tryNext: ['audit', `audit --ironic-nodes {dir}/${IRONIC_NODES_FILE}`, `compute_node list --ironic-nodes {dir}/${IRONIC_NODES_FILE}`, `compute_node cleanup_orphans --ironic-nodes {dir}/${IRONIC_NODES_FILE}`],
  files: { [IRONIC_NODES_FILE]: deletedIronicNodeIronicList() },
  async populate(dbs) {
    const clock = scenarioClock();
    const cell = dbs.cells.cell1;
    await addComputeService(cell, { uuid: S.serviceUuid, host: S.host, clock });
    // Enrolled six days ago and never re-saved since: an idle ironic node is not (nova-facts §5.4).
    await addIronicNode(cell, dbs.placement, { nodeUuid: S.goneNodeUuid, host: S.host, resourceClass: S.resourceClass, clock });
    const healthy = await addIronicNode(cell, dbs.placement, { nodeUuid: S.healthyNodeUuid, host: S.host, resourceClass: S.resourceClass, clock, reserved: 1 });
    await addBaremetalServer(dbs, clock, healthy.computeNodeId, healthy.providerId);
    await addHostWithDeletedService(dbs, clock);
    await mapHostsAsDiscovered(dbs, clock);
  },
};

/** bm-1 on the healthy node: instance, mapping, and one CUSTOM_BAREMETAL_GOLD unit in placement. */
async function addBaremetalServer(dbs: ScenarioDatabases, clock: ScenarioClock, computeNodeId: number, providerId: number): Promise<void> {
  const cell = dbs.cells.cell1;
  const deployedAt = clock.ago(2 * HOUR);
  await insertInstance(cell, {
    uuid: S.server.uuid,
    displayName: S.server.displayName,
    host: S.host,
    node: S.healthyNodeUuid,
    vmState: 'active',
    projectId: S.server.projectId,
    userId: S.server.userId,
    vcpus: 32,
    memoryMb: 262144,
    rootGb: 400,
    flavorId: 5,
    createdAt: deployedAt,
    launchedAt: deployedAt,
  });
  await insertInstanceMapping(dbs.api, { instanceUuid: S.server.uuid, cellId: dbs.cellIds.cell1, projectId: S.server.projectId, userId: S.server.userId, createdAt: deployedAt });
  // The tracker re-saves the node when an instance lands on it (its usage changed).
  await cell('compute_nodes').update({ running_vms: 1, updated_at: deployedAt }).where('id', computeNodeId);
  await dbs.placement.transaction(async (trx: Knex.Transaction) => {
    await insertConsumer(trx, { uuid: S.server.uuid, projectId: S.server.projectId, userId: S.server.userId, generation: 1, createdAt: deployedAt });
    await insertAllocations(trx, [{ providerId, consumerUuid: S.server.uuid, resourceClass: S.resourceClass, used: 1, createdAt: deployedAt }]);
    // 2 (inventory, traits) + the allocation write + the reserved = 1 inventory write.
    await trx('resource_providers').update({ generation: 4, updated_at: deployedAt }).where('id', providerId);
  });
}

/** compute-9: stopped reporting two days ago, then its service row was soft-deleted; node and provider stay. */
async function addHostWithDeletedService(dbs: ScenarioDatabases, clock: ScenarioClock): Promise<void> {
  const cell = dbs.cells.cell1;
  const rows = await addLibvirtHost(cell, dbs.placement, {
    host: S.libvirt.host,
    serviceUuid: S.libvirt.serviceUuid,
    nodeUuid: S.libvirt.nodeUuid,
    hypervisorHostname: libvirtHypervisorHostname(S.libvirt.host),
    hostIp: S.libvirt.hostIp,
    clock,
  });
  const lastSeenUp = clock.ago(2 * DAY);
  await cell('services')
    .update({ last_seen_up: lastSeenUp, updated_at: lastSeenUp, report_count: Math.floor((5 * DAY) / REPORT_INTERVAL) })
    .where('id', rows.serviceId);
  await softDeleteRow(cell, 'services', rows.serviceId, clock.ago(2 * DAY - 600));
}

/** discover_hosts ran when the hosts were added: both mapped, every live node flagged mapped. */
async function mapHostsAsDiscovered(dbs: ScenarioDatabases, clock: ScenarioClock): Promise<void> {
  await insertHostMappings(dbs.api, [
    { cellId: dbs.cellIds.cell1, host: S.host, createdAt: clock.ago(6 * DAY) },
    { cellId: dbs.cellIds.cell1, host: S.libvirt.host, createdAt: clock.ago(7 * DAY) },
  ]);
  await dbs.cells.cell1('compute_nodes').update({ mapped: 1 }).where('deleted', 0);
}
