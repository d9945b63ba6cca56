// Exit codes are a contract (DESIGN.md). The compatible commands keep
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
} as const;

export const RECONCILE_EXIT_TABLE: ReadonlyArray<readonly [number, string]> = [
  [0, 'nothing to do / clean'],
  [3, 'findings or a plan to apply; nothing changed (audit, or no --apply)'],
  [4, 'changes applied'],
  [5, 'partly applied: some items were skipped because they changed since planning or were refused for safety (listed)'],
  [2, 'could not run: configuration, database unreachable, lock held, the optional SQLite driver not installed'],
  [127, 'invalid usage or input'],
  [255, 'unexpected internal error'],
];

/** What an apply's exit code is decided from (src/operations/apply-plan.ts ApplyResult). */
export interface ApplyTally {
  readonly outcomes: ReadonlyArray<{ readonly status: 'applied' | 'already-done' | 'skipped' }>;
  readonly refused: readonly unknown[];
}

/**
 * The exit code of an apply: 5 when a unit was skipped or refused; else 4
 * when at least one unit was applied, and 0 when every unit was already done
 * (another run got there first) or there was nothing to do.
 */
export function applyExitCode(result: ApplyTally): number {
  if (result.refused.length > 0 || result.outcomes.some((o) => o.status === 'skipped')) return RECONCILE_EXIT.partial;
  return result.outcomes.some((o) => o.status === 'applied') ? RECONCILE_EXIT.applied : RECONCILE_EXIT.clean;
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
      return RECONCILE_EXIT.cannotRun;
    case 'internal':
      return RECONCILE_EXIT.internal;
    default:
      return assertNever(kind, 'error kind');
  }
}
