// A small KVM deployment across two cells, just after the compute services
// started: every host has a service, a compute node and a provider, and none
// is mapped yet.
import type { Knex } from 'knex';
import { scenarioClock } from '../clock.js';
import { addLibvirtHost, addServer, type Flavor } from '../builders.js';
import type { Scenario } from '../scenario.js';

interface LibvirtHost {
  readonly cell: 'cell1' | 'cell2';
  readonly host: string;
  readonly serviceUuid: string;
  readonly nodeUuid: string;
  readonly hostIp: string;
}

export const LIBVIRT_HOSTS: readonly LibvirtHost[] = Object.freeze([
  { cell: 'cell1', host: 'compute-1', serviceUuid: 'a80dbdba-3b97-4eef-b7d9-eb839bb97955', nodeUuid: '8c531e9f-1879-49b0-b100-7b70ca95bb3c', hostIp: '192.0.2.11' },
  { cell: 'cell1', host: 'compute-2', serviceUuid: 'a0625b24-1e1f-4e1f-8721-f9da95575f0b', nodeUuid: 'cb1d03cb-9851-4089-8511-1878351e941e', hostIp: '192.0.2.12' },
  { cell: 'cell1', host: 'compute-3', serviceUuid: 'cfe74594-2644-4caa-82c2-235f15d8f9e2', nodeUuid: 'ff060d8a-ac4f-4334-820b-cf65181b0151', hostIp: '192.0.2.13' },
  { cell: 'cell2', host: 'compute-4', serviceUuid: '98ae88d0-dcdf-4a55-bf19-a6a4acc82c49', nodeUuid: '97959971-af29-45e2-900c-676287865765', hostIp: '192.0.2.14' },
  { cell: 'cell2', host: 'compute-5', serviceUuid: 'cf7cac37-83be-4b40-9051-02722a46872f', nodeUuid: '0670958f-e20a-4d57-bf3a-f166fd934846', hostIp: '192.0.2.15' },
]);

/** libvirt reports the hypervisor's own name, typically fully qualified. */
export function libvirtHypervisorHostname(host: string): string {
  return `${host}.sandbox.example.org`;
}

export const LIBVIRT_SERVER = Object.freeze({
  uuid: '3f534fee-9450-4c30-bbd2-f26a1ae0a399',
  displayName: 'web-1',
  host: 'compute-1',
  projectId: '50ca9b45e9494755a732634b5835d170',
  userId: '1754ac2249374eccb9dbc60770f389a5',
  flavor: Object.freeze({ id: 2, vcpus: 2, memoryMb: 4096, rootGb: 20 }) satisfies Flavor,
});

export const libvirtScenario: Scenario = {
  name: 'libvirt',
  summary: 'five KVM hosts in two cells, one server, nothing mapped yet',
  story: [
    'cell1 has compute-1, compute-2 and compute-3; cell2 has compute-4 and compute-5. Each runs nova-compute with the libvirt driver (hypervisor type QEMU) and has one compute node and one resource provider with VCPU, MEMORY_MB and DISK_GB inventory.',
    `One server, ${LIBVIRT_SERVER.displayName} (${LIBVIRT_SERVER.uuid}), runs on compute-1, with its allocations in placement.`,
    'No host is mapped yet, as after a first deployment: discover_hosts maps all five, each to the cell that holds it, and marks their compute nodes mapped. A second run finds nothing to do.',
  ],
  tryNext: ['cell_v2 discover_hosts --verbose', 'cell_v2 list_hosts', 'cell_v2 discover_hosts --verbose'],
  async populate(dbs) {
    const clock = scenarioClock();
    const providers = new Map<string, number>();
    for (const h of LIBVIRT_HOSTS) {
      const cell: Knex = dbs.cells[h.cell];
      const running = h.host === LIBVIRT_SERVER.host ? [LIBVIRT_SERVER.flavor] : [];
      const rows = await addLibvirtHost(cell, dbs.placement, {
        host: h.host,
        serviceUuid: h.serviceUuid,
        nodeUuid: h.nodeUuid,
        hypervisorHostname: libvirtHypervisorHostname(h.host),
        hostIp: h.hostIp,
        clock,
        running,
      });
      providers.set(h.host, rows.providerId);
    }
    const providerId = providers.get(LIBVIRT_SERVER.host);
    if (providerId === undefined) throw new Error(`no provider for ${LIBVIRT_SERVER.host}`);
    await addServer(dbs.cells.cell1, dbs.api, dbs.placement, {
      uuid: LIBVIRT_SERVER.uuid,
      displayName: LIBVIRT_SERVER.displayName,
      host: LIBVIRT_SERVER.host,
      node: libvirtHypervisorHostname(LIBVIRT_SERVER.host),
      providerId,
      flavor: LIBVIRT_SERVER.flavor,
      projectId: LIBVIRT_SERVER.projectId,
      userId: LIBVIRT_SERVER.userId,
      clock,
      cellId: dbs.cellIds.cell1,
    });
  },
};
