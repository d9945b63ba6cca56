// UuidSet holds canonical uuids in 16 bytes each and any other string as it
// is: membership must be exact string equality, as a Set<string> gives it.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UuidSet } from '../../src/domain/uuid-set.js';

describe('UuidSet', () => {
  it('answers as a Set of strings, through growth, for uuids and anything else', () => {
    const uuid = fc.uuid().map((u) => u.toLowerCase());
    const other = fc.oneof(fc.string(), fc.uuid().map((u) => u.toUpperCase()), fc.uuid().map((u) => `${u} `));
    fc.assert(
      fc.property(fc.array(fc.oneof(uuid, other), { maxLength: 3000 }), fc.array(fc.oneof(uuid, other), { maxLength: 50 }), (added, asked) => {
        const set = new UuidSet();
        const expected = new Set<string>();
        for (const s of added) {
          set.add(s);
          expected.add(s);
        }
        expect(set.size).toBe(expected.size);
        for (const s of [...added, ...asked]) expect(set.has(s)).toBe(expected.has(s));
      }),
      { numRuns: 60 },
    );
  });

  it('tells a canonical uuid from its upper-case spelling, and holds 100,000', () => {
    const set = new UuidSet();
    const ids = Array.from({ length: 100_000 }, () => randomUUID());
    for (const id of ids) set.add(id);
    expect(set.size).toBe(100_000);
    expect(ids.every((id) => set.has(id))).toBe(true);
    expect(set.has((ids[0] as string).toUpperCase())).toBe(false);
    expect(set.has(randomUUID())).toBe(false);
  });
});
