// Exit codes are a contract (docs/operations/commands.md, "Exit codes"). The compatible commands keep
// nova-manage's; the reconciliation commands share one table. Errors map to
// codes by their kind and the family of the command that failed.
import type { ErrorKind } from '../errors.js';
import { assertNever } from '../errors.js';

export type CommandFamily = 'compatible' | 'reconcile';

export const RECONCILE_EXIT = {
  clean: 0,
  findings: 3,
  applied: 4,
  partial: 5,
  cannotRun: 2,
  invalid: 127,
  internal: 255,
  interrupted: 130,
  terminated: 143,
} as const;

export const RECONCILE_EXIT_TABLE: ReadonlyArray<readonly [number, string]> = [
  [0, 'nothing to do / clean'],
  [3, 'findings or a plan to apply; nothing changed (audit, no --apply, every unit refused or skipped, or a plan over a circuit-breaker limit)'],
  [4, 'changes applied'],
  [5, 'partly applied: something was applied and something was not (skipped because it changed since planning, or refused for safety; listed)'],
  [2, 'could not run: configuration, database unreachable, lock held, implausible ground truth (an empty or foreign ironic node list), no SQLite driver for a SQLite database'],
  [127, 'invalid usage or input'],
  [130, 'interrupted by Ctrl-C (SIGINT); during an --apply: no unit was started after it, the units in flight finished, and a summary on stderr names the journal and the undo command'],
  [143, 'stopped by SIGTERM; during an --apply, as for 130'],
  [255, 'unexpected internal error'],
];

export type ReconcileExitCode = (typeof RECONCILE_EXIT)[keyof typeof RECONCILE_EXIT];

/**
 * A reconciliation command's exit codes for --help and the man page: the
 * shared table in its order, with the texts this command says its own way
 * replaced, and the codes it never returns (set to null) left out.
 */
export function reconcileExitCodes(overrides: { readonly [C in ReconcileExitCode]?: string | null }): ReadonlyArray<readonly [number, string]> {
  return RECONCILE_EXIT_TABLE.flatMap(([code, text]): Array<readonly [number, string]> => {
    const own = overrides[code as ReconcileExitCode];
    if (own === null) return [];
    return [[code, own ?? text]];
  });
}

/** What an apply's exit code is decided from (src/operations/apply-plan.ts ApplyResult). */
export interface ApplyTally {
  readonly outcomes: ReadonlyArray<{ readonly status: 'applied' | 'already-done' | 'skipped'; readonly changesApplied?: number }>;
  readonly refused: readonly unknown[];
}

/**
 * The exit code of an apply: 5 only when something was
 * written AND something was not (skipped or refused); 4 when units were
 * applied and nothing was left; 3 when nothing was written but something was
 * refused or skipped; 0 when there was nothing to do or every unit was
 * already done by another run. A skipped unit that committed some of its
 * changes counts as written.
 */
export function applyExitCode(result: ApplyTally): number {
  const notDone = result.refused.length + result.outcomes.filter((u) => u.status === 'skipped').length;
  const written = result.outcomes.some((u) => u.status === 'applied' || (u.status === 'skipped' && (u.changesApplied ?? 0) > 0));
  if (written) return notDone > 0 ? RECONCILE_EXIT.partial : RECONCILE_EXIT.applied;
  return notDone > 0 ? RECONCILE_EXIT.findings : RECONCILE_EXIT.clean;
}

/** nova-manage: argparse errors exit 2; oslo.config's missing --config-file exits 1; everything else 255. */
export function exitCodeFor(kind: ErrorKind, family: CommandFamily, configFileMissing = false): number {
  if (family === 'compatible') {
    if (kind === 'usage') return 2;
    if (configFileMissing) return 1;
    return 255;
  }
  switch (kind) {
    case 'usage':
    case 'input':
    case 'not-found':
      return RECONCILE_EXIT.invalid;
    case 'config':
    case 'connection':
    case 'schema':
    case 'lock':
    case 'implausible':
      return RECONCILE_EXIT.cannotRun;
    case 'internal':
      return RECONCILE_EXIT.internal;
    default:
      return assertNever(kind, 'error kind');
  }
}
