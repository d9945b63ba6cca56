// planOrphanCleanup (compute_node cleanup_orphans) on snapshots built in code:
// which live nodes are orphans, what each unit writes and in which order, and
// what is refused with which way out.
import { describe, expect, it } from 'vitest';
import { planOrphanCleanup } from '../../src/domain/orphan-nodes.js';
import type { Change, Plan } from '../../src/domain/plan.js';
import { C1, C2, alloc, consumer, instance, ironicNode, ironicTruth, node, providerOf, service, snapshot, u } from '../helpers/snapshot-builders.js';

function kinds(plan: Plan): string[][] {
  return plan.units.map((unit) => unit.changes.map((c) => c.change.kind));
}

function changesOf(plan: Plan): Change[] {
  return plan.units.flatMap((unit) => unit.changes.map((c) => c.change));
}

describe('planOrphanCleanup: which nodes are orphans', () => {
  it('plans nothing for a node whose nova-compute service is live', () => {
    const cn = node('compute-1', 'compute-1.example');
    const plan = planOrphanCleanup(snapshot({ services: [service('compute-1')], computeNodes: [cn], providers: [providerOf(cn)] }));
    expect(plan.units).toEqual([]);
    expect(plan.refused).toEqual([]);
  });

  it('a node whose service was deleted: its provider goes first, then the node is soft-deleted with the host guard', () => {
    const cn = node('compute-1', 'compute-1.example');
    const rp = providerOf(cn);
    const plan = planOrphanCleanup(snapshot({ services: [service('compute-1', { deleted: true })], computeNodes: [cn], providers: [rp] }));
    expect(kinds(plan)).toEqual([['delete-provider', 'soft-delete-compute-node']]);
    const [deleteProvider, softDelete] = changesOf(plan);
    expect(deleteProvider).toMatchObject({ kind: 'delete-provider', providerId: rp.id, uuid: rp.uuid, generation: rp.generation });
    expect(softDelete).toEqual({ kind: 'soft-delete-compute-node', target: { db: 'cell', cellUuid: C1 }, id: cn.id, uuid: cn.uuid, host: 'compute-1', hypervisorHostname: 'compute-1.example' });
    expect(plan.units[0]?.title).toContain('its nova-compute service on compute-1 was deleted');
  });

  it('a node whose host never had a service is an orphan too, and says so', () => {
    const cn = node('ghost', 'ghost.example');
    const plan = planOrphanCleanup(snapshot({ computeNodes: [cn], providers: [providerOf(cn)] }));
    expect(plan.units[0]?.title).toContain('no nova-compute service exists for host ghost');
  });

  it('the service must be in the same cell: a live service of that host in another cell does not keep the node', () => {
    const cn = node('compute-1', 'compute-1.example');
    const plan = planOrphanCleanup(snapshot({ services: [service('compute-1', { cellUuid: C2 })], computeNodes: [cn] }));
    expect(kinds(plan)).toEqual([['soft-delete-compute-node']]);
  });

  it('without a placement database only the compute node is soft-deleted', () => {
    const cn = node('compute-1', 'compute-1.example');
    const plan = planOrphanCleanup(snapshot({ computeNodes: [cn], placement: false }));
    expect(kinds(plan)).toEqual([['soft-delete-compute-node']]);
  });

  it('an ironic node whose service is gone is left to the ring owner (rebalance) without ironic truth', () => {
    const cn = ironicNode('ironic-0', u('ironic-a'));
    const plan = planOrphanCleanup(snapshot({ services: [service('ironic-0', { deleted: true })], computeNodes: [cn], providers: [providerOf(cn)] }));
    expect(plan.units).toEqual([]);
    expect(plan.refused).toEqual([]);
  });

  it('with ironic truth, an ironic node Ironic does not list is an orphan even while its service heartbeats (seed bug 2013)', () => {
    const gone = ironicNode('ironic-0', u('ironic-gone'));
    const kept = ironicNode('ironic-0', u('ironic-kept'));
    const plan = planOrphanCleanup(
      snapshot({ services: [service('ironic-0')], computeNodes: [gone, kept], providers: [providerOf(gone), providerOf(kept)], ironicNodes: ironicTruth(u('ironic-kept')) }),
    );
    expect(plan.units.map((unit) => unit.id)).toEqual([`orphan-node:${C1}:${gone.id}`]);
    expect(plan.units[0]?.title).toContain(`ironic node ${u('ironic-gone')} no longer exists in ironic`);
  });
});

describe('planOrphanCleanup: allocations and refusals', () => {
  it('refuses a node with a live instance, naming the instance and a way out', () => {
    const cn = node('compute-1', 'compute-1.example');
    const vm = instance(u('vm-1'), cn);
    const plan = planOrphanCleanup(snapshot({ computeNodes: [cn], instances: [vm], providers: [providerOf(cn)] }));
    expect(plan.units).toEqual([]);
    expect(plan.refused).toHaveLength(1);
    expect(plan.refused[0]?.reason).toContain(`live instance ${u('vm-1')} is on it`);
    expect(plan.refused[0]?.suggestion).toBeTruthy();
  });

  it("finds the instance as the database would: node and host compared case-folded, trailing spaces ignored", () => {
    const cn = node('compute-1', 'compute-1.example');
    const vm = instance(u('vm-case'), cn, { host: 'Compute-1 ', node: 'COMPUTE-1.example ' });
    const plan = planOrphanCleanup(snapshot({ computeNodes: [cn], instances: [vm] }));
    expect(plan.units).toEqual([]);
    expect(plan.refused[0]?.reason).toContain(`live instance ${u('vm-case')} is on it`);
  });

  it('refuses a node without a host: the host guard cannot be written', () => {
    const cn = node('x', 'nohost.example', { host: null });
    const plan = planOrphanCleanup(snapshot({ computeNodes: [cn] }));
    expect(plan.units).toEqual([]);
    expect(plan.refused[0]?.reason).toContain('has no host');
  });

  it("an orphaned consumer's allocations are removed before the provider, at the consumer's generation", () => {
    const cn = node('compute-1', 'compute-1.example');
    const rp = providerOf(cn);
    const plan = planOrphanCleanup(snapshot({ computeNodes: [cn], providers: [rp], allocations: [alloc(rp, u('leftover'))], consumers: [consumer(u('leftover'), 7)] }));
    expect(kinds(plan)).toEqual([['remove-provider-allocations', 'delete-provider', 'soft-delete-compute-node']]);
    const [remove, del] = changesOf(plan);
    expect(remove).toMatchObject({ consumerUuid: u('leftover'), consumerGeneration: 7, providerId: rp.id, allocations: [{ resourceClass: 'VCPU', used: 2 }] });
    // Removing the allocations bumps the provider: the delete expects the bumped generation.
    expect(del).toMatchObject({ kind: 'delete-provider', generation: rp.generation + 1 });
  });

  it("never removes a live instance's only allocations: the node is refused with its provider's reason", () => {
    const dead = node('compute-1', 'compute-1.example');
    const live = node('compute-2', 'compute-2.example');
    const rp = providerOf(dead);
    // The instance lives on compute-2 but its only allocation is on the orphan's provider.
    const vm = instance(u('vm-2'), live);
    const plan = planOrphanCleanup(
      snapshot({ services: [service('compute-2')], computeNodes: [dead, live], instances: [vm], providers: [rp, providerOf(live)], allocations: [alloc(rp, u('vm-2'))] }),
    );
    expect(plan.units).toEqual([]);
    expect(plan.refused[0]?.reason).toContain('holds the only allocations of live instance');
  });

  it("an evacuated instance's leftover share on the orphan's provider is removed; its allocation elsewhere stays", () => {
    const dead = node('compute-1', 'compute-1.example');
    const live = node('compute-2', 'compute-2.example');
    const rpDead = providerOf(dead);
    const rpLive = providerOf(live);
    const vm = instance(u('vm-3'), live);
    const plan = planOrphanCleanup(
      snapshot({ services: [service('compute-2')], computeNodes: [dead, live], instances: [vm], providers: [rpDead, rpLive], allocations: [alloc(rpDead, u('vm-3')), alloc(rpLive, u('vm-3'))] }),
    );
    expect(kinds(plan)).toEqual([['remove-provider-allocations', 'delete-provider', 'soft-delete-compute-node']]);
    expect(changesOf(plan)[0]).toMatchObject({ providerId: rpDead.id, consumerUuid: u('vm-3') });
    expect(changesOf(plan).some((c) => 'providerId' in c && c.providerId === rpLive.id)).toBe(false);
  });

  it('two orphans sharing a consumer: the second unit expects the generation the first one leaves', () => {
    const a = node('compute-1', 'compute-1.example');
    const b = node('compute-3', 'compute-3.example');
    const rpA = providerOf(a);
    const rpB = providerOf(b);
    const plan = planOrphanCleanup(
      snapshot({ computeNodes: [a, b], providers: [rpA, rpB], allocations: [alloc(rpA, u('shared')), alloc(rpB, u('shared'))], consumers: [consumer(u('shared'), 4)] }),
    );
    const removals = changesOf(plan).filter((c) => c.kind === 'remove-provider-allocations');
    expect(removals.map((c) => ('consumerGeneration' in c ? c.consumerGeneration : undefined))).toEqual([4, 5]);
  });

  it('the scope selects units, and the plan of the selected node is the one of the whole deployment', () => {
    const a = node('compute-1', 'compute-1.example');
    const b = node('compute-3', 'compute-3.example');
    const full = planOrphanCleanup(snapshot({ computeNodes: [a, b] }));
    const scoped = planOrphanCleanup(snapshot({ computeNodes: [a, b] }), { host: 'compute-3' });
    expect(full.units).toHaveLength(2);
    expect(scoped.units).toEqual(full.units.filter((unit) => unit.title.includes('compute-3')));
  });
});
