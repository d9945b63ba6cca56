// The one error type that crosses layers. Every user-facing failure is a
// ReconcileError with a kind; src/cli/exit-codes.ts maps kinds to each command
// family's documented exit codes, and src/main.ts prints it as one line
// (the stack only with --debug). Driver errors are wrapped with `cause`.

export type ErrorKind =
  /** Wrong argv: unknown option, missing argument, malformed uuid. */
  | 'usage'
  /** Bad input file or value (ironic nodes file, journal, host name). */
  | 'input'
  /** Configuration missing, unreadable or invalid (files, URLs). */
  | 'config'
  /** A database could not be reached or refused the credentials. */
  | 'connection'
  /** A database is reachable but is not (a supported version of) Nova's. */
  | 'schema'
  /** A named object (cell, host, node, provider) does not exist. */
  | 'not-found'
  /** Another run holds the session lock. */
  | 'lock'
  /**
   * Ground truth that cannot be right: an empty ironic node list, one that
   * knows too few of the cells' ironic nodes, a cell whose services table is
   * empty while it has compute nodes. An error, never a verdict.
   */
  | 'implausible'
  /** A bug or an unexpected state. */
  | 'internal';

export class ReconcileError extends Error {
  readonly kind: ErrorKind;
  /** The next step for the operator, printed after the message. */
  readonly hint: string | undefined;
  /** A finer, stable tag where a family's exit code depends on it (e.g. 'config-files'). */
  readonly tag: string | undefined;
  /**
   * True when the run had already changed something before it failed (an
   * apply that committed units, or a commit whose outcome is unknown): the
   * JSON error document's `changed`. Undefined: nothing was.
   */
  readonly changed: boolean | undefined;

  constructor(kind: ErrorKind, message: string, options: { hint?: string; cause?: unknown; tag?: string; changed?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ReconcileError';
    this.kind = kind;
    this.hint = options.hint;
    this.tag = options.tag;
    this.changed = options.changed;
  }
}

/**
 * The failure of a run that had changed something before it failed: the same
 * error, saying so (the JSON error document's `changed`). Anything else
 * becomes an internal error that says so. Unchanged when `changed` is false.
 */
export function failedAfterChanges(err: unknown, changed: boolean): unknown {
  if (!changed) return err;
  if (err instanceof ReconcileError)
    return new ReconcileError(err.kind, err.message, { ...(err.hint === undefined ? {} : { hint: err.hint }), ...(err.tag === undefined ? {} : { tag: err.tag }), cause: err.cause, changed: true });
  return new ReconcileError('internal', `unexpected error: ${err instanceof Error ? err.message : String(err)}`, { cause: err, changed: true });
}

export function isReconcileError(err: unknown): err is ReconcileError {
  return err instanceof ReconcileError;
}

/** Exhaustiveness guard for switches over discriminated unions. */
export function assertNever(value: never, what = 'value'): never {
  throw new ReconcileError('internal', `unexpected ${what}: ${JSON.stringify(value)}`);
}
