// undo --apply restores the databases side by side (src/operations/undo-lanes.ts,
// runInLanes). What makes that as safe as one change at a time, checked on
// journals of units that span the API, placement and two cells, with
// restores of random length:
//  - in each database at most its width of changes at a time, and two that
//    touch a common row or name in reverse journal order, one after the
//    other (width 1: the whole database one change at a time);
//  - each unit's changes in reverse journal order across databases (the
//    apply's crash-safety order, reversed), never two of a unit at once;
//  - every change once; a change that throws stops every lane before its
//    next change, without leaving a lane waiting for ever; so does stop().
import { describe, expect, it } from 'vitest';
import { targetKey, type DbRef } from '../../src/domain/plan.js';
import type { JournalChange } from '../../src/operations/journal.js';
import { changeKeys, runInLanes, undoLanes, unitPredecessors, type LaneOptions } from '../../src/operations/undo-lanes.js';

const TARGETS: readonly DbRef[] = [{ db: 'api' }, { db: 'placement' }, { db: 'cell', cellUuid: 'c1' }, { db: 'cell', cellUuid: 'c2' }];

function laneOf(target: DbRef): string {
  return target.db === 'cell' ? `cell ${target.cellUuid}` : target.db;
}

/** A seeded random journal: `units` units of 1-4 changes each in random databases, seqs interleaved as concurrent applies interleave them. */
function journal(units: number, random: () => number): JournalChange[] {
  const pending = Array.from({ length: units }, (_, u) => Array.from({ length: 1 + Math.floor(random() * 4) }, () => TARGETS[Math.floor(random() * TARGETS.length)] as DbRef).map((target) => ({ unit: `u${u}`, target })));
  const out: JournalChange[] = [];
  while (pending.some((p) => p.length > 0)) {
    const open = pending.filter((p) => p.length > 0);
    const next = (open[Math.floor(random() * open.length)] as Array<{ unit: string; target: DbRef }>).shift() as { unit: string; target: DbRef };
    out.push({ type: 'change', seq: out.length + 1, unit: next.unit, target: next.target, change: {} as JournalChange['change'], rows: [] });
  }
  // As undo hands them over: last change first.
  return out.sort((a, b) => b.seq - a.seq);
}

function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Width 1 everywhere, no keys: each database one change at a time. */
const SERIAL: LaneOptions = { laneOf, widthOf: () => 1, keysOf: () => [] };

/** Each change touches one or two of a few rows per database (so some share one). */
function rowKeys(changes: readonly JournalChange[], random: () => number): (c: JournalChange) => readonly string[] {
  const keys = new Map(changes.map((c) => [c.seq, Array.from({ length: 1 + Math.floor(random() * 2) }, () => `${laneOf(c.target)}|row${Math.floor(random() * 8)}`)] as const));
  return (c) => keys.get(c.seq) ?? [];
}

describe('undo lanes', () => {
  it('groups changes by database and keeps the order given in each', () => {
    const changes = journal(20, seeded(1));
    const lanes = undoLanes(changes, laneOf);
    expect(lanes.flat().map((c) => c.seq).sort((a, b) => a - b)).toEqual(changes.map((c) => c.seq).sort((a, b) => a - b));
    for (const lane of lanes) {
      expect(new Set(lane.map((c) => laneOf(c.target))).size).toBe(1);
      expect(lane.map((c) => c.seq)).toEqual([...lane.map((c) => c.seq)].sort((a, b) => b - a));
    }
    // Two targets on one database (an API database that holds placement's tables) are one lane.
    expect(undoLanes(changes, (t) => (t.db === 'cell' ? 'cells' : 'api+placement'))).toHaveLength(2);
  });

  it('names, for each change, the change of its unit undone just before it', () => {
    const changes = journal(30, seeded(2));
    const before = unitPredecessors(changes);
    for (const c of changes) {
      const mine = changes.filter((x) => x.unit === c.unit && x.seq > c.seq).map((x) => x.seq);
      expect(before.get(c.seq)).toBe(mine.length === 0 ? undefined : Math.min(...mine));
    }
  });

  for (const seed of [3, 4, 5, 6, 7]) {
    it(`runs each database one change at a time and each unit in reverse order (seed ${seed})`, async () => {
      const random = seeded(seed);
      const changes = journal(40, random);
      const started: number[] = [];
      const ended = new Set<number>();
      const running = new Map<string, number>();
      const runningUnits = new Set<string>();
      const failures = await runInLanes(
        changes,
        SERIAL,
        async (c) => {
          const lane = laneOf(c.target);
          expect(running.get(lane), `two changes of ${lane} at once`).toBeUndefined();
          expect(runningUnits.has(c.unit), `two changes of ${c.unit} at once`).toBe(false);
          // Every change of its unit with a higher seq is done.
          for (const x of changes) if (x.unit === c.unit && x.seq > c.seq) expect(ended.has(x.seq), `${c.seq} before ${x.seq} of ${c.unit}`).toBe(true);
          running.set(lane, c.seq);
          runningUnits.add(c.unit);
          started.push(c.seq);
          await pause(Math.floor(random() * 3));
          running.delete(lane);
          runningUnits.delete(c.unit);
          ended.add(c.seq);
        },
        () => false,
      );
      expect(failures).toEqual([]);
      expect([...started].sort((a, b) => a - b)).toEqual(changes.map((c) => c.seq).sort((a, b) => a - b));
      // Side by side: some change started while one of a higher seq in another lane had not ended (not one serial pass).
      expect(started).not.toEqual(changes.map((c) => c.seq));
    });
  }

  for (const seed of [10, 11, 12, 13]) {
    it(`with width 3, runs at most 3 changes of a database at once, those sharing a row in reverse order, and each unit in reverse order (seed ${seed})`, async () => {
      const random = seeded(seed);
      const changes = journal(40, random);
      const keysOf = rowKeys(changes, random);
      const ended = new Set<number>();
      const running = new Map<string, Set<number>>();
      let overlapped = false;
      const failures = await runInLanes(
        changes,
        { laneOf, widthOf: (t) => (t.db === 'placement' ? 1 : 3), keysOf },
        async (c) => {
          const lane = laneOf(c.target);
          const now = running.get(lane) ?? new Set<number>();
          running.set(lane, now);
          expect(now.size, `${lane} over its width`).toBeLessThan(c.target.db === 'placement' ? 1 : 3);
          if (now.size > 0) overlapped = true;
          // Every earlier change of its lane that shares a key, and every earlier change of its unit, is done.
          for (const x of changes) {
            if (x.seq <= c.seq) continue;
            const sharesKey = laneOf(x.target) === lane && keysOf(x).some((k) => keysOf(c).includes(k));
            if (sharesKey || x.unit === c.unit) expect(ended.has(x.seq), `${c.seq} before ${x.seq}`).toBe(true);
          }
          now.add(c.seq);
          await pause(Math.floor(random() * 3));
          now.delete(c.seq);
          ended.add(c.seq);
        },
        () => false,
      );
      expect(failures).toEqual([]);
      expect(ended.size).toBe(changes.length);
      expect(overlapped).toBe(true);
    });
  }

  for (const seed of [20, 21, 22]) {
    it(`in groups of up to 4 changes of one database (a transaction each), every change once, after every change it waits for (seed ${seed})`, async () => {
      const random = seeded(seed);
      const changes = journal(40, random);
      const keysOf = rowKeys(changes, random);
      const ended = new Set<number>();
      const sizes: number[] = [];
      /** One change, as a group's transaction writes it: everything it waits for is done, or earlier in its own group. */
      const write = (c: JournalChange, before: ReadonlySet<number>): void => {
        const lane = laneOf(c.target);
        for (const x of changes) {
          if (x.seq <= c.seq) continue;
          const sharesKey = laneOf(x.target) === lane && keysOf(x).some((k) => keysOf(c).includes(k));
          if (sharesKey || x.unit === c.unit) expect(ended.has(x.seq) || before.has(x.seq), `${c.seq} before ${x.seq}`).toBe(true);
        }
      };
      const failures = await runInLanes(
        changes,
        {
          laneOf,
          widthOf: (t) => (t.db === 'placement' ? 1 : 3),
          keysOf,
          group: {
            max: 4,
            together: (a, b) => targetKey(a.target) === targetKey(b.target),
            run: async (group) => {
              sizes.push(group.length);
              expect(group.length).toBeLessThanOrEqual(4);
              expect(new Set(group.map((c) => targetKey(c.target))).size).toBe(1);
              // In lane order: descending seq.
              expect(group.map((c) => c.seq)).toEqual([...group.map((c) => c.seq)].sort((a, b) => b - a));
              const done = new Set<number>();
              for (const c of group) {
                write(c, done);
                done.add(c.seq);
              }
              await pause(Math.floor(random() * 3));
              for (const c of group) ended.add(c.seq);
            },
          },
        },
        async (c) => {
          sizes.push(1);
          write(c, new Set());
          await pause(Math.floor(random() * 3));
          ended.add(c.seq);
        },
        () => false,
      );
      expect(failures).toEqual([]);
      expect(ended.size).toBe(changes.length);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(changes.length);
      expect(Math.max(...sizes)).toBeGreaterThan(1);
    });
  }

  it('a lane of two databases (an API database that holds placement) runs as its narrowest: one change at a time', async () => {
    const changes = journal(30, seeded(15)).filter((c) => c.target.db === 'api' || c.target.db === 'placement');
    let running = 0;
    let most = 0;
    const failures = await runInLanes(
      changes,
      { laneOf: () => 'api+placement', widthOf: (t) => (t.db === 'placement' ? 1 : 3), keysOf: () => [] },
      async () => {
        running += 1;
        most = Math.max(most, running);
        await pause(1);
        running -= 1;
      },
      () => false,
    );
    expect(failures).toEqual([]);
    expect(changes.some((c) => c.target.db === 'placement') && changes.some((c) => c.target.db === 'api')).toBe(true);
    expect(most).toBe(1);
  });

  it("a journaled change's keys are its rows and the apply's footprint keys", () => {
    const change = {
      type: 'change',
      seq: 1,
      unit: 'u',
      target: { db: 'cell', cellUuid: 'c1' },
      change: { kind: 'soft-delete-compute-node', target: { db: 'cell', cellUuid: 'c1' }, id: 7, uuid: 'n', host: 'h', hypervisorHostname: 'Node-7' },
      rows: [{ table: 'compute_nodes', key: { id: 7 }, before: null, after: null }],
    } as unknown as JournalChange;
    const keys = changeKeys(change) ?? [];
    expect(keys).toContain('cell c1|compute_nodes|{"id":7}');
    expect(keys.some((k) => k.includes('hypervisor:node-7'))).toBe(true);
    expect(keys.some((k) => k.includes('compute-node:7'))).toBe(true);
    // A kind this version does not know: no keys (undo then restores each database one change at a time).
    expect(changeKeys({ ...change, change: { ...change.change, kind: 'future-kind' } } as unknown as JournalChange)).toBeUndefined();
  });

  it('works out every wait before any change runs: a keysOf that throws runs nothing', async () => {
    const changes = journal(10, seeded(14));
    let runs = 0;
    await expect(
      runInLanes(
        changes,
        { laneOf, widthOf: () => 2, keysOf: (c) => (c.seq === 1 ? (() => { throw new Error('bad keys'); })() : []) },
        async () => {
          runs += 1;
        },
        () => false,
      ),
    ).rejects.toThrow('bad keys');
    expect(runs).toBe(0);
  });

  it('a change that throws stops every lane before its next change; the error is returned and no lane hangs', async () => {
    const changes = journal(40, seeded(8));
    const failAt = changes[5] as JournalChange;
    const started: number[] = [];
    const failures = await runInLanes(
      changes,
      { ...SERIAL, widthOf: () => 3 },
      async (c) => {
        started.push(c.seq);
        await pause(1);
        if (c.seq === failAt.seq) throw new Error('boom');
      },
      () => false,
    );
    expect(failures.map((e) => (e as Error).message)).toEqual(['boom']);
    // At most three changes per lane were in flight when it threw, and none started after.
    expect(started.length).toBeLessThanOrEqual(6 + 3 * TARGETS.length);
    expect(started.length).toBeLessThan(changes.length);
  });

  it('stop() ends every lane before its next change', async () => {
    const changes = journal(40, seeded(9));
    let runs = 0;
    const failures = await runInLanes(
      changes,
      SERIAL,
      async () => {
        runs += 1;
        await pause(1);
      },
      () => runs >= 10,
    );
    expect(failures).toEqual([]);
    expect(runs).toBeGreaterThanOrEqual(10);
    expect(runs).toBeLessThanOrEqual(10 + TARGETS.length);
  });
});
