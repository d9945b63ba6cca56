// The operator log: what was applied and what was refused, one line each,
// where oslo.log would put nova-manage's log lines. The options are
// oslo.log's (--debug/--nodebug, --log-file, --log-dir, --use-syslog,
// --syslog-log-facility) and so are nova.conf's [DEFAULT] log_file,
// log_dir, use_syslog, debug and syslog_log_facility; the command line wins.
// Without any of them nothing is logged (oslo.log would log to stderr, which
// the tool already uses for its own lines).
//
// Syslog: Node cannot send unix datagrams, so lines go to /dev/log through
// one logger(1) process (util-linux) fed on its stdin, with a <priority>
// prefix per line. Without logger(1) a one-line warning says nothing reaches
// syslog.
import type { ChildProcess } from 'node:child_process';
import { childProcess } from '../builtins.js';
import { closeSync, openSync, writeSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { redactUrl } from '../config/mask-url.js';
import type { NovaConfig } from '../config/types.js';
import { ReconcileError } from '../errors.js';
import { describeFileError, makeDirectories } from '../files.js';
import type { LogArgs } from './argv.js';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';

export interface OperatorLog {
  debug(message: string): void;
  info(message: string): void;
  warning(message: string): void;
  error(message: string): void;
  /**
   * Opens the log now, before anything is written to a database: a log file
   * that cannot be opened is then an error (exit 2) rather than a warning.
   */
  open(): void;
  /** Flushes and closes the file and logger(1). */
  close(): Promise<void>;
}

/** Where the lines go, decided from the options and nova.conf. */
export interface LogTarget {
  readonly file: string | undefined;
  /** syslog facility name as logger(1) spells it (user, local0, ...), or undefined: no syslog. */
  readonly syslogFacility: string | undefined;
  readonly debug: boolean;
}

const FACILITIES: Readonly<Record<string, number>> = {
  kern: 0, user: 1, mail: 2, daemon: 3, auth: 4, syslog: 5, lpr: 6, news: 7, uucp: 8, cron: 9, authpriv: 10, ftp: 11,
  local0: 16, local1: 17, local2: 18, local3: 19, local4: 20, local5: 21, local6: 22, local7: 23,
};
const SEVERITY: Readonly<Record<LogLevel, number>> = { DEBUG: 7, INFO: 6, WARNING: 4, ERROR: 3 };

/** oslo.log's syslog_log_facility: LOG_USER, LOG_LOCAL0, or the bare name. */
export function parseFacility(value: string, where: string): string {
  const name = value.trim().toLowerCase().replace(/^log_/, '');
  if (FACILITIES[name] === undefined) {
    throw new ReconcileError('usage', `${where} ${JSON.stringify(value)} is not a syslog facility`, { hint: 'e.g. LOG_USER, LOG_LOCAL0 ... LOG_LOCAL7, LOG_DAEMON' });
  }
  return name;
}

function readBool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  return undefined;
}

/**
 * oslo.log's _get_log_file_path: log_file alone; log_dir/log_file; or
 * log_dir/<binary>.log when only log_dir is set.
 */
export function resolveLogTarget(args: LogArgs, config: NovaConfig | undefined, cwd: string): LogTarget {
  const get = (key: string): string | undefined => {
    const v = config?.get('DEFAULT', key);
    return v === undefined || v === '' ? undefined : v;
  };
  const logFile = args.logFile ?? get('log_file');
  const logDir = args.logDir ?? get('log_dir');
  let file: string | undefined;
  if (logFile !== undefined) file = logDir !== undefined && !isAbsolute(logFile) ? join(logDir, logFile) : logFile;
  else if (logDir !== undefined) file = join(logDir, 'nova-reconcile.log');
  const useSyslog = args.useSyslog ?? readBool(get('use_syslog')) ?? false;
  const facility = args.syslogFacility !== undefined ? parseFacility(args.syslogFacility, '--syslog-log-facility') : parseFacility(get('syslog_log_facility') ?? 'LOG_USER', '[DEFAULT] syslog_log_facility');
  return {
    file: file === undefined ? undefined : resolve(cwd, file),
    syslogFacility: useSyslog ? facility : undefined,
    debug: args.debug ?? readBool(get('debug')) ?? false,
  };
}

/** oslo.log's logging_default_format_string: `%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s [-] %(message)s`, local time. */
export function formatLogLine(at: Date, pid: number, level: LogLevel, name: string, message: string): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const stamp = `${at.getFullYear()}-${p(at.getMonth() + 1)}-${p(at.getDate())} ${p(at.getHours())}:${p(at.getMinutes())}:${p(at.getSeconds())}.${p(at.getMilliseconds(), 3)}`;
  return `${stamp} ${pid} ${level} ${name} [-] ${oneLine(message)}`;
}

function oneLine(text: string): string {
  return redactUrl(text.replace(/\s*\n\s*/g, ' ').trim());
}

export interface OpenLogOptions {
  readonly name: string;
  readonly pid: number;
  /** Decided at the first line (nova.conf is read lazily). */
  readonly target: () => LogTarget;
  /** A warning for the operator (stderr), e.g. logger(1) missing. */
  readonly warn: (line: string) => void;
  /** /dev/log unless the environment names another socket (NOVA_RECONCILE_SYSLOG_SOCKET, for containers and tests). */
  readonly syslogSocket: string | undefined;
}

/** Lines held for one write at most (see openOperatorLog). */
const FLUSH_BYTES = 64 * 1024;

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already unusable: nothing to add to the warning.
  }
}

/** What the log has opened: decided at its first line, not before. */
interface LogState {
  target: LogTarget | undefined;
  fd: number | undefined;
  syslog: ChildProcess | undefined;
  syslogFailed: boolean;
}

/** The operator log; opens its file and logger(1) at the first line, not before. */
export function openOperatorLog(opts: OpenLogOptions): OperatorLog {
  const st: LogState = { target: undefined, fd: undefined, syslog: undefined, syslogFailed: false };
  // The file's lines are written at the end of each turn of the event loop,
  // those of one turn in one write (a WARNING or ERROR line at once, with
  // what came before it): a run that logs a line per host makes one system
  // call per turn, not per line. A process killed outright loses at most the
  // lines of its last turn; the journal, not this log, is the record of what
  // was applied.
  let pending = '';
  let flushQueued = false;
  const flush = (): void => {
    flushQueued = false;
    const text = pending;
    pending = '';
    if (text === '' || st.fd === undefined) return;
    try {
      writeSync(st.fd, text);
    } catch (err) {
      // A full disk or a vanished file stops the log, not the command.
      const failed = st.fd;
      st.fd = undefined;
      closeQuietly(failed);
      opts.warn(`nova-reconcile: warning: cannot write the log file ${st.target?.file ?? ''}: ${describeFileError(err)}; nothing more is logged there`);
    }
  };
  const write = (level: LogLevel, message: string): void => {
    const t = openTarget(opts, st, false);
    if (level === 'DEBUG' && !t.debug) return;
    const now = new Date();
    if (st.fd !== undefined) {
      pending += formatLogLine(now, opts.pid, level, opts.name, message) + '\n';
      if (level === 'WARNING' || level === 'ERROR' || pending.length >= FLUSH_BYTES) flush();
      else if (!flushQueued) {
        flushQueued = true;
        setImmediate(flush);
      }
    }
    if (st.syslog !== undefined && !st.syslogFailed && t.syslogFacility !== undefined) {
      const pri = (FACILITIES[t.syslogFacility] ?? 1) * 8 + SEVERITY[level];
      st.syslog.stdin?.write(`<${pri}>${level} ${opts.name} [-] ${oneLine(message)}\n`);
    }
  };
  return {
    debug: (m) => write('DEBUG', m),
    info: (m) => write('INFO', m),
    warning: (m) => write('WARNING', m),
    error: (m) => write('ERROR', m),
    open: () => void openTarget(opts, st, true),
    async close() {
      flush();
      await closeLog(st);
    },
  };
}

/** Decide the target and open what it names; `strict`: a problem throws instead of being warned about. */
function openTarget(opts: OpenLogOptions, st: LogState, strict: boolean): LogTarget {
  if (st.target !== undefined) return st.target;
  let target: LogTarget;
  try {
    target = opts.target();
  } catch (err) {
    st.target = { file: undefined, syslogFacility: undefined, debug: false };
    if (strict) throw err;
    // A bad [DEFAULT] value found mid-run: the run goes on, unlogged, and says so.
    opts.warn(`nova-reconcile: warning: nothing is logged: ${err instanceof Error ? err.message : String(err)}`);
    return st.target;
  }
  st.target = target;
  if (target.file !== undefined) {
    try {
      makeDirectories(join(target.file, '..'));
      st.fd = openSync(target.file, 'a', 0o640);
    } catch (err) {
      st.target = { ...target, file: undefined };
      const problem = new ReconcileError('config', `cannot open the log file ${target.file}: ${describeFileError(err)}`, { hint: 'check --log-file/--log-dir or [DEFAULT] log_file/log_dir' });
      if (strict) throw problem;
      opts.warn(`nova-reconcile: warning: ${problem.message}; nothing is logged there`);
    }
  }
  if (target.syslogFacility !== undefined) st.syslog = spawnLogger(opts, st);
  return st.target;
}

function spawnLogger(opts: OpenLogOptions, st: LogState): ChildProcess {
  const args = ['--prio-prefix', '--tag', 'nova-reconcile', `--id=${opts.pid}`, ...(opts.syslogSocket === undefined ? [] : ['--socket', opts.syslogSocket])];
  const child = childProcess().spawn('logger', args, { stdio: ['pipe', 'ignore', 'inherit'] });
  child.on('error', () => {
    if (!st.syslogFailed) opts.warn('nova-reconcile: warning: --use-syslog: logger(1) from util-linux could not be run; nothing is logged to syslog');
    st.syslogFailed = true;
  });
  child.stdin?.on('error', () => undefined);
  return child;
}

async function closeLog(st: LogState): Promise<void> {
  if (st.fd !== undefined) closeSync(st.fd);
  st.fd = undefined;
  const child = st.syslog;
  st.syslog = undefined;
  if (child === undefined || st.syslogFailed) return;
  // logger(1) sends what it has read and exits at end of input; wait for it (bounded).
  await new Promise<void>((done) => {
    const timer = setTimeout(done, 3000);
    child.once('close', () => {
      clearTimeout(timer);
      done();
    });
    child.stdin?.end();
  });
}
