// The two helpers that keep a snapshot compact (issue 20): the string pool
// the reads share, and exact-size groups for the snapshot's indexes. Their
// memory effect is measured in `npm run bench` (bench/README.md, "Memory");
// here, that they change nothing a planner sees.
import { describe, expect, it } from 'vitest';
import { StringPool } from '../../src/db/string-pool.js';
import { groupBy, pushTo } from '../../src/domain/text-and-maps.js';

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
