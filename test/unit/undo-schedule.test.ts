// Undo's schedule (src/operations/undo.ts scheduleUndo): a journal's changes
// grouped by unit, units ordered by their newest change, each unit's changes
// newest first, footprints from the journaled rows and the changes' keys; a
// journal that interleaves two units on one row falls back to one change at
// a time, newest first.
import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/domain/plan.js';
import type { JournalChange } from '../../src/operations/journal.js';
import { scheduleUndo } from '../../src/operations/undo.js';

const PLACEMENT = { db: 'placement' } as const;

/** A journaled removal of one consumer's allocations on one provider: rows of the provider, the consumer and one allocation. */
function removal(seq: number, unit: string, providerId: number, consumer: string): JournalChange {
  const change: Change = { kind: 'remove-provider-allocations', target: PLACEMENT, consumerUuid: consumer, consumerGeneration: 1, providerId, providerUuid: `rp-${providerId}`, allocations: [] };
  return {
    type: 'change',
    seq,
    unit,
    target: PLACEMENT,
    change,
    rows: [
      { table: 'allocations', key: { id: seq * 100 }, before: { id: seq * 100 }, after: null },
      { table: 'resource_providers', key: { id: providerId }, before: { id: providerId, generation: seq }, after: { id: providerId, generation: seq + 1 } },
      { table: 'consumers', key: { uuid: consumer }, before: { uuid: consumer }, after: { uuid: consumer, generation: 2 } },
    ],
  };
}

const order = (s: ReturnType<typeof scheduleUndo>): string[] => s.groups.map((g) => `${g.unit}:${g.changes.map((c) => c.seq).join(',')}`);
const overlap = (a: readonly string[], b: readonly string[]): boolean => a.some((k) => b.includes(k));

describe('scheduleUndo', () => {
  it('groups by unit, newest unit first, each unit newest change first', () => {
    // Units a and b ran side by side (disjoint), c after a on a's provider.
    const s = scheduleUndo([removal(1, 'a', 1, 'c1'), removal(2, 'b', 2, 'c2'), removal(3, 'a', 1, 'c3'), removal(4, 'b', 2, 'c4'), removal(5, 'c', 1, 'c5')]);
    expect(s.sequential).toBe(false);
    expect(order(s)).toEqual(['c:5', 'b:4,2', 'a:3,1']);
    const [c, b, a] = s.groups;
    // c shares provider 1 (its row and the scheduler's rp key) with a, not with b.
    expect(overlap(c?.footprint ?? [], a?.footprint ?? [])).toBe(true);
    expect(overlap(c?.footprint ?? [], b?.footprint ?? [])).toBe(false);
    expect(c?.footprint).toContain('placement|resource_providers|{"id":1}');
    expect(c?.footprint).toContain('placement:rp:1');
  });

  it('units sharing a consumer row overlap even on different providers', () => {
    const s = scheduleUndo([removal(1, 'x', 1, 'same'), removal(2, 'y', 2, 'same')]);
    expect(s.sequential).toBe(false);
    const [y, x] = s.groups;
    expect(overlap(y?.footprint ?? [], x?.footprint ?? [])).toBe(true);
  });

  it('falls back to one change at a time when two units interleave on a row', () => {
    // a wrote provider 1, then b, then a again: no unit order undoes that row in reverse.
    const s = scheduleUndo([removal(1, 'a', 1, 'c1'), removal(2, 'b', 1, 'c2'), removal(3, 'a', 1, 'c3')]);
    expect(s.sequential).toBe(true);
    expect(order(s)).toEqual(['*:3,2,1']);
  });

  it('falls back when a unit that finished later touched a shared row earlier', () => {
    // b's change on provider 1 (seq 2) lies between a's (seq 1) and a's last change (seq 3, elsewhere).
    const s = scheduleUndo([removal(1, 'a', 1, 'c1'), removal(2, 'b', 1, 'c2'), removal(3, 'a', 9, 'c3')]);
    expect(s.sequential).toBe(true);
  });

  it('an empty journal has nothing to schedule', () => {
    expect(scheduleUndo([])).toEqual({ groups: [], sequential: false });
  });
});
