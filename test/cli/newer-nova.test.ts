// Nova 27.0.0+ on MariaDB, through the built binary (issue 36): the release
// read from alembic_version decides, the seed-1714248 repair keeps the row
// whose uuid is the ironic node's and links the instance to it
// (instances.compute_id), the state an earlier Zed-style repair left behind is
// put right, and a schema head newer than any known is refused for writes.
// The conformance tier (test/conformance/newer-nova.test.ts) runs the same
// repair on states written by Nova 31.0.0 and 34.0.0 themselves and their
// own resource tracker after it.
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { COMPUTE_NODE_TRAIT, addComputeService } from '../../src/sandbox/builders.js';
import { DAY, HOUR, scenarioClock } from '../../src/sandbox/clock.js';
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
} from '../../src/sandbox/rows.js';

const N = '4f9b2c1e-7a3d-4e8b-9c6f-1d2e3f4a5b6c';
const A = 'a0e1c2d3-1111-4b5c-8d9e-0f1a2b3c4d5e';
const I = 'c1d2e3f4-3333-4a5b-8c6d-7e8f9a0b1c2d';
const RC = 'CUSTOM_BAREMETAL_GOLD';
const PROJECT = '8d2f6a1c0b3e4f5a9c7d1e2b3a4f5c6d';
const USER = '2b7e9c4a1d3f4e6b8a0c5d7e9f1a3b5c';

/** Heads of Nova 31.0.0 to 33.x and Placement 10.0.0+ (docs/NEWER-NOVA.md). */
const HEADS_2025_1 = { cell: '2903cd72dc14', api: 'cdeec0c85668', placement: 'a082b8bb98d0' };

/** What `db sync` of a 28.0.0+ Nova leaves that the tool reads: alembic_version and the compute_id columns. */
async function stampRelease(d: TestDeployment, heads: { cell: string; api: string; placement: string }): Promise<void> {
  const stamp = async (k: Knex, head: string): Promise<void> => {
    await k.raw('CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, PRIMARY KEY (version_num))');
    await k('alembic_version').insert({ version_num: head });
  };
  for (const cell of ['cell0', 'cell1', 'cell2'] as const) {
    await stamp(d.knex(cell), heads.cell);
    await d.knex(cell).raw('ALTER TABLE instances ADD COLUMN compute_id BIGINT NULL, ADD KEY instances_compute_id_deleted_idx (compute_id, deleted)');
    await d.knex(cell).raw('ALTER TABLE migrations ADD COLUMN dest_compute_id BIGINT NULL');
  }
  await stamp(d.knex('api'), heads.api);
  await stamp(d.knex('placement'), heads.placement);
}

interface Seeded {
  readonly a: number;
  readonly b: number;
}

/**
 * seed 1714248 as a 2023.1+ cloud has it: a pre-Rocky row with a random uuid
 * (A) on ironic-1, whose service is forced down, holds the instance and the
 * provider named after the node; the live ironic-2's tracker made the row
 * whose uuid is the node's (N), its provider blocked by the name (409).
 */
async function seed(d: TestDeployment): Promise<Seeded> {
  const clock = scenarioClock();
  const cell = d.dbs.cells.cell1;
  await addComputeService(cell, { uuid: '0e1f2a3b-5555-4c5d-8e6f-7a8b9c0d1e2f', host: 'ironic-1', clock, age: 400 * DAY, lastHeartbeatAgo: 2 * DAY, forcedDown: true });
  await addComputeService(cell, { uuid: '1f2a3b4c-6666-4d6e-9f7a-8b9c0d1e2f3a', host: 'ironic-2', clock, age: 400 * DAY });
  for (const host of ['ironic-1', 'ironic-2']) await insertHostMapping(d.dbs.api, { cellId: d.dbs.cellIds.cell1, host, createdAt: clock.ago(400 * DAY) });
  const createdA = clock.ago(300 * DAY);
  const a = await insertComputeNode(cell, { uuid: A, host: 'ironic-1', hypervisorHostname: N, hypervisorType: 'ironic', mapped: 1, runningVms: 1, createdAt: createdA, updatedAt: clock.ago(2 * DAY) });
  const b = await insertComputeNode(cell, { uuid: N, host: 'ironic-2', hypervisorHostname: N, hypervisorType: 'ironic', mapped: 1, createdAt: clock.ago(DAY), updatedAt: clock.ago(HOUR) });
  const rp = await insertResourceProvider(d.dbs.placement, { uuid: A, name: N, generation: 4, createdAt: createdA });
  await insertInventories(d.dbs.placement, [{ providerId: rp, resourceClass: RC, total: 1, reserved: 1, minUnit: 1, maxUnit: 1, stepSize: 1, allocationRatio: 1.0, createdAt: createdA }]);
  await insertProviderTraits(d.dbs.placement, rp, [COMPUTE_NODE_TRAIT]);
  const booted = clock.ago(30 * DAY);
  await insertInstance(cell, { uuid: I, displayName: 'bm', host: 'ironic-1', node: N, vmState: 'active', projectId: PROJECT, userId: USER, vcpus: 32, memoryMb: 262144, rootGb: 900, flavorId: 7, createdAt: booted, launchedAt: booted });
  await insertInstanceMapping(d.dbs.api, { instanceUuid: I, cellId: d.dbs.cellIds.cell1, projectId: PROJECT, userId: USER, createdAt: booted });
  await insertConsumer(d.dbs.placement, { uuid: I, projectId: PROJECT, userId: USER, generation: 1, createdAt: booted });
  await insertAllocations(d.dbs.placement, [{ providerId: rp, consumerUuid: I, resourceClass: RC, used: 1, createdAt: booted }]);
  return { a, b };
}

async function linkInstance(d: TestDeployment, computeId: number): Promise<void> {
  await d.knex('cell1')('instances').update({ compute_id: computeId }).where({ uuid: I });
}

async function rows(d: TestDeployment): Promise<{ nodes: Record<string, unknown>[]; instance: Record<string, unknown>; providers: Record<string, unknown>[]; allocations: Record<string, unknown>[] }> {
  const nodes = (await d.knex('cell1')('compute_nodes').select('id', 'uuid', 'host', 'deleted').orderBy('id')) as Record<string, unknown>[];
  const instance = (await d.knex('cell1')('instances').select('host', 'node', 'compute_id').where({ uuid: I }).first()) as Record<string, unknown>;
  const providers = (await d.knex('placement')('resource_providers').select('id', 'uuid', 'name', 'generation').orderBy('id')) as Record<string, unknown>[];
  const allocations = (await d.knex('placement')('allocations as a').join('resource_providers as rp', 'rp.id', 'a.resource_provider_id').select('rp.uuid', 'a.consumer_id', 'a.used')) as Record<string, unknown>[];
  return { nodes, instance, providers, allocations };
}

describeMysql('Nova 27.0.0+: the release decides the repair (issue 36)', () => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment('mysql', 'empty', 'nn');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('keeps the row whose uuid is the node uuid, re-keys the provider onto it and links the instance (compute_id), then audit is clean', async () => {
    await stampRelease(d, HEADS_2025_1);
    const { a, b } = await seed(d);
    await linkInstance(d, a);
    const seen = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(seen.code).toBe(3);
    const kinds0 = (JSON.parse(seen.stdout) as { findings: Array<{ kind: string }> }).findings.map((f) => f.kind);
    expect(kinds0).toEqual(expect.arrayContaining(['duplicate-compute-node', 'provider-uuid-mismatch']));
    const dry = await runBin([...d.args, 'compute_node', 'rebalance', '--format', 'json']);
    expect(dry.code, dry.stderr).toBe(3);
    const plan = JSON.parse(dry.stdout) as { units: Array<{ changes: Array<Record<string, unknown>> }> };
    expect(plan.units).toHaveLength(1);
    const kinds = plan.units[0]?.changes.map((c) => c['kind']);
    expect(kinds).toEqual(['rekey-provider', 'soft-delete-compute-node', 'move-instance']);
    expect(plan.units[0]?.changes[1]).toMatchObject({ id: a, uuid: A });
    expect(plan.units[0]?.changes[2]).toMatchObject({ to_host: 'ironic-2', compute_node_id: b });

    const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
    expect(applied.code, applied.stderr).toBe(4);
    const after = await rows(d);
    expect(after.nodes.map((n) => [n['uuid'], Number(n['deleted']) === 0])).toEqual([
      [A, false],
      [N, true],
    ]);
    expect(after.instance).toMatchObject({ host: 'ironic-2', node: N });
    expect(Number(after.instance['compute_id'])).toBe(b);
    expect(after.providers.map((p) => [p['uuid'], p['name']])).toEqual([[N, N]]);
    expect(after.allocations).toEqual([{ uuid: N, consumer_id: I, used: 1 }]);

    const audit = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(audit.code, audit.stdout).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ findings: [], release: { nova: 'Nova 31 (2025.1) to 33 (2026.1)', placement: 'Placement 10.x to 16.x' } });
    const again = await runBin([...d.args, 'compute_node', 'rebalance']);
    expect(again.code, again.stdout).toBe(0);

    // Undo puts every row back, compute_id included.
    const journal = /journal: (\S+)/.exec(applied.stderr)?.[1];
    expect(journal, applied.stderr).toBeDefined();
    const undone = await runBin([...d.args, 'undo', journal as string, '--apply']);
    expect(undone.code, undone.stderr + undone.stdout).toBe(4);
    const back = await rows(d);
    expect(Number(back.instance['compute_id'])).toBe(a);
    expect(back.instance).toMatchObject({ host: 'ironic-1' });
    expect(back.nodes.map((n) => [n['uuid'], Number(n['deleted']) === 0])).toEqual([
      [A, true],
      [N, true],
    ]);
    expect(back.providers.map((p) => [p['uuid'], p['name']])).toEqual([[A, N]]);
  });

  it("an instance whose compute_id names another node's row is re-linked by the rebalance that audit names", async () => {
    await stampRelease(d, HEADS_2025_1);
    const { b } = await seed(d);
    // The repair done, the instance then linked to a row of no node of its own (an operator's UPDATE, a bad restore).
    expect((await runBin([...d.args, 'compute_node', 'rebalance', '--apply'])).code).toBe(4);
    await linkInstance(d, b + 1000);
    const audit = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(audit.code).toBe(3);
    const found = (JSON.parse(audit.stdout) as { findings: Array<{ kind: string; suggestion: string }> }).findings;
    expect(found.map((f) => f.kind)).toEqual(['instance-compute-id-mismatch']);
    expect(found[0]?.suggestion).toBe(`nova-reconcile --config-file ${d.confPath} compute_node rebalance --node ${N}`);
    const fixed = await runBin([...d.args, 'compute_node', 'rebalance', '--node', N, '--apply']);
    expect(fixed.code, fixed.stderr + fixed.stdout).toBe(4);
    expect(Number((await rows(d)).instance['compute_id'])).toBe(b);
    expect((await runBin([...d.args, 'audit'])).code).toBe(0);
  });

  it('on Zed (no alembic head) keeps the row that holds the allocations, as before', async () => {
    await seed(d);
    const dry = await runBin([...d.args, 'compute_node', 'rebalance', '--format', 'json']);
    expect(dry.code, dry.stderr).toBe(3);
    const plan = JSON.parse(dry.stdout) as { units: Array<{ changes: Array<Record<string, unknown>> }> };
    const changes = plan.units[0]?.changes ?? [];
    expect(changes.find((c) => c['kind'] === 'soft-delete-compute-node')).toMatchObject({ uuid: N });
    expect(changes.some((c) => 'compute_node_id' in c)).toBe(false);
  });

  it('puts right what a Zed-style repair left on 2023.1+ (the node-uuid row retired): audit names it, rebalance restores it', async () => {
    await stampRelease(d, HEADS_2025_1);
    const { a, b } = await seed(d);
    // What the earlier repair did: retired N's row, re-homed A onto ironic-2 with the instance.
    await d.knex('cell1')('compute_nodes').update({ deleted: b, deleted_at: '2026-01-01 00:00:00', mapped: 0 }).where({ id: b });
    await d.knex('cell1')('compute_nodes').update({ host: 'ironic-2' }).where({ id: a });
    await d.knex('cell1')('instances').update({ host: 'ironic-2', compute_id: a }).where({ uuid: I });

    const audit = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(audit.code).toBe(3);
    const found = (JSON.parse(audit.stdout) as { findings: Array<{ kind: string; suggestion: string }> }).findings.map((f) => f.kind);
    expect(found).toContain('node-uuid-row-deleted');

    const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(4);
    const after = await rows(d);
    expect(after.nodes.map((n) => [n['uuid'], n['host'], Number(n['deleted']) === 0])).toEqual([
      [A, 'ironic-2', false],
      [N, 'ironic-2', true],
    ]);
    expect(Number(after.instance['compute_id'])).toBe(b);
    expect(after.allocations).toEqual([{ uuid: N, consumer_id: I, used: 1 }]);
    const clean = await runBin([...d.args, 'audit']);
    expect(clean.code, clean.stdout).toBe(0);
  });

  it('refuses a write on a schema head it does not know (exit 2, the override named), warns on reads, and writes with --allow-unknown-schema', async () => {
    await stampRelease(d, { ...HEADS_2025_1, cell: 'ffffffffffff' });
    await seed(d);
    const before = await rows(d);
    const read = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(read.code).toBe(3);
    expect(read.stderr).toMatch(/warning: cell '[^']+' database .* alembic head ffffffffffff, which this nova-reconcile does not know/);
    expect((JSON.parse(read.stdout) as { release: { databases: Array<{ known: boolean }> } }).release.databases.some((x) => !x.known)).toBe(true);

    const refused = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refusing to write: .*alembic head ffffffffffff/);
    expect(refused.stderr).toContain('--allow-unknown-schema');
    expect(await rows(d)).toEqual(before);

    const forced = await runBin([...d.args, '--allow-unknown-schema', 'compute_node', 'rebalance', '--apply']);
    expect(forced.code, forced.stderr).toBe(4);
  });

  it('--debug names each database with its alembic head and release', async () => {
    await stampRelease(d, HEADS_2025_1);
    const r = await runBin([...d.args, '--debug', 'cell_v2', 'list_cells']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/debug: API database .*: alembic head cdeec0c85668 \(Nova 28 \(2023.2\) to 34 \(2026.2\)\)/);
    expect(r.stderr).not.toContain('warning');
  });
});
