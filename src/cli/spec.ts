// Each command's usage is written once, as a CommandSpec. Commander wiring,
// --help, the man page (scripts/gen-man.mjs) and the shell completion scripts
// (completion.ts) are all derived from it.
import type { ConfigSource, NovaConfig } from '../config/types.js';
import type { CommandFamily } from './exit-codes.js';
import type { RunContext } from './context.js';
import type { OperatorLog } from './oslo-log.js';
import type { CommandResult } from './results.js';
import type { OptionSpec } from './option-spec.js';
import type { Reporter } from '../operations/reporter.js';

export type { OptionSpec } from './option-spec.js';

/**
 * A JSON Schema a command's --format json document follows: its file in
 * schemas/ without `.schema.json`, or one the command prints instead `with`
 * an option (discover_hosts --remap prints a plan).
 */
export type JsonSchemaClaim = string | { readonly schema: string; readonly with: string };

export interface CommandContext extends RunContext {
  /** Loads the configuration named by --config-file/--config-dir (or the default search). */
  loadConfig(): NovaConfig;
  /** --config-file/--config-dir as given, in order: suggested commands repeat them. */
  readonly configSources: readonly ConfigSource[];
  readonly debug: boolean;
  /** --stats: print SQL round trips and timing on stderr at the end. */
  readonly stats: boolean;
  /** --progress: progress lines on stderr even when it is not a terminal. */
  readonly progress?: boolean;
  /** Where operations report progress and warnings on stderr (cli/progress.ts createReporter). */
  readonly reporter: Reporter;
  /** The operator log (--log-file, --use-syslog, nova.conf [DEFAULT] log_file ...): applied changes and refusals. */
  readonly log?: OperatorLog;
}

/** The options as commander parsed them: camelCase keys (a few keep nova-manage's underscores, as cell_uuid). Read with cli/options.ts. */
export type CommandOptions = Readonly<Record<string, unknown>>;

/**
 * One command. `parse` turns commander's options (and the positional
 * arguments) into the command's own options `O`, checking their form: no
 * configuration, database, network or file is read there, and a mistake is a
 * ReconcileError ('usage' or 'input') with the same exit code as anywhere
 * else. `run` gets what `parse` returned and returns what happened, which
 * the dispatcher prints (cli/render-result.ts); it writes no stdout itself. A bare `CommandSpec` is a command of
 * any options type, as the registry holds them (dispatch/registry.ts).
 */
export interface CommandSpec<O = unknown> {
  /** ['cell_v2', 'discover_hosts'] or ['audit']. */
  readonly path: readonly string[];
  readonly family: CommandFamily;
  readonly summary: string;
  /** Paragraphs for --help and the man page. */
  readonly description: readonly string[];
  readonly options: readonly OptionSpec[];
  /** Positional arguments, e.g. ['<dir>']. */
  readonly args?: readonly string[];
  /** Values shell completion offers for a positional argument, by its placeholder. */
  readonly argChoices?: Readonly<Record<string, readonly string[]>>;
  /** The schemas of its --format json documents (the man page's JSON OUTPUT lists them); every command may print schemas/error.schema.json too. */
  readonly jsonSchemas: readonly JsonSchemaClaim[];
  readonly exitCodes: ReadonlyArray<readonly [number, string]>;
  /** Where the command deliberately differs from nova-manage (safer, faster). */
  readonly differences?: readonly string[];
  readonly examples?: readonly string[];
  parse(raw: CommandOptions, args: readonly string[]): O;
  run(ctx: CommandContext, options: O, args: readonly string[]): Promise<CommandResult>;
}

export const FORMAT_OPTION: OptionSpec = {
  flags: '--format <format>',
  description: 'output format: table (nova-manage compatible) or json (one document on stdout, with schema_version and changed; see JSON OUTPUT in the man page)',
  choices: ['table', 'json'],
  defaultValue: 'table',
};
