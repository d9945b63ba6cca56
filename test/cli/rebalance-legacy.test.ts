// compute_node rebalance on legacy duplicates while both services are up
// (issue 13 item 7; pre-Rocky random compute node uuids, bug 1714248),
// through the built binary on SQLite and MariaDB. The state is written as
// Nova wrote it: ironic-1 created CN-a (random uuid A) for ironic node N, its
// provider A named N, and booted the server on it; ironic-2 raced and
// created CN-b (random uuid B) for the same node, whose provider create hit
// the 409 on the name. Both services heartbeat.
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
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
const B = 'b7c8d9e0-2222-4f1a-9b2c-3d4e5f6a7b8c';
const I = 'c1d2e3f4-3333-4a5b-8c6d-7e8f9a0b1c2d';
const I2 = 'c1d2e3f4-4444-4a5b-8c6d-7e8f9a0b1c2d';
const RC = 'CUSTOM_BAREMETAL_GOLD';
const PROJECT = '8d2f6a1c0b3e4f5a9c7d1e2b3a4f5c6d';
const USER = '2b7e9c4a1d3f4e6b8a0c5d7e9f1a3b5c';
const TABLES = {
  cell1: ['compute_nodes', 'instances', 'services'],
  placement: ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_provider_traits', 'resource_provider_aggregates'],
};

async function populateLegacy(d: TestDeployment): Promise<void> {
  const clock = scenarioClock();
  const cell: Knex = d.dbs.cells.cell1;
  await addComputeService(cell, { uuid: '0e1f2a3b-5555-4c5d-8e6f-7a8b9c0d1e2f', host: 'ironic-1', clock, age: 400 * DAY });
  await addComputeService(cell, { uuid: '1f2a3b4c-6666-4d6e-9f7a-8b9c0d1e2f3a', host: 'ironic-2', clock, age: 400 * DAY });
  for (const host of ['ironic-1', 'ironic-2']) await insertHostMapping(d.dbs.api, { cellId: d.dbs.cellIds.cell1, host, createdAt: clock.ago(400 * DAY) });
  const createdA = clock.ago(300 * DAY);
  await insertComputeNode(cell, { uuid: A, host: 'ironic-1', hypervisorHostname: N, hypervisorType: 'ironic', mapped: 1, runningVms: 1, createdAt: createdA, updatedAt: clock.ago(10 * 60) });
  await insertComputeNode(cell, { uuid: B, host: 'ironic-2', hypervisorHostname: N, hypervisorType: 'ironic', mapped: 1, createdAt: clock.ago(300 * DAY - HOUR), updatedAt: clock.ago(HOUR) });
  // Provider A: inventory, trait, the allocation, then reserved = 1 (in use): generation 4.
  const rp = await insertResourceProvider(d.dbs.placement, { uuid: A, name: N, generation: 4, createdAt: createdA });
  await insertInventories(d.dbs.placement, [{ providerId: rp, resourceClass: RC, total: 1, reserved: 1, minUnit: 1, maxUnit: 1, stepSize: 1, allocationRatio: 1.0, createdAt: createdA }]);
  await insertProviderTraits(d.dbs.placement, rp, [COMPUTE_NODE_TRAIT]);
  const booted = clock.ago(3 * DAY);
  await insertInstance(cell, { uuid: I, displayName: 'bm-legacy', host: 'ironic-1', node: N, vmState: 'active', projectId: PROJECT, userId: USER, vcpus: 32, memoryMb: 262144, rootGb: 900, flavorId: 7, createdAt: booted, launchedAt: booted });
  await insertInstanceMapping(d.dbs.api, { instanceUuid: I, cellId: d.dbs.cellIds.cell1, projectId: PROJECT, userId: USER, createdAt: booted });
  await insertConsumer(d.dbs.placement, { uuid: I, projectId: PROJECT, userId: USER, generation: 1, createdAt: booted });
  await insertAllocations(d.dbs.placement, [{ providerId: rp, consumerUuid: I, resourceClass: RC, used: 1, createdAt: booted }]);
}

async function dump(k: Knex, tables: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows: Array<Record<string, unknown>> = await k(t).select('*');
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  }
  return out;
}

async function snapshotAll(d: TestDeployment): Promise<{ cell1: Record<string, string[]>; placement: Record<string, string[]> }> {
  return { cell1: await dump(d.knex('cell1'), TABLES.cell1), placement: await dump(d.knex('placement'), TABLES.placement) };
}

type Row = Record<string, unknown>;
const text = (r: Row | undefined): Record<string, string | null> => Object.fromEntries(Object.entries(r ?? {}).map(([c, v]) => [c, v === null ? null : String(v)]));

describeEachDialect('compute_node rebalance: legacy duplicates while both services are up', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'empty', 'rl');
    await populateLegacy(d);
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('keeps CN-a (instance and provider), soft-deletes CN-b host-guarded, leaves placement alone; re-run clean; undo exact', async () => {
    const before = await snapshotAll(d);
    const audit = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(audit.code).toBe(3);
    const findings = (JSON.parse(audit.stdout) as { findings: Array<{ kind: string; suggestion: string }> }).findings;
    expect(findings.find((f) => f.kind === 'duplicate-compute-node')?.suggestion).toMatch(/nova-reconcile .*compute_node rebalance$/);

    const dry = await runBin([...d.args, 'compute_node', 'rebalance']);
    expect(dry.code, dry.stdout + dry.stderr).toBe(3);
    expect(dry.stdout).toContain('compute_node rebalance: 1 unit(s), 1 change(s), 0 refused.');
    expect(dry.stdout).toMatch(new RegExp(`soft-delete compute node \\d+ \\(${B}, host ironic-2\\)`));
    expect(dry.stdout).not.toContain('re-home');
    expect(await snapshotAll(d)).toEqual(before);

    const cnA = text(await d.knex('cell1')('compute_nodes').where('uuid', A).first());
    const cnB = text(await d.knex('cell1')('compute_nodes').where('uuid', B).first());
    const journal = join(d.dir, 'legacy.jsonl');
    const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply', '--journal', journal, '--format', 'json']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(4);
    expect(JSON.parse(applied.stdout)).toMatchObject({ changed: true, skipped: [], refused: [], applied: [`rebalance:${d.dbs.cellUuids.cell1}:${N}`] });

    const after = await snapshotAll(d);
    // Placement and the instance are untouched; CN-a is byte for byte the same.
    expect(after.placement).toEqual(before.placement);
    expect(after.cell1['instances']).toEqual(before.cell1['instances']);
    expect(after.cell1['services']).toEqual(before.cell1['services']);
    expect(text(await d.knex('cell1')('compute_nodes').where('uuid', A).first())).toEqual(cnA);
    // CN-b: Nova's soft delete (deleted = id, deleted_at set, mapped = 0 as master's
    // service delete does; host, updated_at and every other column unchanged).
    const deletedB = text(await d.knex('cell1')('compute_nodes').where('uuid', B).first());
    expect(deletedB['deleted']).toBe(cnB['id']);
    expect(deletedB['deleted_at']).not.toBeNull();
    expect(deletedB['mapped']).toBe('0');
    expect({ ...deletedB, deleted: cnB['deleted'], deleted_at: null, mapped: cnB['mapped'] }).toEqual(cnB);

    const again = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to do');
    const clean = await runBin([...d.args, 'audit']);
    expect(clean.code, clean.stdout).toBe(0);

    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
    expect(undo.code, undo.stdout + undo.stderr).toBe(4);
    expect(await snapshotAll(d)).toEqual(before);
  });

  describe('refusals: nothing written', () => {
    it('both rows have instances', async () => {
      const cell = d.knex('cell1');
      const row = (await cell('instances').where('uuid', I).first()) as Row;
      await cell('instances').insert({ ...row, id: undefined, uuid: I2, host: 'ironic-2', reservation_id: 'r-second' });
      const before = await snapshotAll(d);
      const dry = await runBin([...d.args, 'compute_node', 'rebalance']);
      expect(dry.code).toBe(3);
      expect(dry.stdout).toContain('0 unit(s), 0 change(s), 1 refused');
      expect(dry.stdout).toContain(`2 live instances are on it (${I} on ironic-1, ${I2} on ironic-2)`);
      const r = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
      // Issue 13 item 4 makes "everything refused, nothing written" exit 3; until then it is 5.
      expect([3, 5]).toContain(r.code);
      expect(r.stdout).toContain('2 live instances are on it');
      expect(await snapshotAll(d)).toEqual(before);
    });

    it('neither row matches a provider', async () => {
      await d.knex('placement')('resource_providers').update({ uuid: 'e0e0e0e0-7777-4a1b-8c2d-3e4f5a6b7c8d' }).where('uuid', A);
      const before = await snapshotAll(d);
      const dry = await runBin([...d.args, 'compute_node', 'rebalance']);
      expect(dry.code).toBe(3);
      expect(dry.stdout).toContain('0 unit(s), 0 change(s), 1 refused');
      expect(dry.stdout).toContain('no resource provider has any of their uuids');
      const r = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
      expect([3, 5]).toContain(r.code);
      expect(await snapshotAll(d)).toEqual(before);
    });
  });
});
