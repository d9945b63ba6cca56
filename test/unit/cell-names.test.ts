// The one rule that names a cell in human text (src/domain/cell-names.ts).
import { describe, expect, it } from 'vitest';
import { cellNamer } from '../../src/domain/cell-names.js';
import { resolveCell } from '../../src/domain/plan-scope.js';

const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';
const C = 'cccccccc-0000-4000-8000-000000000003';
const D = 'dddddddd-0000-4000-8000-000000000004';

describe('cellNamer', () => {
  it('names a cell by its own name, and by its uuid when it has none or shares it', () => {
    const cells = [
      { uuid: A, name: 'cell1' },
      { uuid: B, name: 'twin' },
      { uuid: C, name: 'twin' },
      { uuid: D, name: null },
    ];
    const name = cellNamer(cells);
    expect([A, B, C, D].map(name)).toEqual(['cell1', B, C, D]);
    // A uuid is matched whatever its case; a cell not in the list is its uuid as given.
    expect(name(A.toUpperCase())).toBe('cell1');
    expect(name('eeeeeeee-0000-4000-8000-000000000005')).toBe('eeeeeeee-0000-4000-8000-000000000005');
  });

  it('does not take an empty name, a blank one or one shaped like a uuid', () => {
    const name = cellNamer([
      { uuid: A, name: '' },
      { uuid: B, name: '  ' },
      { uuid: C, name: 'eeeeeeee-0000-4000-8000-000000000005' },
    ]);
    expect([A, B, C].map(name)).toEqual([A, B, C]);
  });

  it('a name it prints finds its cell with --cell', () => {
    const cells = [
      { uuid: A, name: 'cell1' },
      { uuid: B, name: 'cell2' },
      { uuid: C, name: 'cell2' },
      { uuid: D, name: '' },
    ];
    const name = cellNamer(cells);
    for (const c of cells) expect(resolveCell(cells, name(c.uuid))).toBe(c.uuid);
  });
});
