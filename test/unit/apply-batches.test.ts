// Which units an apply writes together (src/operations/apply-batches.ts):
// consecutive units of one shape whose footprints are disjoint, at most
// apply_batch_units of them; anything else on its own, in plan order. And
// the order in which a batch's changes are written (src/db/apply-change.ts).
import { describe, expect, it } from 'vitest';
import { batchUnits, shapeOf } from '../../src/operations/apply-batches.js';
import { writeOrder, type BatchedChange } from '../../src/db/apply-change.js';
import type { Change, Unit } from '../../src/domain/plan.js';

const C1 = 'c1c1c1c1-0000-4000-8000-000000000001';
const C2 = 'c2c2c2c2-0000-4000-8000-000000000002';

function deleteProvider(id: number): Change {
  return { kind: 'delete-provider', target: { db: 'placement' }, providerId: id, uuid: `rp-${id}`, name: `node-${id}`, generation: 1 } as unknown as Change;
}

function softDelete(id: number, cellUuid = C1): Change {
  return { kind: 'soft-delete-compute-node', target: { db: 'cell', cellUuid }, id, uuid: `cn-${id}`, host: 'h', hypervisorHostname: `node-${id}` } as Change;
}

/** `footprint` null: a unit without one. */
function unit(id: number, changes: readonly Change[], footprint: readonly string[] | null = [`k${id}`]): Unit {
  return { id: `u${id}`, title: `unit ${id}`, changes: changes.map((change) => ({ change, reason: '' })), ...(footprint === null ? {} : { footprint }) };
}

/** The batches as the units' ids, a batch written together marked with '*'. */
function layout(units: readonly Unit[], max?: number): string[] {
  return batchUnits(units, max).map((b) => `${b.shapes === undefined ? '' : '*'}${b.units.map((u) => u.id).join(',')}`);
}

describe('shapeOf', () => {
  it('splits the first changes in one database from the cell run that follows them (the held segment)', () => {
    const shape = shapeOf(unit(1, [deleteProvider(1), deleteProvider(2), softDelete(1)]));
    expect(shape?.first).toEqual({ db: 'placement' });
    expect(shape?.firstCount).toBe(2);
    expect(shape?.held?.start).toBe(2);
    expect(shape?.held?.changes).toHaveLength(1);
  });

  it('takes a unit whose changes are all in one database, with no held segment', () => {
    expect(shapeOf(unit(1, [softDelete(1), softDelete(2)]))).toMatchObject({ firstCount: 2, held: undefined });
  });

  it('has no shape for a unit without changes, or with more than two runs of databases', () => {
    expect(shapeOf(unit(1, []))).toBeUndefined();
    expect(shapeOf(unit(1, [deleteProvider(1), softDelete(1), deleteProvider(2)]))).toBeUndefined();
    // A cell change first, then placement: the placement changes are not held, so there is no shape of two runs.
    expect(shapeOf(unit(1, [softDelete(1), deleteProvider(1)]))).toBeUndefined();
  });
});

describe('batchUnits', () => {
  it('puts consecutive units of one shape with disjoint footprints together, up to the maximum', () => {
    const units = [1, 2, 3, 4, 5].map((i) => unit(i, [deleteProvider(i), softDelete(i)]));
    expect(layout(units)).toEqual(['*u1,u2,u3,u4,u5']);
    expect(layout(units, 2)).toEqual(['*u1,u2', '*u3,u4', 'u5']);
    expect(layout(units, 1)).toEqual(['u1', 'u2', 'u3', 'u4', 'u5']);
  });

  it('ends a batch at a unit of another shape, another cell, or that shares a key with it', () => {
    const units = [
      unit(1, [deleteProvider(1), softDelete(1)]),
      unit(2, [deleteProvider(2), softDelete(2)]),
      unit(3, [softDelete(3)]),
      unit(4, [softDelete(4)]),
      unit(5, [deleteProvider(5), softDelete(5, C2)]),
      unit(6, [deleteProvider(6), softDelete(6, C2)], ['k6', 'shared']),
      unit(7, [deleteProvider(7), softDelete(7, C2)], ['shared']),
    ];
    expect(layout(units)).toEqual(['*u1,u2', '*u3,u4', '*u5,u6', 'u7']);
  });

  it('applies a unit without a footprint, or without a shape, on its own, and gives the batch the union of the footprints', () => {
    const units = [unit(1, [softDelete(1)]), unit(2, [softDelete(2)], null), unit(3, [softDelete(3)]), unit(4, [softDelete(4), deleteProvider(4)]), unit(5, [softDelete(5)]), unit(6, [softDelete(6)])];
    const batches = batchUnits(units);
    expect(batches.map((b) => b.units.map((u) => u.id).join(','))).toEqual(['u1', 'u2', 'u3', 'u4', 'u5,u6']);
    expect(batches.map((b) => b.start)).toEqual([0, 1, 2, 3, 4]);
    expect(batches[1]?.footprint).toBeUndefined();
    expect(batches[4]?.footprint).toEqual(['k5', 'k6']);
    expect(batches[0]?.shapes).toBeUndefined();
  });
});

describe('writeOrder (the order of an apply batch\'s writes)', () => {
  const kinds = { R: 'remove-provider-allocations', D: 'delete-provider', S: 'soft-delete-compute-node', K: 'rekey-provider' } as const;
  /** Each unit's changes as letters (R, D, S, K), flattened unit by unit as commitGroup does. */
  function batch(...units: string[]): BatchedChange[] {
    return units.flatMap((letters, u) => [...letters].map((l) => ({ unit: `u${u + 1}`, change: { kind: kinds[l as keyof typeof kinds] } as unknown as Change })));
  }

  it('gathers the same step of every unit into one run: [R,D] units write every R, then every D', () => {
    expect(writeOrder(batch('RD', 'RD', 'RD'))).toEqual([
      [0, 2, 4],
      [1, 3, 5],
    ]);
  });

  it('keeps each unit in its order when the units differ, taking the kind most heads have (the first unit\'s on a tie)', () => {
    // u1: R R D (0 1 2), u2: R D (3 4)
    expect(writeOrder(batch('RRD', 'RD'))).toEqual([[0, 3], [1], [2, 4]]);
    // u1: D (0), u2: R D (1 2), u3: R D (3 4): R at two heads goes first
    expect(writeOrder(batch('D', 'RD', 'RD'))).toEqual([
      [1, 3],
      [0, 2, 4],
    ]);
  });

  it('writes a change without a form for several alone, as soon as it heads its unit', () => {
    // u1: K D (0 1), u2: D (2)
    expect(writeOrder(batch('KD', 'D'))).toEqual([[0], [1, 2]]);
  });

  it('never puts two changes of one unit in a run', () => {
    expect(writeOrder(batch('DD'))).toEqual([[0], [1]]);
    expect(writeOrder([{ unit: 'a', change: { kind: 'delete-provider' } as unknown as Change }, { unit: 'b', change: { kind: 'delete-provider' } as unknown as Change }, { unit: 'a', change: { kind: 'delete-provider' } as unknown as Change }])).toEqual([[0, 1], [2]]);
  });

  it('on any batch: every change once, each unit in its order, each run one kind and at most one change a unit', () => {
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const units = Array.from({ length: 1 + next(6) }, () => Array.from({ length: 1 + next(4) }, () => 'RDSK'[next(4)]).join(''));
      const changes = batch(...units);
      const runs = writeOrder(changes);
      const order = runs.flat();
      expect([...order].sort((a, b) => a - b)).toEqual(changes.map((_, i) => i));
      for (const run of runs) {
        expect(new Set(run.map((i) => changes[i]?.change.kind)).size).toBe(1);
        expect(new Set(run.map((i) => changes[i]?.unit)).size).toBe(run.length);
      }
      for (const u of new Set(changes.map((c) => c.unit))) {
        const mine = order.filter((i) => changes[i]?.unit === u);
        expect(mine).toEqual([...mine].sort((a, b) => a - b));
      }
    }
  });
});
