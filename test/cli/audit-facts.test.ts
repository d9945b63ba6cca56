// Issue 40 item 2: two findings carry what an operator must know before
// acting, in the table and in the JSON. Through the built binary on SQLite
// and MariaDB, on rows written as Nova writes them.
//  - Legacy duplicate compute nodes of one ironic node, both services up
//    (pre-Rocky random uuids, bug 1714248): ironic-1 created CN-a and its
//    provider (named after the node) holding the server's allocation;
//    ironic-2 raced and created CN-b, whose provider create hit the 409, and
//    the server's host is ironic-2. The finding says which row holds the
//    provider, which the allocations and which the instance.
//  - A forced-down service's compute node whose server is live in vm_state
//    error: the node-of-dead-service finding says to keep it, naming it.
import type { Knex } from 'knex';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { COMPUTE_NODE_TRAIT, addComputeService } from '../../src/sandbox/builders.js';
import { DAY, scenarioClock } from '../../src/sandbox/clock.js';
import { insertAllocations, insertComputeNode, insertConsumer, insertHostMapping, insertInstance, insertInventories, insertProviderTraits, insertResourceProvider } from '../../src/sandbox/rows.js';
import { LIBVIRT_SERVER } from '../../src/sandbox/scenarios/libvirt.js';

const NODE = '5a0c3d2e-7a3d-4e8b-9c6f-1d2e3f4a5b6c';
const CN_A = 'a1e2c3d4-1111-4b5c-8d9e-0f1a2b3c4d5e';
const CN_B = 'b2c3d4e5-2222-4f1a-9b2c-3d4e5f6a7b8c';
const SERVER = 'c3d4e5f6-3333-4a5b-8c6d-7e8f9a0b1c2d';

interface Finding {
  kind: string;
  summary: string;
  objects: Record<string, unknown>;
}

async function findingsOf(d: TestDeployment, kind: string): Promise<{ json: Finding[]; table: string }> {
  const r = await runBin([...d.args, 'audit', '--kind', kind, '--format', 'json']);
  expect(r.code, r.stdout + r.stderr).toBe(3);
  const table = await runBin([...d.args, 'audit', '--kind', kind]);
  expect(table.code).toBe(3);
  return { json: (JSON.parse(r.stdout) as { findings: Finding[] }).findings, table: table.stdout.replace(/\s+/g, ' ') };
}

describeEachDialect('audit findings that say what to act on (issue 40 item 2)', (dialect) => {
  let d: TestDeployment;
  afterEach(async () => {
    await d.cleanup();
  });

  describe('legacy duplicates of one ironic node, both services up', () => {
    beforeEach(async () => {
      d = await createTestDeployment(dialect, 'empty', 'af');
      const clock = scenarioClock();
      const cell: Knex = d.dbs.cells.cell1;
      const p = d.dbs.placement;
      for (const [i, host] of ['ironic-1', 'ironic-2'].entries()) {
        await addComputeService(cell, { uuid: `0e1f2a3b-555${i}-4c5d-8e6f-7a8b9c0d1e2f`, host, clock, age: 400 * DAY });
        await insertHostMapping(d.dbs.api, { cellId: d.dbs.cellIds.cell1, host, createdAt: clock.ago(400 * DAY) });
      }
      await insertComputeNode(cell, { uuid: CN_A, host: 'ironic-1', hypervisorHostname: NODE, hypervisorType: 'ironic', mapped: 1, createdAt: clock.ago(300 * DAY), updatedAt: clock.ago(600) });
      await insertComputeNode(cell, { uuid: CN_B, host: 'ironic-2', hypervisorHostname: NODE, hypervisorType: 'ironic', mapped: 1, runningVms: 1, createdAt: clock.ago(299 * DAY), updatedAt: clock.ago(600) });
      const rp = await insertResourceProvider(p, { uuid: CN_A, name: NODE, generation: 4 });
      await insertInventories(p, [{ providerId: rp, resourceClass: 'CUSTOM_BAREMETAL_GOLD', total: 1, reserved: 1, minUnit: 1, maxUnit: 1, stepSize: 1, allocationRatio: 1.0 }]);
      await insertProviderTraits(p, rp, [COMPUTE_NODE_TRAIT]);
      await insertInstance(cell, { uuid: SERVER, displayName: 'bm-1', host: 'ironic-2', node: NODE, vmState: 'active', projectId: 'p', userId: 'u', vcpus: 8, memoryMb: 16384, rootGb: 100, flavorId: 7 });
      await insertConsumer(p, { uuid: SERVER, projectId: 'p', userId: 'u', generation: 1 });
      await insertAllocations(p, [{ providerId: rp, consumerUuid: SERVER, resourceClass: 'CUSTOM_BAREMETAL_GOLD', used: 1 }]);
    });

    it('the finding names the row of the provider and allocations (CN-a) and the row of the instance (CN-b)', async () => {
      const { json, table } = await findingsOf(d, 'duplicate-compute-node');
      expect(json).toHaveLength(1);
      const summary = `2 live compute nodes claim ${NODE} (hosts ironic-1, ironic-2): provider on row ${CN_A} (host ironic-1), allocations of 1 consumer(s) on row ${CN_A} (host ironic-1), instance ${SERVER} on row ${CN_B} (host ironic-2)`;
      expect(json[0]?.summary).toBe(summary);
      expect(json[0]?.objects).toEqual({
        hypervisor_hostname: NODE,
        node_uuids: [CN_A, CN_B],
        hosts: ['ironic-1', 'ironic-2'],
        provider_node_uuids: [CN_A],
        allocation_node_uuids: [CN_A],
        allocation_consumers: [SERVER],
        instance_node_uuids: [CN_B],
        instance_uuids: [SERVER],
      });
      expect(table).toContain(`instance ${SERVER} on row ${CN_B}`);
    });
  });

  describe('a forced-down service whose node has a live server in vm_state error', () => {
    beforeEach(async () => {
      d = await createTestDeployment(dialect, 'libvirt', 'af');
      expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
      const cell = d.knex('cell1');
      await cell('services').update({ forced_down: 1 }).where('host', LIBVIRT_SERVER.host);
      await cell('instances').update({ vm_state: 'error' }).where('uuid', LIBVIRT_SERVER.uuid);
    });

    it('node-of-dead-service says keep: live instance on it, naming the instance', async () => {
      const { json, table } = await findingsOf(d, 'node-of-dead-service');
      expect(json).toHaveLength(1);
      expect(json[0]?.summary).toMatch(new RegExp(`belongs to a nova-compute service that is forced down; keep: live instance ${LIBVIRT_SERVER.uuid} \\(vm_state error\\) is on it$`));
      expect(json[0]?.objects).toMatchObject({ host: LIBVIRT_SERVER.host, forced_down: true, instances: 1, keep: 'live instance on it', instance_uuids: [LIBVIRT_SERVER.uuid] });
      expect(table).toContain(`keep: live instance ${LIBVIRT_SERVER.uuid} (vm_state error) is on it`);
    });
  });
});
