// Output on the built binary (issue 18): osc-style -f table|json|value|csv and
// -c COLUMN on the listing commands (-f is --format), colour only on a
// terminal or with FORCE_COLOR (never with NO_COLOR, never piped), and a
// 30,000-row `compute_node list` table on a pseudo-terminal (util-linux
// `script`), fitted to the terminal's width; piped, the same table is whole.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/cli.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { deletedIronicNodeIronicList } from '../../src/sandbox/scenarios/deleted-ironic-node.js';
import { LIBVIRT_HOSTS } from '../../src/sandbox/scenarios/libvirt.js';
import { generateScale } from '../../src/sandbox/scale-generator.js';

// eslint-disable-next-line no-control-regex
const ESC = /\x1b\[/;
const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/** Runs the binary on a pseudo-terminal of `cols` columns; the terminal's \r\n become \n. */
/**
 * stdout on a pseudo-terminal of `cols` columns. stderr goes to /dev/null: on
 * a terminal it carries the progress line (redrawn with \r and ESC[K), which
 * is not what these tests look at.
 */
function onTerminal(args: readonly string[], cols: number, env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `stty cols ${cols} rows 50; exec ${quoted} 2>/dev/null`, '/dev/null'], {
      env: { PATH: process.env['PATH'], HOME: '/nonexistent-home', TERM: 'xterm', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 255, out: out.replace(/\r\n/g, '\n') });
    });
  });
}

describe('-f and -c on the listing commands [sqlite]', () => {
  let d: TestDeployment;
  let orphans: TestDeployment;
  let nodesFile: string;
  beforeAll(async () => {
    d = await createTestDeployment('sqlite', 'libvirt', 'of');
    orphans = await createTestDeployment('sqlite', 'deleted-ironic-node', 'of');
    nodesFile = join(orphans.dir, 'nodes.json');
    writeFileSync(nodesFile, deletedIronicNodeIronicList());
  });
  afterAll(async () => {
    await d.cleanup();
    await orphans.cleanup();
  });

  it('compute_node list -f value -c ... prints the chosen cells, space-separated, in the order given', async () => {
    const r = await runBin([...d.args, 'compute_node', 'list', '-f', 'value', '-c', 'host', '-c', 'service', '-c', 'mapped']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(LIBVIRT_HOSTS.map((h) => `${h.host} up no\n`).join(''));
    const csv = await runBin([...d.args, 'compute_node', 'list', '--format', 'csv', '--column', 'host', '--column', 'instances', '--host', 'compute-1']);
    expect(csv.stdout).toBe('"host","instances"\n"compute-1",1\n');
    const table = await runBin([...d.args, 'compute_node', 'list', '-c', 'uuid', '--host', 'compute-2']);
    expect(table.stdout).toBe(`+--------------------------------------+\n| uuid                                 |\n+--------------------------------------+\n| ${LIBVIRT_HOSTS[1]?.nodeUuid} |\n+--------------------------------------+\n`);
  });

  it('-f json is --format json; a table is the default', async () => {
    const short = await runBin([...d.args, 'compute_node', 'list', '-f', 'json']);
    const long = await runBin([...d.args, 'compute_node', 'list', '--format', 'json']);
    expect(short.code).toBe(0);
    expect(JSON.parse(short.stdout)).toEqual(JSON.parse(long.stdout));
    expect((await runBin([...d.args, 'compute_node', 'list', '-f', 'table'])).stdout).toBe((await runBin([...d.args, 'compute_node', 'list'])).stdout);
  });

  it('an unknown column, -c with json, or -f value with --apply is a one-line usage error (127), before anything is read', async () => {
    for (const argv of [
      ['compute_node', 'list', '-c', 'nope'],
      ['compute_node', 'list', '-f', 'json', '-c', 'uuid'],
      ['audit', '-c', 'kind', '-c', 'nope'],
      ['compute_node', 'cleanup_orphans', '--apply', '-f', 'csv'],
      ['compute_node', 'list', '-f', 'yaml'],
    ]) {
      const r = await runBin([...d.args, ...argv]);
      expect(r.code, argv.join(' ')).toBe(127);
      if (argv.includes('json')) {
        // With -f json the error is the JSON error document (schemas/error.schema.json).
        expect(JSON.parse(r.stdout)).toMatchObject({ changed: false, error: { kind: 'usage', exit_code: 127 } });
        expect(r.stderr).toBe('');
        continue;
      }
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n'), argv.join(' ')).toHaveLength(1);
    }
    expect((await runBin([...d.args, 'compute_node', 'list', '-c', 'nope'])).stderr).toBe(
      'nova-reconcile: error: unknown column "nope": the columns are uuid, cell, host, hypervisor_hostname, type, service, mapped, provider, allocations, instances, ironic_node\n',
    );
  });

  it('audit -f csv / value -c', async () => {
    const r = await runBin([...d.args, 'audit', '-f', 'value', '-c', 'kind', '-c', 'cell']);
    expect(r.code).toBe(3);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toContain('unmapped-service cell1');
    expect(lines).toContain('unmapped-service cell2');
    const csv = await runBin([...d.args, 'audit', '-f', 'csv']);
    expect(csv.stdout.split('\n')[0]).toBe('"kind","cell","object","summary","suggestion"');
  });

  it("a plan's dry run as rows: one per change, then the refusals; nothing changes", async () => {
    const r = await runBin([...orphans.args, 'compute_node', 'cleanup_orphans', '--ironic-nodes', nodesFile, '-f', 'value', '-c', 'unit', '-c', 'database', '-c', 'action']);
    expect(r.code).toBe(3);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows).toContain('1 placement delete-provider');
    expect(rows).toContain('1 cell cell1 soft-delete-compute-node');
    const table = await runBin([...orphans.args, 'compute_node', 'cleanup_orphans', '--ironic-nodes', nodesFile, '-c', 'action', '-c', 'reason']);
    expect(table.stdout.split('\n')[1]).toMatch(/^\| action +\| reason +\|$/);
    const again = await runBin([...orphans.args, 'compute_node', 'cleanup_orphans', '--ironic-nodes', nodesFile, '-f', 'value', '-c', 'unit', '-c', 'database', '-c', 'action']);
    expect(again.stdout).toBe(r.stdout);
  });

  it('piped output has no escape codes; FORCE_COLOR=1 colours kinds and verbs; NO_COLOR alone does not', async () => {
    const outputs = async (env: Record<string, string>): Promise<string[]> => [
      (await runBin([...d.args, 'audit'], { env })).stdout,
      (await runBin([...orphans.args, 'compute_node', 'cleanup_orphans', '--ironic-nodes', nodesFile], { env })).stdout,
    ];
    for (const out of await outputs({ TERM: 'xterm-256color' })) expect(out).not.toMatch(ESC);
    for (const out of await outputs({ NO_COLOR: '1', TERM: 'xterm-256color' })) expect(out).not.toMatch(ESC);
    const [audit, plan] = await outputs({ FORCE_COLOR: '1' });
    expect(audit).toContain('\x1b[33munmapped-service\x1b[39m');
    expect(plan).toContain('\x1b[31msoft-delete\x1b[39m compute node');
    // JSON and -f value/csv are never coloured.
    expect((await runBin([...d.args, 'audit', '-f', 'json'], { env: { FORCE_COLOR: '1' } })).stdout).not.toMatch(ESC);
    expect((await runBin([...d.args, 'audit', '-f', 'csv'], { env: { FORCE_COLOR: '1' } })).stdout).not.toMatch(ESC);
  });

  it.runIf(HAS_SCRIPT)('on a terminal: colour unless NO_COLOR; nothing cut, each finding a block when its commands cannot fit', async () => {
    const tty = await onTerminal([...d.args, 'audit'], 90);
    expect(tty.code).toBe(3);
    expect(tty.out).toMatch(ESC);
    expect(tty.out).not.toContain('…');
    // eslint-disable-next-line no-control-regex
    const lines = tty.out.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
    expect(lines.filter((l) => / \d+\. row /.test(l)).length).toBeGreaterThan(1);
    for (const l of lines) if (!l.startsWith('suggestion: ')) expect(l.length).toBeLessThanOrEqual(90);
    const plain = await onTerminal([...d.args, 'audit'], 90, { NO_COLOR: '1' });
    expect(plain.out).not.toMatch(ESC);
  });
});

describe('a 30,000-row compute_node list [sqlite]', () => {
  let d: TestDeployment;
  beforeAll(async () => {
    d = await createTestDeployment('sqlite', 'empty', 'big');
    const cell1 = (await d.knex('api')('cell_mappings').where('uuid', CELL.cell1).first()) as { id: number };
    await generateScale({ api: d.knex('api'), cells: [d.knex('cell1')], cellIds: [cell1.id] }, { hostsPerCell: 30_000, unmappedFraction: 0 });
  }, 300_000);
  afterAll(async () => {
    await d.cleanup();
  });

  it.runIf(HAS_SCRIPT)('renders on a pseudo-terminal within its 132 columns, every uuid whole: one block per node when the uuids cannot share a line', async () => {
    const r = await onTerminal([...d.args, 'compute_node', 'list'], 132);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(132);
    expect(r.out).not.toContain('…');
    expect(lines.filter((l) => / \d+\. row /.test(l))).toHaveLength(30_000);
    expect(lines.filter((l) => /^ +uuid: [0-9a-f-]{36}$/.test(l))).toHaveLength(30_000);
  }, 180_000);

  it('piped, the same table is whole: full uuids and host names, one line per node', async () => {
    const r = await runBin([...d.args, 'compute_node', 'list'], { timeoutMs: 120_000 });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(30_000 + 4);
    expect(r.stdout).not.toContain('…');
    expect(lines[3]).toMatch(/^\| [0-9a-f-]{36} \| cell1 \| c\d+-compute-\d+ +\|/);
  }, 180_000);
});
