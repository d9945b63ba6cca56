// The argv pre-pass. Global options (--config-file, --config-dir, --debug,
// --stats, --progress, and oslo.log's logging options) may appear anywhere and their relative order matters for
// oslo.config semantics (a --config-dir is read at its position), which
// commander cannot express, so they are taken out here first. Long options
// are also expanded from unambiguous prefixes, as argparse allows
// (`--verb` means `--verbose`).
import type { ConfigSource } from '../config/types.js';
import { ReconcileError } from '../errors.js';

/** oslo.log's command-line options, as nova-manage accepts them; undefined: not given (nova.conf decides). */
export interface LogArgs {
  readonly debug: boolean | undefined;
  /** oslo.log's --verbose (removed from oslo.log in 2016, still accepted by this tool): INFO is always logged. */
  readonly verbose: boolean;
  readonly logFile: string | undefined;
  readonly logDir: string | undefined;
  readonly useSyslog: boolean | undefined;
  readonly syslogFacility: string | undefined;
}

export interface GlobalArgs {
  readonly sources: readonly ConfigSource[];
  readonly debug: boolean;
  readonly stats: boolean;
  /** --progress: progress lines on stderr also when it is not a terminal. */
  readonly progress: boolean;
  /** --allow-unknown-schema: let writes run on a database at an alembic head this build does not know. */
  readonly allowUnknownSchema: boolean;
  readonly log: LogArgs;
  /** Options before the command words that are nobody's: reported as commander reports an unknown option. */
  readonly leadingUnknown: string | undefined;
  readonly rest: readonly string[];
}

const GLOBAL_WITH_VALUE: Readonly<Record<string, ConfigSource['kind']>> = { '--config-file': 'file', '--config-dir': 'dir' };

/** oslo.log's options that take a value, with the spellings oslo.config accepts (dashes, underscores, the deprecated names). */
const LOG_WITH_VALUE: Readonly<Record<string, 'logFile' | 'logDir' | 'syslogFacility'>> = {
  '--log-file': 'logFile',
  '--log_file': 'logFile',
  '--logfile': 'logFile',
  '--log-dir': 'logDir',
  '--log_dir': 'logDir',
  '--logdir': 'logDir',
  '--syslog-log-facility': 'syslogFacility',
  '--syslog_log_facility': 'syslogFacility',
};
const LOG_FLAGS: Readonly<Record<string, readonly ['debug' | 'useSyslog', boolean]>> = {
  '--debug': ['debug', true],
  '-d': ['debug', true],
  '--nodebug': ['debug', false],
  '--use-syslog': ['useSyslog', true],
  '--use_syslog': ['useSyslog', true],
  '--nouse-syslog': ['useSyslog', false],
  '--nouse_syslog': ['useSyslog', false],
};
/** Asked for before any command word: answered by the dispatcher, not an unknown option. */
const TOP_LEVEL_WORDS = new Set(['--help', '-h', '--version', '-V']);

export function extractGlobalArgs(argv: readonly string[]): GlobalArgs {
  const sources: ConfigSource[] = [];
  const rest: string[] = [];
  const log = { debug: undefined as boolean | undefined, verbose: false, logFile: undefined as string | undefined, logDir: undefined as string | undefined, useSyslog: undefined as boolean | undefined, syslogFacility: undefined as string | undefined };
  let stats = false;
  let progress = false;
  let allowUnknownSchema = false;
  let leadingUnknown: string | undefined;
  // Before the first command word, a --verbose is oslo.log's; after it, the command's own (nova-manage's).
  let commandStarted = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const kind = GLOBAL_WITH_VALUE[name];
    const logValue = LOG_WITH_VALUE[name];
    const flag = eq > 0 ? undefined : LOG_FLAGS[arg];
    if (kind !== undefined || logValue !== undefined) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '') throw new ReconcileError('usage', `option ${name} needs a value`);
      if (kind !== undefined) sources.push({ kind, path: value });
      else if (logValue !== undefined) log[logValue] = value;
    } else if (flag !== undefined) {
      log[flag[0]] = flag[1];
    } else if (arg === '--stats') {
      stats = true;
    } else if (arg === '--progress') {
      progress = true;
    } else if (arg === '--allow-unknown-schema') {
      allowUnknownSchema = true;
    } else if (arg === '--verbose' && !commandStarted) {
      log.verbose = true;
    } else {
      if (!arg.startsWith('-')) commandStarted = true;
      else if (!commandStarted && leadingUnknown === undefined && !TOP_LEVEL_WORDS.has(arg)) leadingUnknown = name;
      // An unknown option before the command words is reported once the command is known; it is not a command word.
      if (commandStarted || TOP_LEVEL_WORDS.has(arg)) rest.push(arg);
    }
  }
  return { sources, debug: log.debug === true, stats, progress, allowUnknownSchema, log, leadingUnknown, rest };
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
