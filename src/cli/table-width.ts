// cliff's table width options (python-openstackclient's --max-width and
// --fit-width, and their environment variables), turned into the width the
// tables of one run are fitted to.
import { ReconcileError } from '../errors.js';
import type { RunContext } from './context.js';
import type { OptionSpec } from './spec.js';

/** On every command that prints a reconciliation table. */
export const TABLE_WIDTH_OPTIONS: readonly OptionSpec[] = [
  {
    flags: '--max-width <columns>',
    description: 'with -f table: fit the table into this many columns, also when piped; 0 turns fitting off (default: $CLIFF_MAX_TERM_WIDTH, else the terminal\'s width on a terminal)',
  },
  { flags: '--fit-width', description: 'with -f table: fit the table to the terminal\'s width, or $COLUMNS (else 80) when stdout is not a terminal (also CLIFF_FIT_WIDTH=1)' },
];

/**
 * The width tables are fitted to, undefined for one row a line: --max-width
 * (then CLIFF_MAX_TERM_WIDTH), --fit-width (then CLIFF_FIT_WIDTH=1), else the
 * terminal's width when stdout is one.
 */
export function tableWidth(o: Readonly<Record<string, unknown>>, ctx: Pick<RunContext, 'stdoutColumns' | 'env'>): number | undefined {
  const given = o['maxWidth'] ?? ctx.env['CLIFF_MAX_TERM_WIDTH'];
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isInteger(n)) throw new ReconcileError('usage', `--max-width takes a whole number of columns (0 turns fitting off), not "${String(given)}"`);
    if (n > 0) return Math.max(20, n);
    return undefined;
  }
  if (o['fitWidth'] === true || ctx.env['CLIFF_FIT_WIDTH'] === '1') {
    const columns = ctx.stdoutColumns ?? Number(ctx.env['COLUMNS']);
    return Number.isInteger(columns) && columns >= 20 ? columns : 80;
  }
  return ctx.stdoutColumns;
}
