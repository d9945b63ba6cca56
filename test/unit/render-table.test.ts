// The reconciliation tables' renderer (issue 18): the shape cli-table3 gave,
// on any number of rows; fitting to a terminal's width; -f value/csv and -c;
// colour decided by NO_COLOR/FORCE_COLOR and the terminal. Its speed is
// measured by the bench (bench/tables.ts, `npm run bench:tables`), not here.
import { describe, expect, it } from 'vitest';
import { renderTable, spreadWidths, wrapWords } from '../../src/cli/render-table.js';
import { columnsOption, renderListing, selectColumns } from '../../src/cli/listing.js';
import { colourLevel, loadColour, paletteFor, severityOf } from '../../src/cli/colour.js';
import { ReconcileError } from '../../src/errors.js';
import { tableWidth } from '../../src/cli/table-width.js';

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

  const UUID = '33509888-9e82-4645-b10f-8cf051f1a2b3';
  const COMMAND = `nova-reconcile cell_v2 discover_hosts --by-service --cell_uuid ${UUID}`;
  const SUMMARY = 'nova-compute service on host compute-1 has no host mapping: the scheduler cannot place servers on it';

  it('on a terminal, wraps long cells at spaces: no line is longer, every word and every kept-whole cell is whole', () => {
    const rows = [['unmapped-service', 'cell1', `node ${UUID}`, SUMMARY, 'discover_hosts']];
    const text = renderTable(['kind', 'cell', 'object', 'summary', 'fix'], rows, { maxWidth: 100, keepWhole: (i) => i === 4 });
    const lines = text.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    expect(text).toContain(UUID);
    expect(text).not.toContain('…');
    expect(lines[3]).toMatch(/^\| unmapped-service \| cell1 \| node +\| nova-compute/);
    expect(lines[4]).toMatch(/^\| +\| +\| 33509888-/);
    // Every word of the summary, in order, over the wrapped lines.
    const summaryColumn = lines.slice(3, -1).map((l) => (l.split('|')[4] as string).trim()).filter((w) => w !== '');
    expect(summaryColumn.join(' ')).toBe(SUMMARY);
    // Piped: one row, one line.
    expect(renderTable(['kind', 'cell', 'object', 'summary', 'fix'], rows).split('\n')).toHaveLength(5);
  });

  it('when the longest words cannot fit, prints one block per row (field: value) with kept-whole values on one line', () => {
    const rows = [['unmapped-service', 'cell1', SUMMARY, COMMAND], ['orphan-node', 'cell2', 'short', COMMAND]];
    const text = renderTable(['kind', 'cell', 'summary', 'suggestion'], rows, { maxWidth: 80, keepWhole: (i) => i === 3 });
    const lines = text.split('\n');
    expect(lines[0]).toBe(`${'*'.repeat(27)} 1. row ${'*'.repeat(27)}`);
    expect(lines[1]).toBe('      kind: unmapped-service');
    expect(lines[2]).toBe('      cell: cell1');
    expect(lines[3]?.startsWith('   summary: nova-compute service')).toBe(true);
    expect(lines[4]?.startsWith('            ')).toBe(true);
    expect(lines).toContain(`suggestion: ${COMMAND}`);
    expect(lines).toContain(`${'*'.repeat(27)} 2. row ${'*'.repeat(27)}`);
    for (const line of lines) if (!line.includes(COMMAND)) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('a table that fits is the same on a terminal as piped; an empty one too', () => {
    expect(renderTable(['a'], [['x']], { maxWidth: 80 })).toBe(renderTable(['a'], [['x']]));
    expect(renderTable(['a', 'b'], [], { maxWidth: 3 })).toBe(renderTable(['a', 'b'], []));
  });

  it('spreadWidths and wrapWords', () => {
    expect(spreadWidths([10, 5], [2, 2], 100)).toEqual([10, 5]);
    const w = spreadWidths([100, 5, 60], [10, 5, 10], 60);
    expect(w[1]).toBe(5);
    expect(w.reduce((a, b) => a + b, 0) + 3 * 3 + 1).toBeLessThanOrEqual(60);
    expect(w[0]).toBeGreaterThanOrEqual(10);
    expect(wrapWords('aa bb cc', 5)).toEqual(['aa bb', 'cc']);
    expect(wrapWords('aaaaaaa b', 3)).toEqual(['aaaaaaa', 'b']);
    expect(wrapWords('abc', 4)).toEqual(['abc']);
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

  it('a table on a terminal fits its width, never cutting a word; piped it is one row a line', () => {
    const wide = { headers: ['a', 'b'], rows: [['x '.repeat(100).trim(), 'y']] };
    expect(renderListing(wide, 'table', { ...PIPE, stdoutIsTty: true, stdoutColumns: 40 }).split('\n').every((l) => l.length <= 40)).toBe(true);
    expect(renderListing(wide, 'table', PIPE)).toContain('x '.repeat(100).trim());
    const word = { headers: ['a', 'b'], rows: [['x'.repeat(200), 'y']] };
    expect(renderListing(word, 'table', { ...PIPE, stdoutIsTty: true, stdoutColumns: 40 })).toContain(`a: ${'x'.repeat(200)}\n`);
  });

  it('keeps a command column (suggestion, command) whole on one line', () => {
    const command = `nova-reconcile compute_node cleanup_orphans --host ${'h'.repeat(30)} --apply`;
    const listing = { headers: ['kind', 'suggestion'], rows: [['orphan-node', command]] };
    expect(renderListing(listing, 'table', { ...PIPE, stdoutIsTty: true, stdoutColumns: 60 })).toContain(command);
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

describe('--max-width and --fit-width (cliff)', () => {
  const tty = { stdoutColumns: 100, env: {} };
  const pipe = { stdoutColumns: undefined, env: {} };
  it('fits a terminal by default and leaves a pipe alone', () => {
    expect(tableWidth({}, tty)).toBe(100);
    expect(tableWidth({}, pipe)).toBeUndefined();
  });
  it('--max-width N fits N columns, also piped; 0 turns fitting off; CLIFF_MAX_TERM_WIDTH when it is not given', () => {
    expect(tableWidth({ maxWidth: '70' }, pipe)).toBe(70);
    expect(tableWidth({ maxWidth: '0' }, tty)).toBeUndefined();
    expect(tableWidth({}, { ...pipe, env: { CLIFF_MAX_TERM_WIDTH: '90' } })).toBe(90);
    expect(tableWidth({ maxWidth: '70' }, { ...pipe, env: { CLIFF_MAX_TERM_WIDTH: '90' } })).toBe(70);
    expect(() => tableWidth({ maxWidth: 'wide' }, pipe)).toThrow(ReconcileError);
  });
  it('--fit-width fits the terminal, else $COLUMNS, else 80; CLIFF_FIT_WIDTH=1 does the same', () => {
    expect(tableWidth({ fitWidth: true }, tty)).toBe(100);
    expect(tableWidth({ fitWidth: true }, { ...pipe, env: { COLUMNS: '132' } })).toBe(132);
    expect(tableWidth({ fitWidth: true }, pipe)).toBe(80);
    expect(tableWidth({}, { ...pipe, env: { CLIFF_FIT_WIDTH: '1' } })).toBe(80);
  });
});
