// What a command may use of the outside world. src/main.ts builds it from
// `process`; nothing else touches process.
import { wantSqliteDriver } from '../db/sqlite-driver.js';

export interface Output {
  write(text: string): void;
}

export interface RunContext {
  /** Data: tables, JSON documents, nova-manage's printed lines. */
  readonly stdout: Output;
  /** Everything else: progress, warnings, errors. */
  readonly stderr: Output;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly cwd: string;
  /** True when stderr is a terminal (progress lines may redraw). */
  readonly stderrIsTty: boolean;
  /** True when stdout is a terminal: tables fit its width, colour is allowed. */
  readonly stdoutIsTty: boolean;
  /** The terminal's width when stdout is one (undefined when piped). */
  readonly stdoutColumns: number | undefined;
  /** Peak resident set size so far, in kilobytes (for --stats). */
  maxRssKb(): number;
  /** The terminal's width when stderr is one (progress lines are cut to it). */
  readonly stderrColumns?: number;
  /** This process's id, for oslo.log-style log lines. */
  readonly pid?: number;
  /**
   * The command line that runs this tool, for the commands it prints:
   * `nova-reconcile` when that is on PATH, else `node /path/bin/nova-reconcile`.
   */
  readonly selfCommand?: string;
  /** SIGINT/SIGTERM, delivered gracefully while an apply holds them (main.ts). */
  readonly interrupts?: Interrupts;
}

/**
 * How an apply learns of Ctrl-C or SIGTERM. Outside `hold`, the signal ends
 * the process at once (nothing is being written). While held, the first
 * signal aborts `signal` (the apply starts no new unit and lets the units in
 * flight finish), and a second one ends the process at once.
 */
export interface Interrupts {
  readonly signal: AbortSignal;
  /** Make signals graceful until the returned release is called. */
  hold(): () => void;
}

/** The exit code of a run stopped by a signal, as a shell reports it: 128 + its number. */
export function signalExitCode(reason: unknown): number {
  return reason === 'SIGTERM' ? 143 : 130;
}

/** NOVA_RECONCILE_AUDIT_WHOLE=1, a developer's switch (CONTRIBUTING.md): audit reads every cell at once, to compare with its walk by cell. */
export function auditReadsWhole(ctx: Pick<RunContext, 'env'>): boolean {
  return ctx.env['NOVA_RECONCILE_AUDIT_WHOLE'] === '1';
}

/**
 * NOVA_RECONCILE_SQLITE_DRIVER=better-sqlite3|node:sqlite, a developer's
 * switch (CONTRIBUTING.md): SQLite is opened with that driver or not at all
 * (db/sqlite-driver.ts), so that a test knows which one ran. Unset, the
 * first that serves is taken.
 */
export function useSqliteDriverSwitch(ctx: Pick<RunContext, 'env'>): void {
  const name = ctx.env['NOVA_RECONCILE_SQLITE_DRIVER'];
  wantSqliteDriver(name === undefined || name === '' ? undefined : name);
}
