// The rebalance planner on snapshots built in code: the seed-bug states, the
// canonical choice, the ring, capacity, refusals, bad input, and
// convergence: a plan cut short after any change (a crash) is finished by
// the next plan, with the same end state.
import { describe, expect, it } from 'vitest';
import { buildHashRing, ringOwner } from '../../src/domain/hash-ring.js';
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InstanceRec, InventoryRec, ProviderRec, ServiceRec, Snapshot } from '../../src/domain/model.js';
import type { Change, Plan } from '../../src/domain/plan.js';
import { planNodeMoves } from '../../src/domain/node-move.js';
import { planRebalance, type RebalanceOptions } from '../../src/domain/rebalance/index.js';
import { ReconcileError } from '../../src/errors.js';
import { C1, ago, C2, snapshot as buildSnapshot } from '../helpers/snapshot-builders.js';

const N = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123';
const U2 = 'd6a3c1f0-8b7e-4e21-9c55-0a4f2b6e7d19';
const I = '5e0a7c3d-91b4-4f6a-8d2e-c7b1f0a93e58';
const RC = 'CUSTOM_BAREMETAL_GOLD';
const RC_ID = 10000;


interface World {
  services: ServiceRec[];
  nodes: ComputeNodeRec[];
  instances: InstanceRec[];
  providers: ProviderRec[];
  inventories: InventoryRec[];
  allocations: AllocationRec[];
  consumers: ConsumerRec[];
}

let nextId = 100;

function service(host: string, over: Partial<ServiceRec> = {}): ServiceRec {
  return { cellUuid: C1, id: nextId++, uuid: null, host, binary: 'nova-compute', disabled: false, forcedDown: false, lastSeenUp: ago(5), createdAt: ago(90 * 86400), updatedAt: ago(5), deleted: false, ...over };
}

function ironicRow(uuid: string, host: string, over: Partial<ComputeNodeRec> = {}): ComputeNodeRec {
  return { cellUuid: C1, id: nextId++, uuid, host, hypervisorHostname: N, hypervisorType: 'ironic', serviceId: null, mapped: 1, createdAt: ago(30 * 86400), updatedAt: ago(7200), deleted: false, ...over };
}

function providerWithInventory(w: World, uuid: string, name: string, reserved: number, generation = 2): ProviderRec {
  const rp: ProviderRec = { id: nextId++, uuid, name, generation, rootId: null, parentId: null, traits: ['COMPUTE_NODE'], aggregateCount: 0 };
  w.providers.push({ ...rp, rootId: rp.id });
  w.inventories.push({ id: nextId++, providerId: rp.id, resourceClassId: RC_ID, resourceClass: RC, total: 1, reserved, minUnit: 1, maxUnit: 1, stepSize: 1, allocationRatio: 1 });
  return rp;
}

function allocate(w: World, providerId: number, consumer: string): void {
  w.allocations.push({ id: nextId++, providerId, consumerUuid: consumer, resourceClassId: RC_ID, resourceClass: RC, used: 1 });
  if (!w.consumers.some((c) => c.uuid === consumer)) w.consumers.push({ id: nextId++, uuid: consumer, generation: 1, projectId: 1, userId: 1 });
}

function instance(host: string, over: Partial<InstanceRec> = {}): InstanceRec {
  return { cellUuid: C1, id: nextId++, uuid: I, host, node: N, vmState: 'active', taskState: null, ...over };
}

/** Seed bug 1714248, the 409 state: U1 (dead host, instance, allocation), duplicate U2 without provider. */
function failover(): World {
  const w: World = { services: [], nodes: [], instances: [], providers: [], inventories: [], allocations: [], consumers: [] };
  w.services.push(service('ironic-compute-0', { forcedDown: true, lastSeenUp: ago(7200) }), service('ironic-compute-1'));
  w.nodes.push(ironicRow(N, 'ironic-compute-0'), ironicRow(U2, 'ironic-compute-1', { createdAt: ago(3600) }));
  const u1 = providerWithInventory(w, N, N, 1, 4);
  allocate(w, u1.id, I);
  w.instances.push(instance('ironic-compute-0'));
  return w;
}

/** One cell (cell2 left out), every service's host mapped. */
function snapshot(w: World): Snapshot {
  const s = buildSnapshot({
    hostMappings: w.services.map((svc, i) => ({ id: i + 1, host: svc.host ?? '', cellUuid: C1 })),
    services: w.services,
    computeNodes: w.nodes,
    instances: w.instances,
    providers: w.providers,
    inventories: w.inventories,
    allocations: w.allocations,
    consumers: w.consumers,
  });
  return { ...s, cells: s.cells.filter((c) => c.uuid !== C2) };
}

function kinds(plan: Plan): string[] {
  return plan.units.flatMap((u) => u.changes.map((c) => c.change.kind));
}

function changes(plan: Plan): Change[] {
  return plan.units.flatMap((u) => u.changes.map((c) => c.change));
}

const opts: RebalanceOptions = { includeDown: false };

// ---------------------------------------------------------------------------
// An in-memory apply of each change kind, with the executors' semantics, for
// the convergence checks.

function clone(w: World): World {
  return structuredClone(w);
}

function applyToWorld(w: World, c: Change): void {
  const rp = (id: number): ProviderRec => w.providers.find((p) => p.id === id) as ProviderRec;
  const setRp = (id: number, f: (p: ProviderRec) => ProviderRec): void => {
    w.providers = w.providers.map((p) => (p.id === id ? f(p) : p));
  };
  const bumpConsumer = (uuid: string): void => {
    w.consumers = w.consumers.map((x) => (x.uuid === uuid ? { ...x, generation: x.generation + 1 } : x));
  };
  switch (c.kind) {
    case 'soft-delete-compute-node':
      w.nodes = w.nodes.map((n) => (n.id === c.id ? { ...n, deleted: true } : n));
      return;
    case 'delete-provider':
      w.providers = w.providers.filter((p) => p.id !== c.providerId);
      w.inventories = w.inventories.filter((i) => i.providerId !== c.providerId);
      return;
    case 'remove-provider-allocations':
      w.allocations = w.allocations.filter((a) => !(a.providerId === c.providerId && a.consumerUuid === c.consumerUuid));
      if (!w.allocations.some((a) => a.consumerUuid === c.consumerUuid)) w.consumers = w.consumers.filter((x) => x.uuid !== c.consumerUuid);
      else bumpConsumer(c.consumerUuid);
      return;
    case 'rekey-provider':
      setRp(c.providerId, (p) => ({ ...p, uuid: c.toUuid, generation: p.generation + 1 }));
      return;
    case 'move-allocations': {
      expect(rp(c.toProviderId).generation).toBe(c.toGeneration);
      w.allocations = w.allocations.map((a) => (a.providerId === c.fromProviderId && a.consumerUuid === c.consumerUuid ? { ...a, providerId: c.toProviderId } : a));
      bumpConsumer(c.consumerUuid);
      for (const pid of new Set(w.allocations.filter((a) => a.consumerUuid === c.consumerUuid).map((a) => a.providerId))) setRp(pid, (p) => ({ ...p, generation: p.generation + 1 }));
      return;
    }
    case 'rename-provider':
      setRp(c.providerId, (p) => ({ ...p, name: c.toName }));
      return;
    case 'rehome-compute-node':
      w.nodes = w.nodes.map((n) => (n.id === c.id ? { ...n, host: c.toHost, serviceId: c.toServiceId } : n));
      if (c.instance !== null) w.instances = w.instances.map((i) => (i.id === c.instance?.id ? { ...i, host: c.toHost } : i));
      return;
    case 'move-instance':
      w.instances = w.instances.map((i) => (i.id === c.id ? { ...i, host: c.toHost } : i));
      return;
  }
}

function applyAll(w: World, cs: readonly Change[]): World {
  const out = clone(w);
  for (const c of cs) applyToWorld(out, c);
  return out;
}

/** Cut the plan after every change; the next plan must finish it, to the same end state, and then be empty. */
function expectConvergence(w: World, options: RebalanceOptions = opts): World {
  const plan = planRebalance(snapshot(w), options);
  const all = changes(plan);
  const end = applyAll(w, all);
  expect(planRebalance(snapshot(end), options)).toMatchObject({ units: [], refused: [] });
  for (let k = 1; k < all.length; k++) {
    const crashed = applyAll(w, all.slice(0, k));
    const rest = changes(planRebalance(snapshot(crashed), options));
    expect(applyAll(crashed, rest), `crash after change ${k} (${all[k - 1]?.kind ?? ''})`).toEqual(end);
  }
  return end;
}

// ---------------------------------------------------------------------------

describe('planRebalance: seed bug 1714248', () => {
  it('the 409 state: keeps U1, retires U2, re-homes U1 and its instance onto the live service', () => {
    const w = failover();
    const plan = planRebalance(snapshot(w), opts);
    expect(plan.refused).toEqual([]);
    // The instance moves in the re-home's transaction: no crash can leave the node re-homed without it.
    expect(kinds(plan)).toEqual(['soft-delete-compute-node', 'rehome-compute-node']);
    const [retire, rehome] = changes(plan);
    expect(retire).toMatchObject({ uuid: U2, host: 'ironic-compute-1' });
    expect(rehome).toMatchObject({ uuid: N, fromHost: 'ironic-compute-0', toHost: 'ironic-compute-1', toServiceId: w.services[1]?.id, instance: { uuid: I, fromHost: 'ironic-compute-0' } });
    const end = expectConvergence(w);
    expect(end.nodes.filter((n) => !n.deleted)).toMatchObject([{ uuid: N, host: 'ironic-compute-1' }]);
  });

  it('the renamed state: deletes the empty U2 provider, renames U1 back, then the cell steps', () => {
    const w = failover();
    w.providers = w.providers.map((p) => (p.uuid === N ? { ...p, name: `stale-${N}` } : p));
    providerWithInventory(w, U2, N, 1);
    const plan = planRebalance(snapshot(w), opts);
    expect(kinds(plan)).toEqual(['delete-provider', 'rename-provider', 'soft-delete-compute-node', 'rehome-compute-node']);
    expect(changes(plan)[3]).toMatchObject({ instance: { uuid: I } });
    expect(changes(plan)[0]).toMatchObject({ uuid: U2 });
    expect(changes(plan)[1]).toMatchObject({ uuid: N, fromName: `stale-${N}`, toName: N, generation: 4 });
    const end = expectConvergence(w);
    expect(end.providers).toMatchObject([{ uuid: N, name: N, generation: 4 }]);
    expect(end.allocations).toMatchObject([{ providerId: w.providers[0]?.id, consumerUuid: I, used: 1 }]);
  });

  it('U1 row deleted, allocation on the stale renamed provider: moves it onto U2 (in-use ironic exception) and deletes the stale one', () => {
    const w = failover();
    w.nodes = w.nodes.map((n) => (n.uuid === N ? { ...n, deleted: true } : n));
    w.providers = w.providers.map((p) => (p.uuid === N ? { ...p, name: `stale-${N}` } : p));
    const u2 = providerWithInventory(w, U2, N, 1, 2);
    const plan = planRebalance(snapshot(w), opts);
    expect(kinds(plan)).toEqual(['move-allocations', 'delete-provider', 'move-instance']);
    const move = changes(plan)[0];
    expect(move).toMatchObject({ consumerUuid: I, consumerGeneration: 1, toProviderUuid: U2, toGeneration: 2, allocations: [{ resourceClass: RC, used: 1 }] });
    expect(move?.kind === 'move-allocations' && move.capacityException).toMatch(/in use by this very instance/);
    expect(plan.units[0]?.title).toContain('over capacity by design');
    const end = expectConvergence(w);
    expect(end.providers.map((p) => [p.uuid, p.name, p.generation])).toEqual([[U2, N, 3]]);
    expect(end.consumers).toMatchObject([{ uuid: I, generation: 2 }]);
    expect(end.allocations).toMatchObject([{ providerId: u2.id, consumerUuid: I }]);
    expect(end.instances).toMatchObject([{ host: 'ironic-compute-1', node: N }]);
  });

  it('U1 row deleted, U2 without provider: re-keys the stale provider instead of moving allocations', () => {
    const w = failover();
    w.nodes = w.nodes.map((n) => (n.uuid === N ? { ...n, deleted: true } : n));
    const plan = planRebalance(snapshot(w), opts);
    expect(kinds(plan)).toEqual(['rekey-provider', 'move-instance']);
    expect(changes(plan)[0]).toMatchObject({ fromUuid: N, toUuid: U2, generation: 4 });
    const end = expectConvergence(w);
    expect(end.providers.map((p) => [p.uuid, p.name, p.generation])).toEqual([[U2, N, 5]]);
  });

  it("never re-keys or deletes the provider of a soft-deleted node that comes back (bug 1839560, the audit's judgement): the node is refused, naming the restore", () => {
    const w = failover();
    // Ironic node Y was soft-deleted in maintenance (its ironic node still exists); its provider holds the instance's allocation.
    const Y = 'f1e2d3c4-0000-4000-8000-0000000000a1';
    w.nodes.push(ironicRow(Y, 'ironic-compute-1', { hypervisorHostname: Y, deleted: true }));
    const y = providerWithInventory(w, Y, Y, 0);
    w.allocations = w.allocations.map((a) => (a.consumerUuid === I ? { ...a, providerId: y.id } : a));
    const plan = planRebalance(snapshot(w), opts);
    expect(changes(plan).filter((c) => (c.kind === 'delete-provider' && c.uuid === Y) || (c.kind === 'rekey-provider' && c.fromUuid === Y))).toEqual([]);
    expect(plan.refused.map((r) => [r.reason, r.suggestion])).toEqual([
      [expect.stringMatching(new RegExp(`^kept: compute node ${Y} \\(id [0-9]+, host ironic-compute-1\\) of provider ${Y} was soft-deleted`)), `nova-reconcile compute_node restore --uuid ${Y}`],
    ]);
  });

  it('refuses to move an allocation onto a provider that is full for another consumer', () => {
    const w = failover();
    w.nodes = w.nodes.map((n) => (n.uuid === N ? { ...n, deleted: true } : n));
    w.providers = w.providers.map((p) => (p.uuid === N ? { ...p, name: `stale-${N}` } : p));
    const u2 = providerWithInventory(w, U2, N, 0);
    allocate(w, u2.id, 'aaaaaaaa-0000-4000-8000-000000000001');
    const plan = planRebalance(snapshot(w), opts);
    expect(plan.units).toEqual([]);
    expect(plan.refused[0]?.reason).toMatch(/would exceed the capacity/);
  });
});

describe('planRebalance: re-homing off dead services', () => {
  function lone(host0: Partial<ServiceRec>): World {
    const w: World = { services: [], nodes: [], instances: [], providers: [], inventories: [], allocations: [], consumers: [] };
    w.services.push(service('ironic-compute-0', host0), service('Ironic-Compute-1'), service('ironic-compute-2'));
    // Ring members must have ironic compute nodes (deleted rows count, as in Nova's join).
    w.nodes.push(ironicRow(N, 'ironic-compute-0'));
    w.nodes.push(ironicRow('aaaaaaaa-0000-4000-8000-00000000000a', 'Ironic-Compute-1', { hypervisorHostname: 'aaaaaaaa-0000-4000-8000-00000000000a', deleted: true }));
    w.nodes.push(ironicRow('aaaaaaaa-0000-4000-8000-00000000000b', 'ironic-compute-2', { hypervisorHostname: 'aaaaaaaa-0000-4000-8000-00000000000b' }));
    providerWithInventory(w, 'aaaaaaaa-0000-4000-8000-00000000000b', 'aaaaaaaa-0000-4000-8000-00000000000b', 0);
    const u1 = providerWithInventory(w, N, N, 1);
    allocate(w, u1.id, I);
    w.instances.push(instance('ironic-compute-0'));
    return w;
  }

  it("moves a forced-down service's node to the ring owner among the live members, with its instance", () => {
    const w = lone({ forcedDown: true });
    const owner = ringOwner(buildHashRing(['ironic-compute-1', 'ironic-compute-2']), N);
    const host = owner === 'ironic-compute-1' ? 'Ironic-Compute-1' : 'ironic-compute-2';
    const plan = planRebalance(snapshot(w), opts);
    expect(kinds(plan)).toEqual(['rehome-compute-node']);
    expect(changes(plan)[0]).toMatchObject({ fromHost: 'ironic-compute-0', toHost: host, instance: { uuid: I, fromHost: 'ironic-compute-0' } });
    expect(plan.units[0]?.changes[0]?.reason).toContain("Nova's hash ring of the live members (ironic-compute-1, ironic-compute-2)");
    expectConvergence(w);
  });

  it('leaves a merely down service alone unless --include-down', () => {
    const w = lone({ lastSeenUp: ago(600) });
    expect(planRebalance(snapshot(w), opts)).toMatchObject({ units: [], refused: [] });
    expect(kinds(planRebalance(snapshot(w), { includeDown: true }))).toEqual(['rehome-compute-node']);
    expectConvergence(w, { includeDown: true });
  });

  it('ring members from --ring-members decide the owner', () => {
    const w = lone({ forcedDown: true });
    const plan = planRebalance(snapshot(w), { includeDown: false, ringMembers: { hosts: ['ironic-compute-2'], source: '--ring-members' } });
    expect(changes(plan)[0]).toMatchObject({ toHost: 'ironic-compute-2' });
  });

  it('skips disabled and down services as ring members', () => {
    const w = lone({ forcedDown: true });
    w.services = w.services.map((s) => (s.host === 'ironic-compute-2' ? { ...s, disabled: true } : s));
    expect(changes(planRebalance(snapshot(w), opts))[0]).toMatchObject({ toHost: 'Ironic-Compute-1' });
    w.services = w.services.map((s) => (s.host === 'Ironic-Compute-1' ? { ...s, lastSeenUp: ago(3600) } : s));
    const plan = planRebalance(snapshot(w), opts);
    expect(plan.units).toEqual([]);
    expect(plan.refused[0]?.reason).toMatch(/no live ironic nova-compute service/);
  });

  it('refuses a node with two live instances', () => {
    const w = lone({ forcedDown: true });
    w.instances.push(instance('ironic-compute-0', { uuid: 'bbbbbbbb-0000-4000-8000-000000000001' }));
    const plan = planRebalance(snapshot(w), opts);
    expect(plan.units).toEqual([]);
    expect(plan.refused).toMatchObject([{ subject: `ironic node ${N} in cell cell1`, reason: expect.stringContaining('2 live instances are on it') as unknown }]);
  });

  it('a clean deployment plans nothing', () => {
    const w = lone({});
    expect(planRebalance(snapshot(w), opts)).toMatchObject({ units: [], refused: [] });
  });
});

describe('planRebalance: legacy duplicates while both services are up (pre-Rocky random uuids, bug 1714248)', () => {
  const A = 'aaaaaaaa-1111-4111-8111-0000000000a1';
  const B = 'bbbbbbbb-2222-4222-8222-0000000000b2';
  /** CN-a on ironic-1 holds the instance and the provider named N; CN-b on ironic-2 (newer) has neither; both up. */
  function legacy(): World {
    const w: World = { services: [], nodes: [], instances: [], providers: [], inventories: [], allocations: [], consumers: [] };
    w.services.push(service('ironic-1'), service('ironic-2'));
    w.nodes.push(ironicRow(A, 'ironic-1'), ironicRow(B, 'ironic-2', { createdAt: ago(3600) }));
    const rp = providerWithInventory(w, A, N, 1, 4);
    allocate(w, rp.id, I);
    w.instances.push(instance('ironic-1'));
    return w;
  }

  it('keeps the row with the instance and the provider, soft-deletes the other host-guarded, leaves placement alone', () => {
    const w = legacy();
    const plan = planRebalance(snapshot(w), opts);
    expect(plan.refused).toEqual([]);
    expect(changes(plan)).toMatchObject([{ kind: 'soft-delete-compute-node', uuid: B, host: 'ironic-2' }]);
    const end = expectConvergence(w);
    expect(end.providers).toEqual(w.providers);
    expect(end.instances).toEqual(w.instances);
  });

  it('keeps the provider row without an instance too', () => {
    const w = legacy();
    w.instances = [];
    w.allocations = [];
    expect(changes(planRebalance(snapshot(w), opts))).toMatchObject([{ kind: 'soft-delete-compute-node', uuid: B }]);
  });

  it('the provider row follows its instance onto the other up host (the instance host owns the node, §6)', () => {
    const w = legacy();
    w.instances = [instance('ironic-2')];
    const plan = planRebalance(snapshot(w), opts);
    expect(changes(plan)).toMatchObject([
      { kind: 'soft-delete-compute-node', uuid: B },
      { kind: 'rehome-compute-node', uuid: A, fromHost: 'ironic-1', toHost: 'ironic-2', instance: null },
    ]);
    expectConvergence(w);
  });

  it('refuses when neither row matches a provider', () => {
    const w = legacy();
    w.providers = [];
    w.inventories = [];
    w.allocations = [];
    const plan = planRebalance(snapshot(w), opts);
    expect(plan.units).toEqual([]);
    expect(plan.refused).toMatchObject([{ reason: expect.stringContaining('no resource provider has any of their uuids') as unknown }]);
  });

  it('refuses when both rows have instances', () => {
    const w = legacy();
    w.instances.push(instance('ironic-2', { uuid: 'cccccccc-0000-4000-8000-000000000001' }));
    const plan = planRebalance(snapshot(w), opts);
    expect(plan.units).toEqual([]);
    expect(plan.refused).toMatchObject([{ reason: expect.stringContaining('2 live instances are on it') as unknown }]);
  });

  it('still re-homes off a dead service: CN-a forced down goes to CN-b\'s up host', () => {
    const w = legacy();
    w.services = w.services.map((s) => (s.host === 'ironic-1' ? { ...s, forcedDown: true } : s));
    expect(changes(planRebalance(snapshot(w), opts))).toMatchObject([
      { kind: 'soft-delete-compute-node', uuid: B },
      { kind: 'rehome-compute-node', uuid: A, toHost: 'ironic-2', instance: { uuid: I } },
    ]);
  });
});

describe('planRebalance: bad input', () => {
  const s = snapshot(failover());
  it.each([
    ['an unknown node', { nodes: ['cccccccc-0000-4000-8000-000000000000'] }, 'not-found', /no live ironic compute node has this uuid/],
    ['an unknown cell', { cellUuid: 'cccccccc-0000-4000-8000-000000000000' }, 'not-found', /has no mapping/],
    ['ring members that are not services', { ringMembers: { hosts: ['nope', 'ironic-compute-1'], source: '--ring-members' } }, 'input', /--ring-members: nope is not a nova-compute service/],
  ])('refuses %s', (_name, over, kind, message) => {
    try {
      planRebalance(s, { includeDown: false, ...over });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ReconcileError);
      expect((err as ReconcileError).kind).toBe(kind);
      expect((err as ReconcileError).message).toMatch(message);
    }
  });

  it('--node selects the node by its uuid or its duplicate uuid', () => {
    expect(planRebalance(s, { includeDown: false, nodes: [U2] }).units).toHaveLength(1);
  });
});

describe('planNodeMoves', () => {
  it('moves the node and its instance in one change, with the forced-down source re-checked', () => {
    const w = failover();
    w.nodes = w.nodes.filter((n) => n.uuid === N);
    const mp = planNodeMoves(snapshot(w), { nodes: [N], toHost: 'ironic-compute-1', sourceDownOk: false });
    expect(mp.skipped).toEqual([]);
    expect(changes(mp.plan)).toMatchObject([
      { kind: 'rehome-compute-node', fromHost: 'ironic-compute-0', toHost: 'ironic-compute-1', forcedDownSourceServiceId: w.services[0]?.id, instance: { uuid: I, fromHost: 'ironic-compute-0' } },
    ]);
    expect(mp.moves).toEqual([{ unitId: mp.plan.units[0]?.id, nodeUuid: N, fromHost: 'ironic-compute-0', toHost: 'ironic-compute-1', instanceUuid: I }]);
  });

  it('refuses an up source, a down source without --source-down-ok, and a forced-down destination', () => {
    const w = failover();
    w.nodes = w.nodes.filter((n) => n.uuid === N);
    w.services = w.services.map((s) => (s.host === 'ironic-compute-0' ? { ...s, forcedDown: false, lastSeenUp: ago(5) } : s));
    expect(planNodeMoves(snapshot(w), { nodes: [N], toHost: 'ironic-compute-1', sourceDownOk: false }).skipped[0]?.reason).toMatch(/is up and not forced down/);
    w.services = w.services.map((s) => (s.host === 'ironic-compute-0' ? { ...s, lastSeenUp: ago(3600) } : s));
    expect(planNodeMoves(snapshot(w), { nodes: [N], toHost: 'ironic-compute-1', sourceDownOk: false }).skipped[0]?.reason).toMatch(/is down but not forced down/);
    expect(planNodeMoves(snapshot(w), { nodes: [N], toHost: 'ironic-compute-1', sourceDownOk: true }).skipped).toEqual([]);
    w.services = w.services.map((s) => (s.host === 'ironic-compute-1' ? { ...s, forcedDown: true } : s));
    expect(planNodeMoves(snapshot(w), { nodes: [N], toHost: 'ironic-compute-1', sourceDownOk: true }).skipped[0]?.reason).toMatch(/is forced down/);
  });

  it('refuses a destination in another cell, and a node with two instances', () => {
    const w = failover();
    w.nodes = w.nodes.filter((n) => n.uuid === N);
    w.services.push(service('ironic-compute-9', { cellUuid: '99999999-9999-4999-8999-999999999999' }));
    expect(planNodeMoves(snapshot(w), { nodes: [N], toHost: 'ironic-compute-9', sourceDownOk: false }).skipped[0]?.reason).toBe(
      `destination ironic-compute-9 is in cell 99999999-9999-4999-8999-999999999999, not in the node's cell cell1`,
    );
    w.instances.push(instance('ironic-compute-0', { uuid: 'bbbbbbbb-0000-4000-8000-000000000001' }));
    const mp = planNodeMoves(snapshot(w), { fromHosts: ['ironic-compute-0'], toHost: 'ironic-compute-1', sourceDownOk: false });
    expect(mp.plan.units).toEqual([]);
    expect(mp.skipped[0]?.reason).toMatch(/^2 live instances are on it/);
  });

  it('refuses a destination that is not a nova-compute service', () => {
    expect(() => planNodeMoves(snapshot(failover()), { nodes: [N], toHost: 'nope', sourceDownOk: false })).toThrow(/--to-host nope is not a nova-compute service/);
  });
});

describe('scale', () => {
  // Its speed is measured by `npm run bench` (the rebalance cloud), not asserted here.
  it('plans 1,000 ironic nodes (half duplicated, a quarter on stale providers), one unit each with disjoint footprints', () => {
    const w: World = { services: [], nodes: [], instances: [], providers: [], inventories: [], allocations: [], consumers: [] };
    w.services.push(service('ironic-compute-0', { forcedDown: true }), service('ironic-compute-1'), service('ironic-compute-2'));
    for (let i = 0; i < 1000; i++) {
      const id = `${i.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
      const dup = `${i.toString(16).padStart(8, '0')}-1111-4000-8000-000000000000`;
      const inst = `${i.toString(16).padStart(8, '0')}-2222-4000-8000-000000000000`;
      w.nodes.push(ironicRow(id, 'ironic-compute-0', { hypervisorHostname: id, deleted: i % 4 === 0 }));
      if (i % 2 === 0) w.nodes.push(ironicRow(dup, i % 4 === 0 ? 'ironic-compute-1' : 'ironic-compute-2', { hypervisorHostname: id, createdAt: ago(60) }));
      const rp = providerWithInventory(w, id, i % 4 === 0 ? `stale-${id}` : id, 1);
      if (i % 4 === 0) providerWithInventory(w, dup, id, 1);
      allocate(w, rp.id, inst);
      w.instances.push(instance('ironic-compute-0', { uuid: inst, node: id }));
    }
    const plan = planRebalance(snapshot(w), opts);
    expect(plan.refused).toEqual([]);
    // Every node's unit can be applied beside every other's.
    const keys = plan.units.flatMap((u) => u.footprint ?? ['<none>']);
    expect(new Set(keys).size).toBe(keys.length);
    expect(plan.units).toHaveLength(1000);
    expect(kinds(plan).filter((k) => k === 'move-allocations')).toHaveLength(250);
  });
});
