// Side by side: runs two builds of nova-reconcile on the same clouds and
// compares what each printed (stdout, stderr, exit code), for refactors whose
// behaviour must not change. The clouds are every sandbox scenario (SQLite,
// a fresh copy of one pristine sandbox per build, so applies and undos start
// from the same rows) and, unless --skip-mysql, generated MariaDB clouds
// (read-only commands, both builds on the same databases).
//
//   npm run build && node dist/bench/side-by-side.js --old /path/to/other/checkout [--new DIR] [--hosts N] [--skip-mysql]
//
// Both DIRs are checkouts with a build (bin/nova-reconcile and dist/). What
// differs between two runs of one build is masked before comparing: journal
// names, timestamps, elapsed times and RSS, the binary's own path.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCloud, type CloudOptions } from '../src/sandbox/scale-cloud.js';
import { createScratchDeployment, parseServer } from './scratch-deployment.js';

interface Options {
  readonly oldDir: string;
  readonly newDir: string;
  readonly hosts: number;
  readonly mysql: string | undefined;
  readonly verbose: boolean;
}

const USAGE = 'usage: node dist/bench/side-by-side.js --old DIR [--new DIR] [--hosts N] [--skip-mysql] [--mysql URL] [--verbose]';

const SCENARIOS = ['empty', 'ironic-ha', 'libvirt', 'deleted-ironic-node', 'stale-provider', 'ironic-failover', 'ironic-failover-renamed'];

/** Every command path, for --help. */
const COMMANDS = [
  'cell_v2 discover_hosts', 'cell_v2 list_hosts', 'cell_v2 list_cells', 'cell_v2 delete_host', 'cell_v2 prune_host_mappings',
  'db ironic_compute_node_move', 'placement audit', 'placement heal_allocations', 'audit', 'compute_node list',
  'compute_node cleanup_orphans', 'placement cleanup_providers', 'compute_node rebalance', 'compute_node move',
  'compute_node restore', 'undo', 'sandbox create', 'completion',
];

/** What every cloud is asked, read-only: each in table and JSON where it has both. */
const READS: readonly (readonly string[])[] = [
  ['cell_v2', 'list_cells', '--verbose'],
  ['cell_v2', 'list_hosts'],
  ['audit'],
  ['audit', '--format', 'json'],
  ['audit', '--format', 'value'],
  ['audit', '--format', 'csv'],
  ['audit', '--format', 'prometheus'],
  ['audit', '--cell', 'cell1'],
  ['--stats', 'audit', '--format', 'json'],
  ['compute_node', 'list'],
  ['compute_node', 'list', '--format', 'json'],
  ['placement', 'audit', '--verbose'],
  ['placement', 'audit', '--format', 'json'],
  ['placement', 'audit', '--all-resource-classes', '--verbose'],
  ['placement', 'audit', '--all-resource-classes', '--format', 'json'],
  ['compute_node', 'cleanup_orphans'],
  ['compute_node', 'cleanup_orphans', '--format', 'json'],
  ['--stats', 'compute_node', 'cleanup_orphans', '--format', 'json'],
  ['placement', 'cleanup_providers'],
  ['placement', 'cleanup_providers', '--format', 'json'],
  ['--stats', 'placement', 'cleanup_providers', '--format', 'json'],
  ['compute_node', 'rebalance'],
  ['compute_node', 'rebalance', '--format', 'json'],
  ['cell_v2', 'prune_host_mappings'],
  ['cell_v2', 'prune_host_mappings', '--format', 'json'],
  ['placement', 'heal_allocations', '--dry-run', '--verbose'],
  ['placement', 'heal_allocations', '--dry-run', '--format', 'json'],
  ['placement', 'heal_allocations', '--dry-run'],
  ['placement', 'heal_allocations', '--dry-run', '--verbose', '--max-count', '1'],
  ['placement', 'heal_allocations', '--dry-run', '--verbose', '--force', '--instance', 'none-such'],
];

/** On the sandboxes, after the reads: writes, each apply undone from its journal. */
const WRITES: readonly (readonly string[])[] = [
  ['compute_node', 'cleanup_orphans', '--apply'],
  ['placement', 'cleanup_providers', '--apply', '--format', 'json'],
  ['compute_node', 'rebalance', '--apply'],
  ['cell_v2', 'prune_host_mappings', '--apply'],
  ['cell_v2', 'discover_hosts', '--verbose'],
  ['cell_v2', 'discover_hosts', '--by-service', '--verbose'],
  ['cell_v2', 'discover_hosts', '--by-service', '--format', 'json'],
  ['cell_v2', 'list_hosts'],
  ['audit', '--format', 'json'],
  ['compute_node', 'cleanup_orphans', '--apply', '--format', 'json'],
  ['placement', 'heal_allocations', '--verbose'],
  ['placement', 'audit', '--delete', '--verbose'],
];

/** Mistakes: each must fail the same way. */
const ERRORS: readonly (readonly string[])[] = [
  ['audit', '--bogus'],
  ['audit', '--kind', 'nonsense'],
  ['audit', '--cell', 'no-such-cell'],
  ['cell_v2', 'discover_host'],
  ['compute_node', 'cleanup_orphan'],
  ['compute_node', 'restore'],
  ['compute_node', 'move', '--node', 'x'],
  ['undo', '/nonexistent/journal.jsonl'],
  ['compute_node', 'cleanup_orphans', '--apply', '--dry-run'],
  ['compute_node', 'rebalance', '--max-count', '-1'],
];

interface Run {
  readonly label: string;
  readonly rc: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function parseArgs(argv: readonly string[]): Options {
  let oldDir: string | undefined;
  // This file runs as dist/bench/side-by-side.js: the checkout is two folders up.
  let newDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  let hosts = 2000;
  let mysql: string | undefined = process.env['TEST_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306';
  let verbose = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value\n${USAGE}`);
      return v;
    };
    if (a === '--old') oldDir = resolve(value());
    else if (a === '--new') newDir = resolve(value());
    else if (a === '--hosts') hosts = Number(value());
    else if (a === '--mysql') mysql = value();
    else if (a === '--skip-mysql') mysql = undefined;
    else if (a === '--verbose') verbose = true;
    else throw new Error(`unknown argument ${String(a)}\n${USAGE}`);
  }
  if (oldDir === undefined) throw new Error(`--old is required\n${USAGE}`);
  if (!Number.isInteger(hosts) || hosts < 10) throw new Error(`--hosts must be an integer of at least 10\n${USAGE}`);
  return { oldDir, newDir, hosts, mysql, verbose };
}

/** What differs between two runs of one build: masked before comparing. */
function mask(text: string, dir: string): string {
  return text
    .split(join(dir, 'bin', 'nova-reconcile')).join('<BIN>')
    .replace(/\d{8}T\d{6}Z-[0-9a-f]{6}/g, '<RUN>')
    .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?/g, '<TIME>')
    .replace(/elapsed_ms=\d+/g, 'elapsed_ms=<N>')
    .replace(/max_rss_kb=\d+/g, 'max_rss_kb=<N>')
    .replace(/("(elapsed|duration)_(ms|seconds)"\s*:\s*)[\d.]+/g, '$1<N>')
    .replace(/(nova_reconcile_\w*(duration_seconds|timestamp_seconds)(\{[^}]*\})?) [\d.e+-]+/g, '$1 <N>')
    .replace(/ in \d+(\.\d+)? ?m?s\b/g, ' in <N>s');
}

function run(dir: string, args: readonly string[], cwd: string): Run {
  const r = spawnSync(process.execPath, [join(dir, 'bin', 'nova-reconcile'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', COLUMNS: '120' },
    maxBuffer: 256 * 1024 * 1024,
  });
  return { label: args.join(' '), rc: r.status, stdout: mask(r.stdout, dir), stderr: mask(r.stderr, dir) };
}

/** Runs the steps in order; an apply that wrote a journal is undone (--apply) right after it. */
function runSteps(dir: string, conf: readonly string[], steps: readonly (readonly string[])[], cwd: string): Run[] {
  const runs: Run[] = [];
  for (const step of steps) {
    const r = run(dir, [...conf, ...step], cwd);
    runs.push(r);
    const journal = step.includes('--apply') && r.stderr.includes('journal: ') ? newestJournal(cwd) : undefined;
    if (journal !== undefined) runs.push(run(dir, [...conf, 'undo', journal, '--apply'], cwd));
  }
  return runs;
}

/** The newest journal in the sandbox's journal folder (the printed name is masked). */
function newestJournal(cwd: string): string | undefined {
  const ls = spawnSync('sh', ['-c', 'ls -t journal/*.jsonl 2>/dev/null | head -1'], { cwd, encoding: 'utf8' });
  const name = ls.stdout.trim();
  return name === '' ? undefined : join(cwd, name);
}

/** The lines between the common head and tail of two outputs, old then new. */
function lineDiff(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const part = (lines: string[], sign: string): string =>
    lines.slice(head, lines.length - tail).slice(0, 40).map((l) => `${sign} ${l}\n`).join('');
  return `  @ line ${head + 1}\n${part(x, '-')}${part(y, '+')}`;
}

function compare(what: string, a: readonly Run[], b: readonly Run[], verbose: boolean): number {
  let differences = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined || x.rc !== y.rc || x.stdout !== y.stdout || x.stderr !== y.stderr) {
      differences++;
      const label = x?.label ?? y?.label ?? '?';
      process.stdout.write(`DIFFERENT ${what}: ${label}\n`);
      for (const key of ['rc', 'stdout', 'stderr'] as const) {
        if (x?.[key] !== y?.[key]) process.stdout.write(`  ${key}:\n${lineDiff(String(x?.[key]), String(y?.[key]))}`);
      }
    } else if (verbose) {
      process.stdout.write(`same ${what}: ${x.label} (rc ${String(x.rc)})\n`);
    }
  }
  process.stdout.write(`${what}: ${a.length} runs, ${differences} different\n`);
  return differences;
}

function sandboxes(opts: Options, work: string): number {
  let differences = 0;
  const helps = COMMANDS.map((c) => c.split(' '));
  const helpSteps = [['help'], ['--help'], ['--version'], ['completion', 'bash'], ['completion', 'zsh'], ...helps.map((h) => [...h, '--help'])];
  differences += compare('help', runSteps(opts.oldDir, [], helpSteps, work), runSteps(opts.newDir, [], helpSteps, work), opts.verbose);
  for (const scenario of SCENARIOS) {
    // The sandbox names its own folder (nova.conf, the cell mappings' URLs):
    // it is created where both builds run it and kept aside as the pristine
    // copy each build starts from.
    const pristine = join(work, `pristine-${scenario}`);
    const sandbox = join(work, 'sandbox');
    rmSync(sandbox, { recursive: true, force: true });
    const created = run(opts.oldDir, ['sandbox', 'create', sandbox, '--scenario', scenario], work);
    if (created.rc !== 0) throw new Error(`sandbox create ${scenario} failed: ${created.stderr}`);
    cpSync(sandbox, pristine, { recursive: true });
    const results: Run[][] = [];
    for (const dir of [opts.oldDir, opts.newDir]) {
      rmSync(sandbox, { recursive: true, force: true });
      cpSync(pristine, sandbox, { recursive: true });
      const c = ['--config-file', join(sandbox, 'nova.conf')];
      results.push(runSteps(dir, c, [...READS, ...ERRORS, ...WRITES, ...READS.slice(0, 8)], sandbox));
    }
    differences += compare(`sandbox ${scenario}`, results[0] ?? [], results[1] ?? [], opts.verbose);
  }
  return differences;
}

const CLOUDS: readonly { readonly name: string; readonly options: (hosts: number) => CloudOptions }[] = [
  { name: 'libvirt with orphans and stale providers', options: (hosts) => ({ hostsPerCell: hosts, unmappedFraction: 0.02, orphanFraction: 0.01, staleProviderFraction: 0.01 }) },
  { name: 'ironic failed over', options: (hosts) => ({ hostsPerCell: Math.max(2, Math.floor(hosts / 50)), nodesPerHost: 50, unmappedFraction: 0.05, orphanFraction: 0.02, staleProviderFraction: 0.01, failedOverFraction: 0.1 }) },
];

async function mysqlClouds(opts: Options, url: string, work: string): Promise<number> {
  let differences = 0;
  for (const cloud of CLOUDS) {
    const d = await createScratchDeployment(parseServer(url), 2, { withPlacement: true });
    try {
      if (d.placement === undefined) throw new Error('no placement database');
      await generateCloud({ ...d.scaleDatabases, placement: d.placement }, cloud.options(opts.hosts));
      const c = ['--config-file', d.confPath];
      const old = runSteps(opts.oldDir, c, [...READS, ...ERRORS], work);
      const now = runSteps(opts.newDir, c, [...READS, ...ERRORS], work);
      differences += compare(`mysql ${cloud.name}`, old, now, opts.verbose);
    } finally {
      await d.drop();
    }
  }
  return differences;
}

async function main(): Promise<number> {
  let opts: Options;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 2;
  }
  const work = mkdtempSync(join(tmpdir(), 'nrc-side-by-side-'));
  try {
    let differences = sandboxes(opts, work);
    if (opts.mysql !== undefined) differences += await mysqlClouds(opts, opts.mysql, work);
    process.stdout.write(differences === 0 ? 'side by side: identical\n' : `side by side: ${differences} different\n`);
    return differences === 0 ? 0 : 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

process.exitCode = await main();
