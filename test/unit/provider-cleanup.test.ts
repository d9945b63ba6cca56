// planProviderCleanup (placement cleanup_providers) and planProviderTreeRemoval
// on snapshots built in code: which providers are stale, the order of a tree's
// removal, the generations each change expects, and what is never touched.
import { describe, expect, it } from 'vitest';
import type { Change, Plan } from '../../src/domain/plan.js';
import { newPlanState, planProviderTreeRemoval } from '../../src/domain/provider-removal.js';
import { indexSnapshot } from '../../src/domain/snapshot-index.js';
import { planProviderCleanup } from '../../src/domain/stale-providers.js';
import { alloc, childOf, consumer, instance, inventory, node, provider, providerOf, service, snapshot, u } from '../helpers/snapshot-builders.js';

function changesOf(plan: Plan): Change[] {
  return plan.units.flatMap((unit) => unit.changes.map((c) => c.change));
}

describe('planProviderCleanup: which providers are stale', () => {
  it('a COMPUTE_NODE provider without a live compute node is deleted', () => {
    const rp = provider(u('stale'), 'old-host.example');
    const plan = planProviderCleanup(snapshot({ providers: [rp] }));
    expect(changesOf(plan)).toEqual([{ kind: 'delete-provider', target: { db: 'placement' }, providerId: rp.id, uuid: rp.uuid, name: rp.name, generation: rp.generation }]);
    expect(plan.units[0]?.title).toContain('it has no live compute node');
  });

  it("leaves a live node's provider, a sharing provider and a child provider alone", () => {
    const cn = node('compute-1', 'compute-1.example');
    const live = providerOf(cn);
    const sharing = provider(u('nfs'), 'shared-storage', { traits: ['MISC_SHARES_VIA_AGGREGATE'] });
    const child = childOf(live, u('vgpu'), 'compute-1.example_pci_0000_81_00_0');
    const plan = planProviderCleanup(snapshot({ services: [service('compute-1')], computeNodes: [cn], providers: [live, sharing, child] }));
    expect(plan.units).toEqual([]);
    expect(plan.refused).toEqual([]);
  });

  it('an empty stale provider whose name blocks a live node without a provider is re-keyed to its uuid, so nova-compute finds it at once', () => {
    const cn = node('compute-1', 'compute-1.example');
    const blocker = provider(u('blocker'), 'compute-1.example');
    const plan = planProviderCleanup(snapshot({ services: [service('compute-1')], computeNodes: [cn], providers: [blocker] }));
    expect(changesOf(plan)).toEqual([{ kind: 'rekey-provider', target: { db: 'placement' }, providerId: blocker.id, fromUuid: blocker.uuid, toUuid: cn.uuid, generation: blocker.generation }]);
    expect(plan.units[0]?.title).toContain(`holds the name of live compute node ${cn.uuid ?? '-'}`);
  });

  it('an empty one whose name blocks a live node that has a provider of its own uuid (another name) is deleted and says why', () => {
    const cn = node('compute-1', 'compute-1.example');
    const own = provider(cn.uuid as string, 'compute-1.renamed');
    const blocker = provider(u('blocker-3'), 'compute-1.example');
    const plan = planProviderCleanup(snapshot({ services: [service('compute-1')], computeNodes: [cn], providers: [own, blocker] }));
    expect(changesOf(plan).map((c) => c.kind)).toEqual(['delete-provider']);
    expect(plan.units[0]?.title).toContain(`blocks compute node ${cn.uuid ?? '-'}`);
  });

  it("a blocker that holds allocations while the live node has no provider is re-keyed to the node's uuid, keeping them", () => {
    const cn = node('compute-1', 'compute-1.example');
    const blocker = provider(u('blocker-2'), 'compute-1.example');
    const plan = planProviderCleanup(
      snapshot({ services: [service('compute-1')], computeNodes: [cn], instances: [instance(u('vm'), cn)], providers: [blocker], allocations: [alloc(blocker, u('vm'))] }),
    );
    expect(changesOf(plan)).toEqual([{ kind: 'rekey-provider', target: { db: 'placement' }, providerId: blocker.id, fromUuid: blocker.uuid, toUuid: cn.uuid, generation: blocker.generation }]);
  });

  it('a pre-Train provider without the COMPUTE_NODE trait is stale when its inventory is only what compute nodes report', () => {
    const old = provider(u('pre-train'), 'retired.example', { traits: [] });
    const plan = planProviderCleanup(snapshot({ providers: [old], inventories: [inventory(old, 'VCPU'), inventory(old, 'MEMORY_MB')] }));
    expect(changesOf(plan).map((c) => c.kind)).toEqual(['delete-provider']);
  });

  it('but not when it has another standard class, no inventory, or the name of a soft-deleted compute node', () => {
    const ipPool = provider(u('ip-pool'), 'segment-1', { traits: [] });
    const empty = provider(u('empty'), 'nothing-here', { traits: [] });
    const renamed = provider(u('restorable'), 'restorable.example', { traits: [] });
    const deletedNode = node('compute-9', 'restorable.example', { deleted: true, uuid: u('other-uuid') });
    const plan = planProviderCleanup(
      snapshot({
        computeNodes: [deletedNode],
        providers: [ipPool, empty, renamed],
        inventories: [inventory(ipPool, 'VCPU'), { ...inventory(ipPool, 'VCPU'), resourceClass: 'IPV4_ADDRESS', resourceClassId: 6 }, inventory(renamed, 'VCPU')],
      }),
    );
    expect(plan.units).toEqual([]);
  });

  it('a tree goes deepest first: the child, then the root', () => {
    const root = provider(u('root'), 'gone.example');
    const child = childOf(root, u('child'), 'gone.example_pgpu');
    const plan = planProviderCleanup(snapshot({ providers: [root, child] }));
    expect(changesOf(plan).map((c) => (c.kind === 'delete-provider' ? c.uuid : c.kind))).toEqual([child.uuid, root.uuid]);
  });

  it("refuses a provider holding a live instance's only allocations, and changes nothing of it", () => {
    const live = node('compute-2', 'compute-2.example');
    const stale = provider(u('stale-2'), 'compute-1.example');
    const plan = planProviderCleanup(
      snapshot({ services: [service('compute-2')], computeNodes: [live], instances: [instance(u('vm-4'), live)], providers: [stale, providerOf(live)], allocations: [alloc(stale, u('vm-4'))] }),
    );
    expect(plan.units).toEqual([]);
    expect(plan.refused[0]?.reason).toContain(`holds the only allocations of live instance ${u('vm-4')}`);
    expect(plan.refused[0]?.suggestion).toBe('nova-reconcile compute_node rebalance');
  });
});

describe('planProviderTreeRemoval', () => {
  it("refuses an active migration's allocations and leaves the caller's state untouched", () => {
    const rp = provider(u('mig-rp'), 'mig.example');
    const s = snapshot({
      providers: [rp],
      allocations: [alloc(rp, u('migration'))],
      migrations: [{ cellUuid: '11111111-1111-4111-8111-111111111111', id: 1, uuid: u('migration'), instanceUuid: u('vm-m'), sourceCompute: 'a', destCompute: 'b', sourceNode: 'a', destNode: 'b', status: 'running', migrationType: 'migration' }],
    });
    const state = newPlanState();
    const result = planProviderTreeRemoval(indexSnapshot(s), rp, undefined, state);
    expect(result).toMatchObject({ ok: false, reason: `allocations of active migration ${u('migration')} are on provider ${rp.uuid}` });
    expect(state).toEqual(newPlanState());
  });

  it("a refusal after part of the tree was planned leaves the caller's state untouched too", () => {
    const root = provider(u('tree-root'), 'tree.example');
    const child = childOf(root, u('tree-child'), 'tree.example_pci_0000_81_00_0');
    const s = snapshot({
      providers: [root, child],
      // The child goes first (an orphaned consumer: planned away), then the root's migration is refused.
      allocations: [alloc(child, u('tree-orphan')), alloc(root, u('tree-migration'))],
      consumers: [consumer(u('tree-orphan'), 2), consumer(u('tree-migration'), 1)],
      migrations: [{ cellUuid: '11111111-1111-4111-8111-111111111111', id: 1, uuid: u('tree-migration'), instanceUuid: u('vm-t'), sourceCompute: 'a', destCompute: 'b', sourceNode: 'a', destNode: 'b', status: 'running', migrationType: 'migration' }],
    });
    const state = newPlanState();
    state.providerGeneration.set(child.id, 5);
    const before = { providerGeneration: new Map(state.providerGeneration), consumerGeneration: new Map(state.consumerGeneration), removedAllocations: new Set(state.removedAllocations) };
    const result = planProviderTreeRemoval(indexSnapshot(s), root, undefined, state);
    expect(result).toMatchObject({ ok: false, reason: `allocations of active migration ${u('tree-migration')} are on provider ${root.uuid}` });
    expect(state).toEqual(before);
  });

  it("a consumer whose last allocations go leaves no planned generation behind, even one an earlier unit set", () => {
    const rp = provider(u('last-rp'), 'last.example');
    const s = snapshot({ providers: [rp], allocations: [alloc(rp, u('last-consumer'))], consumers: [consumer(u('last-consumer'), 3)] });
    const state = newPlanState();
    state.consumerGeneration.set(u('last-consumer'), 4);
    const result = planProviderTreeRemoval(indexSnapshot(s), rp, undefined, state);
    expect(result.ok).toBe(true);
    // The removal expected the generation planned before it, and the consumer row goes with it.
    expect(result.ok ? result.changes[0]?.change : undefined).toMatchObject({ kind: 'remove-provider-allocations', consumerGeneration: 4 });
    expect(state.consumerGeneration.has(u('last-consumer'))).toBe(false);
    expect(state.removedAllocations.size).toBe(1);
  });

  it('refuses allocations that have no consumer row', () => {
    const rp = provider(u('no-consumer-rp'), 'nc.example');
    const result = planProviderTreeRemoval(indexSnapshot(snapshot({ providers: [rp], allocations: [alloc(rp, u('nobody'))], consumers: [] })), rp, undefined, newPlanState());
    expect(result).toMatchObject({ ok: false, reason: `allocations of ${u('nobody')} on provider ${rp.uuid} have no consumer row` });
  });

  it("an evacuation leftover bumps the consumer and every provider it keeps, as Placement's write does", () => {
    const stale = provider(u('evac-src'), 'src.example');
    const dest = provider(u('evac-dst'), 'dst.example', { generation: 9 });
    const live = node('dst', 'dst.example', { uuid: dest.uuid });
    const s = snapshot({ computeNodes: [live], instances: [instance(u('vm-e'), live)], providers: [stale, dest], allocations: [alloc(stale, u('vm-e')), alloc(dest, u('vm-e'))], consumers: [consumer(u('vm-e'), 3)] });
    const state = newPlanState();
    const result = planProviderTreeRemoval(indexSnapshot(s), stale, undefined, state);
    expect(result.ok).toBe(true);
    expect(state.consumerGeneration.get(u('vm-e'))).toBe(4);
    expect(state.providerGeneration.get(dest.id)).toBe(10);
    expect(state.providerGeneration.get(stale.id)).toBe(stale.generation + 1);
  });

  it("an instance on the owner's node keeps its allocation even when it has others", () => {
    const cn = node('compute-1', 'compute-1.example');
    const rp = providerOf(cn);
    const other = provider(u('other'), 'other.example');
    const s = snapshot({ computeNodes: [cn], instances: [instance(u('vm-o'), cn)], providers: [rp, other], allocations: [alloc(rp, u('vm-o')), alloc(other, u('vm-o'))] });
    const result = planProviderTreeRemoval(indexSnapshot(s), rp, { cellUuid: cn.cellUuid, host: cn.host, hypervisorHostname: cn.hypervisorHostname }, newPlanState());
    expect(result).toMatchObject({ ok: false, suggestion: 'nova-reconcile compute_node rebalance' });
    expect(result.ok ? '' : result.reason).toContain('is on this node');
  });
});
