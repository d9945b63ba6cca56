import { describe, expect, it } from 'vitest';
import { renderPrettyTable, textWidth } from '../../src/cli/prettytable.js';

describe('renderPrettyTable (prettytable 3.6 default style)', () => {
  it('centres every cell; odd-length text gets the extra space on the right', () => {
    // width 5 for "ab" (even): excess 3 -> 2 left, 1 right; "abc" (odd) in width 4: 0 left... see below
    const out = renderPrettyTable(['Hostname'], [['abc'], ['ab']]);
    expect(out.split('\n')).toEqual([
      '+----------+',
      '| Hostname |',
      '+----------+',
      '|   abc    |',
      '|    ab    |',
      '+----------+',
    ]);
  });

  it('prints an empty table as header between two rules and one more rule', () => {
    expect(renderPrettyTable(['Cell Name', 'Cell UUID', 'Hostname'], [])).toBe(
      [
        '+-----------+-----------+----------+',
        '| Cell Name | Cell UUID | Hostname |',
        '+-----------+-----------+----------+',
        '+-----------+-----------+----------+',
      ].join('\n'),
    );
  });

  it('widens columns to the longest cell and centres the header too', () => {
    const out = renderPrettyTable(['Name', 'Disabled'], [['cell1', 'False'], ['cell0', 'True']]);
    expect(out.split('\n')).toEqual([
      '+-------+----------+',
      '|  Name | Disabled |',
      '+-------+----------+',
      '| cell1 |  False   |',
      '| cell0 |   True   |',
      '+-------+----------+',
    ]);
  });

  it('counts wide characters as two columns', () => {
    expect(textWidth('abc')).toBe(3);
    expect(textWidth('日本')).toBe(4);
  });
});
