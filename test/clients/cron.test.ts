// The documented cron lines (contrib/cron/nova-reconcile, which docs/operations/automation.md
// quotes): each passes `sh -n`, and each command runs against a sandbox as
// cron runs it: /bin/sh -c, no controlling terminal, no standard input, and
// an environment of PATH only. The deployment's paths are read as folders of
// a scratch folder, and `openstack baremetal node list` is a stand-in that
// prints the sandbox's ironic node list.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assertBuilt, runBin } from '../helpers/cli.js';
import { automationSection, BIN_DIR, describeWithTools, fencedBlocks, runClient, scratch, type Run } from './clients.js';

interface CronJob {
  readonly schedule: string;
  readonly user: string;
  readonly command: string;
}

/** The documented cron block: variable lines and jobs (cron.d format: five time fields, the user, the command). */
function readmeCron(): { vars: Record<string, string>; jobs: CronJob[] } {
  const blocks = fencedBlocks(automationSection()).filter((b) => b.lang === 'cron');
  expect(blocks).toHaveLength(1);
  const vars: Record<string, string> = {};
  const jobs: CronJob[] = [];
  for (const line of (blocks[0]?.body ?? '').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const v = /^([A-Z_]+)=(.*)$/.exec(line);
    if (v !== null) {
      vars[v[1] ?? ''] = v[2] ?? '';
      continue;
    }
    const m = /^(\S+ \S+ \S+ \S+ \S+) (\S+) (.+)$/.exec(line);
    if (m === null) throw new Error(`not a cron.d job line: ${line}`);
    jobs.push({ schedule: m[1] ?? '', user: m[2] ?? '', command: m[3] ?? '' });
  }
  return { vars, jobs };
}

const TIME_FIELD = /^(\*|\d+(-\d+)?)(\/\d+)?(,(\*|\d+(-\d+)?)(\/\d+)?)*$/;

describeWithTools(['sh', 'setsid', 'promtool'], "the documented cron lines", () => {
  const { vars, jobs } = readmeCron();
  let tmp: ReturnType<typeof scratch>;
  /** Production path -> scratch path, each of which must be used by some line. */
  let paths: Array<[string, string]>;
  let used: Set<string>;
  let stubNodes: string;

  beforeAll(() => {
    assertBuilt();
    tmp = scratch('cron');
    for (const d of ['log', 'lib', 'textfile', 'stub']) mkdirSync(join(tmp.dir, d));
    stubNodes = join(tmp.dir, 'stub', 'nodes.json');
    const stub = join(tmp.dir, 'stub', 'openstack');
    writeFileSync(stub, `#!/bin/sh\n[ "$*" = "baremetal node list -f json" ] || { echo "stand-in openstack: unexpected arguments: $*" >&2; exit 2; }\nexec cat '${stubNodes}'\n`);
    chmodSync(stub, 0o755);
    used = new Set();
  });
  afterAll(() => tmp?.remove());

  function sandbox(scenario: string): string {
    const dir = join(tmp.dir, `sandbox-${scenario}`);
    return dir;
  }

  async function createSandbox(scenario: string): Promise<string> {
    const dir = sandbox(scenario);
    const r = await runBin(['sandbox', 'create', dir, '--scenario', scenario]);
    expect(r.code).toBe(0);
    return join(dir, 'nova.conf');
  }

  /** The job's command with the deployment's paths read as scratch paths, run as cron runs it. */
  function runAsCron(job: CronJob, conf: string): Run {
    paths = [
      ['/etc/nova/nova.conf', conf],
      ['/var/log/nova/', `${join(tmp.dir, 'log')}/`],
      ['/var/lib/nova-reconcile/', `${join(tmp.dir, 'lib')}/`],
      ['/var/lib/node_exporter/textfile_collector/', `${join(tmp.dir, 'textfile')}/`],
    ];
    let command = job.command;
    for (const [from, to] of paths) {
      if (command.includes(from)) used.add(from);
      command = command.split(from).join(to);
    }
    expect(command).not.toMatch(/(^|\s|>)\/(etc|var)\//);
    // cron's PATH from the file, after the checkout's bin/ (an installed nova-reconcile) and the stand-in.
    const env = { PATH: `${join(tmp.dir, 'stub')}:${BIN_DIR}:${vars['PATH'] ?? '/usr/bin:/bin'}` };
    return runClient('setsid', ['-w', vars['SHELL'] ?? '/bin/sh', '-c', command], { env, cwd: tmp.dir });
  }

  it('the block is a cron.d file: /bin/sh, a PATH, and three jobs run as nova', () => {
    expect(vars).toEqual({ SHELL: '/bin/sh', PATH: '/usr/local/bin:/usr/bin:/bin' });
    expect(jobs).toHaveLength(3);
    for (const job of jobs) {
      expect(job.user).toBe('nova');
      for (const field of job.schedule.split(' ')) expect(field).toMatch(TIME_FIELD);
      // cron turns an unescaped % into a newline.
      expect(job.command).not.toContain('%');
    }
  });

  it.each([0, 1, 2])('line %i passes sh -n', (i) => {
    const r = runClient('sh', ['-n', '-c', jobs[i]?.command ?? 'exit 1'], { env: { PATH: '/usr/bin:/bin' } });
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('sh -n fails on a line with broken quoting (the check can fail)', () => {
    const r = runClient('sh', ['-n', '-c', `${jobs[1]?.command ?? ''} "`], { env: { PATH: '/usr/bin:/bin' } });
    expect(r.code).not.toBe(0);
  });

  it('the commands run without a terminal', () => {
    const r = runClient('setsid', ['-w', '/bin/sh', '-c', 'tty; echo "$-"; env'], { env: { PATH: '/usr/bin:/bin' } });
    expect(r.stdout).toContain('not a tty');
    expect(r.stdout).not.toContain('HOME=');
  });

  it('discovery every 10 minutes maps the hosts of a fresh cloud, quietly', async () => {
    const job = jobs.find((j) => j.command.includes('discover_hosts'));
    expect(job).toBeDefined();
    const conf = await createSandbox('libvirt');
    const r = runAsCron(job as CronJob, conf);
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(join(tmp.dir, 'log', 'discover.log'), 'utf8')).toBe('');
    const hosts = await runBin(['--config-file', conf, 'cell_v2', 'list_hosts', '--format', 'json']);
    expect(hosts.stdout).toContain('"compute-5"');
    // Again: nothing to do, still exit 0.
    expect(runAsCron(job as CronJob, conf).code).toBe(0);
  });

  it('the audit every 15 minutes writes metrics that promtool accepts; its findings are no error', async () => {
    const job = jobs.find((j) => j.command.includes(' audit '));
    expect(job).toBeDefined();
    const conf = await createSandbox('deleted-ironic-node');
    const r = runAsCron(job as CronJob, conf);
    // exit 3: findings (the ironic node list is not given here: a suspect, and the deleted service's node).
    expect(r).toEqual({ code: 3, stdout: '', stderr: '' });
    expect(readFileSync(join(tmp.dir, 'log', 'nova-reconcile-audit.err'), 'utf8')).toBe('');
    const metrics = readFileSync(join(tmp.dir, 'textfile', 'nova_reconcile.prom'), 'utf8');
    expect(metrics).toMatch(/^nova_reconcile_audit_success 1$/m);
    expect(metrics).toMatch(/^nova_reconcile_audit_findings\{kind="orphan-node-service-deleted",cell="cell1",[^}]*\} 1$/m);
    const check = runClient('promtool', ['check', 'metrics'], { env: { PATH: '/usr/bin:/bin' }, input: metrics });
    expect(check).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('the nightly cleanup applies the plan and mails nothing; with an empty node export it applies nothing and mails one line', async () => {
    const job = jobs.find((j) => j.command.includes('cleanup_orphans'));
    expect(job).toBeDefined();
    const conf = join(sandbox('deleted-ironic-node'), 'nova.conf');
    expect(existsSync(conf)).toBe(true);
    writeFileSync(stubNodes, '[]\n');
    const refused = runAsCron(job as CronJob, conf);
    expect(refused).toEqual({ code: 0, stdout: `cleanup_orphans exit 2: see ${join(tmp.dir, 'log')}/cleanup.log\n`, stderr: '' });
    expect(readFileSync(join(tmp.dir, 'log', 'cleanup.log'), 'utf8')).toMatch(/empty/i);

    writeFileSync(stubNodes, readFileSync(join(sandbox('deleted-ironic-node'), 'ironic-nodes.json')));
    const applied = runAsCron(job as CronJob, conf);
    expect(applied).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(join(tmp.dir, 'lib', 'nodes.json'), 'utf8')).toContain('bm-gold-2');
    const again = await runBin(['--config-file', conf, 'compute_node', 'cleanup_orphans', '--ironic-nodes', join(tmp.dir, 'lib', 'nodes.json')]);
    expect(again.code).toBe(0);
  });

  it('every deployment path of the lines was read as a scratch path', () => {
    expect([...used].sort()).toEqual(paths.map(([from]) => from).sort());
  });
});
