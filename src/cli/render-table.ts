// Plain tables for the reconciliation commands (they owe nova-manage no
// byte-for-byte compatibility, unlike prettytable.ts). ASCII rules, so the
// output reads the same in a terminal, a cron mail and a CI log; one pass to
// measure and one to write, linear in the rows.
//
// Piped (no maxWidth), every row is one line that grep can find. On a
// terminal a table wider than the screen wraps its long cells at spaces over
// several lines; no identifier is ever cut, and a command (keepWhole) stays
// on one line, because operators copy both. When even the longest words do
// not fit, the table becomes one block per row, `field: value`, as mysql's \G.
import { textWidth as fullWidth } from './prettytable.js';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Display columns; printable ASCII (nearly every cell) is its length. */
function textWidth(text: string): number {
  return PRINTABLE_ASCII.test(text) ? text.length : fullWidth(text);
}

export type TableCell = string | number | null;

export interface TableOptions {
  /** The width to fit the table into (a terminal's). Undefined (piped): one row a line, however wide. */
  readonly maxWidth?: number;
  /** Columns whose cells never wrap (commands to copy). */
  readonly keepWhole?: (column: number) => boolean;
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
  const { maxWidth } = options;
  if (maxWidth === undefined || tableWidth(natural) <= maxWidth || rows.length === 0) return renderLines(headers, texts, cellWidths, natural, options);
  const least = leastWidths(headers, texts, options.keepWhole);
  if (tableWidth(least) > maxWidth) return renderRecords(headers, texts, maxWidth, options);
  return renderWrapped(headers, texts, spreadWidths(natural, least, maxWidth), options);
}

/** The width of a table whose columns are `widths` wide: two spaces and a rule per column, one rule more. */
function tableWidth(widths: readonly number[]): number {
  return widths.reduce((a, b) => a + b, 0) + 3 * widths.length + 1;
}

/** One row a line, every cell whole. */
function renderLines(headers: readonly string[], texts: readonly string[], cellWidths: Int32Array, widths: readonly number[], options: TableOptions): string {
  const n = headers.length;
  const style = options.style;
  const rule = ruleOf(widths);
  const spaces = ' '.repeat(Math.max(0, ...widths));
  const cell = (text: string, width: number, i: number, styled: boolean): string =>
    ' ' + (styled && style !== undefined ? style(i, text) : text) + spaces.slice(0, (widths[i] as number) - width) + ' |';
  const out: string[] = [rule, '|' + headers.map((h, i) => cell(h, textWidth(h), i, false)).join('')];
  const rowCount = texts.length / Math.max(1, n);
  if (rowCount > 0) {
    out.push(rule);
    for (let r = 0; r < rowCount; r++) {
      let line = '|';
      for (let i = 0; i < n; i++) line += cell(texts[r * n + i] as string, cellWidths[r * n + i] as number, i, true);
      out.push(line);
    }
  }
  out.push(rule);
  return out.join('\n');
}

function ruleOf(widths: readonly number[]): string {
  return '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+';
}

/** Each column's narrowest width that cuts nothing: its longest word (its longest cell where kept whole), its header whole. */
function leastWidths(headers: readonly string[], texts: readonly string[], keepWhole: ((column: number) => boolean) | undefined): number[] {
  const n = headers.length;
  const least = headers.map((h) => textWidth(h));
  for (let k = 0; k < texts.length; k++) {
    const i = k % n;
    const text = texts[k] as string;
    const w = keepWhole?.(i) === true ? textWidth(text) : longestWord(text);
    if (w > (least[i] as number)) least[i] = w;
  }
  return least;
}

function longestWord(text: string): number {
  let longest = 0;
  for (const word of text.split(' ')) longest = Math.max(longest, textWidth(word));
  return longest;
}

/**
 * Widths between `least` and `natural` that fill maxWidth: the widest
 * columns share one cap, the largest that fits; narrower ones keep their
 * natural width.
 */
export function spreadWidths(natural: readonly number[], least: readonly number[], maxWidth: number): number[] {
  const capped = (cap: number): number[] => natural.map((w, i) => Math.min(w, Math.max(cap, least[i] as number)));
  let lo = 0;
  let hi = Math.max(...natural);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (tableWidth(capped(mid)) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return capped(lo);
}

/** The table with each cell wrapped at spaces to its column's width; a row takes as many lines as its tallest cell. */
function renderWrapped(headers: readonly string[], texts: readonly string[], widths: readonly number[], options: TableOptions): string {
  const n = headers.length;
  const rule = ruleOf(widths);
  const block = (cells: readonly string[], styled: boolean): string[] => {
    const wrapped = cells.map((text, i) => wrapWords(text, widths[i] as number));
    const height = Math.max(...wrapped.map((lines) => lines.length));
    const lines: string[] = [];
    for (let l = 0; l < height; l++) {
      let line = '|';
      for (let i = 0; i < n; i++) {
        const text = wrapped[i]?.[l] ?? '';
        const shown = styled && options.style !== undefined && text !== '' ? options.style(i, text) : text;
        line += ' ' + shown + ' '.repeat((widths[i] as number) - textWidth(text)) + ' |';
      }
      lines.push(line);
    }
    return lines;
  };
  const out: string[] = [rule, ...block(headers, false), rule];
  for (let k = 0; k < texts.length; k += n) out.push(...block(texts.slice(k, k + n), true));
  out.push(rule);
  return out.join('\n');
}

/** Greedy word wrap at spaces; a word wider than `width` gets a line of its own, whole. */
export function wrapWords(text: string, width: number): string[] {
  if (textWidth(text) <= width) return [text];
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (word === '') continue;
    if (line === '') line = word;
    else if (textWidth(line) + 1 + textWidth(word) <= width) line += ' ' + word;
    else {
      lines.push(line);
      line = word;
    }
  }
  lines.push(line);
  return lines;
}

/** One block per row, `field: value` with the fields right-aligned, as mysql's \G; long values wrap at spaces under their start. */
function renderRecords(headers: readonly string[], texts: readonly string[], maxWidth: number, options: TableOptions): string {
  const n = headers.length;
  const label = Math.max(...headers.map((h) => textWidth(h)));
  const room = Math.max(1, maxWidth - label - 2);
  const indent = ' '.repeat(label + 2);
  const stars = '*'.repeat(Math.max(3, Math.min(27, Math.floor((maxWidth - 10) / 2))));
  const out: string[] = [];
  for (let k = 0, r = 1; k < texts.length; k += n, r++) {
    out.push(`${stars} ${r}. row ${stars}`);
    for (let i = 0; i < n; i++) {
      const text = texts[k + i] as string;
      const lines = options.keepWhole?.(i) === true ? [text] : wrapWords(text, room);
      const styled = options.style === undefined ? lines : lines.map((l) => (options.style as NonNullable<TableOptions['style']>)(i, l));
      const head = headers[i] as string;
      out.push(' '.repeat(label - textWidth(head)) + head + ': ' + (styled[0] ?? ''));
      for (const more of styled.slice(1)) out.push(indent + more);
    }
  }
  return out.join('\n');
}

function cellText(value: TableCell): string {
  if (value === null) return '-';
  if (typeof value === 'number') return String(value);
  // One row, one line: a newline or tab inside a cell would break the rules.
  return CONTROL.test(value) ? value.replace(/[\r\n\t]+/g, ' ') : value;
}

const CONTROL = /[\r\n\t]/;
