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
  const body = rows.map((row) => headers.map((_, i) => cellText(row[i] ?? null)));
  const natural = headers.map((h) => textWidth(h));
  for (const row of body) {
    for (let i = 0; i < row.length; i++) {
      const w = textWidth(row[i] as string);
      if (w > (natural[i] as number)) natural[i] = w;
    }
  }
  const widths = options.maxWidth === undefined ? natural : fitWidths(natural, options.maxWidth);
  const style = options.style;
  const rule = '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+';
  const line = (cells: readonly string[], styled: boolean): string => {
    let out = '|';
    for (let i = 0; i < widths.length; i++) {
      const w = widths[i] as number;
      const fitted = fit(cells[i] as string, w);
      const pad = ' '.repeat(w - textWidth(fitted));
      out += ' ' + (styled && style !== undefined ? style(i, fitted) : fitted) + pad + ' |';
    }
    return out;
  };
  const out: string[] = [rule, line(headers, false)];
  if (body.length > 0) {
    out.push(rule);
    for (const row of body) out.push(line(row, true));
  }
  out.push(rule);
  return out.join('\n');
}

function cellText(value: TableCell): string {
  if (value === null) return '-';
  // One row, one line: a newline or tab inside a cell would break the rules.
  return String(value).replace(/[\r\n\t]+/g, ' ');
}

/** The smallest column width still shown in full: a cut header is kept readable. */
const MIN_WIDTH = 6;

/**
 * Narrow the widest columns to one common cap, the largest that makes the
 * table fit in maxWidth; columns already narrower than the cap keep their width.
 */
export function fitWidths(natural: readonly number[], maxWidth: number): number[] {
  const frame = 3 * natural.length + 1;
  const total = natural.reduce((a, b) => a + b, 0) + frame;
  if (total <= maxWidth) return [...natural];
  const capped = (cap: number): number[] => natural.map((w) => Math.min(w, Math.max(cap, Math.min(w, MIN_WIDTH))));
  const sum = (ws: readonly number[]): number => ws.reduce((a, b) => a + b, 0) + frame;
  let lo = 1;
  let hi = Math.max(...natural);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sum(capped(mid)) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return capped(lo);
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
