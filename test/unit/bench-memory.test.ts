// bench:memory's pure parts: the cloud shapes it is given, and its report's
// ratios of C cells to one cell of the same size (figures made up here).
import { describe, expect, it } from 'vitest';
import { parseShapes, renderMemoryReport, type MemoryRow } from '../../bench/memory.js';

const row = (cells: number, hostsPerCell: number, command: string, seconds: number, rssMb: number, same?: boolean): MemoryRow => ({
  shape: { cells, hostsPerCell },
  command,
  seconds,
  peakRssKb: rssMb * 1024,
  ...(same === undefined ? {} : { old: { same, peakRssKb: rssMb * 2048, seconds: seconds * 2 } }),
});

describe('bench:memory', () => {
  it('takes CELLSxHOSTS shapes and refuses anything else', () => {
    expect(parseShapes('1x30000, 10x30000')).toEqual([
      { cells: 1, hostsPerCell: 30000 },
      { cells: 10, hostsPerCell: 30000 },
    ]);
    for (const bad of ['x3', '0x10', '3x', '3*10', '']) expect(() => parseShapes(bad)).toThrow(/CELLSxHOSTS/);
  });

  it('gives each C-cell cloud its RSS and time against one cell of the same size, and says when an output differs', () => {
    const text = renderMemoryReport([row(1, 30000, 'audit', 2, 150, true), row(10, 30000, 'audit', 20, 180, false), row(1, 100000, 'audit', 6, 250, true)]);
    expect(text).toMatch(/\| audit +\| 10 × 30,000 \/ 1 × 30,000 \| +1\.20 \| +10\.00 \|/);
    expect(text).toContain('stdout DIFFERS');
    expect(text).toContain('stdout identical');
    // No 10-cell cloud of 100,000 hosts per cell: no ratio for that size.
    expect(text.match(/\/ 1 × 100,000/)).toBeNull();
  });
});
