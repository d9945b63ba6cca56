// The audit on small snapshots built in code: each case sets up one problem
// (or a healthy look-alike) and names the findings it must produce.
import { describe, expect, it } from 'vitest';
import { FINDING_KINDS, SUSPECT_ORPHAN_AGE, auditSnapshot, countFindings, type Finding } from '../../src/domain/audit/index.js';
import { describeComputeNodes } from '../../src/domain/node-health.js';
import type { ComputeNodeRec, HostMappingRec, MigrationRec, ProviderRec, ServiceRec } from '../../src/domain/model.js';
import { C1, C2, type Parts, ago, alloc, instance, ironicNode, ironicTruth, mapping, node, provider, providerOf, service, snapshot, u } from '../helpers/snapshot-builders.js';


/** A healthy libvirt host: service, node, provider, mapping. */
function healthyHost(host: string, cellUuid = C1): { svc: ServiceRec; cn: ComputeNodeRec; rp: ProviderRec; hm: HostMappingRec } {
  const svc = service(host, { cellUuid });
  const cn = node(host, `${host}.example.org`, { cellUuid });
  return { svc, cn, rp: providerOf(cn), hm: mapping(host, cellUuid) };
}

function kinds(findings: readonly Finding[]): string[] {
  return findings.map((f) => f.kind);
}

describe('auditSnapshot: a healthy deployment', () => {
  it('finds nothing, and counts every kind as 0', () => {
    const a = healthyHost('compute-1');
    const b = healthyHost('compute-2', C2);
    const vm = instance(u('vm1'), a.cn);
    const s = snapshot({
      hostMappings: [a.hm, b.hm],
      services: [a.svc, b.svc, service('controller', { binary: 'nova-conductor' })],
      computeNodes: [a.cn, b.cn],
      instances: [vm],
      providers: [a.rp, b.rp],
      allocations: [alloc(a.rp, vm.uuid), alloc(a.rp, vm.uuid, 'MEMORY_MB', 4096)],
    });
    const findings = auditSnapshot(s);
    expect(findings).toEqual([]);
    expect(Object.keys(countFindings(findings))).toEqual([...FINDING_KINDS]);
    expect(Object.values(countFindings(findings)).every((n) => n === 0)).toBe(true);
  });
});

describe('auditSnapshot: host mappings', () => {
  it('unmapped-service for a live nova-compute service without a mapping, its nodes included', () => {
    const a = healthyHost('compute-1');
    const s = snapshot({ services: [a.svc], computeNodes: [a.cn], providers: [a.rp] });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['unmapped-service']);
    expect(findings[0]).toMatchObject({ cellUuid: C1, objects: { host: 'compute-1', service_id: a.svc.id } });
    expect(findings[0]?.suggestion).toBe(`nova-reconcile cell_v2 discover_hosts --by-service --cell_uuid ${C1}`);
  });

  it('compares hosts as the collation does: case- and trailing-space-insensitive', () => {
    const a = healthyHost('compute-1');
    const s = snapshot({ hostMappings: [mapping('COMPUTE-1  ')], services: [a.svc], computeNodes: [a.cn], providers: [a.rp] });
    expect(auditSnapshot(s)).toEqual([]);
  });

  it('unmapped-node once per host whose nodes have no mapping and no live service', () => {
    const n1 = ironicNode('ironic-1', u('i1'));
    const n2 = ironicNode('ironic-1', u('i2'));
    const s = snapshot({ services: [service('ironic-1', { deleted: true })], computeNodes: [n1, n2], providers: [providerOf(n1), providerOf(n2)] });
    const findings = auditSnapshot(s).filter((f) => f.kind === 'unmapped-node');
    expect(findings).toHaveLength(1);
    expect(findings[0]?.objects['node_uuids']).toEqual([u('i1'), u('i2')]);
  });

  it('wrong-cell-mapping when the mapped cell does not hold the host', () => {
    const a = healthyHost('compute-1');
    const s = snapshot({ hostMappings: [mapping('compute-1', C2)], services: [a.svc], computeNodes: [a.cn], providers: [a.rp] });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['wrong-cell-mapping']);
    expect(findings[0]).toMatchObject({ cellUuid: C1, objects: { host: 'compute-1', mapped_cell_uuid: C2 } });
    // The host's live service is in C1: --remap moves the mapping in one compare-and-swap.
    expect(findings[0]?.suggestion).toBe(`nova-reconcile cell_v2 discover_hosts --remap --cell_uuid ${C1}`);
  });

  it('wrong-cell-mapping held only by a node (no live service) keeps the delete_host + discover suggestion', () => {
    const a = healthyHost('compute-1');
    const s = snapshot({ hostMappings: [mapping('compute-1', C2)], services: [], computeNodes: [a.cn], providers: [a.rp] });
    const wrong = auditSnapshot(s).filter((f) => f.kind === 'wrong-cell-mapping');
    expect(wrong).toHaveLength(1);
    expect(wrong[0]?.suggestion).toContain(`cell_v2 delete_host --cell_uuid ${C2} --host compute-1`);
  });

  it('a host that two cells hold: no finding when mapped to either, one wrong-cell-mapping per cell when mapped to neither', () => {
    const C3 = '33333333-3333-4333-8333-333333333333';
    const svc = service('compute-1');
    const inC1 = node('compute-1', 'compute-1.example.org');
    // The same host name in the other cell, held there by a live node only (its service is gone).
    const inC2 = node('Compute-1', 'compute-1.cell2.example.org', { cellUuid: C2 });
    const parts = { services: [svc], computeNodes: [inC1, inC2], providers: [providerOf(inC1), providerOf(inC2)] };
    for (const held of [C1, C2]) expect(auditSnapshot(snapshot({ ...parts, hostMappings: [mapping('compute-1', held)] })).filter((f) => f.kind === 'wrong-cell-mapping')).toEqual([]);
    const wrong = auditSnapshot(snapshot({ ...parts, hostMappings: [mapping('compute-1', C3)] })).filter((f) => f.kind === 'wrong-cell-mapping');
    expect(wrong.map((f) => [f.cellUuid, f.objects['mapped_cell_uuid']])).toEqual([
      [C1, C3],
      [C2, C3],
    ]);
    expect(wrong[0]?.suggestion).toBe(`nova-reconcile cell_v2 discover_hosts --remap --cell_uuid ${C1}`);
    expect(wrong[1]?.suggestion).toContain(`cell_v2 delete_host --cell_uuid ${C3} --host compute-1`);
  });

  it('a mapping whose host has live instances but no service or node is reported as such, never as stale', () => {
    const gone = node('gone-1', 'gone-1.example.org', { deleted: true });
    const s = snapshot({ hostMappings: [mapping('gone-1')], services: [service('gone-1', { deleted: true })], computeNodes: [gone], instances: [instance(u('vm-1'), gone)] });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['mapping-host-has-instances']);
    expect(findings[0]).toMatchObject({ cellUuid: C1, objects: { host: 'gone-1', instance_uuids: [u('vm-1')] } });
    expect(findings[0]?.suggestion).toContain('prune_host_mappings --host gone-1');
  });

  it('stale-mapping for a mapping with no live service and no live node in any cell', () => {
    const s = snapshot({
      hostMappings: [mapping('gone-1'), mapping('conductor-host')],
      services: [service('gone-1', { deleted: true }), service('conductor-host', { binary: 'nova-conductor' })],
      computeNodes: [node('gone-1', 'gone-1.example.org', { deleted: true })],
    });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['stale-mapping', 'stale-mapping']);
    expect(findings.map((f) => f.objects['host'])).toEqual(['conductor-host', 'gone-1']);
    expect(findings.map((f) => f.suggestion)).toEqual(['nova-reconcile cell_v2 prune_host_mappings --host conductor-host', 'nova-reconcile cell_v2 prune_host_mappings --host gone-1']);
  });

  it('a mapping held by a node of another cell is not stale', () => {
    const a = healthyHost('compute-1', C2);
    const s = snapshot({ hostMappings: [a.hm], services: [a.svc], computeNodes: [a.cn], providers: [a.rp] });
    expect(auditSnapshot(s)).toEqual([]);
  });
});

describe('auditSnapshot: orphan compute nodes', () => {
  it('orphan-node-service-deleted when the service is soft-deleted, or missing', () => {
    const deletedSvc = service('compute-9', { deleted: true });
    const cn9 = node('compute-9', 'compute-9.example.org');
    const cnX = node('compute-x', 'compute-x.example.org');
    const s = snapshot({
      hostMappings: [mapping('compute-9'), mapping('compute-x')],
      services: [deletedSvc],
      computeNodes: [cn9, cnX],
      providers: [providerOf(cn9), providerOf(cnX)],
    });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['orphan-node-service-deleted', 'orphan-node-service-deleted']);
    expect(findings.map((f) => [f.objects['host'], f.objects['service']])).toEqual([
      ['compute-9', 'deleted'],
      ['compute-x', 'missing'],
    ]);
    expect(findings[0]?.suggestion).toBe('nova-reconcile compute_node cleanup_orphans');
  });

  it('an orphan with a live instance points to what frees it (rebalance only moves ironic nodes)', () => {
    const cn = node('compute-9', 'compute-9.example.org');
    const rp = providerOf(cn);
    const vm = instance(u('vm9'), cn);
    const s = snapshot({ hostMappings: [mapping('compute-9')], computeNodes: [cn], instances: [vm], providers: [rp], allocations: [alloc(rp, vm.uuid)] });
    const [f] = auditSnapshot(s);
    expect(f).toMatchObject({ kind: 'orphan-node-service-deleted', objects: { instances: 1 } });
    expect(f?.suggestion).toMatch(/^start nova-compute on compute-9 /);
  });

  it('an ironic node of a deleted service is re-homed, not cleaned up: node-of-dead-service → rebalance, as Nova\'s ring owner would adopt it', () => {
    const host = 'ironic-gone';
    const n = ironicNode(host, u('adopt'), { updatedAt: ago(3600) });
    const parts: Parts = { hostMappings: [mapping(host)], services: [service(host, { deleted: true })], computeNodes: [n], providers: [providerOf(n)] };
    const findings = auditSnapshot(snapshot(parts));
    expect(kinds(findings)).toEqual(['node-of-dead-service']);
    expect(findings[0]).toMatchObject({ objects: { node_uuid: u('adopt'), service: 'deleted' }, suggestion: 'nova-reconcile compute_node rebalance' });
    // Ironic says the node is gone: then it is an orphan, for cleanup_orphans with the same truth.
    const gone = auditSnapshot(snapshot({ ...parts, ironicNodes: ironicTruth() }), { ironicNodesFile: 'my nodes.json' });
    expect(gone).toMatchObject([{ kind: 'orphan-node-service-deleted', suggestion: "nova-reconcile compute_node cleanup_orphans --ironic-nodes 'my nodes.json'" }]);
  });

  it('unmapped-node (a host without a live service) never suggests discover_hosts', () => {
    const ironic = ironicNode('ironic-gone', u('unmapped'), { updatedAt: ago(3600) });
    const libvirt = node('compute-9', 'compute-9.example.org');
    const findings = auditSnapshot(snapshot({ computeNodes: [ironic, libvirt], providers: [providerOf(ironic), providerOf(libvirt)] }));
    const unmapped = findings.filter((f) => f.kind === 'unmapped-node');
    expect(unmapped.map((f) => [f.objects['host'], f.suggestion])).toEqual([
      ['compute-9', 'nova-reconcile compute_node cleanup_orphans'],
      ['ironic-gone', 'nova-reconcile compute_node rebalance'],
    ]);
  });

  const host = 'ironic-compute-0';
  const gone = ironicNode(host, u('gone'), { updatedAt: ago(3 * 86400) });
  const fresh = ironicNode(host, u('fresh'), { updatedAt: ago(3600) });
  const idle = ironicNode(host, u('idle'), { updatedAt: ago(SUSPECT_ORPHAN_AGE - 60) });
  const base: Parts = {
    hostMappings: [mapping(host)],
    services: [service(host)],
    computeNodes: [gone, fresh, idle],
    providers: [providerOf(gone), providerOf(fresh), providerOf(idle)],
  };

  it('with ironic truth: orphan-node-ironic-deleted for a node ironic does not list, and no suspects', () => {
    const findings = auditSnapshot(snapshot({ ...base, ironicNodes: ironicTruth(u('fresh'), u('idle')) }), { ironicNodesFile: 'nodes.json' });
    expect(kinds(findings)).toEqual(['orphan-node-ironic-deleted']);
    expect(findings[0]).toMatchObject({ objects: { node_uuid: u('gone'), host }, suggestion: 'nova-reconcile compute_node cleanup_orphans --ironic-nodes nodes.json' });
  });

  it('without ironic truth: suspect-orphan-node only for a node saved more than 24 h before the last heartbeat', () => {
    const findings = auditSnapshot(snapshot(base));
    expect(kinds(findings)).toEqual(['suspect-orphan-node']);
    expect(findings[0]?.objects['node_uuid']).toBe(u('gone'));
    expect(findings[0]?.summary).toContain('3 days');
  });

  it('a libvirt node is never a suspect, however old its updated_at', () => {
    const cn = node('compute-1', 'compute-1.example.org', { updatedAt: ago(30 * 86400) });
    const s = snapshot({ hostMappings: [mapping('compute-1')], services: [service('compute-1')], computeNodes: [cn], providers: [providerOf(cn)] });
    expect(auditSnapshot(s)).toEqual([]);
  });
});

describe('auditSnapshot: an instance and its node are matched on cell, host and node as Nova matches them', () => {
  it('instance-without-allocation for an instance on its node (host and node in another case, trailing spaces), none for one whose host is another', () => {
    const n = ironicNode('ironic-b', u('x'));
    const rp = providerOf(n);
    const onIt = instance(u('vm-on'), n, { host: 'IRONIC-B ', node: u('x').toUpperCase() });
    const elsewhere = instance(u('vm-off'), n, { host: 'ironic-a' });
    const inOtherCell = instance(u('vm-c2'), n, { cellUuid: C2 });
    const s = snapshot({ hostMappings: [mapping('ironic-b')], services: [service('ironic-b')], computeNodes: [n], providers: [rp], instances: [onIt, elsewhere, inOtherCell] });
    const missing = auditSnapshot(s).filter((f) => f.kind === 'instance-without-allocation');
    expect(missing.map((f) => f.objects['instance_uuid'])).toEqual([u('vm-on')]);
    expect(missing[0]?.objects).toMatchObject({ node_uuid: u('x'), provider_uuid: rp.uuid });
  });
});

describe('auditSnapshot: duplicates and dead services', () => {
  it('duplicate-compute-node when two live nodes of a cell claim one hypervisor_hostname', () => {
    const a = ironicNode('ironic-a', u('dup'), { id: 100 });
    const b = ironicNode('ironic-b', u('dup'), { id: 101, uuid: u('dup2') });
    const s = snapshot({
      hostMappings: [mapping('ironic-a'), mapping('ironic-b')],
      services: [service('ironic-a'), service('ironic-b')],
      computeNodes: [b, a],
      providers: [providerOf(a)],
    });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toContain('duplicate-compute-node');
    const dup = findings.find((f) => f.kind === 'duplicate-compute-node');
    expect(dup?.objects).toMatchObject({ hypervisor_hostname: u('dup'), node_uuids: [u('dup'), u('dup2')], hosts: ['ironic-a', 'ironic-b'] });
  });

  it('duplicate-compute-node once per cell, names compared case-insensitively, a name held once per cell is no duplicate', () => {
    const c1a = ironicNode('ironic-a', u('dup'), { id: 200 });
    const c1b = ironicNode('ironic-b', u('dup').toUpperCase(), { id: 201, uuid: u('dup-b') });
    const c2a = ironicNode('ironic-c', u('dup'), { id: 202, uuid: u('dup-c'), cellUuid: C2 });
    const c2b = ironicNode('ironic-d', u('dup'), { id: 203, uuid: u('dup-d'), cellUuid: C2 });
    const once = ironicNode('ironic-e', u('once'), { id: 204 });
    const alsoOnce = ironicNode('ironic-f', u('once'), { id: 205, uuid: u('once-f'), cellUuid: C2 });
    const nodes = [c2b, c1b, once, c2a, c1a, alsoOnce];
    const s = snapshot({
      hostMappings: nodes.map((n) => mapping(n.host as string, n.cellUuid)),
      services: nodes.map((n) => service(n.host as string, { cellUuid: n.cellUuid })),
      computeNodes: nodes,
      providers: [providerOf(c1a), providerOf(once)],
    });
    const dups = auditSnapshot(s).filter((f) => f.kind === 'duplicate-compute-node');
    expect(dups.map((f) => [f.cellUuid, f.objects['node_uuids'], f.objects['hosts']])).toEqual([
      [C1, [u('dup'), u('dup-b')], ['ironic-a', 'ironic-b']],
      [C2, [u('dup-c'), u('dup-d')], ['ironic-c', 'ironic-d']],
    ]);
  });

  it.each([
    ['forced down', { forcedDown: true }],
    ['not reporting for longer than service_down_time', { lastSeenUp: ago(600) }],
  ])('node-of-dead-service when its service is %s', (_name, over) => {
    const a = healthyHost('compute-1');
    const s = snapshot({ hostMappings: [a.hm], services: [{ ...a.svc, ...over }], computeNodes: [a.cn], providers: [a.rp] });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['node-of-dead-service']);
    expect(findings[0]?.suggestion).toContain('openstack compute service delete');
  });

  it('a disabled service that still reports is alive', () => {
    const a = healthyHost('compute-1');
    const s = snapshot({ hostMappings: [a.hm], services: [{ ...a.svc, disabled: true }], computeNodes: [a.cn], providers: [a.rp] });
    expect(auditSnapshot(s)).toEqual([]);
  });
});

describe('auditSnapshot: placement', () => {
  it('node-without-provider, unless the node is an orphan (that finding covers it)', () => {
    const a = healthyHost('compute-1');
    const orphan = node('compute-9', 'compute-9.example.org');
    const s = snapshot({ hostMappings: [a.hm, mapping('compute-9')], services: [a.svc], computeNodes: [a.cn, orphan], providers: [] });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['orphan-node-service-deleted', 'node-without-provider']);
    expect(findings[1]).toMatchObject({ objects: { node_uuid: a.cn.uuid, blocking_provider_uuid: null } });
    expect(findings[1]?.suggestion).toContain('restart nova-compute on compute-1');
  });

  it('no placement findings at all when placement was not read', () => {
    const a = healthyHost('compute-1');
    const s = snapshot({ hostMappings: [a.hm], services: [a.svc], computeNodes: [a.cn], placement: false });
    expect(auditSnapshot(s)).toEqual([]);
  });

  it('provider-without-node for a COMPUTE_NODE provider or a deleted node uuid; never for sharing, nested or foreign providers', () => {
    const a = healthyHost('compute-1');
    const deletedNode = node('compute-1', 'old-name', { uuid: u('old'), deleted: true });
    const byTrait = provider(u('trait'), 'leftover');
    const byDeletedUuid = provider(u('old'), 'old-name', { traits: [] });
    const sharing = provider(u('share'), 'nfs-pool', { traits: ['COMPUTE_NODE', 'MISC_SHARES_VIA_AGGREGATE'] });
    const foreign = provider(u('agent'), 'neutron-agent', { traits: [] });
    const child = provider(u('child'), 'compute-1.example.org:pf0', { parentId: a.rp.id, rootId: a.rp.id });
    const s = snapshot({
      hostMappings: [a.hm],
      services: [a.svc],
      computeNodes: [a.cn, deletedNode],
      providers: [a.rp, byTrait, byDeletedUuid, sharing, foreign, child],
    });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['provider-without-node', 'provider-without-node']);
    expect(findings.map((f) => f.objects['provider_uuid']).sort()).toEqual([u('old'), u('trait')].sort());
    // The provider of a deleted node is attributed to that node's cell; a trait-only one to no cell.
    expect(findings.find((f) => f.objects['provider_uuid'] === u('old'))?.cellUuid).toBe(C1);
    expect(findings.find((f) => f.objects['provider_uuid'] === u('trait'))?.cellUuid).toBeUndefined();
  });

  it('the provider of a soft-deleted ironic node that comes back (bug 1839560) is not offered cleanup_providers', () => {
    const host = 'ironic-0';
    const back = ironicNode(host, u('back'), { deleted: true });
    const rp = providerOf(back);
    const vm = instance(u('vm-back'), back);
    const parts: Parts = { hostMappings: [mapping(host)], services: [service(host)], computeNodes: [back], instances: [vm], providers: [rp], allocations: [alloc(rp, vm.uuid, 'CUSTOM_BAREMETAL', 1)] };
    const findings = auditSnapshot(snapshot(parts));
    expect([...kinds(findings)].sort()).toEqual(['provider-without-node', 'soft-deleted-node-with-provider', 'stale-allocation']);
    for (const f of findings) {
      expect(f.suggestion).not.toContain('cleanup_providers');
      expect(f.suggestion).toContain(`nova-reconcile compute_node restore --uuid ${u('back')}`);
    }
    // An orphaned consumer there is removed once the node is back (before, nova's audit would call the instance's allocation orphaned too).
    const withOrphan = auditSnapshot(snapshot({ ...parts, allocations: [...(parts.allocations ?? []), alloc(rp, u('nobody'), 'CUSTOM_BAREMETAL', 1)] }));
    expect(withOrphan.find((f) => f.objects['consumer_uuid'] === u('nobody'))?.suggestion).toBe(
      `nova-reconcile compute_node restore --uuid ${u('back')} && nova-reconcile placement audit --all-resource-classes --resource_provider ${u('back')} --delete`,
    );
    // Ironic no longer lists the node, or a live row took its name: then the provider is stale for good.
    expect(auditSnapshot(snapshot({ ...parts, ironicNodes: ironicTruth() }), { ironicNodesFile: 'n.json' }).find((f) => f.kind === 'provider-without-node')?.suggestion).toBe(
      'nova-reconcile placement cleanup_providers',
    );
  });

  it('node-without-provider: a name held by a live duplicate (ironic rebalance) points at compute_node rebalance', () => {
    const svc0 = service('ironic-0');
    const svc1 = service('ironic-1');
    const canonical = node('ironic-0', 'node-a', { uuid: u('a') });
    const duplicate = node('ironic-1', 'node-a', { uuid: u('b') });
    const s = snapshot({ hostMappings: [mapping('ironic-0'), mapping('ironic-1')], services: [svc0, svc1], computeNodes: [canonical, duplicate], providers: [providerOf(canonical)] });
    const findings = auditSnapshot(s);
    const blocked = findings.find((f) => f.kind === 'node-without-provider');
    expect(blocked).toMatchObject({ objects: { node_uuid: u('b'), blocking_provider_uuid: u('a') }, suggestion: 'nova-reconcile compute_node rebalance' });
    expect(findings.find((f) => f.kind === 'provider-name-conflict')).toMatchObject({ objects: { provider_is_stale: false }, suggestion: 'nova-reconcile compute_node rebalance' });
  });

  it('provider-name-conflict: a stale provider holds the name of a live node with another uuid (the 409)', () => {
    const svc = service('compute-7');
    const live = node('compute-7', 'compute-7.example.org', { uuid: u('new') });
    const dead = node('compute-7', 'compute-7.example.org', { uuid: u('old'), deleted: true });
    const stale = provider(u('old'), 'COMPUTE-7.example.org');
    const s = snapshot({ hostMappings: [mapping('compute-7')], services: [svc], computeNodes: [live, dead], providers: [stale] });
    const findings = auditSnapshot(s);
    expect(kinds(findings)).toEqual(['node-without-provider', 'provider-without-node', 'provider-name-conflict']);
    expect(findings[0]).toMatchObject({ objects: { blocking_provider_uuid: u('old') }, suggestion: 'nova-reconcile placement cleanup_providers' });
    expect(findings[2]).toMatchObject({ cellUuid: C1, objects: { provider_uuid: u('old'), node_uuid: u('new'), provider_is_stale: true } });
  });

  describe('stale-allocation classes', () => {
    const svc7 = service('compute-7');
    const live7 = node('compute-7', 'compute-7.example.org', { uuid: u('new7') });
    const dead7 = node('compute-7', 'compute-7.example.org', { uuid: u('old7'), deleted: true });
    const stale = provider(u('old7'), 'compute-7.example.org');
    const other = healthyHost('compute-2');
    const onNode = instance(u('here'), live7);
    const evacuated = instance(u('evac'), other.cn);
    const migration: MigrationRec = {
      cellUuid: C1,
      id: 900,
      uuid: u('migr'),
      instanceUuid: evacuated.uuid,
      sourceCompute: 'compute-7',
      destCompute: 'compute-2',
      sourceNode: 'compute-7.example.org',
      destNode: 'compute-2.example.org',
      status: 'migrating',
      migrationType: 'migration',
    };
    const s = snapshot({
      hostMappings: [mapping('compute-7'), other.hm],
      services: [svc7, other.svc],
      computeNodes: [live7, dead7, other.cn],
      instances: [onNode, evacuated],
      migrations: [migration],
      providers: [stale, other.rp],
      allocations: [
        alloc(stale, onNode.uuid),
        alloc(stale, onNode.uuid, 'MEMORY_MB', 4096),
        alloc(stale, evacuated.uuid),
        alloc(other.rp, evacuated.uuid),
        alloc(stale, migration.uuid ?? ''),
        alloc(stale, u('ghost'), 'CUSTOM_BAREMETAL_GOLD', 1),
      ],
    });
    const stales = auditSnapshot(s).filter((f) => f.kind === 'stale-allocation');

    it('classifies each consumer on the stale provider once', () => {
      const byConsumer = Object.fromEntries(stales.map((f) => [f.objects['consumer_uuid'] as string, f.objects['class']]));
      expect(byConsumer).toEqual({
        [u('here')]: 'live-instance-on-node',
        [u('evac')]: 'evacuation-leftover',
        [u('migr')]: 'active-migration',
        [u('ghost')]: 'orphaned',
      });
    });

    it('sums resources per consumer and points to the fix', () => {
      const here = stales.find((f) => f.objects['class'] === 'live-instance-on-node');
      expect(here?.objects).toMatchObject({ resources: 'VCPU=2, MEMORY_MB=4096', live_node_uuid: u('new7'), provider_uuid: u('old7') });
      // The live node has no provider yet, so the stale one is re-keyed to it.
      expect(here?.suggestion).toBe('nova-reconcile placement cleanup_providers');
      expect(stales.find((f) => f.objects['class'] === 'active-migration')?.suggestion).toContain(`let migration ${u('migr')} finish`);
      expect(stales.find((f) => f.objects['class'] === 'orphaned')?.objects['resources']).toBe('CUSTOM_BAREMETAL_GOLD=1');
    });

    it('without the deleted node row, an instance whose node is the provider name is on this node', () => {
      const s2 = snapshot({
        hostMappings: [mapping('compute-7')],
        services: [svc7],
        computeNodes: [live7],
        instances: [onNode],
        providers: [stale],
        allocations: [alloc(stale, onNode.uuid)],
      });
      expect(auditSnapshot(s2).find((f) => f.kind === 'stale-allocation')?.objects['class']).toBe('live-instance-on-node');
    });
  });

  it("allocation-on-other-node: an instance with allocations on another live node's provider", () => {
    const a = healthyHost('compute-1');
    const b = healthyHost('compute-2');
    const sharing = provider(u('share'), 'nfs', { traits: ['MISC_SHARES_VIA_AGGREGATE'] });
    const vm = instance(u('vm1'), a.cn);
    const quiet = instance(u('vm2'), a.cn);
    const parts: Parts = {
      hostMappings: [a.hm, b.hm],
      services: [a.svc, b.svc],
      computeNodes: [a.cn, b.cn],
      instances: [vm, quiet],
      providers: [a.rp, b.rp, sharing],
      allocations: [alloc(a.rp, vm.uuid), alloc(b.rp, vm.uuid), alloc(a.rp, quiet.uuid), alloc(sharing, quiet.uuid, 'DISK_GB', 20)],
    };
    const findings = auditSnapshot(snapshot(parts));
    expect(kinds(findings)).toEqual(['allocation-on-other-node']);
    expect(findings[0]).toMatchObject({ objects: { instance_uuid: vm.uuid, node_uuid: a.cn.uuid, provider_uuids: [b.cn.uuid] } });
    // The tool's own fix: nova's orphaned allocation on compute-2's provider, removed by placement audit --delete.
    expect(findings[0]?.suggestion).toBe(`nova-reconcile placement audit --resource_provider ${b.cn.uuid} --delete`);
    // Nothing on its own node: the allocations must be rewritten there (Placement API: heal_allocations --force).
    const lost = auditSnapshot(snapshot({ ...parts, allocations: [alloc(b.rp, vm.uuid), alloc(a.rp, quiet.uuid)] }));
    expect(lost.find((f) => f.kind === 'allocation-on-other-node')?.suggestion).toBe(`nova-manage placement heal_allocations --instance ${vm.uuid} --force`);
  });

  it('an instance in the middle of a migration may hold allocations on both nodes', () => {
    const a = healthyHost('compute-1');
    const b = healthyHost('compute-2');
    const vm = instance(u('vm1'), a.cn);
    const migration: MigrationRec = {
      cellUuid: C1,
      id: 901,
      uuid: u('mig1'),
      instanceUuid: vm.uuid,
      sourceCompute: 'compute-1',
      destCompute: 'compute-2',
      sourceNode: a.cn.hypervisorHostname,
      destNode: b.cn.hypervisorHostname,
      status: 'post-migrating',
      migrationType: 'live-migration',
    };
    const s = snapshot({
      hostMappings: [a.hm, b.hm],
      services: [a.svc, b.svc],
      computeNodes: [a.cn, b.cn],
      instances: [vm],
      migrations: [migration],
      providers: [a.rp, b.rp],
      allocations: [alloc(a.rp, migration.uuid ?? ''), alloc(b.rp, vm.uuid)],
    });
    expect(auditSnapshot(s)).toEqual([]);
  });
});

describe('auditSnapshot: order and scope', () => {
  const a = healthyHost('compute-1');
  const b = healthyHost('compute-5', C2);
  const s = snapshot({
    hostMappings: [mapping('gone', C2)],
    services: [b.svc, a.svc],
    computeNodes: [b.cn, a.cn],
    providers: [a.rp, b.rp, provider(u('lone'), 'lone')],
  });

  it('lists findings by kind, then cell, then summary, whatever the input order', () => {
    const findings = auditSnapshot(s);
    expect(findings.map((f) => [f.kind, f.cellUuid])).toEqual([
      ['unmapped-service', C1],
      ['unmapped-service', C2],
      ['stale-mapping', C2],
      ['provider-without-node', undefined],
    ]);
    expect(auditSnapshot({ ...s, services: [...s.services].reverse(), computeNodes: [...s.computeNodes].reverse() })).toEqual(findings);
  });

  it('--cell keeps only that cell\'s findings', () => {
    expect(auditSnapshot(s, { cellUuid: C2 }).map((f) => f.kind)).toEqual(['unmapped-service', 'stale-mapping']);
  });
});

describe('describeComputeNodes', () => {
  it("gives each live node its own health: service state, mapping, provider, allocations, instances, ironic presence", () => {
    const host = 'ironic-compute-0';
    const gone = ironicNode(host, u('gone'));
    const kept = ironicNode(host, u('kept'));
    const rpKept = providerOf(kept);
    const vm = instance(u('bm1'), kept);
    const downSvc = service('compute-3', { lastSeenUp: ago(3600) });
    const down = node('compute-3', 'compute-3.example.org');
    const orphan = node('compute-9', 'compute-9.example.org');
    const s = snapshot({
      hostMappings: [mapping(host), mapping('compute-3', C2)],
      services: [service(host, { disabled: true }), downSvc, service('compute-9', { deleted: true })],
      computeNodes: [gone, kept, down, orphan, node('compute-4', 'old', { deleted: true })],
      instances: [vm],
      providers: [providerOf(gone), rpKept, providerOf(down)],
      allocations: [alloc(rpKept, vm.uuid, 'CUSTOM_BAREMETAL_GOLD', 1)],
      ironicNodes: ironicTruth(u('kept')),
    });
    const rows = describeComputeNodes(s).map((h) => [h.node.hypervisorHostname, h.service, h.mapped, h.provider, h.allocations, h.instances, h.ironicNode]);
    expect(rows).toEqual([
      [u('gone'), 'disabled', 'yes', 'yes', 0, 0, 'no'],
      [u('kept'), 'disabled', 'yes', 'yes', 1, 1, 'yes'],
      ['compute-3.example.org', 'down', 'other-cell', 'yes', 0, 0, 'n/a'],
      ['compute-9.example.org', 'deleted', 'no', 'no', 0, 0, 'n/a'],
    ]);
    expect(describeComputeNodes(s, { host: 'IRONIC-COMPUTE-0 ' })).toHaveLength(2);
    const unknown = describeComputeNodes({ ...s, placement: undefined, ironicNodes: undefined }, { host })[0];
    expect(unknown).toMatchObject({ provider: 'unknown', allocations: null, ironicNode: 'unknown' });
  });
});
