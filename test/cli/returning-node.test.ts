// Issue 40 item 1, through the built binary on SQLite and MariaDB: the
// provider of a soft-deleted ironic compute node whose ironic node still
// exists (bug 1839560) is never offered for deletion. placement
// cleanup_providers judges it as the audit does (one function,
// domain/returning-node.ts) and says why it keeps it; audit,
// cleanup_providers --apply and compute_node restore --apply, run in any
// order, leave the node live with its provider, inventory and five traits.
// With an ironic node list that no longer holds the node, both offer the
// provider to cleanup_providers, which deletes it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, dumpTables as dump, type TestDeployment } from '../helpers/test-deployment.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { insertProviderTraits, softDeleteRow } from '../../src/sandbox/rows.js';
import { IRONIC_HA } from '../../src/sandbox/scenarios/ironic-ha.js';

const N = IRONIC_HA.nodeUuid;
const PLACEMENT_TABLES = ['resource_providers', 'inventories', 'resource_provider_traits', 'allocations', 'consumers'] as const;
const EXTRA_TRAITS = ['CUSTOM_RAID_1', 'CUSTOM_RACK_A7', 'HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED'] as const;

interface Finding {
  kind: string;
  suggestion: string;
  objects: Record<string, unknown>;
}

interface PlanDoc {
  units: Array<{ id: string; title: string }>;
  refused: Array<{ subject: string; reason: string; suggestion?: string }>;
}

describeEachDialect('the provider of a soft-deleted node that comes back (bug 1839560)', (dialect) => {
  let d: TestDeployment;
  let nodeId: number;
  let placementBefore: Record<string, string[]>;

  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'ironic-ha', 'rn');
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service'])).code).toBe(0);
    const p = d.knex('placement');
    const rp = (await p('resource_providers').where('uuid', N).first()) as { id: number };
    await insertProviderTraits(p, Number(rp.id), EXTRA_TRAITS);
    expect(await p('resource_provider_traits').where('resource_provider_id', rp.id)).toHaveLength(5);
    // Zed's delete of a node in maintenance: the row is soft-deleted (deleted = id), its provider stays.
    const cell = d.knex('cell1');
    const node = (await cell('compute_nodes').where('uuid', N).first()) as { id: number };
    nodeId = Number(node.id);
    await softDeleteRow(cell, 'compute_nodes', nodeId, scenarioClock().ago(600));
    placementBefore = await dump(p, PLACEMENT_TABLES);
  });
  afterEach(async () => {
    await d.cleanup();
  });

  const nodeLive = async (): Promise<boolean> => Number(((await d.knex('cell1')('compute_nodes').where('id', nodeId).first()) as { deleted: number }).deleted) === 0;

  const steps = {
    async audit(): Promise<void> {
      const r = await runBin([...d.args, 'audit', '--format', 'json']);
      expect([0, 3], r.stdout + r.stderr).toContain(r.code);
      const findings = (JSON.parse(r.stdout) as { findings: Finding[] }).findings;
      for (const f of findings) expect(f.suggestion).not.toContain('cleanup_providers');
    },
    async cleanup(): Promise<void> {
      const live = await nodeLive();
      const r = await runBin([...d.args, 'placement', 'cleanup_providers', '--apply']);
      // Soft-deleted: the only candidate is kept (refused, exit 3); restored: nothing is stale (exit 0).
      expect(r.code, r.stdout + r.stderr).toBe(live ? 0 : 3);
      expect(r.stdout).not.toContain(`delete resource provider ${N}`);
      if (!live) expect(r.stdout).toContain(`kept: compute node ${N} (id ${nodeId}, host ${IRONIC_HA.nodeHost}) of provider ${N} was soft-deleted`);
    },
    async restore(): Promise<void> {
      const r = await runBin([...d.args, 'compute_node', 'restore', '--uuid', N, '--apply']);
      expect(r.code, r.stdout + r.stderr).toBe(4);
    },
  };
  const orders: Array<Array<keyof typeof steps>> = [
    ['audit', 'cleanup', 'restore'],
    ['audit', 'restore', 'cleanup'],
    ['cleanup', 'audit', 'restore'],
    ['cleanup', 'restore', 'audit'],
    ['restore', 'audit', 'cleanup'],
    ['restore', 'cleanup', 'audit'],
  ];

  it.each(orders)('%s, %s, %s: the node ends live with its provider, inventory and five traits', async (...order) => {
    for (const step of order) await steps[step]();
    expect(await nodeLive()).toBe(true);
    expect(await dump(d.knex('placement'), PLACEMENT_TABLES)).toEqual(placementBefore);
    const again = await runBin([...d.args, 'placement', 'cleanup_providers']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  }, 120_000);

  it('the plan says why the provider is kept, and names the restore (JSON), with or without an ironic node list that holds the node', async () => {
    const dry = await runBin([...d.args, 'placement', 'cleanup_providers', '--format', 'json']);
    expect(dry.code, dry.stdout + dry.stderr).toBe(3);
    const plan = JSON.parse(dry.stdout) as PlanDoc;
    expect(plan.units).toEqual([]);
    expect(plan.refused).toEqual([
      {
        subject: `resource provider ${N} (${N})`,
        reason:
          `kept: compute node ${N} (id ${nodeId}, host ${IRONIC_HA.nodeHost}) of provider ${N} was soft-deleted, but its ironic node may exist (no ironic node list was given) ` +
          'and nova-compute restores the row under the same uuid (bug 1839560); deleting the provider would lose its inventory, traits and allocations',
        suggestion: `nova-reconcile --config-file ${d.confPath} compute_node restore --uuid ${N}`,
      },
    ]);
    // An ironic node list that holds the node says that it exists.
    const listed = join(d.dir, 'nodes-with-it');
    writeFileSync(listed, `${N}\n`);
    const withList = JSON.parse((await runBin([...d.args, 'placement', 'cleanup_providers', '--ironic-nodes', listed, '--format', 'json'])).stdout) as PlanDoc;
    expect(withList.refused.map((r) => r.reason)).toEqual([expect.stringContaining('but its ironic node exists and nova-compute restores the row')]);
    expect(await dump(d.knex('placement'), PLACEMENT_TABLES)).toEqual(placementBefore);
  }, 120_000);

  it('an ironic node list without the node: audit and cleanup_providers both offer the provider, which is deleted', async () => {
    const list = join(d.dir, 'nodes-without-it');
    writeFileSync(list, '0e0e0e0e-0000-4000-8000-000000000001\n');
    const audit = await runBin([...d.args, 'audit', '--ironic-nodes', list, '--format', 'json']);
    const stale = (JSON.parse(audit.stdout) as { findings: Finding[] }).findings.find((f) => f.kind === 'provider-without-node');
    expect(stale?.suggestion).toBe(`nova-reconcile --config-file ${d.confPath} placement cleanup_providers`);
    const applied = await runBin([...d.args, 'placement', 'cleanup_providers', '--ironic-nodes', list, '--apply']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(4);
    expect(await d.knex('placement')('resource_providers').where('uuid', N)).toEqual([]);
  }, 120_000);
});
