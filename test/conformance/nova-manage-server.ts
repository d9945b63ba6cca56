// The real nova-manage, without paying its start-up on every run.
//
// Almost all of a nova-manage run is Python importing nova.cmd.manage (about
// 4 s of CPU here; the command itself takes ~0.1 s). A NovaManageServer
// imports it once in a /usr/bin/python3 process and then, for every command,
// forks: the child points fds 0/1/2 at /dev/null and two capture files, sets
// sys.argv, and runs exactly what the harness's `python3 -c` line runs,
// `sys.exit(main())`, ending through the normal interpreter exit. main()
// registers its options and parses the config itself, so nothing of one run
// leaks into the next: each child starts from the state right after import,
// which is the state a fresh process is in when it calls main() (plus the
// modules main() itself would import next, imported ahead of it). The one
// difference is the eventlet/urllib3 warning, which is printed at import
// time and so goes to the server's stderr once (filterNovaStderr drops it
// from fresh runs anyway). differential-cell-v2.test.ts checks the forked
// runs against fresh ones byte for byte.
//
// NRC_NOVA_FRESH_PROCESSES=1 makes runNovaManageFast fall back to a fresh
// process per run (runNovaManage).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { filterNovaStderr, realNovaVersions, runNovaManage, type ToolResult } from './real-nova.js';

const SERVER = String.raw`
import json, os, sys
sys.argv[0] = "nova-manage"
from nova.cmd.manage import main
# What main() would import on every run anyway (about 0.5 s of CPU each time):
# the object modules (register_all only imports them, and is idempotent), the
# rabbit driver that rpc.init loads through stevedore, and the DB driver.
from nova import objects
objects.register_all()
import oslo_messaging._drivers.impl_rabbit, pymysql, sqlalchemy.dialects.mysql.pymysql
# Without this, the child's garbage collections and interpreter exit walk
# (and so copy-on-write) every inherited object: ~0.8 s per run instead of ~0.2.
import gc
gc.freeze()
sys.stdout.write("ready\n")
sys.stdout.flush()
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd, 0)
        out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(err, 2)
        for f in (fd, out, err):
            os.close(f)
        os.environ.update(req["env"])
        sys.argv = ["nova-manage"] + req["args"]
        sys.exit(main())
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")
    sys.stdout.flush()
`;

export interface NovaManageServer {
  /** Same contract as runNovaManage: `nova-manage --config-file <confPath> <args...>`. */
  run(confPath: string, args: readonly string[], env?: Record<string, string>): Promise<ToolResult>;
  close(): Promise<void>;
}

const RUN_TIMEOUT_MS = 120_000;

export async function startNovaManageServer(): Promise<NovaManageServer> {
  if (process.env['NRC_NOVA_FRESH_PROCESSES'] === '1') {
    return { run: (confPath, args, env) => runNovaManage(confPath, args, env === undefined ? undefined : { env }), close: async () => undefined };
  }
  const versions = realNovaVersions();
  if (versions === null) throw new Error('the real Nova is not installed');
  const dir = await mkdtemp(join(tmpdir(), 'nrc-nova-server-'));
  const child: ChildProcessWithoutNullStreams = spawn(versions.python, ['-c', SERVER], {
    // argparse wraps usage at $COLUMNS, as in runNovaManage.
    env: { ...process.env, COLUMNS: '80' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let serverErr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (serverErr += s));
  const lines = createInterface({ input: child.stdout });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (l) => waiting.shift()?.(l));
  const exited = new Promise<never>((_, reject) => {
    child.on('exit', (code, signal) => reject(new Error(`the nova-manage server exited (${code ?? signal}): ${filterNovaStderr(serverErr)}`)));
    child.on('error', reject);
  });
  exited.catch(() => undefined);
  const nextLine = (): Promise<string> => Promise.race([new Promise<string>((resolve) => waiting.push(resolve)), exited]);

  const ready = await nextLine();
  if (ready !== 'ready') throw new Error(`the nova-manage server did not start: ${ready}`);

  let queue: Promise<unknown> = Promise.resolve();
  let n = 0;
  const runOne = async (confPath: string, args: readonly string[], env: Record<string, string>): Promise<ToolResult> => {
    n += 1;
    const stdoutPath = join(dir, `${n}.stdout`);
    const stderrPath = join(dir, `${n}.stderr`);
    child.stdin.write(JSON.stringify({ args: ['--config-file', confPath, ...args], env, stdout: stdoutPath, stderr: stderrPath }) + '\n');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`nova-manage ${args.join(' ')}: no answer after ${RUN_TIMEOUT_MS / 1000}s`)), RUN_TIMEOUT_MS);
    });
    try {
      const reply = JSON.parse(await Promise.race([nextLine(), timeout])) as { code: number };
      const [stdout, stderr] = await Promise.all([readFile(stdoutPath, 'utf8'), readFile(stderrPath, 'utf8')]);
      await Promise.all([rm(stdoutPath), rm(stderrPath)]);
      return { stdout, stderr: filterNovaStderr(stderr), code: reply.code };
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    // One command at a time per server: the steps of a case are sequential anyway.
    run: (confPath, args, env = {}) => {
      const p = queue.then(() => runOne(confPath, args, env));
      queue = p.catch(() => undefined);
      return p;
    },
    close: async () => {
      child.stdin.end();
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
