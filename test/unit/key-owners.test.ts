// KeyOwners answers which cell holds a key (audit-by-cell's first pass). It
// holds 48-bit hashes, so it may only err one way: a key one owner holds can
// look shared (its hash met another owner's key), never the other way; a key
// no owner holds is never given one it does not have... except by a hash
// collision, which the check below would show at these sizes as a failure.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyOwnersBuilder, NO_OWNER, SHARED, keyHash } from '../../src/domain/key-owners.js';

/** What a Map says: the owner, SHARED for a key two owners hold, NO_OWNER for none. */
function expected(pairs: ReadonlyArray<readonly [string, number]>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, owner] of pairs) {
    const had = out.get(key);
    out.set(key, had === undefined || had === owner ? owner : SHARED);
  }
  return out;
}

describe('KeyOwners', () => {
  it('answers as a map of keys to their one owner, or shared, through growth', () => {
    const key = fc.oneof(fc.string({ maxLength: 12 }), fc.uuid(), fc.constantFrom('compute-1', 'COMPUTE-1', 'compute-1 ', 'cómpute-1'));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, fc.integer({ min: 0, max: 70 })), { maxLength: 3000 }), fc.array(key, { maxLength: 50 }), (pairs, asked) => {
        const builder = new KeyOwnersBuilder();
        for (const [k, owner] of pairs) builder.add(k, owner);
        const owners = builder.build();
        const want = expected(pairs);
        expect(owners.size).toBe(want.size);
        expect(owners.shared).toBe([...want.values()].filter((o) => o === SHARED).length);
        for (const k of [...pairs.map(([x]) => x), ...asked]) expect([k, owners.ownerOf(k)]).toEqual([k, want.get(k) ?? NO_OWNER]);
      }),
      { numRuns: 60 },
    );
  });

  it('holds 300,000 uuids of ten owners with no false sharing, in 8 bytes a key', () => {
    const builder = new KeyOwnersBuilder();
    const ids = Array.from({ length: 300_000 }, () => randomUUID());
    ids.forEach((id, i) => builder.add(id, i % 10));
    const owners = builder.build();
    expect(owners.shared).toBe(0);
    expect(owners.size).toBe(300_000);
    expect(ids.every((id, i) => owners.ownerOf(id) === i % 10)).toBe(true);
    expect(owners.ownerOf(randomUUID())).toBe(NO_OWNER);
  });

  it('tells keys apart by every character (case, trailing space, accent)', () => {
    const hashes = ['compute-1', 'COMPUTE-1', 'compute-1 ', 'cómpute-1', 'compute-2', ''].map((k) => JSON.stringify(keyHash(k)));
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it('refuses an owner it cannot hold', () => {
    expect(() => new KeyOwnersBuilder().add('x', 0xffff)).toThrow(/out of range/);
    expect(() => new KeyOwnersBuilder().add('x', -1)).toThrow(/out of range/);
  });
});
