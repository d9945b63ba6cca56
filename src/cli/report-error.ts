// The one translator from errors to what people see. Compatible commands
// print nova-manage's "An error has occurred:" on stdout and exit 255 (but
// with a one-line reason instead of a traceback); reconciliation commands
// print one line on stderr. The stack appears only with --debug. Every
// message goes through redactUrl so no password is ever printed.
import { redactUrl } from '../config/mask-url.js';
import type { ConfigSource } from '../config/types.js';
import { ReconcileError } from '../errors.js';
import type { RunContext } from './context.js';
import { jsonDocument } from './json-contract.js';
import { exitCodeFor, type CommandFamily } from './exit-codes.js';
import { withConfigArguments } from './suggestions.js';

export interface ReportOptions {
  readonly ctx: RunContext;
  readonly family: CommandFamily;
  readonly debug: boolean;
  readonly format: string;
  /** --config-file/--config-dir as given: a hint's command repeats them. */
  readonly configSources?: readonly ConfigSource[];
}

export function reportError(err: unknown, { ctx, family, debug, format, configSources = [] }: ReportOptions): number {
  const known = err instanceof ReconcileError ? err : undefined;
  const kind = known?.kind ?? 'internal';
  const message = redactUrl(oneLine(known?.message ?? describeUnexpected(err)));
  const hint = known?.hint === undefined ? undefined : redactUrl(oneLine(withConfigArguments(known.hint, configSources)));
  const code = exitCodeFor(kind, family, known?.tag === 'config-files');

  if (format === 'json') {
    // schemas/error.schema.json. changed: true only when an apply had committed something before it failed (its journal lists what).
    ctx.stdout.write(JSON.stringify(jsonDocument({ changed: known?.changed === true, error: { kind, message, ...(hint === undefined ? {} : { hint }), exit_code: code } })) + '\n');
  } else if (family === 'compatible' && code === 255) {
    ctx.stdout.write(`An error has occurred:\n${message}\n`);
    if (hint !== undefined) ctx.stderr.write(`hint: ${hint}\n`);
  } else {
    ctx.stderr.write(`nova-reconcile: error: ${message}${hint === undefined ? '' : ` (${hint})`}\n`);
  }
  if (debug) ctx.stderr.write(redactUrl(stackOf(err)) + '\n');
  return code;
}

function describeUnexpected(err: unknown): string {
  if (err instanceof Error) return `unexpected error: ${err.message}`;
  return `unexpected error: ${String(err)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function stackOf(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && depth < 5; depth++) {
    parts.push(cur instanceof Error ? (cur.stack ?? cur.message) : String(cur));
    cur = cur instanceof Error ? cur.cause : undefined;
    if (cur !== undefined) parts.push('Caused by:');
  }
  return parts.join('\n');
}
