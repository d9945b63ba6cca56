// Whole-process timing of nova-reconcile and the real nova-manage: wall clock
// from spawn to exit, process start included, as an operator experiences it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Server } from './scratch-deployment.js';

export interface TimedRun {
  readonly seconds: number;
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Children still running, so that Ctrl-C can stop them before the databases are dropped. */
export const running = new Set<ChildProcess>();

export function runTimed(command: string, args: readonly string[], timeoutMs: number): Promise<TimedRun> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      running.delete(child);
      reject(e);
    });
    child.on('close', (code, signal) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      clearTimeout(timer);
      running.delete(child);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (timedOut) {
        reject(new Error(`timed out after ${timeoutMs / 1000} s: ${command} ${args.join(' ')}\nstderr:\n${stderr}`));
        return;
      }
      resolve({ seconds, code: code ?? (signal === null ? 255 : 128), stdout, stderr });
    });
  });
}

export interface CliStats {
  readonly roundTrips: number;
  readonly elapsedMs: number;
  readonly maxRssKb: number;
}

/** The `stats: round_trips=N elapsed_ms=T max_rss_kb=K` line that `--stats` prints on stderr. */
export function parseStatsLine(stderr: string): CliStats | undefined {
  const m = /^stats: round_trips=(\d+) elapsed_ms=(\d+) max_rss_kb=(\d+)\s*$/m.exec(stderr);
  if (m === null) return undefined;
  return { roundTrips: Number(m[1]), elapsedMs: Number(m[2]), maxRssKb: Number(m[3]) };
}

// sys.argv[0] as the packaged console script has it.
export const NOVA_MANAGE_MAIN = 'import sys; sys.argv[0] = "nova-manage"; from nova.cmd.manage import main; sys.exit(main())';

export interface NovaInstall {
  readonly python: string;
  readonly version: string;
}

/**
 * The interpreter that can import the real nova (Debian's python3-nova lives
 * in /usr/bin/python3's dist-packages; a pyenv python3 earlier on PATH cannot
 * import it). NRC_NOVA_PYTHON overrides, as in the conformance tier.
 */
export function findNovaManage(): NovaInstall | undefined {
  const env = process.env['NRC_NOVA_PYTHON'];
  const candidates = env !== undefined && env !== '' ? [env] : [...(existsSync('/usr/bin/python3') ? ['/usr/bin/python3'] : []), 'python3'];
  for (const python of candidates) {
    try {
      const version = execFileSync(python, ['-c', 'import nova.cmd.manage, importlib.metadata as m; print(m.version("nova"))'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 60_000,
      }).trim();
      if (version !== '') return { python, version };
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** nova-manage's stderr minus the one eventlet/urllib3 warning every run prints. */
export function novaStderrWithoutWarning(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => !line.includes('eventlet monkey patching') && line.trim() !== '')
    .join('\n');
}

/**
 * Runs nova-reconcile (`node <argv>`, which must include --stats) and checks
 * its exit code and its stats: line; a wrong run throws with its output, as
 * timing it would be worthless.
 */
export async function runWithStats(argv: readonly string[], label: string, expectCode: number, timeoutMs: number): Promise<{ run: TimedRun; stats: CliStats }> {
  const run = await runTimed(process.execPath, argv, timeoutMs);
  const stats = parseStatsLine(run.stderr);
  if (run.code !== expectCode || stats === undefined) {
    throw new Error(
      `${label}: nova-reconcile ${run.code !== expectCode ? `exited ${run.code} (expected ${expectCode})` : 'printed no stats: line'}\n` +
        `  command: node ${argv.join(' ')}\n  stdout: ${run.stdout.trim().slice(0, 2000) || '(empty)'}\n  stderr: ${run.stderr.trim().slice(0, 2000) || '(empty)'}`,
    );
  }
  return { run, stats };
}

/** What a benchmark section needs: the main server, the launcher, runs per measurement, and where progress lines go. */
export interface BenchContext {
  readonly server: Server;
  readonly cli: string;
  readonly runs: number;
  readonly progress: (message: string) => void;
}
