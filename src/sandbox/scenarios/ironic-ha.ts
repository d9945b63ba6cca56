// Seed bug 1755602: ironic compute services that own no node yet are never
// mapped by the node path of discover_hosts, which is why --by-service exists.
import { scenarioClock } from '../clock.js';
import { addComputeService, addIronicNode } from '../builders.js';
import type { Scenario } from '../scenario.js';

export const IRONIC_HA = Object.freeze({
  hosts: Object.freeze(['ironic-compute-0', 'ironic-compute-1', 'ironic-compute-2']),
  serviceUuids: Object.freeze([
    '65d3b110-2450-42e6-a208-0bb96dcb37be',
    '956848a6-7fac-4ce9-8221-3a783ffcd46a',
    '4aa24617-1cc4-4d0d-bcf5-d5898992e3a7',
  ]),
  /** The one ironic node: compute node uuid = hypervisor_hostname = provider uuid = provider name. */
  nodeUuid: 'aa2f504a-fe68-4da3-b652-d23e2283273a',
  nodeHost: 'ironic-compute-0',
  resourceClass: 'CUSTOM_BAREMETAL_GOLD',
});

export const ironicHaScenario: Scenario = {
  name: 'ironic-ha',
  summary: 'three ironic nova-compute services in cell1, one ironic node (bug 1755602)',
  story: [
    `cell1 runs three ironic nova-compute services for high availability: ${IRONIC_HA.hosts.join(', ')}. All three are up.`,
    `Ironic has one node, ${IRONIC_HA.nodeUuid} (resource class baremetal-gold). The hash ring gave it to ${IRONIC_HA.nodeHost}, so that is the only host with a compute node; its resource provider has one ${IRONIC_HA.resourceClass} unit.`,
    'The node path of discover_hosts maps hosts through their compute nodes, so it maps only ironic-compute-0. ironic-compute-1 and ironic-compute-2 stay unmapped: seed bug 1755602. If a rebalance later hands them a node, the scheduler cannot place anything on it until someone maps the host.',
    'discover_hosts --by-service maps hosts through their nova-compute services, so it maps all three. cell2 is empty.',
  ],
  tryNext: ['cell_v2 discover_hosts --verbose', 'cell_v2 discover_hosts --by-service --verbose', 'cell_v2 list_hosts'],
  async populate(dbs) {
    const clock = scenarioClock();
    const cell = dbs.cells.cell1;
    for (const [i, host] of IRONIC_HA.hosts.entries()) {
      const uuid = IRONIC_HA.serviceUuids[i];
      if (uuid === undefined) throw new Error(`no service uuid for ${host}`);
      await addComputeService(cell, { uuid, host, clock });
    }
    await addIronicNode(cell, dbs.placement, {
      nodeUuid: IRONIC_HA.nodeUuid,
      host: IRONIC_HA.nodeHost,
      resourceClass: IRONIC_HA.resourceClass,
      clock,
    });
  },
};
