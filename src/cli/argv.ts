// The argv pre-pass. Global options (--config-file, --config-dir, --debug,
// --stats) may appear anywhere and their relative order matters for
// oslo.config semantics (a --config-dir is read at its position), which
// commander cannot express, so they are taken out here first. Long options
// are also expanded from unambiguous prefixes, as argparse allows
// (`--verb` means `--verbose`).
import type { ConfigSource } from '../config/types.js';
import { ReconcileError } from '../errors.js';

export interface GlobalArgs {
  readonly sources: readonly ConfigSource[];
  readonly debug: boolean;
  readonly stats: boolean;
  readonly rest: readonly string[];
}

const GLOBAL_WITH_VALUE: Readonly<Record<string, ConfigSource['kind']>> = { '--config-file': 'file', '--config-dir': 'dir' };

export function extractGlobalArgs(argv: readonly string[]): GlobalArgs {
  const sources: ConfigSource[] = [];
  const rest: string[] = [];
  let debug = false;
  let stats = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const kind = GLOBAL_WITH_VALUE[name];
    if (kind !== undefined) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '') throw new ReconcileError('usage', `option ${name} needs a value`);
      sources.push({ kind, path: value });
    } else if (arg === '--debug' || arg === '-d') {
      debug = true;
    } else if (arg === '--stats') {
      stats = true;
    } else {
      rest.push(arg);
    }
  }
  return { sources, debug, stats, rest };
}

/**
 * Expand `--pre` to the one long option it abbreviates. Exact names win; an
 * ambiguous prefix is an error, as in argparse.
 */
export function expandOptionPrefixes(args: readonly string[], longOptions: readonly string[]): string[] {
  return args.map((arg) => {
    if (!arg.startsWith('--') || arg === '--') return arg;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (longOptions.includes(name) || name === '--help') return arg;
    const matches = longOptions.filter((o) => o.startsWith(name));
    if (matches.length === 1) return (matches[0] as string) + (eq > 0 ? arg.slice(eq) : '');
    if (matches.length > 1) throw new ReconcileError('usage', `ambiguous option: ${name} could match ${matches.join(', ')}`);
    return arg;
  });
}
