// Conductor-group partitions: the [nova_reconcile] ironic_partitions format,
// which nodes no nova-compute serves (audit, cleanup_orphans), and one hash
// ring per partition in rebalance, checked against the owners the real tooz
// computed for each partition's members (test/fixtures/hashring-vectors.json,
// scripts/gen-tooz-vectors.py).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePartitions } from '../../src/config/ironic-partitions.js';
import { loadConfig } from '../../src/config/load-config.js';
import { auditSnapshot } from '../../src/domain/audit/index.js';
import { buildHashRing, ringOwner } from '../../src/domain/hash-ring.js';
import type { ComputeNodeRec, IronicNodeRec, ServiceRec, Snapshot } from '../../src/domain/model.js';
import { planOrphanCleanup } from '../../src/domain/orphan-nodes.js';
import { unservedGroup, type IronicPartition } from '../../src/domain/partitions.js';
import { planRebalance } from '../../src/domain/rebalance/index.js';
import { C1, NOW, ironicNode, service } from '../helpers/snapshot-builders.js';

interface Vectors {
  readonly cases: ReadonlyArray<{ readonly hosts: readonly string[]; readonly members: readonly string[]; readonly lookups: ReadonlyArray<readonly [string, string]> }>;
}
const vectors = JSON.parse(readFileSync(new URL('../fixtures/hashring-vectors.json', import.meta.url), 'utf8')) as Vectors;

const INSTANCE = '5e0a7c3d-91b4-4f6a-8d2e-c7b1f0a93e58';
function listed(uuid: string, group: string | null): IronicNodeRec {
  return { uuid, instanceUuid: null, maintenance: false, provisionState: 'active', conductorGroup: group };
}
function snapshot(parts: { services: ServiceRec[]; nodes: ComputeNodeRec[]; ironic?: IronicNodeRec[]; partitions?: IronicPartition[]; instanceOn?: ComputeNodeRec }): Snapshot {
  return {
    takenAt: NOW,
    serviceDownTime: 60,
    cells: [{ id: 2, uuid: C1, name: 'cell1', isCell0: false }],
    hostMappings: parts.services.map((s, i) => ({ id: i + 1, host: s.host ?? '', cellUuid: C1 })),
    services: parts.services,
    computeNodes: parts.nodes,
    instances: parts.instanceOn === undefined ? [] : [{ cellUuid: C1, id: 9, uuid: INSTANCE, host: parts.instanceOn.host, node: parts.instanceOn.hypervisorHostname, vmState: 'active', taskState: null }],
    migrations: [],
    placement: { providers: [], inventories: [], allocations: [], consumers: [] },
    ironicNodes: parts.ironic,
    ...(parts.ironic === undefined ? {} : { ironicOrigin: { kind: 'api' as const, label: 'the Ironic API at http://ironic:6385', location: 'http://ironic:6385', nodes: parts.ironic.length } }),
    ...(parts.partitions === undefined ? {} : { ironicPartitions: parts.partitions }),
  };
}

describe('[nova_reconcile] ironic_partitions', () => {
  it('parses "GROUP: HOST, HOST; ..." with "*" for computes without partition_key, lower-casing as Nova does', () => {
    expect(parsePartitions('cg-a: Compute-A1, compute-a2; cg-b:compute-b1 compute-b2 ;*: compute-0;')).toEqual({
      partitions: [
        { group: 'cg-a', hosts: ['compute-a1', 'compute-a2'] },
        { group: 'cg-b', hosts: ['compute-b1', 'compute-b2'] },
        { group: '*', hosts: ['compute-0'] },
      ],
      problems: [],
    });
  });
  it('reports every bad entry', () => {
    expect(parsePartitions('cg-a compute-1; cg b: h; cg-c: ; cg-d: h1; cg-d: h2').problems).toEqual([
      '"cg-a compute-1" is not GROUP: HOST,HOST',
      '"cg b" is not a conductor group name',
      'conductor group "cg-c" names no host',
      'conductor group "cg-d" is given twice',
    ]);
  });
  it('a node is unserved only when partitions are described, none is "*", and its group is known and not among them', () => {
    const parts: IronicPartition[] = [{ group: 'cg-a', hosts: ['h1'] }];
    expect(unservedGroup(parts, listed('u', 'cg-x'))).toBe('cg-x');
    expect(unservedGroup(parts, listed('u', 'CG-A'))).toBeUndefined();
    expect(unservedGroup(parts, listed('u', ''))).toBe('');
    expect(unservedGroup(parts, listed('u', null))).toBeUndefined();
    expect(unservedGroup(undefined, listed('u', 'cg-x'))).toBeUndefined();
    expect(unservedGroup([...parts, { group: '*', hosts: ['h0'] }], listed('u', 'cg-x'))).toBeUndefined();
  });
});

describe('a node in a conductor group no nova-compute serves', () => {
  const A = 'aaaaaaaa-0000-4000-8000-000000000001';
  const B = 'aaaaaaaa-0000-4000-8000-000000000002';
  const partitions: IronicPartition[] = [{ group: 'cg-a', hosts: ['ironic-a'] }];
  const world = (withInstance: boolean): Snapshot => {
    const nodes = [ironicNode('ironic-a', A), ironicNode('ironic-a', B)];
    return snapshot({ services: [service('ironic-a')], nodes, ironic: [listed(A, 'cg-a'), listed(B, 'cg-x')], partitions, ...(withInstance ? { instanceOn: nodes[1] } : {}) });
  };

  // The nodes have no provider here; that finding is not the subject.
  const audit = (s: Snapshot) => auditSnapshot(s, {}).filter((f) => f.kind !== 'node-without-provider');

  it('audit: ironic-node-unmanaged (not deleted), naming the group', () => {
    const findings = audit(world(false));
    expect(findings.map((f) => [f.kind, f.objects['node_uuid']])).toEqual([['ironic-node-unmanaged', B]]);
    expect(findings[0]?.summary).toContain('is unmanaged, not deleted');
    expect(findings[0]?.summary).toContain('conductor group "cg-x", which no nova-compute serves');
    expect(findings[0]?.summary).not.toContain('no longer exists');
    expect(findings[0]?.objects['conductor_group']).toBe('cg-x');
    expect(findings[0]?.suggestion).toBe('nova-reconcile compute_node cleanup_orphans');
  });

  it('cleanup_orphans removes it when it has no instance', () => {
    const plan = planOrphanCleanup(world(false));
    expect(plan.units.map((u) => u.changes.map((c) => c.change.kind))).toEqual([['soft-delete-compute-node']]);
    expect(plan.units[0]?.changes[0]?.reason).toContain('unmanaged, not deleted');
  });

  it('cleanup_orphans refuses it with an instance and points to compute_node move', () => {
    const plan = planOrphanCleanup(world(true));
    expect(plan.units).toEqual([]);
    expect(plan.refused).toHaveLength(1);
    expect(plan.refused[0]?.suggestion).toContain(`nova-reconcile compute_node move --node ${B} --to-host HOST`);
    expect(audit(world(true))[0]?.suggestion).toContain('compute_node move');
  });

  it('without partitions nothing is unmanaged', () => {
    const s = world(false);
    const { ironicPartitions: _dropped, ...without } = s;
    expect(audit(without)).toEqual([]);
  });
});

describe('rebalance: one hash ring per partition, as tooz computes it', () => {
  // Two partitions whose live members are two of tooz's vector cases.
  const caseA = vectors.cases[1];
  const caseB = vectors.cases[2];
  if (caseA === undefined || caseB === undefined) throw new Error('fixture changed');
  const partitions: IronicPartition[] = [
    { group: 'cg-a', hosts: ['dead-a', ...caseA.members] },
    { group: 'cg-b', hosts: ['dead-b', ...caseB.members] },
  ];
  const uuids = caseA.lookups.slice(0, 40).map(([u]) => u);

  const world = (withGroups: boolean): Snapshot => {
    const services = [service('dead-a', { forcedDown: true }), service('dead-b', { forcedDown: true }), ...caseA.hosts.map((h) => service(h)), ...caseB.hosts.map((h) => service(h))];
    const nodes = uuids.map((u, i) => ironicNode(i % 2 === 0 ? 'dead-a' : 'dead-b', u));
    return snapshot({ services, nodes, partitions, ...(withGroups ? { ironic: uuids.map((u, i) => listed(u, i % 2 === 0 ? 'cg-a' : 'cg-b')) } : {}) });
  };

  for (const withGroups of [true, false]) {
    it(`re-homes each dead host's nodes to tooz's owner within its partition (${withGroups ? 'groups from Ironic' : 'partition of the host'})`, () => {
      const plan = planRebalance(world(withGroups), { includeDown: false });
      expect(plan.refused).toEqual([]);
      const moves = new Map(plan.units.flatMap((u) => u.changes.map((c) => c.change)).flatMap((c) => (c.kind === 'rehome-compute-node' ? [[c.hypervisorHostname, c.toHost.toLowerCase()] as const] : [])));
      expect(moves.size).toBe(uuids.length);
      const ownerA = new Map(caseA.lookups);
      const ownerB = new Map(caseB.lookups);
      uuids.forEach((u, i) => expect(moves.get(u), u).toBe(i % 2 === 0 ? ownerA.get(u) : ownerB.get(u)));
    });
  }

  it('one global ring would pick other owners (the bug this fixes)', () => {
    const global = buildHashRing([...caseA.members, ...caseB.members]);
    const wrong = uuids.filter((u, i) => ringOwner(global, u) !== new Map(i % 2 === 0 ? caseA.lookups : caseB.lookups).get(u));
    expect(wrong.length).toBeGreaterThan(0);
  });

  it('refuses a node whose partition is not known rather than guessing', () => {
    const s = world(false);
    const plan = planRebalance({ ...s, ironicPartitions: [{ group: 'cg-a', hosts: caseA.members }] }, { includeDown: false });
    expect(plan.units).toEqual([]);
    expect(plan.refused[0]?.reason).toContain('which partition\'s ring owns it is not known');
  });
});

describe('partitions and [ironic] from nova.conf', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nrc-part-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const load = (text: string) => {
    const path = join(dir, 'nova.conf');
    writeFileSync(path, text);
    return loadConfig({ sources: [{ kind: 'file', path }], env: {}, home: dir, searchRoots: [], isWritableDir: () => false });
  };

  it("takes this nova.conf's own partition_key/peer_list beside [nova_reconcile] ironic_partitions", () => {
    const c = load('[ironic]\nauth_type = none\nendpoint_override = http://ironic:6385/\npartition_key = CG-A\npeer_list = Compute-A1,compute-a2\n[nova_reconcile]\nironic_partitions = cg-b: compute-b1\n');
    expect(c.reconcile.ironicPartitions).toEqual([
      { group: 'cg-b', hosts: ['compute-b1'] },
      { group: 'cg-a', hosts: ['compute-a1', 'compute-a2'] },
    ]);
    expect(c.ironic).toMatchObject({ auth: { type: 'none' }, endpointOverride: 'http://ironic:6385', apiMaxRetries: 60, apiRetryInterval: 2, validInterfaces: ['internal', 'public'] });
  });

  it('reads [ironic] conductor_group (Nova 28.0.0+) as partition_key, the new name winning in a file that sets both (oslo.config deprecated_name)', () => {
    const both = (first: string, second: string): string => `[ironic]\nauth_type = none\nendpoint_override = http://ironic:6385/\n${first}\n${second}\npeer_list = Compute-A1,compute-a2\n`;
    const expected = [{ group: 'cg-a', hosts: ['compute-a1', 'compute-a2'] }];
    expect(load(both('conductor_group = CG-A', '')).reconcile.ironicPartitions).toEqual(expected);
    expect(load(both('partition_key = CG-A', '')).reconcile.ironicPartitions).toEqual(expected);
    expect(load(both('conductor_group = CG-A', 'partition_key = other')).reconcile.ironicPartitions).toEqual(expected);
    expect(load(both('partition_key = other', 'conductor_group = CG-A')).reconcile.ironicPartitions).toEqual(expected);
    expect(load(both('conductor_group = CG-A', '')).ironic).toMatchObject({ partitionKey: 'CG-A' });
    // keystoneauth's and Nova's older names of the endpoint and the auth type.
    expect(load('[ironic]\nauth_plugin = none\napi_endpoint = http://old:6385/\n').ironic).toMatchObject({ auth: { type: 'none' }, endpointOverride: 'http://old:6385' });
    expect(load('[ironic]\nauth_type = none\napi_endpoint = http://old:6385/\nendpoint_override = http://new:6385/\n').ironic).toMatchObject({ endpointOverride: 'http://new:6385' });
  });

  it('reports a conflict, a partition_key without peer_list, and a bad entry, all at once, to whatever reads them', () => {
    const bad = load('[ironic]\npartition_key = cg-a\n[nova_reconcile]\nironic_partitions = cg-a: x; nope\n');
    for (const read of [() => bad.reconcile.ironicPartitions, () => bad.reconcile.ironicShard, () => bad.ironic]) {
      expect(read).toThrow(/2 invalid configuration values: .*"nope" is not GROUP: HOST,HOST; \[ironic\] conductor_group \(partition_key\) needs peer_list/);
    }
    expect(() => load('[ironic]\nauth_type = none\nendpoint_override = http://i:6385\npartition_key = cg-a\npeer_list = h2\n[nova_reconcile]\nironic_partitions = cg-a: h1\n').reconcile.ironicPartitions).toThrow(
      'gives conductor group "cg-a" other hosts than [ironic] peer_list',
    );
  });

  it('bad Ironic settings fail only what reads them: the rest of the configuration is read as usual', () => {
    const c = load('[DEFAULT]\nservice_down_time = 120\n[database]\nconnection = sqlite:////tmp/x.db\n[ironic]\nauth_type = v3oidcpassword\nshard = a b\n');
    expect(c.databaseConnection).toBe('sqlite:////tmp/x.db');
    expect(c.serviceDownTime).toBe(120);
    expect(c.reconcile.cellConcurrency).toBe(4);
    expect(() => c.ironic).toThrow(/2 invalid configuration values: \[ironic\] auth_type = v3oidcpassword is not supported .*; invalid value for \[ironic\] shard/);
    expect(() => c.reconcile.ironicShard).toThrow('[ironic] auth_type = v3oidcpassword is not supported');
    // A bad value elsewhere still fails the load itself, and says nothing of [ironic].
    expect(() => load('[DEFAULT]\nservice_down_time = soon\n[ironic]\nshard = a b\n')).toThrow(/^invalid value for \[DEFAULT\] service_down_time/);
  });

  it('[ironic] shard (Nova 2024.1) with [DEFAULT] host, lower-cased; without host the host is unknown, not an error; a bad shard is', () => {
    expect(load('[DEFAULT]\nhost = Ironic-Compute-B\n[ironic]\nshard = s1\n').reconcile.ironicShard).toEqual({ shard: 's1', host: 'ironic-compute-b' });
    expect(load('[ironic]\nshard = s1\n').reconcile.ironicShard).toEqual({ shard: 's1', host: undefined });
    expect(load('[ironic]\nauth_type = none\nendpoint_override = http://i:6385\n').reconcile.ironicShard).toBeUndefined();
    expect(() => load('[ironic]\nshard = a b\n').reconcile.ironicShard).toThrow('invalid value for [ironic] shard: "a b" is not [a-zA-Z0-9_.-]+');
  });

  it('[ironic] is unset without auth_type or endpoint_override; a password auth without password is a config error', () => {
    expect(load('[ironic]\napi_max_retries = 3\n').ironic).toBeUndefined();
    expect(() => load('[ironic]\nauth_type = password\nauth_url = http://k:5000\nusername = u\n').ironic).toThrow('[ironic] auth_type = password needs password');
  });
});
