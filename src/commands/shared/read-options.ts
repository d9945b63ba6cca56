// What the read-only commands share: the --cell option's form and the progress lines of a long read.
import { stringOption } from '../../cli/options.js';
import type { CommandContext, CommandOptions } from '../../cli/spec.js';
import { ReconcileError } from '../../errors.js';

/** The --cell of a read-only command: its form only (the name or uuid is resolved against cell_mappings). */
export function cellOption(raw: CommandOptions): string | undefined {
  const value = stringOption(raw, 'cell');
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new ReconcileError('usage', '--cell needs a value');
  return value;
}

/**
 * The progress of a long read: on a terminal (or with --progress) each read
 * is a phase of the one status line, redrawn in place; with --verbose and no
 * terminal, one line per read.
 */
export function progressReporter(ctx: CommandContext, verbose: boolean): ((line: string) => void) | undefined {
  if (showsStatusLine(ctx)) return (line) => ctx.reporter.phase(line.replace(/…$/, ''));
  return verbose ? (line) => ctx.reporter.warn(line) : undefined;
}

/** Whether this run shows the one status line: stderr is a terminal, or --progress asked for it. */
export function showsStatusLine(ctx: CommandContext): boolean {
  return ctx.stderrIsTty || ctx.progress === true;
}
