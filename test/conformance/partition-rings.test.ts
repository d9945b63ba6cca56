// One hash ring per conductor-group partition (compute_node rebalance),
// compared with the real tooz HashRing that Nova's ironic driver builds from
// each partition's peer_list (python3-tooz, installed by
// scripts/install-real-nova.sh). Several partitions, nodes of dead hosts in
// each: every node must land on tooz's owner within its own partition.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { ComputeNodeRec, IronicNodeRec, ServiceRec, Snapshot } from '../../src/domain/model.js';
import type { IronicPartition } from '../../src/domain/partitions.js';
import { planRebalance } from '../../src/domain/rebalance/index.js';

const PYTHON = process.env['NRC_NOVA_PYTHON'] ?? '/usr/bin/python3';
const toozMissing = spawnSync(PYTHON, ['-c', 'import tooz.hashring'], { encoding: 'utf8' }).status !== 0;

/** Nova's owner of each uuid within `hosts`: HashRing({h.lower()}, partitions=32).get_nodes(uuid.encode()). */
function toozOwners(hosts: readonly string[], uuids: readonly string[]): Record<string, string> {
  const script = [
    'import json, sys',
    'from tooz import hashring',
    'req = json.load(sys.stdin)',
    'ring = hashring.HashRing({h.lower() for h in req["hosts"]}, partitions=2 ** 5)',
    'print(json.dumps({u: sorted(ring.get_nodes(u.encode("utf-8")))[0] for u in req["uuids"]}))',
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify({ hosts, uuids }), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Record<string, string>;
}

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const C1 = '11111111-1111-4111-8111-111111111111';
let nextId = 1;
const ago = (s: number): string => new Date(NOW - s * 1000).toISOString().slice(0, 19).replace('T', ' ');
const service = (host: string, forcedDown = false): ServiceRec => ({ cellUuid: C1, id: nextId++, uuid: null, host, binary: 'nova-compute', disabled: false, forcedDown, lastSeenUp: ago(5), createdAt: ago(86400), updatedAt: ago(5), deleted: false });
const uuidOf = (i: number): string => `7a${i.toString(16).padStart(6, '0')}-1c2d-4e3f-8a4b-${(i * 7919).toString(16).padStart(12, '0')}`;

(toozMissing && process.env['CI'] !== 'true' ? describe.skip : describe)('rebalance: one ring per partition, as the real tooz computes it', () => {
  const partitions: Array<IronicPartition & { dead: string; live: string[] }> = [
    { group: 'cg-a', dead: 'bm-a0', live: ['BM-A1', 'bm-a2', 'bm-a3'], hosts: [] },
    { group: 'cg-b', dead: 'bm-b0', live: ['bm-b1', 'bm-b2'], hosts: [] },
    { group: 'rack-7.east', dead: 'bm-c0', live: ['bm-c1', 'bm-c2', 'bm-c3', 'bm-c4', 'bm-c5'], hosts: [] },
    { group: '', dead: 'bm-d0', live: ['bm-d1'], hosts: [] },
  ].map((p) => ({ ...p, hosts: [p.dead, ...p.live].map((h) => h.toLowerCase()) }));

  it('every node of a dead host goes to tooz\'s owner among its partition\'s live hosts', () => {
    const services: ServiceRec[] = partitions.flatMap((p) => [service(p.dead, true), ...p.live.map((h) => service(h))]);
    const nodes: ComputeNodeRec[] = [];
    const listed: IronicNodeRec[] = [];
    const expected = new Map<string, string>();
    partitions.forEach((p, pi) => {
      const uuids = Array.from({ length: 60 }, (_, i) => uuidOf(pi * 1000 + i));
      // Nova's ring holds the partition's up hosts only; the dead host is not in it.
      const owners = toozOwners(p.live, uuids);
      for (const u of uuids) {
        nodes.push({ cellUuid: C1, id: nextId++, uuid: u, host: p.dead, hypervisorHostname: u, hypervisorType: 'ironic', serviceId: null, mapped: 1, createdAt: ago(86400), updatedAt: ago(600), deleted: false });
        listed.push({ uuid: u, instanceUuid: null, maintenance: false, provisionState: 'active', conductorGroup: p.group });
        expected.set(u, owners[u] as string);
      }
    });
    const snapshot: Snapshot = {
      takenAt: NOW,
      serviceDownTime: 60,
      cells: [{ id: 2, uuid: C1, name: 'cell1', isCell0: false }],
      hostMappings: services.map((s, i) => ({ id: i + 1, host: s.host ?? '', cellUuid: C1 })),
      services,
      computeNodes: nodes,
      instances: [],
      migrations: [],
      placement: { providers: [], inventories: [], allocations: [], consumers: [] },
      ironicNodes: listed,
      ironicPartitions: partitions.map((p) => ({ group: p.group, hosts: p.hosts })),
    };
    const plan = planRebalance(snapshot, { includeDown: false });
    expect(plan.refused).toEqual([]);
    const got = new Map(plan.units.flatMap((u) => u.changes.map((c) => c.change)).flatMap((c) => (c.kind === 'rehome-compute-node' ? [[c.hypervisorHostname, c.toHost.toLowerCase()] as const] : [])));
    expect(got.size).toBe(expected.size);
    for (const [u, owner] of expected) expect(got.get(u), u).toBe(owner);
  });
});
