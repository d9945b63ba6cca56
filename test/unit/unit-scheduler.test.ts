// The apply's scheduler: units with disjoint footprints overlap, units that
// share a key run in plan order, a unit without a footprint runs alone, and
// the first failure stops new units after the running ones finish.
import { describe, expect, it } from 'vitest';
import { runUnits } from '../../src/operations/unit-scheduler.js';

interface U {
  readonly name: string;
  readonly footprint?: readonly string[];
  /** Milliseconds the unit takes. */
  readonly ms: number;
  readonly fails?: boolean;
}

/** Runs the units and returns the event log ("+a" start, "-a" end) and the peak overlap. */
async function trace(units: readonly U[], limit: number): Promise<{ log: string[]; peak: number; error?: unknown }> {
  const log: string[] = [];
  let running = 0;
  let peak = 0;
  try {
    await runUnits(units, limit, async (u) => {
      log.push(`+${u.name}`);
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, u.ms));
      running -= 1;
      log.push(`-${u.name}`);
      if (u.fails === true) throw new Error(`${u.name} failed`);
    });
  } catch (error) {
    return { log, peak, error };
  }
  return { log, peak };
}

describe('runUnits', () => {
  it('overlaps units whose footprints are disjoint, up to the limit', async () => {
    const units = ['a', 'b', 'c', 'd'].map((name) => ({ name, footprint: [name], ms: 20 }));
    expect((await trace(units, 2)).peak).toBe(2);
    expect((await trace(units, 4)).peak).toBe(4);
    expect((await trace(units, 1)).peak).toBe(1);
  });

  it('runs units that share a key one after the other, in plan order', async () => {
    const { log } = await trace(
      [
        { name: 'a', footprint: ['x', 'y'], ms: 30 },
        { name: 'b', footprint: ['z'], ms: 5 },
        { name: 'c', footprint: ['y'], ms: 5 },
      ],
      4,
    );
    // b overlaps a; c waits for a, whose key y it shares.
    expect(log.indexOf('+b')).toBeLessThan(log.indexOf('-a'));
    expect(log.indexOf('+c')).toBeGreaterThan(log.indexOf('-a'));
  });

  it('runs a unit without a footprint alone, after everything before it', async () => {
    const { log } = await trace(
      [
        { name: 'a', footprint: ['x'], ms: 20 },
        { name: 'barrier', ms: 10 },
        { name: 'b', footprint: ['y'], ms: 5 },
      ],
      4,
    );
    expect(log).toEqual(['+a', '-a', '+barrier', '-barrier', '+b', '-b']);
  });

  it('starts nothing after a failure, lets the running units finish, then throws it', async () => {
    const { log, error } = await trace(
      [
        { name: 'a', footprint: ['a'], ms: 5, fails: true },
        { name: 'b', footprint: ['b'], ms: 30 },
        { name: 'c', footprint: ['c'], ms: 5 },
      ],
      2,
    );
    expect(String(error)).toContain('a failed');
    expect(log).toEqual(['+a', '+b', '-a', '-b']);
  });

  it('reports the failure that pick chooses among the units that failed together', async () => {
    const units = [
      { name: 'a', footprint: ['a'], ms: 5 },
      { name: 'b', footprint: ['b'], ms: 20 },
    ];
    const run = (pick?: (errors: readonly unknown[]) => unknown): Promise<void> =>
      runUnits(
        units,
        2,
        async (u) => {
          await new Promise((r) => setTimeout(r, u.ms));
          throw new Error(`${u.name} failed`);
        },
        pick,
      );
    await expect(run()).rejects.toThrow('a failed');
    await expect(run((errors) => errors.find((e) => String(e).includes('b')))).rejects.toThrow('b failed');
  });
});
