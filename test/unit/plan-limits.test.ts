// The circuit breaker's verdict (src/domain/plan-limits.ts) and the reviewed
// plan's matching (src/domain/plan-review.ts), on hand-built plans.
import { describe, expect, it } from 'vitest';
import { cellNamer } from '../../src/domain/cell-names.js';
import { checkPlanLimits } from '../../src/domain/plan-limits.js';
import { matchReviewed } from '../../src/domain/plan-review.js';
import type { Plan, Unit } from '../../src/domain/plan.js';

const CELL = '11111111-1111-4111-8111-111111111111';

function orphan(id: number, host = `h${id}`, hypervisorHostname: string | null = `node-${id}`): Unit {
  return {
    id: `orphan-node:${CELL}:${id}`,
    title: `orphan ${id}`,
    changes: [
      { change: { kind: 'delete-provider', target: { db: 'placement' }, providerId: 100 + id, uuid: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`, name: hypervisorHostname, generation: 1 }, reason: 'r' },
      { change: { kind: 'soft-delete-compute-node', target: { db: 'cell', cellUuid: CELL }, id, uuid: null, host, hypervisorHostname }, reason: 'r' },
    ],
  };
}

const plan = (n: number): Plan => ({ command: 'compute_node cleanup_orphans', units: Array.from({ length: n }, (_, i) => orphan(i + 1)), refused: [] });
const NAMES = cellNamer([{ uuid: CELL, name: 'cell1' }]);
const totals = (nodes: number, providers: number) => ({ computeNodesByCell: new Map([[CELL, nodes]]), providers });

describe('checkPlanLimits', () => {
  it('judges the share strictly, above 5 objects only', () => {
    expect(checkPlanLimits(plan(5), totals(10, 100), { maxUnits: 1000, maxFraction: 0.5 }, NAMES)).toEqual([]);
    expect(checkPlanLimits(plan(5), totals(5, 100), { maxUnits: 1000, maxFraction: 0.5 }, NAMES)).toEqual([]);
    const trips = checkPlanLimits(plan(6), totals(10, 100), { maxUnits: 1000, maxFraction: 0.5 }, NAMES);
    expect(trips).toEqual([expect.objectContaining({ limit: 'max_apply_fraction', units: 6, objects: 6, total: 10, scope: `compute nodes of cell ${CELL}` })]);
    expect(trips[0]?.message).toBe(`compute_node cleanup_orphans would remove or move 6 of the 10 live compute nodes of cell cell1 (60%, more than max_apply_fraction 0.5) in 6 unit(s)`);
    expect(checkPlanLimits(plan(6), totals(12, 100), { maxUnits: 1000, maxFraction: 0.5 }, NAMES)).toEqual([]);
    expect(checkPlanLimits(plan(6), totals(10, 100), { maxUnits: 1000, maxFraction: 1 }, NAMES)).toEqual([]);
  });

  it('counts the rows of one ironic node once', () => {
    // 12 rows of 6 ironic nodes, of 12 nodes the cell knows: 50%, not 100%.
    const dup: Plan = { command: 'c', units: Array.from({ length: 12 }, (_, i) => ({ ...orphan(i + 1, 'a', `node-${i % 6}`), changes: orphan(i + 1, 'a', `NODE-${i % 6}`).changes.slice(1) })), refused: [] };
    expect(checkPlanLimits(dup, totals(12, 100), { maxUnits: 1000, maxFraction: 0.5 }, NAMES)).toEqual([]);
    expect(checkPlanLimits(dup, totals(11, 100), { maxUnits: 1000, maxFraction: 0.5 }, NAMES).map((t) => t.objects)).toEqual([6]);
  });

  it('limits the units of the plan; 0 is no limit', () => {
    const trips = checkPlanLimits(plan(12), totals(1000, 1000), { maxUnits: 10, maxFraction: 0.5 }, NAMES);
    expect(trips.map((t) => [t.limit, t.units, t.objects])).toEqual([['max_apply_units', 12, 24]]);
    expect(checkPlanLimits(plan(12), totals(1000, 1000), { maxUnits: 0, maxFraction: 0.5 }, NAMES)).toEqual([]);
  });
});

describe('matchReviewed', () => {
  it('keeps identical units, skips changed and vanished ones with the reason, adds nothing', () => {
    const reviewed = plan(3);
    const current: Plan = { ...reviewed, units: [orphan(1), orphan(2, 'host_b'), orphan(4)] };
    const m = matchReviewed(reviewed, current, NAMES);
    expect(m.plan.units.map((u) => u.id)).toEqual([reviewed.units[0]?.id]);
    expect(m.stale.map((s) => s.reason)).toEqual([
      'changed since the plan was reviewed: compute node 2 (-): host is now host_b, reviewed h2',
      'changed since the plan was reviewed: planning now finds nothing to do for it (fixed meanwhile, or its rows changed)',
    ]);
    expect(m.notReviewed).toBe(1);
  });

  it('names a refusal that now covers a reviewed unit', () => {
    const reviewed = plan(1);
    const current: Plan = { ...reviewed, units: [], refused: [{ subject: 'provider 00000000-0000-4000-8000-000000000001', reason: 'a live instance holds it' }] };
    expect(matchReviewed(reviewed, current, NAMES).stale[0]?.reason).toContain('it is refused now: provider 00000000-0000-4000-8000-000000000001: a live instance holds it');
  });
});
