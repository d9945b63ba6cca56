// The benchmark's generated clouds must be states Nova really reaches: the
// audit names exactly the broken states that were generated (and nothing
// else), each command plans one unit per broken object, and once the
// commands have run the audit is clean. Run through the built binary on
// SQLite and MariaDB.
import { afterEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { generateCloud, type CloudOptions, type CloudResult } from '../../src/sandbox/scale-cloud.js';

interface Finding {
  readonly kind: string;
}

async function generate(d: TestDeployment, opts: CloudOptions): Promise<CloudResult> {
  return generateCloud(
    { api: d.dbs.api, cells: [d.dbs.cells.cell1, d.dbs.cells.cell2], cellIds: [d.dbs.cellIds.cell1, d.dbs.cellIds.cell2], placement: d.dbs.placement },
    opts,
  );
}

async function findingCounts(d: TestDeployment): Promise<{ code: number; kinds: Record<string, number> }> {
  const r = await runBin([...d.args, 'audit', '--format', 'json']);
  const kinds: Record<string, number> = {};
  for (const f of (JSON.parse(r.stdout) as { findings: Finding[] }).findings) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
  return { code: r.code, kinds };
}

async function planUnits(d: TestDeployment, command: readonly string[]): Promise<{ code: number; units: number }> {
  const r = await runBin([...d.args, ...command, '--format', 'json']);
  return { code: r.code, units: (JSON.parse(r.stdout) as { units: unknown[] }).units.length };
}

describeEachDialect('generateCloud', (dialect) => {
  let d: TestDeployment | undefined;
  afterEach(async () => {
    await d?.cleanup();
    d = undefined;
  });

  it('libvirt: unmapped hosts, orphan hosts and stale providers are exactly what audit and the commands find; fixed, the audit is clean', async () => {
    d = await createTestDeployment(dialect, 'empty', 'cloud');
    const g = await generate(d, { hostsPerCell: 20, instancesPerCell: 30, unmappedFraction: 0.1, orphanFraction: 0.1, staleProviderFraction: 0.1 });
    expect(g).toMatchObject({ hosts: 40, computeNodes: 40, providers: 44, instances: 60, unmappedHosts: 4, orphanNodes: 4, staleProviders: 4, duplicateNodes: 0 });
    // 60 instances x 3 classes, and one orphaned consumer x 3 per stale provider.
    expect(g.allocations).toBe(60 * 3 + 4 * 3);

    const before = await findingCounts(d);
    expect(before.code).toBe(3);
    expect(before.kinds).toEqual({ 'unmapped-service': 4, 'unmapped-node': 4, 'orphan-node-service-deleted': 4, 'provider-without-node': 4, 'stale-allocation': 4 });
    expect(await planUnits(d, ['compute_node', 'cleanup_orphans'])).toEqual({ code: 3, units: 4 });
    expect(await planUnits(d, ['placement', 'cleanup_providers'])).toEqual({ code: 3, units: 4 });

    // Orphans first: their nodes (mapped = 1, no host mapping) are what
    // discover_hosts re-maps by design (bug 2085135).
    expect((await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply'])).code).toBe(4);
    expect((await runBin([...d.args, 'placement', 'cleanup_providers', '--apply'])).code).toBe(4);
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    expect(await findingCounts(d)).toEqual({ code: 0, kinds: {} });
  });

  it('ironic: failed-over hosts give one rebalance unit per node; after rebalance the audit is clean', async () => {
    d = await createTestDeployment(dialect, 'empty', 'cloud');
    const g = await generate(d, { hostsPerCell: 4, nodesPerHost: 5, failedOverFraction: 0.5 });
    // 2 of 4 hosts per cell died: 10 nodes per cell got a duplicate.
    expect(g).toMatchObject({ hosts: 8, computeNodes: 40 + 20, providers: 40, instances: 40, allocations: 40, duplicateNodes: 20 });

    const before = await findingCounts(d);
    expect(before.code).toBe(3);
    expect(before.kinds).toEqual({ 'duplicate-compute-node': 20, 'node-without-provider': 20, 'provider-name-conflict': 20, 'node-of-dead-service': 20 });
    expect(await planUnits(d, ['compute_node', 'rebalance'])).toEqual({ code: 3, units: 20 });
    expect((await runBin([...d.args, 'compute_node', 'rebalance', '--apply'])).code).toBe(4);
    expect(await planUnits(d, ['compute_node', 'rebalance'])).toEqual({ code: 0, units: 0 });
    expect(await findingCounts(d)).toEqual({ code: 0, kinds: {} });
  });
});
