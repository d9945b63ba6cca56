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

/** Progress lines on stderr for long reads: on a terminal, or when asked for. */
export function progressReporter(ctx: CommandContext, verbose: boolean): ((line: string) => void) | undefined {
  return ctx.stderrIsTty || verbose ? (line) => ctx.reporter.warn(line) : undefined;
}
