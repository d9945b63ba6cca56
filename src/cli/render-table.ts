// Plain tables for the reconciliation commands (they owe nova-manage no
// byte-for-byte compatibility, unlike prettytable.ts). ASCII rules, so the
// output reads the same in a terminal, a cron mail and a CI log; cells are
// left-aligned and never wrapped, so one row stays one line that grep can
// find. Rendering is one pass to measure and one to write: linear in the
// rows (cli-table3, used before, took 19 s for 6,000 rows; issue 18).
//
// On a terminal (maxWidth given) the widest columns are narrowed until the
// table fits, and their long cells are cut with "…": a 400-character line
// wrapping over five screen lines is unreadable. Piped output is never cut.
import { textWidth as fullWidth } from './prettytable.js';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Display columns; printable ASCII (nearly every cell) is its length. */
function textWidth(text: string): number {
  return PRINTABLE_ASCII.test(text) ? text.length : fullWidth(text);
}

export type TableCell = string | number | null;

export interface TableOptions {
  /** The terminal's width: fit the table into it. Undefined (piped): never cut a cell. */
  readonly maxWidth?: number;
  /** Decorates a cell's visible text (colour); padding is measured on the plain text. */
  readonly style?: (column: number, text: string) => string;
}

/** A table with a header row; NULL cells print as "-". Returns the text without a final newline. */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly TableCell[]>, options: TableOptions = {}): string {
  const n = headers.length;
  // Each cell's text and display width, measured once.
  const texts: string[] = new Array<string>(rows.length * n);
  const cellWidths = new Int32Array(rows.length * n);
  const natural = headers.map((h) => textWidth(h));
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as readonly TableCell[];
    for (let i = 0; i < n; i++) {
      const text = cellText(row[i] ?? null);
      const w = textWidth(text);
      texts[r * n + i] = text;
      cellWidths[r * n + i] = w;
      if (w > (natural[i] as number)) natural[i] = w;
    }
  }
  const widths = options.maxWidth === undefined ? natural : fitWidths(natural, options.maxWidth, headers.map((h) => textWidth(h)));
  const style = options.style;
  const rule = '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+';
  const spaces = ' '.repeat(Math.max(0, ...widths));
  const cell = (text: string, width: number, i: number, styled: boolean): string => {
    const w = widths[i] as number;
    const shown = width <= w ? text : fit(text, w);
    const pad = spaces.slice(0, w - (width <= w ? width : textWidth(shown)));
    return ' ' + (styled && style !== undefined ? style(i, shown) : shown) + pad + ' |';
  };
  const out: string[] = [rule, '|' + headers.map((h, i) => cell(h, textWidth(h), i, false)).join('')];
  if (rows.length > 0) {
    out.push(rule);
    for (let r = 0; r < rows.length; r++) {
      let line = '|';
      for (let i = 0; i < n; i++) line += cell(texts[r * n + i] as string, cellWidths[r * n + i] as number, i, true);
      out.push(line);
    }
  }
  out.push(rule);
  return out.join('\n');
}

function cellText(value: TableCell): string {
  if (value === null) return '-';
  if (typeof value === 'number') return String(value);
  // One row, one line: a newline or tab inside a cell would break the rules.
  return CONTROL.test(value) ? value.replace(/[\r\n\t]+/g, ' ') : value;
}

const CONTROL = /[\r\n\t]/;

/** The smallest width a cut column keeps, so that a cut cell still says something. */
const MIN_WIDTH = 6;

/**
 * Narrow the widest columns to one common cap, the largest that makes the
 * table fit in maxWidth; columns already narrower than the cap keep their
 * width. Headers stay whole when that still fits (then only data is cut);
 * otherwise every column may go down to MIN_WIDTH.
 */
export function fitWidths(natural: readonly number[], maxWidth: number, headers?: readonly number[]): number[] {
  const frame = 3 * natural.length + 1;
  const sum = (ws: readonly number[]): number => ws.reduce((a, b) => a + b, 0) + frame;
  if (sum(natural) <= maxWidth) return [...natural];
  const floors = [
    ...(headers === undefined ? [] : [natural.map((w, i) => Math.min(w, Math.max(MIN_WIDTH, headers[i] ?? 0)))]),
    natural.map((w) => Math.min(w, MIN_WIDTH)),
  ];
  for (const floor of floors) {
    const capped = (cap: number): number[] => natural.map((w, i) => Math.min(w, Math.max(cap, floor[i] as number)));
    if (sum(capped(1)) > maxWidth && floor !== floors[floors.length - 1]) continue;
    let lo = 1;
    let hi = Math.max(...natural);
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (sum(capped(mid)) <= maxWidth) lo = mid;
      else hi = mid - 1;
    }
    return capped(lo);
  }
  return [...natural];
}

/** The text cut to width display columns, ending in "…" when cut. */
export function fit(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  let out = '';
  let w = 0;
  for (const ch of text) {
    const cw = textWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}
