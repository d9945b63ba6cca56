// Extra MariaDB servers for the benchmark: cells usually live on their own
// MySQL servers, so the cell-parallelism measurement puts cells on servers of
// their own. Each one is a throw-away mariadbd started from the installed
// binaries: its own data directory under a temporary folder, a free port on
// 127.0.0.1, root with an empty password (bound to 127.0.0.1 only; grant
// tables stay on), a small buffer pool and no binary log.
//
// Every server started is registered in `liveServers` until it is stopped, so
// that a failure or a Ctrl-C still stops it and removes its folder. A server
// left behind by a benchmark that was killed outright (SIGKILL: no handler
// runs) is stopped and removed by the next benchmark's startServers().
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, openSync, closeSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import type { Server } from './scratch-deployment.js';

/** The folders under tmpdir() that hold extra servers; the owner's pid is in OWNER_FILE. */
const DIR_PREFIX = 'nrbench-servers-';
const OWNER_FILE = 'owner.pid';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

export interface ExtraServer {
  /** Where to connect: 127.0.0.1, its port, root without a password. */
  readonly server: Server;
  /** The folder holding its data directory, socket, pid file and error log. */
  readonly dir: string;
  readonly pid: number;
}

interface Running {
  readonly extra: ExtraServer;
  readonly child: ChildProcess;
  /** The temporary folder that holds this server (shared by the servers of one startServers call). */
  readonly root: string;
  exited: boolean;
}

/** Servers started and not yet stopped, for the signal and failure handlers. */
export const liveServers = new Set<Running>();
/** Temporary folders created and not yet removed. */
const liveRoots = new Set<string>();
/**
 * mariadb-install-db runs still going, each the leader of its own process
 * group (it is a shell script that starts a bootstrap mariadbd): a stop kills
 * the whole group before the folder is removed.
 */
const liveInstalls = new Set<{ readonly pid: number; readonly done: Promise<void> }>();

export interface Binaries {
  readonly mariadbd: string;
  readonly installDb: string;
}

/**
 * mariadbd and mariadb-install-db: $BENCH_MARIADBD and $BENCH_MARIADB_INSTALL_DB,
 * else the usual Debian places and PATH. Throws a message naming what is missing.
 */
export function findBinaries(env: NodeJS.ProcessEnv = process.env): Binaries {
  const pick = (override: string | undefined, candidates: readonly string[], what: string): string => {
    if (override !== undefined && override !== '') return override;
    for (const c of candidates) {
      if (c.includes('/')) {
        if (existsSync(c)) return c;
        continue;
      }
      try {
        return execFileSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      } catch {
        // not on PATH
      }
    }
    throw new Error(`cannot start extra MariaDB servers: ${what} not found (tried ${candidates.join(', ')}); install mariadb-server or set the path`);
  };
  return {
    mariadbd: pick(env['BENCH_MARIADBD'], ['/usr/sbin/mariadbd', 'mariadbd', '/usr/sbin/mysqld', 'mysqld'], 'mariadbd ($BENCH_MARIADBD)'),
    installDb: pick(env['BENCH_MARIADB_INSTALL_DB'], ['mariadb-install-db', 'mysql_install_db'], 'mariadb-install-db ($BENCH_MARIADB_INSTALL_DB)'),
  };
}

export interface StartOptions {
  /** Called with progress lines for stderr. */
  readonly progress?: (line: string) => void;
  /** innodb_buffer_pool_size (default 64M). */
  readonly bufferPool?: string;
  /** More mariadbd options, e.g. a global --sql-mode for a test. */
  readonly serverArgs?: readonly string[];
}

/**
 * Start `count` fresh servers side by side and wait until each accepts root
 * connections. On any failure the servers already started are stopped and
 * their folders removed before the error is thrown.
 */
export async function startServers(count: number, options: StartOptions = {}): Promise<ExtraServer[]> {
  const progress = options.progress ?? (() => undefined);
  if (count === 0) return [];
  const binaries = findBinaries();
  const stale = await cleanStaleServers();
  if (stale.length > 0) progress(`removed ${stale.length} server folder(s) left by a killed benchmark: ${stale.join(', ')}`);
  const root = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  liveRoots.add(root);
  writeFileSync(join(root, OWNER_FILE), `${process.pid}\n`);
  const started: Running[] = [];
  try {
    const ports = await freePorts(count);
    // The bootstrap of each data directory is independent; run them side by side.
    await Promise.all(ports.map((_, i) => installDataDir(binaries, join(root, `s${i + 1}`), options.bufferPool ?? '64M')));
    for (const [i, port] of ports.entries()) started.push(launch(binaries, root, join(root, `s${i + 1}`), port, options.bufferPool ?? '64M', options.serverArgs ?? []));
    await Promise.all(started.map((r) => waitReady(r)));
    for (const r of started) progress(`extra MariaDB server on 127.0.0.1:${r.extra.server.port} (pid ${r.extra.pid}, ${r.extra.dir}) is ready`);
    return started.map((r) => r.extra);
  } catch (err) {
    await stopAllServers().catch(() => undefined);
    throw err;
  }
}

/**
 * Bootstrap a data directory, once more from scratch if the first attempt
 * fails: a bootstrap that failed once on a loaded machine (2026-12-04, the
 * second of two run side by side) succeeded when run again.
 */
async function installDataDir(binaries: Binaries, dir: string, bufferPool: string): Promise<void> {
  try {
    await bootstrapDataDir(binaries, dir, bufferPool);
  } catch (first) {
    rmSync(join(dir, 'data'), { recursive: true, force: true });
    try {
      await bootstrapDataDir(binaries, dir, bufferPool);
    } catch (second) {
      throw new Error(`${(second as Error).message}
  (the first attempt failed too)`, { cause: first });
    }
  }
}

async function bootstrapDataDir(binaries: Binaries, dir: string, bufferPool: string): Promise<void> {
  const args = [
    '--no-defaults',
    `--datadir=${join(dir, 'data')}`,
    privateTmpdir(dir),
    ...runAsArgs(),
    // root@localhost and root@127.0.0.1 with an empty password and the native
    // plugin, so that mysql2 can log in over TCP as on the main server.
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve',
    // Passed on to the bootstrap server: a 96 MB redo log per server is waste here.
    '--innodb-log-file-size=8M',
    `--innodb-buffer-pool-size=${bufferPool}`,
  ];
  const child = spawn(binaries.installDb, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const output: Buffer[] = [];
  child.stdout?.on('data', (b: Buffer) => output.push(b));
  child.stderr?.on('data', (b: Buffer) => output.push(b));
  const result = new Promise<number | null>((resolve, reject) => {
    child.on('error', (err) => reject(new Error(`cannot run ${binaries.installDb}: ${err.message}`, { cause: err })));
    child.on('close', (code) => resolve(code));
  });
  const entry = { pid: child.pid ?? -1, done: result.then(() => undefined, () => undefined) };
  liveInstalls.add(entry);
  try {
    const code = await result;
    if (code !== 0) {
      const text = Buffer.concat(output).toString('utf8');
      // Its own error lines come first; the tail is mostly the tool's advice.
      const errors = text.split('\n').filter((l) => /error/i.test(l)).slice(0, 10).map((l) => `  ${l}`);
      throw new Error(`${binaries.installDb} ${args.join(' ')} exited ${code}:\n${[...errors, tail(text, 5)].join('\n')}`);
    }
  } finally {
    liveInstalls.delete(entry);
  }
}

function launch(binaries: Binaries, root: string, dir: string, port: number, bufferPool: string, serverArgs: readonly string[]): Running {
  const errorLog = join(dir, 'error.log');
  const args = [
    '--no-defaults',
    `--datadir=${join(dir, 'data')}`,
    privateTmpdir(dir),
    ...runAsArgs(),
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(dir, 'mysqld.sock')}`,
    `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--log-error=${errorLog}`,
    '--skip-log-bin',
    '--skip-name-resolve',
    `--innodb-buffer-pool-size=${bufferPool}`,
    '--innodb-log-file-size=8M',
    // As the main server (Debian's defaults): what the scratch databases and
    // nova-reconcile's sessions assume.
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_general_ci',
    '--max-connections=200',
    ...serverArgs,
  ];
  // Its own process group: a Ctrl-C in the terminal reaches the benchmark,
  // which then stops the server itself, in order.
  const out = openSync(join(dir, 'stdout.log'), 'a');
  let child: ChildProcess;
  try {
    child = spawn(binaries.mariadbd, args, { stdio: ['ignore', out, out], detached: true });
  } finally {
    closeSync(out);
  }
  if (child.pid === undefined) throw new Error(`could not start ${binaries.mariadbd}`);
  const running: Running = {
    extra: { server: { host: '127.0.0.1', port, user: 'root', password: undefined }, dir, pid: child.pid },
    child,
    root,
    exited: false,
  };
  child.on('exit', () => {
    running.exited = true;
  });
  child.on('error', () => {
    running.exited = true;
  });
  liveServers.add(running);
  return running;
}

/**
 * `--tmpdir` in the server's own folder, made if missing. Every mariadbd, the
 * bootstrap one of mariadb-install-db included, deletes every `#sql*` file in
 * its tmpdir as it starts (mysql_rm_tmp_tables): with the default /tmp, a
 * throw-away server starting while the main server ran a query deleted that
 * query's internal temporary table under it ("Error on delete of
 * '/tmp/#sql-temptable-...MAI'", a CI failure of 2026-12-05).
 */
export function privateTmpdir(dir: string, owner?: { readonly uid: number; readonly gid: number }): string {
  const path = join(dir, 'tmp');
  mkdirSync(path, { recursive: true });
  if (owner !== undefined) chownSync(path, owner.uid, owner.gid);
  return `--tmpdir=${path}`;
}

/** mariadbd refuses to run as root unless told to. */
function runAsArgs(): string[] {
  return process.getuid?.() === 0 ? ['--user=root'] : [`--user=${userInfo().username}`];
}

async function waitReady(r: Running): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last: unknown;
  while (Date.now() < deadline) {
    if (r.exited) {
      throw new Error(`the MariaDB server on port ${r.extra.server.port} exited during start-up; its error log says:\n${await logTail(r.extra.dir)}`);
    }
    try {
      const conn = await createConnection({ host: '127.0.0.1', port: r.extra.server.port, user: 'root', connectTimeout: 2000 });
      await conn.query('SELECT 1');
      await conn.end();
      return;
    } catch (err) {
      last = err;
      await sleep(100);
    }
  }
  throw new Error(
    `the MariaDB server on port ${r.extra.server.port} did not accept connections within ${READY_TIMEOUT_MS / 1000} s ` +
      `(${last instanceof Error ? last.message : String(last)}); its error log says:\n${await logTail(r.extra.dir)}`,
  );
}

/**
 * Stop every server still running (SIGTERM: a clean shutdown, SIGKILL after
 * STOP_TIMEOUT_MS) and remove the temporary folders.
 */
export async function stopAllServers(): Promise<void> {
  for (const install of liveInstalls) if (install.pid > 0) signal(-install.pid, 'SIGKILL');
  await Promise.all([...liveInstalls].map((install) => install.done));
  const servers = [...liveServers];
  await Promise.all(
    servers.map(async (r) => {
      if (!r.exited) {
        signal(r.extra.pid, 'SIGTERM');
        const deadline = Date.now() + STOP_TIMEOUT_MS;
        while (!r.exited && Date.now() < deadline) await sleep(50);
        if (!r.exited) {
          signal(r.extra.pid, 'SIGKILL');
          while (!r.exited) await sleep(50);
        }
      }
      liveServers.delete(r);
    }),
  );
  for (const root of [...liveRoots]) {
    await rm(root, { recursive: true, force: true });
    liveRoots.delete(root);
  }
}

/**
 * The last resort, for process.on('exit') where nothing asynchronous runs:
 * SIGKILL whatever is still running and remove the folders.
 */
export function killAllServersSync(): void {
  for (const install of liveInstalls) if (install.pid > 0) signal(-install.pid, 'SIGKILL');
  liveInstalls.clear();
  for (const r of liveServers) if (!r.exited) signal(r.extra.pid, 'SIGKILL');
  liveServers.clear();
  for (const root of liveRoots) rmSync(root, { recursive: true, force: true });
  liveRoots.clear();
}

/**
 * Folders of extra servers whose benchmark is gone (killed with SIGKILL, so
 * no handler ran): their servers are killed (by the pid in each pid file, if
 * that process still is a mariadbd) and the folders removed. Returns the folders removed.
 */
export async function cleanStaleServers(): Promise<string[]> {
  const removed: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((e) => e.startsWith(DIR_PREFIX));
  } catch {
    return removed;
  }
  for (const entry of entries) {
    const root = join(tmpdir(), entry);
    const owner = readPid(join(root, OWNER_FILE));
    if (owner === undefined || owner === process.pid || isAlive(owner)) continue;
    let subdirs: string[] = [];
    try {
      subdirs = readdirSync(root).filter((d) => /^s\d+$/.test(d));
    } catch {
      // vanished meanwhile
    }
    for (const sub of subdirs) {
      const pid = readPid(join(root, sub, 'mysqld.pid'));
      if (pid !== undefined && isAlive(pid) && isMariadbd(pid)) {
        signal(pid, 'SIGKILL');
        const deadline = Date.now() + 5000;
        while (isAlive(pid) && Date.now() < deadline) await sleep(50);
      }
    }
    await rm(root, { recursive: true, force: true });
    removed.push(root);
  }
  return removed;
}

/** Free TCP ports on 127.0.0.1, as the kernel hands them out (all distinct). The tests use it too (test/helpers/ports.ts). */
export async function freePorts(count: number): Promise<number[]> {
  const holders = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = holders.map((s) => {
    const address = s.address();
    if (address === null || typeof address === 'string') throw new Error('internal: no port');
    return address.port;
  });
  await Promise.all(holders.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

function readPid(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isMariadbd(pid: number): boolean {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    return comm === 'mariadbd' || comm === 'mysqld';
  } catch {
    // No /proc: trust the pid file inside our own folder.
    return true;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** The end of the error log, or of stdout/stderr when mariadbd died before opening its log. */
async function logTail(dir: string): Promise<string> {
  for (const file of ['error.log', 'stdout.log']) {
    try {
      const text = await readFile(join(dir, file), 'utf8');
      if (text.trim() !== '') return tail(text);
    } catch {
      // try the next
    }
  }
  return '  (nothing logged)';
}

function tail(text: string, lines = 15): string {
  return text
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((l) => `  ${l}`)
    .join('\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
