// What the dispatcher needs to know of every command before one runs: its
// words, family and summary, and the shared scope options it takes. That is
// enough for `help`, `<category> --help`, and the errors for an unknown
// command or a missing action.
//
// Why not the specs themselves: importing registry.ts loads every command
// and everything they run, which `help` never uses, at process start. In the bundle, scripts/bundle.mjs
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

/**
 * What a mistyped command most likely meant (a "did you mean"): the commands,
 * and the categories, whose words are closest to as many of the words given
 * (options left out) by edit distance with transpositions, and close enough
 * by commander's rule for an unknown option (at most 3 edits, and more than
 * 40% of the name kept). A whole command wins a tie over its category.
 * Empty when nothing is that close.
 */
export function similarCommands(commands: readonly { readonly path: readonly string[] }[], rest: readonly string[]): string[] {
  const words = rest.filter((w) => !w.startsWith('-'));
  const candidates = new Set([...commands.map((c) => c.path.join(' ')), ...commands.filter((c) => c.path.length > 1).map((c) => c.path[0] ?? '')]);
  let best: string[] = [];
  let bestScore = [Infinity, 0];
  for (const candidate of candidates) {
    const length = candidate.split(' ').length;
    if (words.length < length) continue;
    const distance = editDistance(words.slice(0, length).join(' '), candidate);
    if (distance === 0 || distance > 3 || (candidate.length - distance) / candidate.length <= 0.4) continue;
    const [d, l] = bestScore as [number, number];
    if (distance < d || (distance === d && length > l)) [best, bestScore] = [[candidate], [distance, length]];
    else if (distance === d && length === l) best.push(candidate);
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}
