// What the dispatcher needs to know of every command before one runs: its
// words, family and summary, and the shared scope options it takes. That is
// enough for `help`, `<category> --help`, and the errors for an unknown
// command or a missing action.
//
// Why not the specs themselves (issue 20: process start): importing
// registry.ts loads every command and everything they run (about 570 kB of
// bundle to compile), which `help` never uses. In the bundle, scripts/bundle.mjs
// computes this index from the registry at build time (commandIndex below,
// on tsc's output) and writes it in as a constant; run from the sources or
// tsc's output, it is computed from the registry on first use. Either way
// it is the registry's own data, through the same function.
import type { CommandSummary } from '../cli/help.js';
import { SCOPE_OPTIONS } from '../cli/scope.js';
import type { CommandSpec } from '../cli/spec.js';

export type { CommandSummary };

export function commandIndex(commands: readonly CommandSpec[]): CommandSummary[] {
  return commands.map((c) => ({
    path: [...c.path],
    family: c.family,
    summary: c.summary,
    scope: SCOPE_OPTIONS.filter((o) => c.options.includes(o)).map((o) => o.flags),
  }));
}

// Set by the bundler (scripts/bundle.mjs): the index of the registry it bundles.
declare const __NOVA_RECONCILE_COMMAND_INDEX__: readonly CommandSummary[] | undefined;

let index: readonly CommandSummary[] | undefined;

export async function loadCommandIndex(): Promise<readonly CommandSummary[]> {
  if (typeof __NOVA_RECONCILE_COMMAND_INDEX__ !== 'undefined') return __NOVA_RECONCILE_COMMAND_INDEX__;
  index ??= commandIndex((await import('./registry.js')).COMMANDS);
  return index;
}

/** The command whose words begin `rest` (the longest, when one command's words begin another's). */
export function findCommand<C extends { readonly path: readonly string[] }>(commands: readonly C[], rest: readonly string[]): C | undefined {
  let best: C | undefined;
  for (const c of commands) {
    if (c.path.every((word, i) => rest[i] === word) && (best === undefined || c.path.length > best.path.length)) best = c;
  }
  return best;
}
