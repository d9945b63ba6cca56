// osc-style output of the listing commands (compute_node list, audit, the
// plans' dry runs): -f table|json|value|csv and -c COLUMN, as
// python-openstackclient (cliff) users expect. `-f` is --format's short
// spelling. value: the cells of each row separated by one space, no header
// (cliff's value formatter, for `while read` loops); csv: a header line, then
// the rows, strings quoted (cliff's default QUOTE_NONNUMERIC), NULL empty.
import { ReconcileError } from '../errors.js';
import type { RunContext } from './context.js';
import { paletteFor } from './colour.js';
import { renderTable, type TableCell } from './render-table.js';
import type { OptionSpec } from './option-spec.js';

export const LISTING_FORMATS = ['table', 'json', 'value', 'csv'] as const;
export type ListingFormat = (typeof LISTING_FORMATS)[number];

export const LISTING_FORMAT_OPTION: OptionSpec = {
  flags: '--format <format>',
  short: '-f',
  description: 'output format: table; json (one document on stdout, see its schema); value (the cells of each row, space-separated, no header); csv',
  choices: LISTING_FORMATS,
  defaultValue: 'table',
};

export const COLUMN_OPTION: OptionSpec = {
  flags: '--column <column>',
  short: '-c',
  description: 'with -f table, value or csv: show only this column (repeatable; columns print in the order given)',
  repeatable: true,
};

/** Columns that hold commands to copy: a fitted table never wraps them. */
const COMMAND_COLUMNS: ReadonlySet<string> = new Set(['suggestion', 'command']);

export interface Listing {
  readonly headers: readonly string[];
  readonly rows: ReadonlyArray<readonly TableCell[]>;
}

export function listingFormat(o: Readonly<Record<string, unknown>>): ListingFormat {
  const f = o['format'];
  return (LISTING_FORMATS as readonly unknown[]).includes(f) ? (f as ListingFormat) : 'table';
}

/** -c as given, checked against the headers before anything is read (exit 127 on a typo). */
export function columnsOption(o: Readonly<Record<string, unknown>>, headers: readonly string[]): string[] | undefined {
  const given = o['column'];
  if (!Array.isArray(given) || given.length === 0) return undefined;
  const columns = given.map(String);
  if (o['format'] === 'json') throw new ReconcileError('usage', '-c/--column selects the columns of -f table, value or csv; the JSON document is always whole');
  for (const c of columns) {
    if (!headers.includes(c)) throw new ReconcileError('usage', `unknown column "${c}": the columns are ${headers.join(', ')}`);
  }
  return columns;
}

export function selectColumns(listing: Listing, columns: readonly string[] | undefined): Listing {
  if (columns === undefined) return listing;
  const index = columns.map((c) => listing.headers.indexOf(c));
  return { headers: columns, rows: listing.rows.map((row) => index.map((i) => row[i] ?? null)) };
}

/** The listing as text ending in a newline; `style` colours table cells only. */
export function renderListing(
  listing: Listing,
  format: 'table' | 'value' | 'csv',
  ctx: Pick<RunContext, 'stdoutColumns' | 'stdoutIsTty' | 'env'>,
  style?: (header: string, text: string) => string,
): string {
  if (format === 'value') return listing.rows.map((row) => row.map(plain).join(' ') + '\n').join('');
  if (format === 'csv') return [listing.headers.map(csvCell), ...listing.rows.map((row) => row.map(csvCell))].map((cells) => cells.join(',') + '\n').join('');
  const palette = paletteFor(ctx);
  return (
    renderTable(listing.headers, listing.rows, {
      // A terminal that reports no usable width (0 under some pseudo-terminals) is treated as a pipe.
      ...(ctx.stdoutColumns === undefined || ctx.stdoutColumns < 20 ? {} : { maxWidth: ctx.stdoutColumns }),
      keepWhole: (i: number) => COMMAND_COLUMNS.has(listing.headers[i] as string),
      ...(style === undefined || !palette.enabled ? {} : { style: (i: number, text: string) => style(listing.headers[i] as string, text) }),
    }) + '\n'
  );
}

function plain(cell: TableCell): string {
  // "-" as in the table: an empty word would shift the fields of `read a b c`.
  return cell === null ? '-' : String(cell).replace(/[\r\n\t]+/g, ' ');
}

function csvCell(cell: TableCell | string): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return String(cell);
  return '"' + cell.replace(/"/g, '""') + '"';
}
