// Dispatch: find the command whose path matches the leading words of argv,
// build a commander Command from its spec, parse (commander, then the spec's
// own parse into its typed options), run, and turn every error
// into the family's exit code. Usage errors from commander have already been
// printed on stderr by commander itself.
import type { Option } from 'commander';
import { loadConfig } from '../config/load-config.js';
import type { ConfigSource, NovaConfig } from '../config/types.js';
import { ReconcileError } from '../errors.js';
import { expandOptionPrefixes, extractGlobalArgs, type GlobalArgs } from '../cli/argv.js';
import { useSqliteDriverSwitch, type RunContext } from '../cli/context.js';
import { exitCodeFor, type CommandFamily } from '../cli/exit-codes.js';
import { stringOption } from '../cli/options.js';
import { TABLE_WIDTH_OPTIONS, tableWidth } from '../cli/table-width.js';
import { helpWidth, renderCommandHelpFooter, renderTopLevelHelp, type CommandSummary } from '../cli/help.js';
import { reportError } from '../cli/report-error.js';
import type { CommandContext, CommandOptions, CommandSpec } from '../cli/spec.js';
import { findCommand, loadCommandIndex, similarCommands } from './command-index.js';
import { loadCommandSpec } from './command-modules.js';
import { VERSION, VERSION_ARGUMENTS } from '../cli/version.js';
import { renderStats } from '../cli/stats.js';
import { createReporter } from '../cli/progress.js';
import { loadColour } from '../cli/colour.js';
import { openOperatorLog, resolveLogTarget, type OperatorLog } from '../cli/oslo-log.js';

/** The first words that belong to nova-manage's grammar. */
const COMPATIBLE_CATEGORIES = new Set(['cell_v2', 'placement', 'db']);

/** What an error's report needs, learnt as the run goes. */
interface RunState {
  debug: boolean;
  family: CommandFamily;
  format: string;
  configSources: readonly ConfigSource[];
  log: OperatorLog | undefined;
}

export async function runCli(argv: readonly string[], ctx: RunContext): Promise<number> {
  const state: RunState = {
    debug: argv.includes('--debug') || argv.includes('-d'),
    family: COMPATIBLE_CATEGORIES.has(firstWord(argv) ?? '') ? 'compatible' : 'reconcile',
    format: 'table',
    configSources: [],
    log: undefined,
  };
  useSqliteDriverSwitch(ctx);
  try {
    return await dispatch(argv, ctx, state);
  } catch (err) {
    if (commander !== undefined && err instanceof commander.CommanderError) return exitCodeFor('usage', state.family);
    const code = reportError(err, { ctx, family: state.family, debug: state.debug, format: state.format, configSources: state.configSources });
    const log = state.log;
    if (log !== undefined) ignoreErrors(() => log.error(`${err instanceof Error ? err.message : String(err)} (exit code ${code})`));
    return code;
  } finally {
    await state.log?.close();
  }
}

/** The global options, the top-level help and --version, then the command the words name. */
async function dispatch(argv: readonly string[], ctx: RunContext, state: RunState): Promise<number> {
  const globals = extractGlobalArgs(argv);
  state.debug = globals.debug;
  state.configSources = globals.sources;
  let rest = globals.rest;
  if (globals.leadingUnknown !== undefined) return refuseLeadingOption(await loadCommandIndex(), globals.leadingUnknown, rest, ctx);
  if (rest.length === 0) {
    throw new ReconcileError('usage', 'no command given', { hint: 'run `nova-reconcile --help` for the list of commands' });
  }
  // `help compute_node list` is `compute_node list --help`.
  if (rest[0] === 'help' && rest.length > 1) rest = [...rest.slice(1), '--help'];
  // The help and the errors below need only the command index: the
  // commands themselves are loaded once one is found.
  const index = await loadCommandIndex();
  if (rest[0] === '--help' || rest[0] === '-h' || rest[0] === 'help') {
    ctx.stdout.write(renderTopLevelHelp(index, helpWidth(ctx.stdoutColumns)));
    return 0;
  }
  if (VERSION_ARGUMENTS.includes(rest[0] ?? '')) {
    ctx.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const found = findCommand(index, rest);
  if (found === undefined) return noSuchCommand(index, rest, ctx);
  state.family = found.family;
  // Only this command's module is loaded (command-modules.ts).
  const spec = await loadCommandSpec(found.path);
  if (spec === undefined) throw new Error(`the command index names ${found.path.join(' ')}, which no command module holds`);
  return runCommand(spec, rest.slice(spec.path.length), globals, ctx, state);
}

/** Words that name no command: a group's help, or a usage error (with the commands they resemble). */
function noSuchCommand(index: readonly CommandSummary[], rest: readonly string[], ctx: RunContext): number {
  const group = index.filter((c) => c.path[0] === rest[0]);
  if (group.length > 0 && (rest[1] === '--help' || rest[1] === '-h')) {
    ctx.stdout.write(renderTopLevelHelp(group, helpWidth(ctx.stdoutColumns)));
    return 0;
  }
  if (group.length > 0 && (rest.length === 1 || (rest[1] ?? '').startsWith('-'))) {
    // argparse: "the following arguments are required: action", one line.
    const actions = group.map((c) => c.path.slice(1).join(' ')).join(', ');
    throw new ReconcileError('usage', `"${rest[0]}" needs an action: one of ${actions}`, { hint: `run \`nova-reconcile ${rest[0]} --help\`` });
  }
  const words = rest.filter((w) => !w.startsWith('-')).slice(0, 2).join(' ');
  const similar = similarCommands(index, rest);
  const didYouMean = similar.length === 0 ? '' : `Did you mean ${similar.map((c) => `"${c}"`).join(' or ')}? `;
  throw new ReconcileError('usage', `unknown command "${words}"`, { hint: `${didYouMean}run \`nova-reconcile --help\` for the list of commands` });
}

/** Parse the command's arguments, open the operator log, run the command and print its result. */
async function runCommand(spec: CommandSpec, words: readonly string[], globals: GlobalArgs, ctx: RunContext, state: RunState): Promise<number> {
  const longOptions = longOptionNames(spec);
  // After the command words, --verbose is the command's own where it has one (nova-manage's meaning), else oslo.log's.
  const commandArgs = expandOptionPrefixes(words.filter((a) => longOptions.includes('--verbose') || a !== '--verbose'), longOptions);
  commander ??= await import('commander'); // not at start-up: help and --version need none
  await loadColour(ctx);
  const parsed = parseCommandArgs(commander, spec, commandArgs, ctx);
  if (parsed === 'help') return 0;
  state.format = stringOption(parsed.options, 'format') ?? 'table';
  let config: NovaConfig | undefined;
  const loadOnce = (): NovaConfig => {
    config ??= loadConfigFiles(globals.sources, globals.allowUnknownSchema, ctx);
    return config;
  };
  const operatorLog = openOperatorLog({
    name: `nova_reconcile.${spec.path.join('.')}`,
    pid: ctx.pid ?? 0,
    // nova.conf's [DEFAULT] logging options count only once a command has read it (sandbox create reads none).
    target: () => resolveLogTarget(globals.log, config ?? tryLoad(loadOnce), ctx.cwd),
    warn: (line) => ctx.stderr.write(line + '\n'),
    syslogSocket: ctx.env['NOVA_RECONCILE_SYSLOG_SOCKET'],
  });
  state.log = operatorLog;
  // Options given on the command line are checked before anything runs.
  if (globals.log.logFile !== undefined || globals.log.logDir !== undefined || globals.log.useSyslog === true || globals.log.syslogFacility !== undefined) operatorLog.open();
  const commandCtx: CommandContext = {
    ...ctx,
    stdoutColumns: spec.options.some((o) => TABLE_WIDTH_OPTIONS.includes(o)) ? tableWidth(parsed.options, ctx) : ctx.stdoutColumns,
    debug: state.debug,
    stats: globals.stats,
    progress: globals.progress,
    reporter: createReporter(ctx, { debug: state.debug, forced: globals.progress }),
    log: operatorLog,
    configSources: globals.sources,
    loadConfig: loadOnce,
  };
  const started = Date.now();
  try {
    // The spec's parse checks the options' form (usage or input errors, mapped as any other) before run reads anything.
    const result = await spec.run(commandCtx, spec.parse(parsed.options, parsed.args), parsed.args);
    commandCtx.reporter.clear(); // the status line goes before the result is printed
    // Loaded with the command: the renderers share the commands' chunk, which help never loads.
    const code = (await import('../cli/render-result.js')).writeResult(commandCtx, result);
    operatorLog.debug(`exit code ${code}`);
    return code;
  } finally {
    if (globals.stats) ctx.stderr.write(renderStats(Date.now() - started, ctx.maxRssKb()) + '\n');
  }
}

function tryLoad(load: () => NovaConfig): NovaConfig | undefined {
  try {
    return load();
  } catch {
    return undefined;
  }
}

function ignoreErrors(fn: () => void): void {
  try {
    fn();
  } catch {
    // The error itself has been reported; a log that cannot be written does not hide it.
  }
}

/**
 * An option before the command words that is no global option: the same
 * error commander gives when it follows them, with the command's usage exit
 * code (nova-manage: argparse's 2; ours: 127).
 */
function refuseLeadingOption(index: readonly CommandSummary[], option: string, rest: readonly string[], ctx: RunContext): number {
  for (let i = 0; i < rest.length; i++) {
    const spec = findCommand(index, rest.slice(i));
    if (spec !== undefined) {
      ctx.stderr.write(`nova-reconcile ${spec.path.join(' ')}: error: unknown option '${option}'\n`);
      return exitCodeFor('usage', spec.family);
    }
  }
  const family: CommandFamily = rest.some((w) => COMPATIBLE_CATEGORIES.has(w)) ? 'compatible' : 'reconcile';
  ctx.stderr.write(`nova-reconcile: error: unknown option '${option}'\n`);
  return exitCodeFor('usage', family);
}

/** oslo.config fails before nova-manage's main() on any file problem: exit 1 there. */
function loadConfigFiles(sources: Parameters<typeof loadConfig>[0]['sources'], allowUnknownSchema: boolean, ctx: RunContext): NovaConfig {
  try {
    return loadConfig({ sources, env: ctx.env, home: ctx.home, allowUnknownSchema });
  } catch (err) {
    if (err instanceof ReconcileError) throw new ReconcileError(err.kind, err.message, { ...(err.hint === undefined ? {} : { hint: err.hint }), cause: err, tag: 'config-files' });
    throw err;
  }
}

function firstWord(argv: readonly string[]): string | undefined {
  try {
    return extractGlobalArgs(argv).rest[0];
  } catch {
    return undefined;
  }
}

function longOptionNames(spec: CommandSpec): string[] {
  return spec.options.map((o) => /--[A-Za-z0-9_-]+/.exec(o.flags)?.[0]).filter((n): n is string => n !== undefined);
}

interface Parsed {
  readonly options: CommandOptions;
  readonly args: readonly string[];
}

/** commander, loaded once a command is parsed. */
let commander: typeof import('commander') | undefined;

function parseCommandArgs({ Command, CommanderError, Option }: typeof import('commander'), spec: CommandSpec, args: readonly string[], ctx: RunContext): Parsed | 'help' {
  const cmd = new Command(`nova-reconcile ${spec.path.join(' ')}`);
  cmd
    .description(spec.summary)
    .exitOverride()
    .allowExcessArguments(false)
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
      // One line: commander puts its "(Did you mean --x?)" suggestion on a line of its own.
      outputError: (s, write) => write(s.replace(/^error: /, `nova-reconcile ${spec.path.join(' ')}: error: `).replace(/\n(?=\(Did you mean)/, ' ')),
    })
    .addHelpText('after', renderCommandHelpFooter(spec, helpWidth(ctx.stdoutColumns)));
  for (const a of spec.args ?? []) cmd.argument(a);
  const given = new Set<string>();
  for (const o of spec.options) {
    const opt = new Option(o.short === undefined ? o.flags : `${o.short}, ${o.flags}`, o.description);
    if (o.choices !== undefined) opt.choices([...o.choices]);
    if (o.defaultValue !== undefined) opt.default(o.defaultValue);
    if (o.required === true) opt.makeOptionMandatory(true);
    // Scope options are described once, in the shared block of the footer (help.ts renderScopeBlock).
    if (o.scope === true) opt.hideHelp();
    if (o.repeatable === true) opt.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    else if (spec.family === 'reconcile' && (opt.required || opt.optional)) refuseRepeats(opt, given);
    cmd.addOption(opt);
  }
  let positional: string[] = [];
  cmd.action((...actionArgs: unknown[]) => {
    positional = actionArgs.slice(0, (spec.args ?? []).length).map(String);
  });
  try {
    cmd.parse([...args], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError && (err.code === 'commander.helpDisplayed' || err.code === 'commander.help')) return 'help';
    throw err;
  }
  return { options: cmd.opts(), args: positional };
}

/**
 * A single-valued option of a reconciliation command may be given once:
 * `--to-host a --to-host b` or two --ironic-nodes files is a mistake whose
 * silent "last one wins" (argparse's rule, kept for the compatible commands)
 * could act on the wrong host or the wrong truth.
 */
function refuseRepeats(opt: Option, given: Set<string>): void {
  const inner = opt.parseArg;
  opt.argParser((value: string, previous: unknown) => {
    if (given.has(opt.long ?? opt.flags)) {
      throw new ReconcileError('usage', `option ${opt.long ?? opt.flags} is given more than once`, { hint: 'give it once' });
    }
    given.add(opt.long ?? opt.flags);
    return inner === undefined ? value : inner(value, previous);
  });
}
