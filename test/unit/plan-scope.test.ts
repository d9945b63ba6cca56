// A scope narrows what is planned and never changes what a unit is: every
// unit of a scoped plan is, field for field, the unit of the same id in the
// unscoped plan; the scope selects exactly the expected units; and a unit in
// scope that was planned on top of a unit left out (a shared consumer) is
// refused rather than planned with values only the left-out unit would write.
import { describe, expect, it } from 'vitest';
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InventoryRec, ProviderRec, ServiceRec, Snapshot } from '../../src/domain/model.js';
import { planOrphanCleanup } from '../../src/domain/orphan-nodes.js';
import type { Plan } from '../../src/domain/plan.js';
import { checkScopeNames, resolveCell, type PlanScope } from '../../src/domain/plan-scope.js';
import { planRebalance } from '../../src/domain/rebalance/index.js';
import { planProviderCleanup } from '../../src/domain/stale-providers.js';
import { auditSnapshot } from '../../src/domain/audit/index.js';
import { ReconcileError } from '../../src/errors.js';
import { C1, C2, ago, snapshot as buildSnapshot } from '../helpers/snapshot-builders.js';

const uuid = (n: number): string => `aaaaaaaa-0000-4000-8000-${String(n).padStart(12, '0')}`;
const SHARED = 'cccccccc-0000-4000-8000-000000000001';


let nextId = 1000;

interface World {
  services: ServiceRec[];
  nodes: ComputeNodeRec[];
  providers: ProviderRec[];
  inventories: InventoryRec[];
  allocations: AllocationRec[];
  consumers: ConsumerRec[];
}

function node(cellUuid: string, n: number, host: string, over: Partial<ComputeNodeRec> = {}): ComputeNodeRec {
  return { cellUuid, id: n, uuid: uuid(n), host, hypervisorHostname: `node-${n}.example`, hypervisorType: 'QEMU', serviceId: null, mapped: 1, createdAt: ago(86400), updatedAt: ago(30), deleted: false, ...over };
}

function provider(w: World, uuidOf: string, name: string): ProviderRec {
  const id = nextId++;
  const rp: ProviderRec = { id, uuid: uuidOf, name, generation: 3, rootId: id, parentId: null, traits: ['COMPUTE_NODE'], aggregateCount: 0 };
  w.providers.push(rp);
  w.inventories.push({ id: nextId++, providerId: id, resourceClassId: 0, resourceClass: 'VCPU', total: 8, reserved: 0, minUnit: 1, maxUnit: 8, stepSize: 1, allocationRatio: 16 });
  return rp;
}

function allocate(w: World, rp: ProviderRec, consumer: string): void {
  w.allocations.push({ id: nextId++, providerId: rp.id, consumerUuid: consumer, resourceClassId: 0, resourceClass: 'VCPU', used: 1 });
  if (!w.consumers.some((c) => c.uuid === consumer)) w.consumers.push({ id: nextId++, uuid: consumer, generation: 5, projectId: 1, userId: 1 });
}

/**
 * Orphans (no live service): node 1 on compute-1 and node 2 on compute-2 in
 * cell1, node 3 on "Compute-1 " in cell2 (the same host as the database
 * compares it). Node 5 is live (its service is up). An orphaned consumer
 * holds allocations on the providers of nodes 2 and 3: node 3's unit is
 * planned on top of node 2's (the consumer's generation).
 */
function world(): World {
  const w: World = { services: [], nodes: [], providers: [], inventories: [], allocations: [], consumers: [] };
  w.nodes.push(node(C1, 1, 'compute-1'), node(C1, 2, 'compute-2'), node(C2, 3, 'Compute-1 '), node(C1, 5, 'compute-5'));
  w.services.push({ cellUuid: C1, id: 50, uuid: null, host: 'compute-5', binary: 'nova-compute', disabled: false, forcedDown: false, lastSeenUp: ago(5), createdAt: ago(86400), updatedAt: ago(5), deleted: false });
  for (const n of w.nodes) provider(w, n.uuid as string, n.hypervisorHostname as string);
  const rp = (n: number): ProviderRec => w.providers.find((p) => p.uuid === uuid(n)) as ProviderRec;
  allocate(w, rp(2), SHARED);
  allocate(w, rp(3), SHARED);
  // Stale providers: node 7 soft-deleted in cell2; provider 8 of an archived node (no cell).
  w.nodes.push(node(C2, 7, 'compute-7', { deleted: true }));
  provider(w, uuid(7), 'node-7.example');
  provider(w, uuid(8), 'node-8.example');
  return w;
}

function snapshot(w: World): Snapshot {
  return buildSnapshot({ services: w.services, computeNodes: w.nodes, providers: w.providers, inventories: w.inventories, allocations: w.allocations, consumers: w.consumers });
}

/** Every unit of the scoped plan is the unscoped plan's unit of that id, field for field; the ids are in the unscoped order. */
function expectUnitsOfUnscoped(scoped: Plan, full: Plan): void {
  const order = full.units.map((u) => u.id);
  for (const u of scoped.units) expect(u).toEqual(full.units.find((f) => f.id === u.id));
  const ids = scoped.units.map((u) => u.id);
  expect(ids).toEqual([...ids].sort((a, b) => order.indexOf(a) - order.indexOf(b)));
}

describe('compute_node cleanup_orphans: a scoped plan against the unscoped one', () => {
  const s = snapshot(world());
  const full = planOrphanCleanup(s);
  const ids = (p: Plan): string[] => p.units.map((u) => u.id);

  it('the unscoped plan has the three orphans, node 3 after node 2', () => {
    expect(ids(full)).toEqual([`orphan-node:${C1}:1`, `orphan-node:${C1}:2`, `orphan-node:${C2}:3`]);
    expect(planOrphanCleanup(s, {})).toEqual(full);
  });

  it.each<[string, PlanScope, string[], number]>([
    ['--cell cell1', { cellUuid: C1 }, [`orphan-node:${C1}:1`, `orphan-node:${C1}:2`], 0],
    // Node 3 ("Compute-1 " in cell2) is the same host; its unit needs node 2's, which is left out.
    ['--host compute-1 (case and trailing spaces as the database compares)', { host: 'COMPUTE-1' }, [`orphan-node:${C1}:1`], 1],
    ['--cell and --host narrow together', { cellUuid: C1, host: 'compute-1' }, [`orphan-node:${C1}:1`], 0],
    ['--host with a trailing space', { host: 'compute-2  ' }, [`orphan-node:${C1}:2`], 0],
    ['--node by uuid', { nodes: [uuid(2)] }, [`orphan-node:${C1}:2`], 0],
    ['--node by hypervisor_hostname and uuid, repeated', { nodes: ['NODE-1.example', uuid(2).toUpperCase()] }, [`orphan-node:${C1}:1`, `orphan-node:${C1}:2`], 0],
    ['--node of node 3 with node 2: both', { nodes: [uuid(3), 'node-2.example'] }, [`orphan-node:${C1}:2`, `orphan-node:${C2}:3`], 0],
    ['a live node selects nothing', { nodes: [uuid(5)] }, [], 0],
  ])('%s selects exactly its units, each identical to the unscoped unit', (_name, scope, expected, refusals) => {
    const scoped = planOrphanCleanup(s, scope);
    expect(ids(scoped)).toEqual(expected);
    expect(scoped.refused).toHaveLength(refusals);
    expectUnitsOfUnscoped(scoped, full);
  });

  it('a unit planned on top of a left-out unit (a shared consumer) is refused with the reason, not planned with values it could not meet', () => {
    const scoped = planOrphanCleanup(s, { cellUuid: C2 });
    expect(scoped.units).toEqual([]);
    expect(scoped.refused).toHaveLength(1);
    expect(scoped.refused[0]?.reason).toContain(`planned after unit orphan-node:${C1}:2, which this scope leaves out`);
    // Node 2's unit needs nothing from node 3's: selected alone it is the unscoped unit.
    expectUnitsOfUnscoped(planOrphanCleanup(s, { nodes: [uuid(2)] }), full);
  });
});

describe('placement cleanup_providers: a scoped plan against the unscoped one', () => {
  // Only the stale providers: the orphans' nodes are soft-deleted here, so their providers are stale too.
  const w = world();
  w.nodes = w.nodes.map((n) => (n.id === 5 ? n : { ...n, deleted: true }));
  const s = snapshot(w);
  const full = planProviderCleanup(s);
  const rpId = (n: number): number => (w.providers.find((p) => p.uuid === uuid(n)) as ProviderRec).id;
  const ids = (p: Plan): string[] => p.units.map((u) => u.id);

  it('plans every stale provider unscoped', () => {
    expect(ids(full)).toEqual([1, 2, 3, 7, 8].map((n) => `stale-provider:${rpId(n)}`));
  });

  it.each<[string, PlanScope, number[]]>([
    ['--cell cell2 (node 3 depends on node 2: refused; node 7)', { cellUuid: C2 }, [7]],
    ['--cell cell1', { cellUuid: C1 }, [1, 2]],
    ['--resource_provider', { providers: [uuid(8)] }, [8]],
    ['--resource_provider, upper case', { providers: [uuid(7).toUpperCase()] }, [7]],
  ])('%s', (_name, scope, expected) => {
    const scoped = planProviderCleanup(s, scope);
    expect(ids(scoped)).toEqual(expected.map((n) => `stale-provider:${rpId(n)}`));
    expectUnitsOfUnscoped(scoped, full);
  });

  it('a provider of an unknown (archived) node belongs to no cell', () => {
    expect(ids(planProviderCleanup(s, { cellUuid: C1 }))).not.toContain(`stale-provider:${rpId(8)}`);
    expect(ids(planProviderCleanup(s, { cellUuid: C2 }))).not.toContain(`stale-provider:${rpId(8)}`);
  });
});

describe('compute_node rebalance: a scoped plan against the unscoped one', () => {
  // Two ironic nodes in cell1 whose service was forced down: both are re-homed to the live member.
  const N1 = 'bbbbbbbb-0000-4000-8000-000000000001';
  const N2 = 'bbbbbbbb-0000-4000-8000-000000000002';
  const ironic = (n: string, id: number, host: string): ComputeNodeRec => ({ ...node(C1, id, host), uuid: n, hypervisorHostname: n, hypervisorType: 'ironic' });
  const N3 = 'bbbbbbbb-0000-4000-8000-000000000003';
  // N3 on the live member makes ironic-2 a ring member (the ring is the up services with ironic nodes).
  const w: World = { services: [], nodes: [ironic(N1, 61, 'ironic-0'), ironic(N2, 62, 'ironic-1'), ironic(N3, 63, 'ironic-2')], providers: [], inventories: [], allocations: [], consumers: [] };
  const svc = (id: number, host: string, forcedDown: boolean): ServiceRec => ({ cellUuid: C1, id, uuid: null, host, binary: 'nova-compute', disabled: false, forcedDown, lastSeenUp: ago(5), createdAt: ago(86400), updatedAt: ago(5), deleted: false });
  w.services.push(svc(70, 'ironic-0', true), svc(71, 'ironic-1', true), svc(72, 'ironic-2', false));
  for (const n of w.nodes) provider(w, n.uuid as string, n.hypervisorHostname as string);
  const s = snapshot(w);
  const full = planRebalance(s, { includeDown: false });

  it('--host and --node select exactly one ironic node, identical to its unscoped unit', () => {
    expect(full.units.map((u) => u.id)).toEqual([`rebalance:${C1}:${N1}`, `rebalance:${C1}:${N2}`]);
    const byHost = planRebalance(s, { includeDown: false, host: 'IRONIC-1 ' });
    expect(byHost.units.map((u) => u.id)).toEqual([`rebalance:${C1}:${N2}`]);
    expectUnitsOfUnscoped(byHost, full);
    const byNode = planRebalance(s, { includeDown: false, nodes: [N1] });
    expect(byNode.units.map((u) => u.id)).toEqual([`rebalance:${C1}:${N1}`]);
    expectUnitsOfUnscoped(byNode, full);
    expect(planRebalance(s, { includeDown: false, cellUuid: C1 })).toEqual(full);
  });
});

describe('audit --host and --kind select among the findings', () => {
  const s = snapshot(world());
  const all = auditSnapshot(s);
  it('keeps exactly the findings of the kinds and the host', () => {
    const orphans = auditSnapshot(s, { kinds: ['orphan-node-service-deleted'] });
    expect(orphans).toEqual(all.filter((f) => f.kind === 'orphan-node-service-deleted'));
    expect(orphans.length).toBe(3);
    const host = auditSnapshot(s, { host: 'compute-1', kinds: ['orphan-node-service-deleted'] });
    expect(host.map((f) => f.objects['node_uuid'])).toEqual([uuid(1), uuid(3)]);
    expect(auditSnapshot(s, { kinds: ['duplicate-nodes' as never] })).toEqual([]);
  });
});

describe('resolveCell and the scope names', () => {
  const cells = [
    { uuid: C1, name: 'cell1' },
    { uuid: C2, name: 'twin' },
    { uuid: '33333333-3333-4333-8333-333333333333', name: 'twin' },
  ];
  it('takes a uuid (any case) or a unique name; refuses a shared name and an unknown one', () => {
    expect(resolveCell(cells, C1.toUpperCase())).toBe(C1);
    expect(resolveCell(cells, 'cell1')).toBe(C1);
    expect(() => resolveCell(cells, 'twin')).toThrow(/--cell "twin": 2 cells have this name/);
    expect(() => resolveCell(cells, 'nope')).toThrow(/--cell "nope": no cell has this uuid or name/);
    expect(() => resolveCell(cells, '44444444-4444-4444-8444-444444444444')).toThrow(/cell 44444444-4444-4444-8444-444444444444 has no mapping/);
    try {
      resolveCell(cells, 'twin');
    } catch (e) {
      expect((e as ReconcileError).kind).toBe('input');
    }
  });
  it('refuses a --host or --node that nothing has', () => {
    const s = snapshot(world());
    expect(() => checkScopeNames(s, { host: 'compute-1 ' })).not.toThrow();
    expect(() => checkScopeNames(s, { host: 'nowhere' })).toThrow(/--host "nowhere"/);
    expect(() => checkScopeNames(s, { nodes: ['node-7.example'] })).not.toThrow();
    expect(() => checkScopeNames(s, { nodes: ['nope'] })).toThrow(/--node "nope"/);
    expect(() => checkScopeNames(s, { providers: [uuid(99)] })).toThrow(/--resource_provider/);
  });
});
