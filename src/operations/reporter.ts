// How an operation tells the operator what it is doing without writing
// anywhere itself: lines on stderr (warnings, where a journal is), --debug
// lines, and one progress line. The command line makes one per run
// (cli/progress.ts createReporter).
export interface Reporter {
  /** A line for the operator on stderr; the progress line is erased first. */
  warn(line: string): void;
  /** Set with --debug only. */
  readonly debug?: (line: string) => void;
  /** A new phase of the progress line; `total` undefined when unknown. */
  phase(name: string, total?: number): void;
  /** Progress in the current phase. */
  update(done: number, detail?: string): void;
  /** Erase the progress line (before other output is written). */
  clear(): void;
}

/** A process's Ctrl-C and SIGTERM: `signal` aborts, and while held they stop new work instead of the process. */
export interface InterruptControl {
  readonly signal: AbortSignal;
  /** Make signals graceful until the returned release is called. */
  hold(): () => void;
}

/** Where opening the deployment reports: an unknown alembic head's warning, and with --debug each database's release. */
export function deploymentReport(reporter: Reporter | undefined): { warn?: (line: string) => void; debug?: (line: string) => void } {
  if (reporter === undefined) return {};
  return reporter.debug === undefined ? { warn: reporter.warn } : { warn: reporter.warn, debug: reporter.debug };
}
