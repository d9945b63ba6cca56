// Plain tables for the reconciliation commands (they owe nova-manage no
// byte-for-byte compatibility, unlike prettytable.ts). ASCII rules and no
// colour, so the output reads the same in a terminal, a cron mail and a CI
// log; cells are left-aligned and never wrapped, so one row stays one line
// that grep can find.
import Table from 'cli-table3';

const ASCII = {
  top: '-',
  'top-mid': '+',
  'top-left': '+',
  'top-right': '+',
  bottom: '-',
  'bottom-mid': '+',
  'bottom-left': '+',
  'bottom-right': '+',
  left: '|',
  'left-mid': '+',
  mid: '-',
  'mid-mid': '+',
  right: '|',
  'right-mid': '+',
  middle: '|',
} as const;

export type TableCell = string | number | null;

/** A table with a header row; NULL cells print as "-". Returns the text without a final newline. */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly TableCell[]>): string {
  const table = new Table({ head: [...headers], chars: ASCII, style: { head: [], border: [], compact: true } });
  for (const row of rows) table.push(headers.map((_, i) => cellText(row[i] ?? null)));
  return table.toString();
}

function cellText(value: TableCell): string {
  return value === null ? '-' : String(value);
}
