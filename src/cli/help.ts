// --help text derived from the command specs, so help, the man page and the
// dispatcher can never disagree.
import type { CommandSpec, OptionSpec } from './spec.js';
import { RECONCILE_EXIT_TABLE } from './exit-codes.js';
import { SCOPE_INTRO, SCOPE_OPTIONS } from './scope.js';

export const GLOBAL_OPTIONS: ReadonlyArray<readonly [string, string]> = [
  ['--config-file FILE', 'nova.conf to read; repeatable, the last file to set an option wins (default: ~/.nova/, ~/, /etc/nova/, /etc/ nova.conf)'],
  ['--config-dir DIR', 'read DIR/*.conf in sorted order, at its position among the --config-file options'],
  ['--debug, -d', 'print the stack trace of an error; DEBUG lines in the log ([DEFAULT] debug); --nodebug turns it off'],
  ['--stats', 'print SQL round trips and elapsed time on stderr'],
  ['--progress', 'show progress on stderr also when it is not a terminal (throttled plain lines); on a terminal one status line is redrawn in place'],
  ['--log-file FILE', 'oslo.log: append one line per applied unit, refusal and error to FILE ([DEFAULT] log_file; relative to --log-dir)'],
  ['--log-dir DIR', 'oslo.log: log to DIR/nova-reconcile.log, or DIR/FILE with --log-file ([DEFAULT] log_dir)'],
  ['--use-syslog', 'oslo.log: also send those lines to syslog (/dev/log, through logger(1)); --nouse-syslog turns it off ([DEFAULT] use_syslog)'],
  ['--syslog-log-facility F', 'oslo.log: the syslog facility, e.g. LOG_USER (default), LOG_LOCAL0 ([DEFAULT] syslog_log_facility)'],
  ['--verbose', "oslo.log's, before the command words (accepted, INFO is always logged); after them, the command's own --verbose where it has one"],
  ['--allow-unknown-schema', 'let a write run on a database at an alembic head this build does not know (newer than 2026.2); without it such a write is refused (exit 2; 255 for the nova-manage compatible commands) and read-only commands only warn'],
  ['--version', 'print the version'],
];

/** Which Nova releases this build is tested against, and how (README "Supported releases"). */
export const SUPPORTED_RELEASES =
  'Supported releases: Nova 26 (Zed, 2022.2) to 34 (2026.2) with Placement 8.0.0 to 16.0.0. The conformance tier runs the real ' +
  "nova-manage, resource tracker and Placement of Zed 26.2.2, 2025.1 31.0.0 and 2026.2 34.0.0 against each repair; 2023.1 to 2024.2 and " +
  '2025.2 to 2026.1 share their schemas and are recognised by their alembic heads. The databases\' alembic heads decide where the ' +
  'releases differ (from 27.0.0 an ironic compute node is known by the ironic node\'s uuid; from 28.0.0 instances.compute_id is kept).';

/** What the top-level help shows of a command (dispatch/command-index.ts builds these from the specs). */
export interface CommandSummary {
  readonly path: readonly string[];
  readonly family: CommandSpec['family'];
  readonly summary: string;
  /** The flags of the shared scope options (scope.ts) the command takes. */
  readonly scope: readonly string[];
}

/**
 * The width help is wrapped to: the terminal's, 80 when piped. Prose stays
 * within 78 columns; examples are never wrapped, because they are copied.
 */
export function helpWidth(columns: number | undefined): number {
  return columns === undefined || columns < 40 ? 80 : columns;
}

export function renderTopLevelHelp(commands: readonly CommandSummary[], width = 80): string {
  const lines: string[] = [];
  lines.push(...hanging('Usage: ', 'nova-reconcile [--config-file FILE]... [--config-dir DIR] <category> <action> [options]', width));
  lines.push('');
  lines.push("Keeps Nova's API, cell and Placement databases consistent. The nova-manage");
  lines.push('compatible commands print what nova-manage prints and exit as it exits; the');
  lines.push('reconciliation commands plan first and change nothing without --apply.');
  const groups: Array<[string, CommandSummary[]]> = [
    ['nova-manage compatible commands', commands.filter((c) => c.family === 'compatible')],
    ['Reconciliation commands', commands.filter((c) => c.family === 'reconcile')],
  ];
  for (const [title, specs] of groups) {
    if (specs.length === 0) continue;
    lines.push('', `${title}:`);
    const column = Math.max(...specs.map((s) => s.path.join(' ').length));
    for (const s of specs) lines.push(...hanging(`  ${s.path.join(' ').padEnd(column)}  `, s.summary, width));
  }
  lines.push('', ...wrap(SUPPORTED_RELEASES, 78));
  lines.push('', 'Global options:');
  for (const [flag, text] of GLOBAL_OPTIONS) lines.push(...hanging(`  ${flag.padEnd(24)}  `, text, width));
  const scoped = SCOPE_OPTIONS.map((o) => [o, commands.filter((c) => c.scope.includes(o.flags)).map((c) => c.path.join(' '))] as const).filter(
    ([, users]) => users.length > 0,
  );
  if (scoped.length > 0) {
    lines.push('', 'Scope options (the same meaning on every plan command that takes them):');
    for (const [o, users] of scoped) lines.push(`  ${o.flags}`, ...wrap(`${o.description}. Taken by: ${users.join(', ')}.`, 72).map((l) => `      ${l}`));
  }
  lines.push('', 'Exit codes of the reconciliation commands:');
  for (const [code, text] of RECONCILE_EXIT_TABLE) lines.push(...hanging(`  ${String(code).padStart(3)}  `, text, width));
  lines.push('', ...wrap('Run `nova-reconcile <category> <action> --help` for one command, or `man nova-reconcile`.', Math.min(78, width - 2)));
  return lines.join('\n') + '\n';
}

/** The commands that take a scope option (the same OptionSpec object), by name. */
export function scopeUsers(commands: readonly CommandSpec[], option: OptionSpec): string[] {
  return commands.filter((c) => c.options.includes(option)).map((c) => c.path.join(' '));
}

/** The shared block: the scope options this command takes, described where every plan command describes them. */
export function renderScopeBlock(spec: CommandSpec, width = 80): string[] {
  const scope = spec.options.filter((o) => o.scope === true);
  if (scope.length === 0) return [];
  const lines = ['Scope options (shared by the plan commands; see SCOPE OPTIONS in the man page):'];
  for (const o of scope) lines.push(`  ${o.flags}`, ...wrap(o.description, Math.min(72, width - 8)).map((l) => `      ${l}`));
  lines.push(...wrap(SCOPE_INTRO, Math.min(76, width - 4)).map((l) => `  ${l}`), '');
  return lines;
}

export function renderCommandHelpFooter(spec: CommandSpec, width = 80): string {
  const lines: string[] = [''];
  lines.push(...renderScopeBlock(spec, width));
  for (const p of spec.description) lines.push(...wrap(p, Math.min(78, width - 2)), '');
  lines.push('Exit codes:');
  for (const [code, text] of spec.exitCodes) lines.push(...hanging(`  ${String(code).padStart(3)}  `, text, width));
  if (spec.family === 'compatible') lines.push('', ...wrap(compatibleGrammar(spec), Math.min(78, width - 2)));
  if (spec.differences !== undefined && spec.differences.length > 0) {
    lines.push('', 'Deliberate differences from nova-manage:');
    for (const d of spec.differences) lines.push(...wrap(d, Math.min(76, width - 4)).map((l, i) => (i === 0 ? `  - ${l}` : `    ${l}`)));
  }
  if (spec.examples !== undefined && spec.examples.length > 0) {
    lines.push('', 'Examples:');
    for (const e of spec.examples) lines.push(`  ${e}`);
  }
  lines.push(
    '',
    ...wrap(
      'Global options (--config-file, --config-dir, --debug/--nodebug, --stats, --progress, --log-file, --log-dir, --use-syslog/--nouse-syslog, --syslog-log-facility) may appear anywhere, as nova-manage accepts them; --verbose before the command words is oslo.log\'s. Suggested commands in findings, refusals and hints repeat the --config-file and --config-dir given.',
      Math.min(78, width - 2),
    ),
  );
  return lines.join('\n');
}

/** Where a nova-manage compatible command's grammar (argparse's) differs from the reconciliation commands'. */
export function compatibleGrammar(spec: CommandSpec): string {
  const cell = spec.options.some((o) => o.flags.startsWith('--cell_uuid'))
    ? " So --cell is --cell_uuid here and takes a cell's uuid only; the reconciliation commands' --cell takes a uuid or a name."
    : '';
  return (
    "Grammar: nova-manage's, as argparse parses it. A long option may be shortened to any prefix that names one option, and a usage error exits 2 (127 on the reconciliation commands)." +
    cell
  );
}

/** `prefix` then `text` wrapped to `width`, the following lines indented under the text's start. */
function hanging(prefix: string, text: string, width: number): string[] {
  const indent = ' '.repeat(prefix.length);
  return wrap(text, Math.max(20, width - prefix.length)).map((line, i) => (i === 0 ? prefix : indent) + line);
}

export function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') out.push(line);
  return out;
}
