// The two helpers that keep a snapshot compact (issue 20): the string pool
// the reads share, and exact-size groups for the snapshot's indexes. Their
// memory effect is measured in `npm run bench` (bench/README.md, "Memory");
// here, that they change nothing a planner sees.
import { describe, expect, it } from 'vitest';
import { StringPool } from '../../src/db/string-pool.js';
import { Groups, groupBy, pushTo } from '../../src/domain/text-and-maps.js';
import { CellHostMap, instancesOn, nodeKey, type SnapshotIndex } from '../../src/domain/snapshot-index.js';
import type { InstanceRec } from '../../src/domain/model.js';

describe('StringPool', () => {
  it('gives back an equal string and holds each distinct value once', () => {
    const pool = new StringPool();
    const first = pool.get(['c1', 'host', '7'].join('-'));
    const again = pool.get(['c1', 'host', '7'].join('-'));
    expect(first).toBe('c1-host-7');
    expect(again).toBe(first);
    pool.get('c1-host-8');
    expect(pool.size).toBe(2);
  });

  it('passes NULL through without holding it', () => {
    const pool = new StringPool();
    expect(pool.nullable(null)).toBeNull();
    expect(pool.nullable('active')).toBe('active');
    expect(pool.size).toBe(1);
  });

  it('keeps strings that differ only in case or trailing space apart (the domain folds them, not the reads)', () => {
    const pool = new StringPool();
    expect([pool.get('Host-A'), pool.get('host-a'), pool.get('host-a ')]).toEqual(['Host-A', 'host-a', 'host-a ']);
    expect(pool.size).toBe(3);
  });
});

describe('StringPool.list', () => {
  it('gives equal lists one frozen array of pooled strings, keeps order and length apart, and an empty list is one array', () => {
    const pool = new StringPool();
    const a = pool.list(['COMPUTE_NODE', 'HW_CPU_X86_AVX2']);
    const b = pool.list(['COMPUTE_NODE', 'HW_CPU_X86_AVX2'].map((t) => t.slice(0)));
    expect(b).toBe(a);
    expect(a).toEqual(['COMPUTE_NODE', 'HW_CPU_X86_AVX2']);
    expect(Object.isFrozen(a)).toBe(true);
    expect(() => (a as string[]).push('X')).toThrow(TypeError);
    expect(pool.list(['HW_CPU_X86_AVX2', 'COMPUTE_NODE'])).not.toBe(a);
    expect(pool.list(['COMPUTE_NODE'])).toEqual(['COMPUTE_NODE']);
    // The key joins the names with NUL, which no trait name (A-Z, 0-9, _) holds.
    expect(pool.list(['COMPUTE', 'NODE'])).not.toBe(pool.list(['COMPUTENODE']));
    expect(pool.list([])).toBe(pool.list([]));
    expect(pool.list([])).toEqual([]);
    // The strings themselves go through the pool.
    expect(pool.get('COMPUTE_NODE')).toBe(a[0]);
  });
});

describe('groupBy', () => {
  const items = [
    { id: 1, key: 'b' },
    { id: 2, key: 'a' },
    { id: 3, key: undefined },
    { id: 4, key: 'b' },
    { id: 5, key: 'b' },
    { id: 6, key: 'a' },
  ];

  it('groups as pushTo does: same keys, same order within a group, in first-seen key order', () => {
    const byPush = new Map<string, typeof items>();
    for (const item of items) if (item.key !== undefined) pushTo(byPush, item.key, item);
    const grouped = groupBy(items, (i) => i.key);
    expect([...grouped.keys()]).toEqual(['b', 'a']);
    expect(grouped).toEqual(byPush);
    expect(grouped.get('b')?.map((i) => i.id)).toEqual([1, 4, 5]);
  });

  it('leaves out items without a key and leaves no hole in a group', () => {
    const grouped = groupBy(items, (i) => i.key);
    expect([...grouped.values()].flat().map((i) => i.id).sort()).toEqual([1, 2, 4, 5, 6]);
    for (const list of grouped.values()) expect(Object.keys(list)).toHaveLength(list.length);
  });

  it('keeps numeric keys such as 0 (placement ids start at 0 for VCPU)', () => {
    const grouped = groupBy([{ p: 0 }, { p: 1 }, { p: 0 }], (x) => x.p);
    expect(grouped.get(0)).toHaveLength(2);
  });

  it('groups an empty list into an empty map, and a large group whole', () => {
    expect(groupBy([], () => 'x').size).toBe(0);
    const many = Array.from({ length: 50_000 }, (_, i) => i);
    const grouped = groupBy(many, (i) => i % 2);
    expect(grouped.get(0)).toHaveLength(25_000);
    expect(grouped.get(1)?.[24_999]).toBe(49_999);
  });
});

describe('Groups', () => {
  const items = [
    { id: 1, key: 'b' },
    { id: 2, key: 'a' },
    { id: 3, key: undefined },
    { id: 4, key: 'b' },
    { id: 5, key: 'c' },
  ];

  it('holds what groupBy holds, in the same order, a group of one handed out as a one-item array', () => {
    const groups = new Groups(items, (i) => i.key);
    const grouped = groupBy(items, (i) => i.key);
    expect([...groups.entries()]).toEqual([...grouped.entries()]);
    expect([...groups]).toEqual([...grouped]);
    expect([...groups.keys()]).toEqual(['b', 'a', 'c']);
    expect([...groups.values()].map((g) => g.map((i) => i.id))).toEqual([[1, 4], [2], [5]]);
    expect(groups.size).toBe(3);
    expect(groups.get('a')).toEqual([{ id: 2, key: 'a' }]);
    expect(groups.get('z')).toBeUndefined();
    expect(groups.has('c')).toBe(true);
    expect(groups.has('z')).toBe(false);
    const seen: string[] = [];
    groups.forEach((g, k, m) => {
      expect(m).toBe(groups);
      seen.push(`${k}:${g.length}`);
    });
    expect(seen).toEqual(['b:2', 'a:1', 'c:1']);
  });

  it('keeps an item that is itself an array apart from a group', () => {
    const groups = new Groups([[1, 2], [3]], (x) => (x.length === 2 ? 'pair' : 'one'));
    expect(groups.get('pair')).toEqual([[1, 2]]);
    expect(groups.get('one')).toEqual([[3]]);
  });
});

describe('CellHostMap and instancesOn', () => {
  it('fold hosts and node names as nodeKey does (case, trailing spaces), and keep cells apart', () => {
    const m = new CellHostMap<number>();
    m.set('c1', 'Host-A  ', 1);
    m.set('c2', 'host-a', 2);
    expect(m.get('c1', 'host-a')).toBe(1);
    expect(m.get('c1', 'HOST-A')).toBe(1);
    expect(m.get('c2', 'Host-A ')).toBe(2);
    expect(m.has('c3', 'host-a')).toBe(false);
    expect(m.get('c1', null)).toBeUndefined();
    m.set('c1', null, 3);
    expect(m.get('c1', '')).toBe(3);
  });

  it('instancesOn gives exactly the instances whose nodeKey is the node\'s, in snapshot order (seeded cases)', () => {
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const variant = (name: string): string => [name, name.toUpperCase(), `${name} `, `${name.toUpperCase()}  `][rnd(4)] as string;
    const cells = ['c1', 'c2'];
    const hosts = ['h1', 'h2', 'h3'];
    const nodes = ['n1', 'n2', 'h1'];
    const instances: InstanceRec[] = Array.from({ length: 300 }, (_, id) => ({
      cellUuid: cells[rnd(2)] as string,
      id,
      uuid: `i-${id}`,
      host: rnd(10) === 0 ? null : variant(hosts[rnd(3)] as string),
      node: rnd(10) === 0 ? null : variant(nodes[rnd(3)] as string),
      vmState: 'active',
      taskState: null,
    }));
    const ix = { snapshot: {}, instancesOnNode: CellHostMap.grouped(instances, (i) => i.cellUuid, (i) => i.node) } as unknown as SnapshotIndex;
    for (const c of [...cells, 'c3'])
      for (const h of [...hosts, 'H2 ', null])
        for (const n of [...nodes, 'N1', null]) {
          const want = instances.filter((i) => nodeKey(i.cellUuid, i.host, i.node) === nodeKey(c, h, n));
          expect(instancesOn(ix, c, h, n)).toEqual(want);
        }
  });
});
