// cleanup_orphans and placement cleanup_providers read placement's
// allocations, consumers and inventories only for the provider trees they
// plan on (issue 20: PlacementSnapshot.scope, readPlacementScope). On SQLite
// and MariaDB, on a generated cloud with orphan nodes and stale providers and
// the allocations that make removal hard:
//  - an evacuation leftover: a live instance's share on an orphan's provider,
//    its other allocations on its live node, outside the scope: only the
//    share goes, which needs the consumer's allocations elsewhere;
//  - a live instance whose only allocations sit on an orphan's provider:
//    refused;
//  - a child provider with an orphaned consumer's allocation under a stale
//    provider: removed with its tree;
//  - a consumer id in upper and in lower case on a stale provider (one id to
//    MariaDB's collation, two to placement's code), the upper one without a
//    consumer row of its own: refused;
//  - a live instance's share on a stale provider (its other allocations on
//    its live node): an evacuation leftover there too, which only the
//    instance read by its uuid tells from an orphaned consumer;
//  - a live instance on an orphan node, its host spelt in another case and
//    with a trailing space (one host to the database and to hostKey):
//    refused;
// the plans made from the scoped read (the instances too: only those of
// the orphans' hosts and of the scoped consumers, Snapshot.instanceScope)
// equal those made from the whole snapshot, the scoped read holds fewer
// allocations and instances, and its index refuses any lookup outside the
// scope instead of answering "none". An orphan whose host is not plain
// ASCII makes every instance read. cleanup_providers reads no service and
// no host mapping (it judges providers by their nodes only).
//
// On MariaDB, cleanup_orphans reads only the compute nodes that may be
// orphans, the services of their hosts and their providers
// (CellRecipe.nodes, Snapshot.nodeScope; SQLite reads them whole). Two
// more states test the anti-join that lists them: a healthy node whose live
// service spells its host in another case with a trailing space (the same
// host: not an orphan), and an orphan beside a live service whose host
// differs from its own only by an accent (one host to the collation, two to
// hostKey and Nova's code: still an orphan), and an orphan beside a live
// service whose binary is 'NOVA-COMPUTE ' (nova-compute to the collation,
// not to Nova's code: still an orphan).
//
// With --host or --node, cleanup_orphans' candidate read looks the names up
// in every table the whole read would search (Snapshot.scopeNames): the
// scoped plan, or the refusal of a name no row has, equals the whole
// read's for names only a host mapping, a soft-deleted service, a
// soft-deleted node or a live instance has, in another case, with a
// trailing space, and for an ASCII name the collation alone takes for a
// non-ASCII row's.
//
// On MariaDB, cleanup_providers (without --resource_provider) reads whole
// only the providers that may be stale and the live nodes of their names
// (CellRecipe.nodes 'stale-provider-candidates', Snapshot.nodeKeys):
// its plan equals the whole read's with providers that block live nodes'
// names (re-keyed, deleted), a pre-Train provider, and traitless providers
// named after a soft-deleted and after a live node (not stale); a
// non-ASCII candidate name, or a live node's name with a Kelvin sign, makes
// the read whole.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestDeployment, describeEachDialect, generateTestCloud, useDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { planOrphanCleanup } from '../../src/domain/orphan-nodes.js';
import { planProviderCleanup } from '../../src/domain/stale-providers.js';
import { indexSnapshot, instancesOn, type SnapshotIndex } from '../../src/domain/snapshot-index.js';
import type { Plan } from '../../src/domain/plan.js';
import type { Snapshot } from '../../src/domain/model.js';
import type { PlanReadRecipe, ScopeNames } from '../../src/operations/read/recipe.js';
import { orphanCleanupRead, providerCleanupRead, WHOLE_READ } from '../../src/operations/read/recipes.js';
import { readForPlan, readSnapshot } from '../../src/operations/read/snapshot.js';
import { resolveScope, type ScopeArguments } from '../../src/operations/scope.js';
import {
  insertAllocations,
  insertComputeNode,
  insertConsumer,
  insertInstance,
  insertInventories,
  insertProviderTraits,
  insertResourceProvider,
  insertService,
  softDeleteRow,
} from '../../src/sandbox/rows.js';
import type { Knex } from 'knex';

function providerIdOf(unitId: string): number {
  return Number(/^stale-provider:(\d+)$/.exec(unitId)?.[1]);
}

describeEachDialect('placement read for the planners\' scope only', (dialect) => {
  let d: TestDeployment;
  let evacuated: string;
  let stranded: string;
  let childConsumer: string;
  let onOrphan: string;
  let leftover: string;
  let orphanHost: string;
  let accented: { cellUuid: string; host: string; node: string | null };
  let oddBinary: string | null;
  const upper = randomUUID().toUpperCase();

  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'empty', 'sp');
    await generateTestCloud(d, { hostsPerCell: 20, instancesPerCell: 30, orphanFraction: 0.2, staleProviderFraction: 0.2 });
    // The broken states, on providers the whole plan names.
    const whole = await useDeployment(d, async (dep) => readSnapshot(dep, WHOLE_READ));
    const orphans = planOrphanCleanup(whole).units.map((u) => u.changes.find((c) => c.change.kind === 'soft-delete-compute-node')?.change);
    const orphanProviders = orphans.map((c) => (c?.kind === 'soft-delete-compute-node' ? whole.placement?.providers.find((p) => p.uuid === c.uuid)?.id : undefined));
    const [orphan1, orphan2] = orphanProviders;
    const third = orphans[2];
    if (third?.kind !== 'soft-delete-compute-node' || third.host === null) throw new Error('three orphans expected');
    orphanHost = third.host;
    const fourth = orphans[3];
    if (fourth?.kind !== 'soft-delete-compute-node' || fourth.host === null) throw new Error('four orphans expected');
    accented = { cellUuid: fourth.target.cellUuid, host: fourth.host.replace('c', 'ç'), node: fourth.uuid };
    await insertService(d.knex(fourth.target.cellUuid === whole.cells.find((c) => c.name === 'cell1')?.uuid ? 'cell1' : 'cell2'), { uuid: randomUUID(), host: accented.host });
    // And beside the fifth, a live service whose binary only the collation takes for nova-compute: still an orphan.
    const fifth = orphans[4];
    if (fifth?.kind !== 'soft-delete-compute-node' || fifth.host === null) throw new Error('five orphans expected');
    oddBinary = fifth.uuid;
    await insertService(d.knex(fifth.target.cellUuid === whole.cells.find((c) => c.name === 'cell1')?.uuid ? 'cell1' : 'cell2'), { uuid: randomUUID(), host: fifth.host, binary: 'NOVA-COMPUTE ' });
    const healthy = whole.services.find((svc) => svc.binary === 'nova-compute' && !svc.deleted && svc.cellUuid === whole.cells[1]?.uuid);
    if (healthy === undefined || healthy.host === null) throw new Error('a live service expected');
    await d.knex('cell1')('services').where('id', healthy.id).update({ host: `${healthy.host.toUpperCase()} ` });
    onOrphan = randomUUID();
    await insertInstance(d.knex('cell1'), { uuid: onOrphan, host: `${third.host.toUpperCase()} `, node: third.hypervisorHostname, vmState: 'active', projectId: 'p', userId: 'u' });
    const [stale1, stale2, stale3] = planProviderCleanup(whole).units.map((u) => providerIdOf(u.id));
    if (orphan1 === undefined || orphan2 === undefined || stale1 === undefined || stale2 === undefined || stale3 === undefined) throw new Error('two orphans and three stale providers expected');
    const p = d.knex('placement');
    const instances = (await d.knex('cell1')('instances').select('uuid').where('deleted', 0).orderBy('id')) as Array<{ uuid: string }>;
    evacuated = (instances[0] as { uuid: string }).uuid;
    stranded = (instances[1] as { uuid: string }).uuid;
    leftover = (instances[2] as { uuid: string }).uuid;
    await insertAllocations(p, [{ providerId: stale3, consumerUuid: leftover, resourceClass: 'VCPU', used: 1 }]);
    // Its share on the orphan, and a row on a provider id that does not exist (placement has no foreign key there): absent, not a planner bug.
    await insertAllocations(p, [
      { providerId: orphan1, consumerUuid: evacuated, resourceClass: 'VCPU', used: 1 },
      { providerId: 987_654_321, consumerUuid: evacuated, resourceClass: 'DISK_GB', used: 1 },
    ]);
    await p('allocations').where('consumer_id', stranded).update({ resource_provider_id: orphan2 });
    const child = await insertResourceProvider(p, { uuid: randomUUID(), name: `child-of-${stale2}`, parentId: stale2 });
    childConsumer = randomUUID();
    await insertConsumer(p, { uuid: childConsumer, projectId: 'p', userId: 'u' });
    await insertConsumer(p, { uuid: upper.toLowerCase(), projectId: 'p', userId: 'u' });
    await insertAllocations(p, [
      { providerId: child, consumerUuid: childConsumer, resourceClass: 'VCPU', used: 1 },
      { providerId: stale1, consumerUuid: upper, resourceClass: 'VCPU', used: 1 },
      { providerId: stale1, consumerUuid: upper.toLowerCase(), resourceClass: 'MEMORY_MB', used: 64 },
    ]);
  }, 120_000);
  afterEach(async () => {
    await d.cleanup();
  });

  // As compute_node cleanup_orphans reads (with --host or --node it adds their names: the test of those).
  const ORPHANS = orphanCleanupRead({});
  // As placement cleanup_providers reads.
  const PROVIDERS = providerCleanupRead(true);

  // As placement cleanup_providers reads without --resource_provider.
  const PROVIDER_CANDIDATES = providerCleanupRead(false);

  /** A provider and its rows gone, as if placement never had it. */
  async function dropProvider(p: Knex, id: number): Promise<void> {
    for (const t of ['allocations', 'inventories', 'resource_provider_traits', 'resource_provider_aggregates']) await p(t).where('resource_provider_id', id).delete();
    await p('resource_providers').where('id', id).update({ root_provider_id: null });
    await p('resource_providers').where('id', id).delete();
  }

  /**
   * Providers the candidate read must judge as the whole one does: one that
   * holds (in upper case) the name of a live node whose own provider is gone,
   * with an allocation (re-keyed to the node's uuid); an empty one that holds
   * the name of a live node whose own provider goes by another name
   * (deleted, not re-keyed: which only the read of that node's provider by
   * uuid tells); a pre-Train provider (no
   * traits, only VCPU and MEMORY_MB: stale by its inventories); and two
   * traitless ones named after a soft-deleted node and after a live node in
   * another case (not stale: a node has the name).
   */
  async function nameStates(): Promise<{ rekeyTo: string; blocking: number; preTrain: number; notStale: number[] }> {
    const whole = await useDeployment(d, async (dep) => readSnapshot(dep, WHOLE_READ));
    const wix = indexSnapshot(whole);
    const cell1 = whole.cells.find((c) => c.name === 'cell1')?.uuid;
    const healthy = wix.liveNodes.filter((n) => n.cellUuid === cell1 && n.uuid !== null && n.hypervisorHostname !== null && wix.providerByUuid.has(n.uuid) && wix.liveComputeService.get(n.cellUuid, n.host) !== undefined);
    const [n1, n2, n3] = healthy;
    if (n1?.uuid == null || n2?.hypervisorHostname == null || n3?.hypervisorHostname == null || n1.hypervisorHostname === null) throw new Error('three healthy nodes expected');
    const p = d.knex('placement');
    await dropProvider(p, wix.providerByUuid.get(n1.uuid)?.id ?? -1);
    const rekeyed = await insertResourceProvider(p, { uuid: randomUUID(), name: n1.hypervisorHostname.toUpperCase() });
    await insertProviderTraits(p, rekeyed, ['COMPUTE_NODE']);
    await insertInventories(p, [{ providerId: rekeyed, resourceClass: 'VCPU', total: 8 }]);
    const consumer = randomUUID();
    await insertConsumer(p, { uuid: consumer, projectId: 'p', userId: 'u' });
    await insertAllocations(p, [{ providerId: rekeyed, consumerUuid: consumer, resourceClass: 'VCPU', used: 1 }]);
    // Placement's names are unique: the live nodes' own providers of n2 and n3 go by other names (renamed by hand).
    for (const n of [n2, n3]) await p('resource_providers').where('uuid', n.uuid).update({ name: `renamed-${randomUUID()}` });
    const blocking = await insertResourceProvider(p, { uuid: randomUUID(), name: n2.hypervisorHostname });
    await insertProviderTraits(p, blocking, ['COMPUTE_NODE']);
    const preTrain = await insertResourceProvider(p, { uuid: randomUUID(), name: `pre-train-${randomUUID()}` });
    await insertInventories(p, [
      { providerId: preTrain, resourceClass: 'VCPU', total: 16 },
      { providerId: preTrain, resourceClass: 'MEMORY_MB', total: 65536 },
    ]);
    const gone = `Gone-Node-${randomUUID()}`;
    const deletedId = await insertComputeNode(d.knex('cell1'), { uuid: randomUUID(), host: 'gone-host', hypervisorHostname: gone, hypervisorType: 'QEMU' });
    await softDeleteRow(d.knex('cell1'), 'compute_nodes', deletedId, '2026-01-01 00:00:00');
    const notStale: number[] = [];
    for (const name of [gone.toLowerCase(), n3.hypervisorHostname.toUpperCase()]) {
      const id = await insertResourceProvider(p, { uuid: randomUUID(), name });
      await insertInventories(p, [{ providerId: id, resourceClass: 'VCPU', total: 4 }]);
      notStale.push(id);
    }
    return { rekeyTo: n1.uuid, blocking, preTrain, notStale };
  }

  /** The whole read, and the plan's read with the index it builds (which the command's planner takes). */
  async function both(recipe: PlanReadRecipe): Promise<{ whole: Snapshot; scoped: Snapshot; index: SnapshotIndex }> {
    return useDeployment(d, async (dep) => {
      const whole = await readSnapshot(dep, WHOLE_READ);
      const { snapshot, index } = await readForPlan(dep, recipe);
      return { whole, scoped: snapshot, index };
    });
  }

  function changesOf(plan: Plan): string[] {
    return plan.units.flatMap((u) => u.changes.map((c) => JSON.stringify(c.change)));
  }

  it('compute_node cleanup_orphans: the same plan as from the whole snapshot', async () => {
    const { whole, scoped, index } = await both(ORPHANS);
    const plan = planOrphanCleanup(scoped, undefined, index);
    expect(plan).toEqual(planOrphanCleanup(whole));
    expect(planOrphanCleanup(scoped)).toEqual(plan);
    expect(scoped.placement?.allocations.length).toBeLessThan(whole.placement?.allocations.length ?? 0);
    expect(scoped.instanceScope).toBeDefined();
    expect(scoped.instances.length).toBeLessThan(whole.instances.length);
    expect(scoped.nodeScope).toBe(dialect === 'mysql' ? 'orphan-candidates' : undefined);
    // The orphan beside the accented live service is still planned.
    expect(whole.services.some((svc) => !svc.deleted && svc.cellUuid === accented.cellUuid && svc.host === accented.host)).toBe(true);
    expect(changesOf(plan).some((c) => c.includes('soft-delete-compute-node') && accented.node !== null && c.includes(accented.node))).toBe(true);
    expect(changesOf(plan).some((c) => c.includes('soft-delete-compute-node') && oddBinary !== null && c.includes(oddBinary))).toBe(true);
    if (dialect === 'mysql') {
      expect(scoped.computeNodes.length).toBeLessThan(whole.computeNodes.filter((n) => !n.deleted).length);
      expect(scoped.placement?.providers.length).toBeLessThan(whole.placement?.providers.length ?? 0);
    }
    expect(plan.refused.map((r) => r.reason).join('\n')).toContain(`but live instance ${onOrphan} is on it`);
    // The evacuated instance's share goes, its allocations on its live node (read as the consumer's) stay.
    const share = changesOf(plan).filter((c) => c.includes(evacuated));
    expect(share).toHaveLength(1);
    expect(share[0]).toContain('remove-provider-allocations');
    expect(scoped.placement?.allocations.filter((a) => a.consumerUuid === evacuated).length).toBeGreaterThan(1);
    expect(plan.refused.map((r) => r.reason).join('\n')).toContain(`holds the only allocations of live instance ${stranded}`);
  });

  it('placement cleanup_providers: the same plan as from the whole snapshot', async () => {
    const { whole, scoped, index } = await both(PROVIDERS);
    const plan = planProviderCleanup(scoped, undefined, index);
    expect(plan).toEqual(planProviderCleanup(whole));
    expect(scoped.instances.length).toBeLessThan(whole.instances.length);
    // No service and no host mapping read; the index says so instead of "none".
    expect(scoped.nodeScope).toBe('no-services');
    expect([scoped.services.length, scoped.hostMappings.length]).toEqual([0, 0]);
    expect(whole.services.length).toBeGreaterThan(0);
    const node = scoped.computeNodes.find((n) => !n.deleted);
    if (node === undefined) throw new Error('a live node expected');
    expect(() => indexSnapshot(scoped).liveComputeService.get(node.cellUuid, node.host)).toThrow(/node read left out \(a planner bug: nothing was changed\)/);
    expect(scoped.placement?.allocations.length).toBeLessThan(whole.placement?.allocations.length ?? 0);
    const changes = changesOf(plan).join('\n');
    expect(changes).toContain(childConsumer);
    expect(plan.units.flatMap((u) => u.changes).find((c) => c.change.kind === 'remove-provider-allocations' && c.change.consumerUuid === leftover)?.reason).toMatch(/^evacuation leftover: instance /);
    // The upper-case id has no consumer row of its own (the lower-case one's is not its): its provider is refused.
    expect(plan.refused.map((r) => r.reason)).toContainEqual(expect.stringMatching(new RegExp(`^allocations of ${upper} on provider .* have no consumer row$`)));
  });

  it('compute_node cleanup_orphans --host and --node: the candidate read looks the names up, and scopes as the whole read does', async () => {
    const whole = await useDeployment(d, async (dep) => readSnapshot(dep, WHOLE_READ));
    const orphan = planOrphanCleanup(whole).units.flatMap((u) => u.changes.map((c) => c.change)).find((c) => c.kind === 'soft-delete-compute-node');
    if (orphan?.kind !== 'soft-delete-compute-node' || orphan.host === null || orphan.uuid === null) throw new Error('an orphan expected');
    // Names only one table has: a host mapping's, a soft-deleted service's, a soft-deleted node's (by name), a live instance's.
    const cell1 = d.knex('cell1');
    const mappedOnly = `mapped-only-${randomUUID().slice(0, 8)}`;
    await d.knex('api')('host_mappings').insert({ host: mappedOnly, cell_id: (await d.knex('api')('cell_mappings').where('name', 'cell1').first('id')).id, created_at: '2026-01-01 00:00:00' });
    const goneService = `gone-service-${randomUUID().slice(0, 8)}`;
    await softDeleteRow(cell1, 'services', await insertService(cell1, { uuid: randomUUID(), host: goneService }), '2026-01-01 00:00:00');
    const goneNode = `Gone-Node-${randomUUID().slice(0, 8)}`;
    await softDeleteRow(cell1, 'compute_nodes', await insertComputeNode(cell1, { uuid: randomUUID(), host: 'gone-host', hypervisorHostname: goneNode, hypervisorType: 'QEMU' }), '2026-01-01 00:00:00');
    // A host only a non-ASCII row has, which the collation takes for a plain one.
    const accentedOnly = `accented-only-${randomUUID().slice(0, 8)}`;
    await insertService(cell1, { uuid: randomUUID(), host: `ç${accentedOnly}` });
    const instanceOnly = `instance-only-${randomUUID().slice(0, 8)}`;
    await insertInstance(cell1, { uuid: randomUUID(), host: instanceOnly, node: 'n', vmState: 'active', projectId: 'p', userId: 'u' });
    const read = (names: ScopeNames): Promise<{ whole: Snapshot; scoped: Snapshot }> => both(orphanCleanupRead(names));
    const outcome = (snapshot: Snapshot, args: ScopeArguments): string => {
      try {
        return JSON.stringify(planOrphanCleanup(snapshot, resolveScope(snapshot, args)));
      } catch (err) {
        return `error: ${(err as Error).message}`;
      }
    };
    const cases: ScopeArguments[] = [
      { host: orphan.host },
      { host: `${orphan.host.toUpperCase()} ` },
      { host: mappedOnly },
      { host: goneService.toUpperCase() },
      { host: 'gone-host' },
      { host: instanceOnly },
      { host: 'no-such-host' },
      // One letter accented: the collation's match, not the whole read's (asked with the accent, and without it).
      { host: orphan.host.replace('c', 'ç') },
      { host: `c${accentedOnly}` },
      { nodes: [orphan.uuid.toUpperCase()] },
      { nodes: [goneNode.toLowerCase(), orphan.uuid] },
      { nodes: ['no-such-node'] },
      { host: orphan.host, nodes: [orphan.uuid] },
    ];
    for (const args of cases) {
      const { whole: w, scoped } = await read({ ...(args.host === undefined ? {} : { host: args.host }), ...(args.nodes === undefined ? {} : { nodes: args.nodes }) });
      const plain = [...(args.host === undefined ? [] : [args.host]), ...(args.nodes ?? [])].every((v) => /^[\x20-\x7e]+$/.test(v));
      expect({ args, nodeScope: scoped.nodeScope }).toEqual({ args, nodeScope: dialect === 'mysql' && plain ? 'orphan-candidates' : undefined });
      expect({ args, outcome: outcome(scoped, args) }).toEqual({ args, outcome: outcome(w, args) });
    }
    // The plan of the host selects its orphan, a typo is refused as in the whole read; a name the read did not look up is a planner bug.
    const { scoped } = await read({ host: orphan.host });
    expect(outcome(scoped, { host: orphan.host })).toContain(orphan.uuid);
    expect(outcome(whole, { host: 'no-such-host' })).toMatch(/^error: --host "no-such-host": no service, compute node, host mapping or instance has this host/);
    if (dialect === 'mysql') {
      expect(outcome((await read({ host: 'no-such-host' })).scoped, { host: 'no-such-host' })).toBe(outcome(whole, { host: 'no-such-host' }));
      expect(outcome(scoped, { nodes: [orphan.uuid] })).toMatch(/^error: .*did not look up its --host, --node/);
    }
  });

  it("placement cleanup_providers' read of the providers that may be stale: the same plan as from the whole snapshot", async () => {
    const states = await nameStates();
    const { whole, scoped, index } = await both(PROVIDER_CANDIDATES);
    const plan = planProviderCleanup(scoped, undefined, index);
    expect(plan).toEqual(planProviderCleanup(whole));
    // The states are planned as described (so that the comparison covers them).
    const ids = plan.units.map((u) => u.id);
    expect(plan.units.flatMap((u) => u.changes).some((c) => c.change.kind === 'rekey-provider' && c.change.toUuid === states.rekeyTo)).toBe(true);
    expect(plan.units.find((u) => u.id === `stale-provider:${states.blocking}`)?.title).toMatch(/it is empty and blocks compute node /);
    expect(ids).toContain(`stale-provider:${states.preTrain}`);
    for (const id of states.notStale) expect(ids).not.toContain(`stale-provider:${id}`);
    expect([scoped.services.length, scoped.hostMappings.length]).toEqual([0, 0]);
    if (dialect === 'sqlite') {
      // SQLite (the sandbox) is read whole.
      expect(scoped.nodeScope).toBe('no-services');
      return;
    }
    expect(scoped.nodeScope).toBe('stale-provider-candidates');
    const wholeLive = whole.computeNodes.filter((n) => !n.deleted);
    expect(scoped.computeNodes.filter((n) => !n.deleted).length).toBeLessThan(wholeLive.length / 4);
    expect(scoped.computeNodes.filter((n) => n.deleted)).toEqual(whole.computeNodes.filter((n) => n.deleted));
    expect(scoped.placement?.providers.length).toBeLessThan((whole.placement?.providers.length ?? 0) / 2);
    // Whether a uuid is a live node's is known for every node; its record, or the nodes of a name, only for what was read.
    const ix = indexSnapshot(scoped);
    const unread = wholeLive.find((n) => n.uuid !== null && n.hypervisorHostname !== null && !scoped.computeNodes.some((c) => c.id === n.id && c.cellUuid === n.cellUuid));
    if (unread?.uuid == null || unread.hypervisorHostname === null) throw new Error('a live node that was not read expected');
    expect(ix.liveNodeByUuid.has(unread.uuid)).toBe(true);
    expect(ix.liveNodeByUuid.has(randomUUID())).toBe(false);
    expect(ix.liveNodeByUuid.get(randomUUID())).toBeUndefined();
    expect(() => ix.liveNodeByUuid.get(unread.uuid as string)).toThrow(/node read left out \(a planner bug: nothing was changed\)/);
    expect(() => ix.liveNodesByHypervisorHostname.get(unread.hypervisorHostname?.toLowerCase() ?? '')).toThrow(/node read left out/);
    expect(ix.anyNodeName.has(unread.hypervisorHostname.toLowerCase())).toBe(true);
    expect(() => ix.liveComputeService.get(unread.cellUuid, unread.host)).toThrow(/node read left out/);
  });

  it("a provider name that is not plain ASCII makes cleanup_providers' read whole, and the plans still agree", async () => {
    const states = await nameStates();
    const p = d.knex('placement');
    // A provider of a non-ASCII name; and one whose ASCII name a live node's Kelvin sign (U+212A) lower-cases to.
    await p('resource_providers').where('id', states.preTrain).update({ name: `pré-train-${randomUUID()}` });
    const kelvin = `kelvin-${randomUUID()}`;
    await insertComputeNode(d.knex('cell1'), { uuid: randomUUID(), host: 'kelvin-host', hypervisorHostname: `\u212a${kelvin.slice(1)}`, hypervisorType: 'QEMU' });
    const blocker = await insertResourceProvider(p, { uuid: randomUUID(), name: kelvin });
    await insertProviderTraits(p, blocker, ['COMPUTE_NODE']);
    for (const rename of [false, true]) {
      // Each alone makes the read whole: first the Kelvin sign (the pre-Train name made plain again), then the accent.
      await p('resource_providers').where('id', states.preTrain).update({ name: rename ? `pré-train-${randomUUID()}` : `pre-train-${randomUUID()}` });
      const { whole, scoped } = await both(PROVIDER_CANDIDATES);
      expect(scoped.nodeScope).toBe('no-services');
      const plan = planProviderCleanup(scoped);
      expect(plan).toEqual(planProviderCleanup(whole));
      expect(plan.units.find((u) => u.id === `rekey-provider:${blocker}`)?.title).toMatch(/holds the name of live compute node /);
    }
  });

  it('the scoped index refuses a lookup outside the scope, and a walk', async () => {
    const { whole, scoped, index: ix } = await both(ORPHANS);
    const scope = scoped.placement?.scope;
    if (scope === undefined) throw new Error('a scoped read expected');
    const outside = scoped.placement?.providers.find((rp) => !scope.providerIds.has(rp.id) && rp.traits.includes('COMPUTE_NODE'));
    if (outside === undefined) throw new Error('a provider outside the scope expected');
    expect(() => ix.allocationsOnProvider.get(outside.id)).toThrow(/left out \(a planner bug: nothing was changed\)/);
    expect(() => ix.inventoriesOf.get(outside.id)).toThrow(/left out/);
    expect(() => ix.consumerByUuid.get(randomUUID())).toThrow(/left out/);
    expect(() => [...ix.allocationsOfConsumer]).toThrow(/walked every entry/);
    if (dialect === 'mysql') {
      // The nodes: only the candidates, their hosts' services, and their providers by uuid.
      const node = whole.computeNodes.find(
        (n) => !n.deleted && !scoped.computeNodes.some((c) => c.id === n.id && c.cellUuid === n.cellUuid) && !(scoped.placement?.providers ?? []).some((rp) => rp.uuid === n.uuid),
      );
      if (node === undefined || node.uuid === null) throw new Error('a node that is no candidate expected');
      expect(() => ix.liveNodeByUuid.get(node.uuid as string)).toThrow(/node read left out \(a planner bug: nothing was changed\)/);
      expect(() => ix.liveComputeService.get(node.cellUuid, node.host)).toThrow(/node read left out/);
      expect(() => ix.anyNodeName.has('x')).toThrow(/node read left out/);
      expect(() => ix.providerByName.get('x')).toThrow(/placement read left out/);
      expect(() => ix.providerByUuid.get(node.uuid as string)).toThrow(/placement read left out/);
    }
    // The instances: only the orphans' hosts, and by uuid only the scoped consumers.
    const wholeIx = indexSnapshot(whole);
    const live = wholeIx.liveNodes.find((n) => wholeIx.liveComputeService.get(n.cellUuid, n.host) !== undefined);
    if (live === undefined) throw new Error('a node with a live service expected');
    expect(() => instancesOn(ix, live.cellUuid, live.host, live.hypervisorHostname)).toThrow(/instance read left out \(a planner bug: nothing was changed\)/);
    expect(() => ix.instanceByUuid.get(randomUUID())).toThrow(/instance read left out/);
    expect(() => [...ix.instanceByUuid]).toThrow(/walked every entry/);
    // Inside it, answers as the whole index does.
    expect(ix.allocationsOfConsumer.get(evacuated)?.length).toBeGreaterThan(1);
    expect(ix.instanceByUuid.get(evacuated)?.uuid).toBe(evacuated);
    expect(instancesOn(ix, live.cellUuid, orphanHost, scoped.computeNodes.find((n) => n.host === orphanHost)?.hypervisorHostname ?? null).map((i) => i.uuid)).toEqual([onOrphan]);
  });

  it('an orphan whose host is not plain ASCII makes every instance read, and the plans still agree', async () => {
    await d.knex('cell1')('compute_nodes').where('host', orphanHost).update({ host: `${orphanHost}-ü` });
    await d.knex('cell1')('instances').where('uuid', onOrphan).update({ host: `${orphanHost}-ü` });
    const { whole, scoped } = await both(ORPHANS);
    expect(scoped.instanceScope).toBeUndefined();
    expect(scoped.nodeScope).toBeUndefined();
    expect(scoped.instances.length).toBe(whole.instances.length);
    const plan = planOrphanCleanup(scoped);
    expect(plan).toEqual(planOrphanCleanup(whole));
    expect(plan.refused.map((r) => r.reason).join('\n')).toContain(`but live instance ${onOrphan} is on it`);
  });
});
