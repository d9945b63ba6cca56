// The ironic hash ring against the vectors the real tooz produced
// (scripts/gen-tooz-vectors.py → test/fixtures/hashring-vectors.json).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HASH_RING_PARTITIONS, buildHashRing, md5Hex, ringOwner } from '../../src/domain/hash-ring.js';

interface Vectors {
  readonly partitions: number;
  readonly hash: string;
  readonly cases: ReadonlyArray<{ readonly hosts: readonly string[]; readonly members: readonly string[]; readonly lookups: ReadonlyArray<readonly [string, string]> }>;
}

const vectors = JSON.parse(readFileSync(new URL('../fixtures/hashring-vectors.json', import.meta.url), 'utf8')) as Vectors;

describe('md5', () => {
  it.each([0, 1, 55, 56, 63, 64, 65, 119, 120, 200, 1000])('matches node:crypto for %i bytes', (n) => {
    const data = new Uint8Array(n).map((_, i) => (i * 31 + 7) & 0xff);
    expect(md5Hex(data)).toBe(createHash('md5').update(data).digest('hex'));
  });
});

describe('buildHashRing / ringOwner', () => {
  it('uses the parameters of the fixture', () => {
    expect(vectors.partitions).toBe(HASH_RING_PARTITIONS);
    expect(vectors.hash).toBe('md5');
  });

  for (const c of vectors.cases) {
    it(`matches tooz for members ${c.hosts.join(', ')}`, () => {
      const ring = buildHashRing(c.hosts);
      expect(ring.members).toEqual([...c.members]);
      // Duplicate members (case-only differences) collapse; points are 32 per distinct member.
      expect(ring.points).toHaveLength(32 * c.members.length);
      for (const [uuid, owner] of c.lookups) expect(ringOwner(ring, uuid), uuid).toBe(owner);
    });
  }

  it('an empty ring owns nothing', () => {
    expect(ringOwner(buildHashRing([]), 'aa2f504a-fe68-4da3-b652-d23e2283273a')).toBeUndefined();
  });
});
