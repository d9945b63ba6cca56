// Every example command the operator is shown runs: the Examples of each
// command's --help (the built binary), those of the man page, and every
// nova-reconcile line of a shell block in README.md, CONTRIBUTING.md and
// docs/. The extraction is generic, so a new example is checked as soon as it
// is written; the few that need a real cloud are listed in NEEDS_A_CLOUD with
// the reason.
//
// Each block of examples (one --help, one man page section, one fenced block)
// runs in order in a scratch folder, as a shell runs it, against a fresh
// sandbox: the one the block creates itself (`sandbox create`), else the
// scenario SCENARIO names for its first command. Its nova.conf is the
// operator's default (~/.nova/nova.conf), and the paths the examples name
// under /etc/nova, /tmp and /var/lib are mapped into the scratch folder.
//
// An example passes when it exits with a code its command's help documents as
// an outcome (not 2, 127, 130, 143 or 255, which are failures everywhere),
// or with the code its own comment gives (`# exit 3`), and prints no error.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/cli.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Examples that cannot run on a sandbox, by the start of their line, with the reason. */
const NEEDS_A_CLOUD: ReadonlyArray<readonly [string, string]> = [
  ['openstack baremetal node list', 'needs the openstack client and a real Ironic'],
  ['nova-reconcile compute_node rebalance --ironic-source api', 'needs a real Ironic API ([ironic] in nova.conf); test/cli/ironic-api.test.ts runs it against a fake one'],
  ['nova-reconcile db ironic_compute_node_move', "needs compute_nodes.service_id, which the sandbox's nova-compute rows leave NULL; test/cli/ironic-compute-node-move.test.ts runs it"],
  ['nova-reconcile cell_v2 discover_hosts --by-service --expect', 'waits up to --wait 600 s for hosts that register later; test/cli/discover-expect.test.ts runs it'],
];

/** The sandbox scenario a block runs against, by the command of its first example (default: libvirt). */
const SCENARIO: Readonly<Record<string, string>> = {
  audit: 'deleted-ironic-node',
  'compute_node cleanup_orphans': 'deleted-ironic-node',
  'compute_node list': 'deleted-ironic-node',
  'compute_node restore': 'deleted-ironic-node',
  'cell_v2 prune_host_mappings': 'deleted-ironic-node',
  undo: 'deleted-ironic-node',
  'compute_node rebalance': 'ironic-failover',
  'compute_node move': 'ironic-ha',
  'db ironic_compute_node_move': 'ironic-ha',
  'placement cleanup_providers': 'stale-provider',
  'placement audit': 'stale-provider',
};

/** What the operator did before a block's examples make sense: the apply they restore, undo or prune after. */
const BEFORE: Readonly<Record<string, readonly string[]>> = {
  'compute_node restore': ['compute_node cleanup_orphans --host compute-9 --apply'],
  'cell_v2 prune_host_mappings': ['compute_node cleanup_orphans --host compute-9 --apply'],
  undo: ['compute_node cleanup_orphans --host compute-9 --apply'],
};

/** Exit codes that mean the command did not do what it was asked, on every command. */
const FAILURES = new Set([2, 127, 130, 143, 255]);

interface Example {
  /** The line as written (comment removed). */
  readonly line: string;
  /** The exit code its comment names (`# exit 3`), if any. */
  readonly exit?: number;
}

interface Block {
  readonly source: string;
  readonly examples: readonly Example[];
}

// ---- extraction ----------------------------------------------------------

/** The command paths the binary's `help` lists (`cell_v2 discover_hosts`, `audit`, ...). */
async function commandPaths(): Promise<string[]> {
  const help = await runBin(['help']);
  const section = help.stdout.split('\nGlobal options:')[0] ?? '';
  return [...section.matchAll(/^ {2}([a-z0-9_]+(?: [a-z0-9_]+)?) {2,}\S/gm)].map((m) => m[1] ?? '');
}

function helpExamples(help: string): string[] {
  const m = /\nExamples:\n((?: {2}.*\n)+)/.exec(help);
  return m === null ? [] : (m[1] ?? '').trimEnd().split('\n').map((l) => l.slice(2));
}

function manExamples(page: string): Block[] {
  const unescape = (s: string): string => s.replaceAll('\\-', '-').replaceAll('\\[u2026]', '…').replaceAll('\\(aq', "'").replaceAll('\\e', '\\');
  const blocks: Block[] = [];
  let section = '';
  const lines = page.split('\n');
  lines.forEach((l, i) => {
    if (lines[i - 1] === '.SS') section = l;
    if (l !== 'Examples:') return;
    const body: string[] = [];
    for (let j = i + 3; j < lines.length && lines[j] !== '.fi'; j++) body.push(unescape(lines[j] ?? ''));
    blocks.push({ source: `man page, ${section}`, examples: body.map((line) => ({ line })) });
  });
  return blocks;
}

/** A shell line that runs nova-reconcile (also from a checkout: bin/nova-reconcile). */
const RUNS_IT = /(?:^|[|&;(]\s*|<\()(?:bin\/)?nova-reconcile(?= |$)/;

function markdownExamples(path: string): Block[] {
  const lines = readFileSync(join(REPO, path), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '');
    if (!['', 'sh', 'bash', 'shell', 'console'].includes(open[1] ?? '')) continue;
    const examples: Example[] = [];
    for (const raw of body.join('\n').replace(/\\\n\s*/g, '').split('\n')) {
      const [code = '', comment = ''] = raw.replace(/^\$ /, '').split(/\s+#\s/, 2);
      if (!RUNS_IT.test(code)) continue;
      const exit = /\bexit (\d+)\b/.exec(comment)?.[1];
      examples.push({ line: code.trim(), ...(exit === undefined ? {} : { exit: Number(exit) }) });
    }
    if (examples.length > 0) blocks.push({ source: `${path}:${start + 1}`, examples });
  }
  return blocks;
}

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(REPO, dir)).flatMap((name) => {
      const rel = join(dir, name);
      return statSync(join(REPO, rel)).isDirectory() ? walk(rel) : rel.endsWith('.md') ? [rel] : [];
    });
  return ['README.md', 'CONTRIBUTING.md'].filter((f) => existsSync(join(REPO, f))).concat(walk('docs'));
}

// ---- running ---------------------------------------------------------------

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const scratch = mkdtempSync(join(tmpdir(), 'nova-reconcile-examples-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let commands: string[] = [];
let blocks: Block[] = [];
const exitCodes = new Map<string, Set<number>>();

beforeAll(async () => {
  commands = await commandPaths();
  const helps = await Promise.all(commands.map(async (c) => [c, (await runBin([...c.split(' '), '--help'])).stdout] as const));
  for (const [c, help] of helps) {
    exitCodes.set(c, new Set([...(/\nExit codes:\n((?: +\d+ .*\n| {7}\S.*\n)+)/.exec(help)?.[1] ?? '').matchAll(/^ {2,4}(\d+) /gm)].map((m) => Number(m[1]))));
    const lines = helpExamples(help);
    if (lines.length > 0) blocks.push({ source: `${c} --help`, examples: lines.map((line) => ({ line })) });
  }
  blocks = blocks.concat(manExamples(readFileSync(join(REPO, 'man/nova-reconcile.1'), 'utf8')), ...markdownFiles().map(markdownExamples));
}, 120_000);

/** The command path an example line runs, from the words after nova-reconcile (global options skipped). */
function commandOf(line: string): string | undefined {
  const words = line.slice(line.search(RUNS_IT)).replace(/^[|&;(<\s]*/, '').split(/\s+/).slice(1);
  const rest: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    if (/^--(config-file|config-dir|log-file|log-dir|syslog-log-facility)$/.test(w)) i++;
    else if (!w.startsWith('-')) rest.push(w);
  }
  const two = rest.slice(0, 2).join(' ');
  return commands.includes(two) ? two : commands.find((c) => c === rest[0]);
}

function setUp(block: Block, index: number): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = join(scratch, String(index));
  const home = join(dir, 'home');
  for (const d of ['bin', 'tmp', 'var/lib', 'home/.nova', 'home/.zsh/completions']) mkdirSync(join(dir, d), { recursive: true });
  const wrapper = join(dir, 'bin', 'nova-reconcile');
  writeFileSync(wrapper, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const env = { PATH: `${join(dir, 'bin')}:${process.env['PATH'] ?? ''}`, HOME: home, LANG: 'C.UTF-8' };
  if (block.examples.some((e) => commandOf(e.line) === 'sandbox create')) return { dir, env };
  const first = block.examples.map((e) => commandOf(e.line)).find((c) => c !== undefined) ?? '';
  const scenario = SCENARIO[first] ?? 'libvirt';
  const sbx = join(dir, 'sandbox');
  const node = (args: readonly string[]): void => {
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env, encoding: 'utf8' });
    if (r.status !== 0 && r.status !== 4) throw new Error(`${block.source}: nova-reconcile ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  };
  node(['sandbox', 'create', sbx, '--scenario', scenario]);
  copyFileSync(join(sbx, 'nova.conf'), join(home, '.nova', 'nova.conf'));
  if (existsSync(join(sbx, 'ironic-nodes.json'))) copyFileSync(join(sbx, 'ironic-nodes.json'), join(dir, 'nodes.json'));
  for (const line of BEFORE[first] ?? []) node(line.split(' '));
  return { dir, env };
}

/** The newest journal under dir (an earlier example's, or BEFORE's apply). */
function newestJournal(dir: string): string | undefined {
  const found: Array<[number, string]> = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.jsonl')) found.push([statSync(path).mtimeMs, path]);
    }
  };
  walk(dir);
  return found.sort((a, b) => b[0] - a[0])[0]?.[1];
}

/**
 * The line as it runs in the scratch folder: the paths it names under /tmp
 * and /var/lib moved into it (their folders exist, as on the operator's host),
 * nova.conf the sandbox's, and a journal (JOURNAL, a path ending .jsonl) the
 * newest one written so far.
 */
function localise(line: string, dir: string, journal?: string): string {
  const local = line
    .replace(/^bin\/nova-reconcile\b/, 'nova-reconcile')
    .replace(/(?<![\w.])\/(tmp|var\/lib)\/\S*/g, (path) => {
      if (!path.endsWith('jsonl')) mkdirSync(dirname(join(dir, path)), { recursive: true });
      return join(dir, path);
    })
    .replaceAll('/etc/nova/nova.conf', join(dir, 'home/.nova/nova.conf'));
  return journal === undefined ? local : local.replace(/(?<=\s)(JOURNAL|\S*jsonl)(?=\s|$)/g, journal);
}

function runLine(line: string, dir: string, env: NodeJS.ProcessEnv): Ran {
  for (const m of line.matchAll(/>\s*(\/\S+)/g)) mkdirSync(dirname(m[1] ?? ''), { recursive: true });
  const r = spawnSync('bash', ['-o', 'pipefail', '-c', line], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? 255, stdout: r.stdout, stderr: r.stderr };
}

describe('every example', () => {
  it('is found in every source: each command with examples, the man page, the README', () => {
    const sources = new Set(blocks.map((b) => b.source.replace(/:\d+$/, '').replace(/, .*$/, '')));
    for (const c of ['audit', 'compute_node cleanup_orphans', 'cell_v2 discover_hosts', 'undo', 'sandbox create', 'completion']) expect(sources).toContain(`${c} --help`);
    expect(sources).toContain('man page');
    expect(sources).toContain('README.md');
    expect(blocks.flatMap((b) => b.examples).length).toBeGreaterThan(40);
  });

  it('lists no allowlisted example that no longer exists', () => {
    const lines = blocks.flatMap((b) => b.examples.map((e) => e.line));
    for (const [start] of NEEDS_A_CLOUD) expect(lines.some((l) => l.startsWith(start)), start).toBe(true);
  });

  it('runs and exits as its text says', () => {
    const failures: string[] = [];
    blocks.forEach((block, index) => {
      const { dir, env } = setUp(block, index);
      for (const example of block.examples) {
        if (NEEDS_A_CLOUD.some(([start]) => example.line.startsWith(start))) continue;
        const command = commandOf(example.line);
        const r = runLine(localise(example.line, dir, newestJournal(dir)), dir, env);
        const documented = command === undefined ? new Set([0]) : (exitCodes.get(command) ?? new Set<number>());
        const ok = example.exit !== undefined ? r.code === example.exit : documented.has(r.code) && !FAILURES.has(r.code);
        if (!ok || /(^|\n)(nova-reconcile: )?error\b|An error has occurred/i.test(r.stderr + r.stdout)) {
          failures.push(`${block.source}: ${example.line}\n  exit ${r.code}${example.exit === undefined ? '' : ` (the text says ${example.exit})`}: ${(r.stderr || r.stdout).trim().split('\n').slice(0, 3).join(' | ')}`);
        }
      }
      rmSync(dir, { recursive: true, force: true });
    });
    expect(failures).toEqual([]);
  }, 600_000);
});

it('maps the paths an example names into the scratch folder', () => {
  const dir = join(scratch, 'paths');
  const line = localise('nova-reconcile --config-file /etc/nova/nova.conf audit --metrics-file /var/lib/x/y.prom > /tmp/out', dir);
  expect(line).toBe(`nova-reconcile --config-file ${join(dir, 'home', '.nova', 'nova.conf')} audit --metrics-file ${dir}/var/lib/x/y.prom > ${dir}/tmp/out`);
  expect(existsSync(join(dir, 'var/lib/x'))).toBe(true);
  expect(localise('nova-reconcile undo /var/lib/nova-reconcile/journal/…jsonl --apply', dir, '/j.jsonl')).toBe('nova-reconcile undo /j.jsonl --apply');
  expect(localise('nova-reconcile undo JOURNAL', dir, '/j.jsonl')).toBe('nova-reconcile undo /j.jsonl');
});
