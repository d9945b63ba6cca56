// The one place a command's result becomes output: stdout (table, value, csv,
// JSON or a report's text), the stderr lines that follow it, and the exit code.
import { assertNever } from '../errors.js';
import { paletteFor } from './colour.js';
import type { RunContext } from './context.js';
import { renderJson } from './json-contract.js';
import { renderListing } from './listing.js';
import { renderFindings } from './render-findings.js';
import { writePlanOutcome } from './render-plan-outcome.js';
import type { CommandResult } from './results.js';

type Writer = Pick<RunContext, 'stdout' | 'stderr' | 'env' | 'stdoutIsTty' | 'stdoutColumns'>;

/** Print the result; returns the exit code, or throws the failure of a `failed` result once its text is out. */
export function writeResult(ctx: Writer, result: CommandResult): number {
  switch (result.kind) {
    case 'report':
      if (result.text !== '') ctx.stdout.write(result.text);
      if (result.after !== undefined) ctx.stderr.write(result.after);
      return result.exitCode;
    case 'document':
      ctx.stdout.write(renderJson(result.document));
      if (result.after !== undefined) ctx.stderr.write(result.after);
      return result.exitCode;
    case 'listing': {
      const { highlight } = result;
      const palette = paletteFor(ctx);
      ctx.stdout.write(renderListing(result.listing, result.format, ctx, highlight === undefined ? undefined : (header, text) => highlight(palette, header, text)));
      return result.exitCode;
    }
    case 'findings':
      ctx.stdout.write(renderFindings(result.findings, result.cells, result.format, result.columns, ctx));
      return result.exitCode;
    case 'failed':
      ctx.stdout.write(result.text);
      throw result.error;
    case 'plan':
      return writePlanOutcome(ctx, result);
    default:
      return assertNever(result);
  }
}
