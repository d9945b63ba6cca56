// The process boundary: the only module that reads argv, env and the
// terminal, handles signals, and sets the exit code. Everything below returns values.
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Interrupts } from './cli/context.js';
import { signalExitCode } from './cli/context.js';
import { VERSION, VERSION_ARGUMENTS } from './cli/version.js';

const argv = process.argv.slice(2);
quietBuiltinSqliteWarning();
// Process start is the floor of every run: the version alone is
// printed before the dispatcher, the commands, commander and chalk are
// loaded (the bundle keeps them in a chunk of their own). With any other
// argument beside it, the dispatcher answers, as it always did.
const code = argv.length === 1 && VERSION_ARGUMENTS.includes(argv[0] ?? '') ? printVersion() : await runCommand(argv);
// Exit once stdout and stderr have drained (pipes are asynchronous), so no
// idle handle can keep a cron job alive and no output is cut short.
process.exitCode = code;
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));

/**
 * Node.js 22 warns, once per process, that its built-in SQLite (the
 * sandbox's driver when better-sqlite3 is absent, db/sqlite-driver.ts) is
 * experimental. The line says nothing an operator can act on, and it would
 * make a run's stderr differ from one on better-sqlite3; every other warning
 * is printed as Node.js prints it.
 */
function quietBuiltinSqliteWarning(): void {
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'ExperimentalWarning' && warning.message.startsWith('SQLite is an experimental feature')) return;
    for (const print of printers) print.call(process, warning);
  });
}

function printVersion(): number {
  process.stdout.write(`${VERSION}\n`);
  return 0;
}

async function runCommand(args: readonly string[]): Promise<number> {
  const interrupts = gracefulInterrupts();
  const { runCli } = await import('./dispatch/program.js');
  return runCli(args, {
    stdout: { write: (s) => void process.stdout.write(s) },
    stderr: { write: (s) => void process.stderr.write(s) },
    env: process.env,
    home: process.env['HOME'] ?? homedir(),
    cwd: process.cwd(),
    stderrIsTty: process.stderr.isTTY === true,
    stdoutIsTty: process.stdout.isTTY === true,
    stdoutColumns: process.stdout.isTTY === true ? process.stdout.columns : undefined,
    ...(process.stderr.isTTY === true && process.stderr.columns > 0 ? { stderrColumns: process.stderr.columns } : {}),
    maxRssKb: () => process.resourceUsage().maxRSS,
    pid: process.pid,
    selfCommand: selfCommand(),
    interrupts,
  });
}

/**
 * SIGINT and SIGTERM end the process at once (128 + the signal's number, as
 * a shell reports it), except while an apply holds them: then the first one
 * asks the apply to stop starting units (it finishes the units in flight and
 * prints its summary), and a second one ends the process at once; a unit cut
 * short that way is rolled back by its database, its journal entry stays
 * uncommitted, and the next run or `undo` deals with it.
 */
function gracefulInterrupts(): Interrupts {
  const controller = new AbortController();
  let holders = 0;
  const onSignal = (name: 'SIGINT' | 'SIGTERM'): void => {
    if (holders > 0 && !controller.signal.aborted) {
      process.stderr.write(`\nnova-reconcile: ${name}: no new unit is started; waiting for the units in flight (${name} again to stop at once)\n`);
      controller.abort(name);
      return;
    }
    process.exit(signalExitCode(name));
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  return {
    signal: controller.signal,
    hold: () => {
      holders += 1;
      let released = false;
      return () => {
        if (!released) holders -= 1;
        released = true;
      };
    },
  };
}

/** `nova-reconcile` when that name on PATH is this very script, else the node command that runs it. */
function selfCommand(): string {
  const script = process.argv[1];
  if (script === undefined) return 'nova-reconcile';
  const self = realOrSame(script);
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && realOrSame(join(dir, 'nova-reconcile')) === self) return 'nova-reconcile';
  }
  const node = (process.env['PATH'] ?? '').split(delimiter).some((dir) => dir !== '' && realOrSame(join(dir, 'node')) === realOrSame(process.execPath)) ? 'node' : quote(process.execPath);
  return `${node} ${quote(self)}`;
}

function realOrSame(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function quote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
