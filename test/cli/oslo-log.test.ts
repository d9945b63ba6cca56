// oslo.log's options, as nova-manage accepts them (issue 18 item 3): in every
// position, with the same "unknown option" error before the command words as
// after them; and the operator log they name: one oslo.log-style line per
// applied unit, refusal and error, without secrets, in a file or in syslog.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';

const NODE = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123';
const LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \d+ (DEBUG|INFO|WARNING|ERROR) nova_reconcile\.[a-z_.]+ \[-\] \S.*$/;

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'nova-reconcile-log-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let seq = 0;
async function sandbox(scenario: string): Promise<{ dir: string; conf: string }> {
  const dir = join(root, `sbx-${++seq}`);
  const r = await runBin(['sandbox', 'create', dir, '--scenario', scenario]);
  expect(r.code, r.stderr).toBe(0);
  return { dir, conf: join(dir, 'nova.conf') };
}

function logLines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
}

/** argv with `opts` put before the command words, between them, or after them. */
function place(conf: string, words: readonly string[], opts: readonly string[], at: 'before' | 'between' | 'after'): string[] {
  if (at === 'before') return [...opts, '--config-file', conf, ...words];
  if (at === 'between') return ['--config-file', conf, words[0] as string, ...opts, ...words.slice(1)];
  return ['--config-file', conf, ...words, ...opts];
}

describe('oslo.log options are accepted in every position', () => {
  let conf: string;
  let dir: string;
  beforeAll(async () => {
    ({ conf, dir } = await sandbox('ironic-failover'));
  }, 60_000);

  const OPTION_SETS: ReadonlyArray<(d: string) => string[]> = [
    (d) => ['--log-file', join(d, 'a.log')],
    (d) => [`--log-file=${join(d, 'b.log')}`],
    (d) => ['--log-dir', join(d, 'logs')],
    () => ['--debug'],
    () => ['--nodebug'],
    () => ['--nouse-syslog'],
    () => ['--syslog-log-facility', 'LOG_LOCAL0'],
    (d) => ['--debug', '--log_file', join(d, 'c.log'), '--nodebug', '--logdir', join(d, 'logs2')],
  ];

  for (const words of [['cell_v2', 'list_hosts'], ['compute_node', 'list']] as const) {
    it(`${words.join(' ')}: same stdout and exit code with each option before, between and after the command words`, async () => {
      const plain = await runBin(['--config-file', conf, ...words]);
      expect(plain.code).toBe(0);
      for (const opts of OPTION_SETS) {
        for (const at of ['before', 'between', 'after'] as const) {
          const r = await runBin(place(conf, words, opts(dir), at));
          expect({ at, opts: opts(dir), code: r.code, stdout: r.stdout }).toEqual({ at, opts: opts(dir), code: 0, stdout: plain.stdout });
        }
      }
    }, 120_000);
  }

  it('--log-file before the command is no longer taken for a command word (was: unknown command "F cell_v2", exit 127)', async () => {
    const r = await runBin(['--log-file', join(dir, 'x.log'), '--config-file', conf, 'cell_v2', 'list_hosts']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('ironic-compute-0');
  });

  for (const words of [['cell_v2', 'list_hosts'], ['audit']] as const) {
    it(`an unknown option before "${words.join(' ')}" gets the same error and exit code as after it`, async () => {
      const after = await runBin(['--config-file', conf, ...words, '--zzz-bogus']);
      expect(after.code).toBe(words[0] === 'cell_v2' ? 2 : 127);
      expect(after.stderr).toBe(`nova-reconcile ${words.join(' ')}: error: unknown option '--zzz-bogus'\n`);
      for (const argv of [
        ['--zzz-bogus', '--config-file', conf, ...words],
        ['--zzz-bogus', 'value', '--config-file', conf, ...words],
        ['--config-file', conf, '--zzz-bogus=1', ...words],
      ]) {
        const before = await runBin(argv);
        expect({ argv, code: before.code, stderr: before.stderr, stdout: before.stdout }).toEqual({ argv, code: after.code, stderr: after.stderr, stdout: after.stdout });
      }
    });
  }

  it('--verbose before the command words is oslo.log\'s; after them it is discover_hosts\'s own', async () => {
    const a = await sandbox('ironic-ha');
    const global = await runBin(['--verbose', '--config-file', a.conf, 'cell_v2', 'discover_hosts']);
    expect(global.code, global.stderr).toBe(0);
    expect(global.stdout).toBe('');
    const b = await sandbox('ironic-ha');
    const own = await runBin(['--config-file', b.conf, 'cell_v2', 'discover_hosts', '--verbose']);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('Found 1 unmapped computes in cell');
    // A command without a --verbose of its own takes it as oslo.log's, wherever it is.
    const list = await runBin(['--config-file', b.conf, 'compute_node', 'list', '--verbose']);
    expect(list.code, list.stderr).toBe(0);
  }, 60_000);

  it('bad values: a missing value, an unknown facility, a log file that cannot be opened: one line, no database change', async () => {
    const missing = await runBin(['--config-file', conf, 'audit', '--log-file']);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toBe('nova-reconcile: error: option --log-file needs a value\n');
    const facility = await runBin(['--config-file', conf, '--use-syslog', '--syslog-log-facility', 'LOG_NOPE', 'compute_node', 'rebalance', '--apply']);
    expect(facility.code).toBe(127);
    expect(facility.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
    expect(facility.stderr).toContain('is not a syslog facility');
    const unopenable = await runBin(['--config-file', conf, '--log-file', '/proc/nova-reconcile/x.log', 'compute_node', 'rebalance', '--apply']);
    expect(unopenable.code).toBe(2);
    expect(unopenable.stderr).toMatch(/^nova-reconcile: error: cannot open the log file \/proc\/nova-reconcile\/x\.log: .*\n$/);
    // Nothing was applied by either: the plan is still there.
    const plan = await runBin(['--config-file', conf, 'compute_node', 'rebalance']);
    expect(plan.code).toBe(3);
  });
});

describe('the operator log', () => {
  it('an --apply logs one INFO line per applied unit, oslo.log format; --debug adds DEBUG lines; the journal is named', async () => {
    const { dir, conf } = await sandbox('ironic-failover');
    const log = join(dir, 'apply.log');
    const r = await runBin(['--config-file', conf, 'compute_node', '--log-file', log, 'rebalance', '--apply']);
    expect(r.code, r.stderr).toBe(4);
    const journal = /^journal: (.+)$/m.exec(r.stderr)?.[1] ?? '';
    const lines = logLines(log);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(LINE);
    expect(lines[0]).toContain(` INFO nova_reconcile.compute_node.rebalance [-] applied: ironic node ${NODE}`);
    expect(lines[0]).toContain(`2 change(s) (journal ${journal})`);
    // Appended, not replaced; undo logs each restored change.
    const undo = await runBin(['--config-file', conf, 'undo', journal, '--apply', '--log-file', log, '--debug']);
    expect(undo.code, undo.stderr).toBe(4);
    const after = logLines(log);
    expect(after[0]).toBe(lines[0]);
    expect(after.filter((l) => / INFO nova_reconcile\.undo \[-\] undo of compute_node rebalance .*: restored change \d/.test(l))).toHaveLength(2);
    expect(after.filter((l) => / DEBUG nova_reconcile\.undo \[-\] exit code 4$/.test(l))).toHaveLength(1);
    for (const l of after) expect(l).toMatch(LINE);
  }, 60_000);

  it('the nova-manage compatible commands that write log what they wrote or refused; their stdout is unchanged', async () => {
    const { dir, conf } = await sandbox('ironic-ha');
    const log = join(dir, 'compat.log');
    const plain = await sandbox('ironic-ha');
    const expected = await runBin(['--config-file', plain.conf, 'cell_v2', 'discover_hosts', '--by-service']);
    const r = await runBin(['--log-file', log, '--config-file', conf, 'cell_v2', 'discover_hosts', '--by-service']);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: expected.code, stdout: expected.stdout });
    const cell1 = '4dde17f6-6b53-4318-915d-00c67a4771f4';
    const del = await runBin(['--config-file', conf, 'cell_v2', 'delete_host', '--cell_uuid', cell1, '--host', 'ironic-compute-1', '--log-file', log]);
    expect(del.code).toBe(0);
    const missing = await runBin(['--config-file', conf, 'cell_v2', 'delete_host', '--cell_uuid', cell1, '--host', 'nowhere', '--log-file', log]);
    expect(missing.code).toBe(2);
    const lines = logLines(log).map((l) => l.replace(/^.* \d+ (\w+) /, '$1 '));
    expect(lines).toEqual([
      ...[0, 1, 2].map((i) => `INFO nova_reconcile.cell_v2.discover_hosts [-] created host mapping for compute host 'ironic-compute-${i}' in cell ${cell1}`),
      `INFO nova_reconcile.cell_v2.delete_host [-] deleted host mapping of host 'ironic-compute-1' in cell ${cell1}`,
      `WARNING nova_reconcile.cell_v2.delete_host [-] refused to delete host 'nowhere': ${missing.stdout.trim()}`,
    ]);
  }, 60_000);

  it('refusals are logged as WARNING lines', async () => {
    const { dir, conf } = await sandbox('ironic-failover');
    const log = join(dir, 'refused.log');
    const r = await runBin(['--log-file', log, '--config-file', conf, 'compute_node', 'move', '--node', NODE, '--to-host', 'ironic-compute-0', '--apply']);
    expect(r.code).toBe(3);
    const lines = logLines(log);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/ WARNING nova_reconcile\.compute_node\.move \[-\] refused: compute node 1be26c0b-.* destination ironic-compute-0 is forced down$/);
    expect(lines[1]).toMatch(/ WARNING nova_reconcile\.compute_node\.move \[-\] refused to apply compute_node move: .*nothing was applied$/);
  }, 60_000);

  it("nova.conf's [DEFAULT] log_dir and debug are read; the command line wins (--nodebug)", async () => {
    const { dir, conf } = await sandbox('ironic-failover');
    const logDir = join(dir, 'var-log-nova');
    writeFileSync(conf, readFileSync(conf, 'utf8').replace('[DEFAULT]\n', `[DEFAULT]\nlog_dir = ${logDir}\ndebug = true\n`));
    const r = await runBin(['--config-file', conf, 'compute_node', 'rebalance', '--apply', '--nodebug']);
    expect(r.code, r.stderr).toBe(4);
    const lines = logLines(join(logDir, 'nova-reconcile.log'));
    expect(lines.map((l) => / (DEBUG|INFO|WARNING|ERROR) /.exec(l)?.[1])).toEqual(['INFO']);
    const again = await runBin(['--config-file', conf, 'compute_node', 'rebalance', '--apply']);
    expect(again.code).toBe(0);
    expect(logLines(join(logDir, 'nova-reconcile.log')).slice(1).map((l) => / (DEBUG|INFO|WARNING|ERROR) /.exec(l)?.[1])).toEqual(['DEBUG']);
  }, 60_000);

  it('no secrets: an error naming a database URL with a password is logged masked', async () => {
    const { dir, conf } = await sandbox('ironic-failover');
    const log = join(dir, 'secret.log');
    const extra = join(dir, 'extra.conf');
    writeFileSync(extra, '[api_database]\nconnection = mysql+pymysql://nova:S3cretPassw0rd@127.0.0.1:1/nova_api\n');
    const r = await runBin(['--config-file', conf, '--config-file', extra, '--log-file', log, 'compute_node', 'rebalance', '--apply']);
    expect(r.code).toBe(2);
    const text = readFileSync(log, 'utf8');
    expect(text).toMatch(/ ERROR nova_reconcile\.compute_node\.rebalance \[-\] .*127\.0\.0\.1.*\(exit code 2\)\n$/);
    expect(text).not.toContain('S3cretPassw0rd');
    expect(r.stderr + r.stdout).not.toContain('S3cretPassw0rd');
    // The sandbox's transport_url carries guest:guest; nothing of it is logged either.
    appendFileSync(log, '');
    expect(text).not.toContain('guest:guest');
  }, 60_000);

  it('--use-syslog sends each line to the syslog socket through logger(1), with the facility asked for', async () => {
    const { dir, conf } = await sandbox('ironic-failover');
    const socket = join(dir, 'dev-log');
    const received = join(dir, 'received.txt');
    // A syslog daemon stand-in: a unix datagram socket that writes what it receives (Node has no unix datagram sockets).
    const listener = spawn('python3', [
      '-c',
      `import socket,sys\ns=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM)\ns.bind(sys.argv[1])\nprint('ready',flush=True)\ns.settimeout(20)\nf=open(sys.argv[2],'a')\nwhile True:\n  d=s.recv(65536)\n  f.write(d.decode()+'\\n'); f.flush()\n`,
      socket,
      received,
    ]);
    try {
      await new Promise<void>((resolve, reject) => {
        listener.stdout.once('data', () => resolve());
        listener.once('error', reject);
      });
      const r = await runBin(['--use-syslog', '--config-file', conf, 'compute_node', 'rebalance', '--apply', '--syslog-log-facility', 'LOG_LOCAL3'], { env: { NOVA_RECONCILE_SYSLOG_SOCKET: socket } });
      expect(r.code, r.stderr).toBe(4);
      for (let i = 0; i < 100 && !(existsSync(received) && readFileSync(received, 'utf8').includes('applied:')); i++) await new Promise((res) => setTimeout(res, 50));
      const got = readFileSync(received, 'utf8').split('\n').filter((l) => l !== '');
      expect(got).toHaveLength(1);
      // local3 (19) * 8 + info (6) = 158; logger(1) adds the time, the tag and the pid.
      expect(got[0]).toMatch(new RegExp(`^<158>.* nova-reconcile\\[\\d+\\]: INFO nova_reconcile\\.compute_node\\.rebalance \\[-\\] applied: ironic node ${NODE}`));
    } finally {
      listener.kill();
    }
  }, 60_000);
});
