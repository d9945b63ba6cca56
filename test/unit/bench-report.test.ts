// The benchmark's report is pure (data in, Markdown out): its targets and its
// growth table are checked here on figures made up for the purpose.
import { describe, expect, it } from 'vitest';
import { checkReconcileTargets, orphanFractionFor, reconcileGrowth, type ReconcileRow } from '../../bench/reconcile.js';
import { parallelismTargets, type ParallelismCase, type ParallelismResult } from '../../bench/parallelism.js';
import { checkTargets, discoverGrowth, renderGrowthTable, type CommandResult, type SizeResult } from '../../bench/report.js';

const row = (size: string, command: string, ours: number, roundTrips = 10, rssMb = 100): ReconcileRow => ({
  size,
  command,
  ours,
  oursRuns: [ours],
  nova: { kind: 'none' },
  floor: undefined,
  roundTrips,
  peakRssKb: rssMb * 1024,
  note: '',
});

const result = (key: CommandResult['key'], ours: number, floor?: number): CommandResult => ({
  key,
  ours,
  oursRuns: [ours],
  oursInProcessMs: [ours * 800],
  roundTrips: 8,
  peakRssKb: 90 * 1024,
  nova: { kind: 'none' },
  novaRuns: [],
  floor,
});

describe('issue 20 targets', () => {
  it('judges each undo against the apply before it, a 1,000-unit cleanup, and the audit at 100,000 hosts', () => {
    const rows = [
      row('30,000 hosts', 'audit', 2.3, 105, 270),
      row('100,000 hosts', 'audit', 7.5, 300, 380),
      row('100,000 hosts', 'compute_node cleanup_orphans --apply (1,000 units)', 2.5),
      row('100,000 hosts', 'undo of that journal', 2.9),
      row('100,000 hosts', 'placement cleanup_providers --apply (1000 units)', 1.9),
      row('100,000 hosts', 'placement cleanup_providers --apply (300 units)', 2.1),
      row('1,000 ironic nodes', 'compute_node rebalance --apply (500 units)', 2.2),
      row('1,000 ironic nodes', 'undo of that journal', 2.6),
    ];
    const byWhat = new Map(checkReconcileTargets(rows).map((t) => [t.what, t]));
    expect(byWhat.get('undo of compute_node cleanup_orphans --apply (1,000 units), 100,000 hosts: ≤ 1.2× the apply')).toMatchObject({ value: '1.16×', met: true });
    expect(byWhat.get('undo of compute_node rebalance --apply (500 units), 1,000 ironic nodes: ≤ 1.2× the apply')).toMatchObject({ value: '1.18×', met: true });
    expect(byWhat.get('compute_node cleanup_orphans --apply (1,000 units), 100,000 hosts: ≤ 2 s')).toMatchObject({ met: false });
    // Either cleanup's apply of 1,000 units or more is judged; a smaller one is not.
    expect(byWhat.get('placement cleanup_providers --apply (1000 units), 100,000 hosts: ≤ 2 s')).toMatchObject({ value: '1.900 s', met: true });
    expect([...byWhat.keys()].filter((w) => w.includes('(300 units)'))).toEqual([]);
    expect(byWhat.get('audit, 100,000 hosts: ≤ 8 s')).toMatchObject({ met: true });
    expect(byWhat.get('audit, 100,000 hosts: ≤ 300 MB RSS')).toMatchObject({ value: '380.0 MB', met: false });
    expect(byWhat.get('audit: RSS at 100,000 hosts ≤ 1.3× RSS at 30,000')).toMatchObject({ value: '1.41×', met: false });
  });

  it('checks the no-op re-runs at 30,000 hosts against 0.35 s and the first run against 2× (floor + node start)', () => {
    const size: SizeResult = {
      hostsPerCell: 30000,
      cells: 1,
      nodesPerHost: 1,
      results: [result('node-first', 1.2, 0.46), result('node-noop', 0.34), result('service-noop', 0.4)],
      setupSeconds: { migrate: 1, generate: 1 },
      startupSeconds: 0.17,
      nodeStartSeconds: 0.05,
    };
    const byWhat = new Map(checkTargets(size).map((t) => [t.what, t]));
    expect(byWhat.get('discover_hosts (no-op re-run): ≤ 0.35 s')).toMatchObject({ met: true });
    expect(byWhat.get('discover_hosts --by-service (no-op re-run): ≤ 0.35 s')).toMatchObject({ met: false });
    expect(byWhat.get('discover_hosts (first run): ≤ 2× (the floor + bare node start)')).toMatchObject({ value: '2.35×', met: false });
    expect(byWhat.get('process start (`--version`): ≤ 0.1 s')).toMatchObject({ value: '0.170 s', met: false });
  });
});

describe('the growth table', () => {
  it('has one row per command, an undo named by its apply, and the largest size over the smallest', () => {
    const points = reconcileGrowth([
      row('1,000 hosts', 'compute_node cleanup_orphans --apply (10 units)', 0.5, 217, 93.7),
      row('1,000 hosts', 'undo of that journal', 0.46, 182, 75.9),
      row('30,000 hosts', 'compute_node cleanup_orphans --apply (300 units)', 3.4, 5812, 260.9),
      row('30,000 hosts', 'undo of that journal', 3.1, 5112, 117.1),
    ]);
    expect([...new Set(points.map((p) => p.command))]).toEqual(['compute_node cleanup_orphans --apply', 'undo of compute_node cleanup_orphans --apply']);
    const table = renderGrowthTable([...points, ...discoverGrowth([{ hostsPerCell: 1000, cells: 1, nodesPerHost: 1, results: [result('node-noop', 0.3)], setupSeconds: { migrate: 0, generate: 0 }, startupSeconds: 0.1, nodeStartSeconds: 0.05 }])]);
    const apply = table.split('\n').find((l) => l.startsWith('| compute_node cleanup_orphans --apply '));
    expect(apply?.split('|').map((c) => c.trim())).toEqual(['', 'compute_node cleanup_orphans --apply', '217 / 93.7', '5812 / 260.9', '30×', '27×', '2.78×', '']);
    expect(table).toContain('| discover_hosts (no-op re-run)');
  });
});

describe('issue 20 targets of cells in parallel', () => {
  const c = (cells: number, servers: number, cellConcurrency: number, hostsPerCell: number, seconds: number, inProcessMs: number): ParallelismCase => ({
    cells,
    servers,
    cellConcurrency,
    hostsPerCell,
    runs: [seconds],
    inProcessMs: [inProcessMs],
    roundTrips: 40,
  });
  const result = (cases: ParallelismCase[]): ParallelismResult => ({ cases, serverList: [], startSeconds: 1 });

  it('judges 4 cells on 2 servers by their in-process time against one cell, at the default cell_concurrency', () => {
    const met = parallelismTargets(result([c(1, 1, 4, 10000, 1, 800), c(4, 2, 4, 10000, 2, 1700), c(4, 2, 1, 10000, 3, 3000)]));
    expect(met).toEqual([{ what: '4 cells on 2 servers vs 1 cell (in-process): ≤ 2.2×', value: '2.13×', met: true }]);
    const missed = parallelismTargets(result([c(1, 1, 4, 10000, 1, 800), c(4, 2, 4, 10000, 2, 1800)]));
    expect(missed[0]?.met).toBe(false);
  });

  it('judges 100,000 hosts in 10 cells on 3 servers by the whole process, and nothing for other shapes', () => {
    const [t] = parallelismTargets(result([c(1, 1, 4, 10000, 1, 800), c(10, 3, 4, 10000, 6.5, 5000)]));
    expect(t).toEqual({ what: '100,000 hosts in 10 cells on 3 servers, discover_hosts first run: ≤ 6 s', value: '6.500 s', met: false });
    expect(parallelismTargets(result([c(1, 1, 4, 1000, 1, 800), c(10, 3, 4, 1000, 2, 1500)]))).toEqual([]);
    expect(parallelismTargets(result([c(1, 1, 4, 10000, 1, 800), c(3, 2, 4, 10000, 2, 1500)]))).toEqual([]);
  });
});

describe('the generated clouds', () => {
  it('hold 1,000 orphan nodes from 10,000 hosts up (a 1,000-unit cleanup), 10% below, 1% beyond 100,000', () => {
    const orphans = (hosts: number): number => Math.floor(hosts * orphanFractionFor(hosts));
    expect([1000, 10000, 30000, 100000, 200000].map(orphans)).toEqual([100, 1000, 1000, 1000, 2000]);
  });
});
