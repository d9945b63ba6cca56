import { describe, expect, it } from 'vitest';
import { buildDiscoveryEvents, classifyHosts, firstNodePerHost, selectNodesToMark } from '../../src/domain/host-discovery.js';

const cand = (id: number, host: string, uuid: string | null = `uuid-${id}`) => ({ id, host, uuid });

describe('classifyHosts', () => {
  it('splits hosts into unmapped (in order), mapped here and mapped elsewhere', () => {
    const mappedTo = new Map([
      ['b', 2],
      ['c', 3],
    ]);
    const r = classifyHosts(['a', 'b', 'c', 'a', 'd', 'c', 'b'], mappedTo, 2);
    expect(r.unmapped).toEqual(['a', 'd']);
    expect([...r.inCell]).toEqual(['b']);
    expect([...r.elsewhere]).toEqual([['c', 3]]);
  });
});

describe('buildDiscoveryEvents', () => {
  it('marks only the first candidate of each created host as the creator, as nova does', () => {
    const events = buildDiscoveryEvents([cand(1, 'h1'), cand(2, 'h1'), cand(3, 'h2'), cand(4, 'h3')], new Set(['h1', 'h3']));
    expect(events.map((e) => e.created)).toEqual([true, false, false, true]);
  });
});

describe('selectNodesToMark', () => {
  it('selects every candidate node whose host maps to this cell', () => {
    expect(selectNodesToMark([cand(1, 'a'), cand(2, 'b'), cand(3, 'a')], new Set(['a']))).toEqual([1, 3]);
  });
});

describe('firstNodePerHost', () => {
  it('keeps the lowest-id node of each host (input is id-ordered)', () => {
    expect(firstNodePerHost([cand(1, 'a'), cand(2, 'b'), cand(5, 'a')]).map((c) => c.id)).toEqual([1, 2]);
  });
});
