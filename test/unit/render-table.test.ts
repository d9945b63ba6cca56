// The reconciliation tables' renderer (issue 18): the shape cli-table3 gave,
// on any number of rows; fitting to a terminal's width; -f value/csv and -c;
// colour decided by NO_COLOR/FORCE_COLOR and the terminal. Its speed is
// measured by the bench (bench/tables.ts, `npm run bench:tables`), not here.
import { describe, expect, it } from 'vitest';
import { fit, fitWidths, renderTable } from '../../src/cli/render-table.js';
import { columnsOption, renderListing, selectColumns } from '../../src/cli/listing.js';
import { colourLevel, loadColour, paletteFor, severityOf } from '../../src/cli/colour.js';
import { ReconcileError } from '../../src/errors.js';

const PIPE = { stdoutColumns: undefined, stdoutIsTty: false, env: {} };

describe('renderTable', () => {
  it('draws ASCII rules, left-aligned cells, "-" for NULL, as cli-table3 did', () => {
    expect(renderTable(['a', 'bb'], [['x', null], ['longer', 3]])).toBe(
      ['+--------+----+', '| a      | bb |', '+--------+----+', '| x      | -  |', '| longer | 3  |', '+--------+----+'].join('\n'),
    );
    expect(renderTable(['a', 'bb'], [])).toBe(['+---+----+', '| a | bb |', '+---+----+'].join('\n'));
  });

  it('keeps one row on one line and counts wide characters as two columns', () => {
    const text = renderTable(['name'], [['a\nb\tc'], ['日本']]);
    expect(text.split('\n')).toEqual(['+-------+', '| name  |', '+-------+', '| a b c |', '| 日本  |', '+-------+']);
  });

  it('renders 30,000 rows: every row one line, every line the same width, in order', () => {
    const rows = Array.from({ length: 30_000 }, (_, i) => [`node-${i}`, i % 2 === 0 ? 'up' : 'down', i, i % 7 === 0 ? null : 'x'.repeat(i % 13)]);
    const lines = renderTable(['host', 'service', 'n', 'note'], rows).split('\n');
    expect(lines).toHaveLength(30_000 + 4);
    const width = (lines[0] as string).length;
    for (const line of lines) expect(line.length).toBe(width);
    expect(lines[3]).toBe(`| node-0     | up      | 0     | -            |`);
    expect(lines[30_002]).toBe(`| node-29999 | down    | 29999 | ${'x'.repeat(29_999 % 13).padEnd(12)} |`);
  });

  it('fits a terminal: the widest columns are cut with "…", narrow ones keep their width, no line is longer', () => {
    const long = 'a long summary '.repeat(20).trim();
    const rows = [['unmapped-node', 'cell1', long, 'nova-reconcile cell_v2 discover_hosts --cell_uuid 4dde17f6-6b53-4318-915d-00c67a4771f4']];
    const lines = renderTable(['kind', 'cell', 'summary', 'suggestion'], rows, { maxWidth: 80 }).split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[3]).toContain('| unmapped-node | cell1 |');
    expect(lines[3]).toContain('…');
    // Piped: whole.
    expect(renderTable(['kind', 'cell', 'summary', 'suggestion'], rows)).toContain(long);
  });

  it('fitWidths and fit', () => {
    expect(fitWidths([10, 5], 100)).toEqual([10, 5]);
    const w = fitWidths([100, 5, 60], 60);
    expect(w[1]).toBe(5);
    expect(w.reduce((a, b) => a + b, 0) + 3 * 3 + 1).toBeLessThanOrEqual(60);
    expect(fit('abcdef', 4)).toBe('abc…');
    expect(fit('abc', 4)).toBe('abc');
  });

  it('a style colours the text but padding is measured without it', () => {
    const text = renderTable(['k'], [['ab']], { style: (_i, t) => `<${t}>` });
    expect(text.split('\n')[3]).toBe('| <ab> |');
    expect(text.split('\n')[1]).toBe('| k  |');
  });
});

describe('listings: -f value, csv and -c', () => {
  const listing = { headers: ['uuid', 'host', 'n'], rows: [['u1', 'h 1', 1], ['u2', null, 2], ['u"3', 'h,3', null]] };

  it('value: cells separated by a space, no header; csv: a header, strings quoted, NULL empty', () => {
    expect(renderListing(listing, 'value', PIPE)).toBe('u1 h 1 1\nu2 - 2\nu"3 h,3 -\n');
    expect(renderListing(listing, 'csv', PIPE)).toBe('"uuid","host","n"\n"u1","h 1",1\n"u2",,2\n"u""3","h,3",\n');
  });

  it('-c picks columns in the order given; an unknown column or -c with json is a usage error', () => {
    const cols = columnsOption({ column: ['n', 'uuid'] }, listing.headers);
    expect(renderListing(selectColumns(listing, cols), 'value', PIPE)).toBe('1 u1\n2 u2\n- u"3\n');
    expect(columnsOption({}, listing.headers)).toBeUndefined();
    expect(() => columnsOption({ column: ['nope'] }, listing.headers)).toThrow(ReconcileError);
    expect(() => columnsOption({ column: ['nope'] }, listing.headers)).toThrow(/unknown column "nope": the columns are uuid, host, n/);
    expect(() => columnsOption({ column: ['uuid'], format: 'json' }, listing.headers)).toThrow(/JSON document is always whole/);
  });

  it('a table on a terminal fits its width; piped it does not', () => {
    const wide = { headers: ['a', 'b'], rows: [['x'.repeat(200), 'y']] };
    expect(renderListing(wide, 'table', { ...PIPE, stdoutIsTty: true, stdoutColumns: 40 }).split('\n').every((l) => l.length <= 40)).toBe(true);
    expect(renderListing(wide, 'table', PIPE)).toContain('x'.repeat(200));
  });
});

describe('colour', () => {
  it('is off when piped, on a terminal unless NO_COLOR or TERM=dumb; FORCE_COLOR wins both ways', () => {
    expect(colourLevel({}, false)).toBe(0);
    expect(colourLevel({}, true)).toBe(1);
    expect(colourLevel({ NO_COLOR: '1' }, true)).toBe(0);
    expect(colourLevel({ NO_COLOR: '' }, true)).toBe(1);
    expect(colourLevel({ TERM: 'dumb' }, true)).toBe(0);
    expect(colourLevel({ FORCE_COLOR: '1' }, false)).toBe(1);
    expect(colourLevel({ FORCE_COLOR: '' }, false)).toBe(1);
    expect(colourLevel({ FORCE_COLOR: '3' }, false)).toBe(3);
    expect(colourLevel({ FORCE_COLOR: '0' }, true)).toBe(0);
    expect(colourLevel({ FORCE_COLOR: 'false' }, true)).toBe(0);
  });

  it('colours kinds by severity and plan verbs by what they do, only when enabled (chalk loaded by loadColour first)', async () => {
    const forced = { env: { FORCE_COLOR: '1' }, stdoutIsTty: false };
    await loadColour(forced);
    const on = paletteFor(forced);
    expect(on.kind('duplicate-compute-node')).toBe('\x1b[31m\x1b[1mduplicate-compute-node\x1b[22m\x1b[39m');
    expect(on.verb('soft-delete')).toBe('\x1b[31msoft-delete\x1b[39m');
    expect(on.verb('move')).toBe('\x1b[33mmove\x1b[39m');
    const off = paletteFor({ env: {}, stdoutIsTty: false });
    expect(off.kind('duplicate-compute-node')).toBe('duplicate-compute-node');
    expect(off.verb('soft-delete')).toBe('soft-delete');
    expect(severityOf('suspect-orphan-node')).toBe('info');
    expect(severityOf('stale-mapping')).toBe('warning');
  });
});
