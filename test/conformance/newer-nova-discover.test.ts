// cell_v2 discover_hosts against each release's own nova-manage (issue 36):
// the same deployment, hosts and compute nodes registered by that release's
// object layer (nova_rt.py), the mappings emptied before each run; stdout,
// stderr, exit code and the rows left behind compared byte for byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2/promise';
import { runBin } from '../helpers/cli.js';
import { createReleaseDeployment, releasesToRun, type Release, type ReleaseDeployment } from './release.js';

const HOSTS = [
  { host: 'compute-1', nodes: [{ uuid: '11111111-0000-4000-8000-000000000001', name: 'compute-1.example.org' }] },
  { host: 'Compute-2', nodes: [{ uuid: '11111111-0000-4000-8000-000000000002', name: 'compute-2.example.org' }] },
  {
    host: 'ironic-a',
    nodes: [
      { uuid: '22222222-0000-4000-8000-000000000001', name: '22222222-0000-4000-8000-000000000001', type: 'ironic' },
      { uuid: '22222222-0000-4000-8000-000000000002', name: '22222222-0000-4000-8000-000000000002', type: 'ironic' },
    ],
  },
  { host: 'service-only', nodes: [] },
];

type Row = RowDataPacket & Record<string, unknown>;

/** "An error has occurred:", the traceback, "<module.Class>: <message>", "" → the first line and the message. */
function withoutTraceback(stdout: string): string {
  const lines = stdout.split('\n');
  const last = lines.filter((l) => l !== '').pop() ?? '';
  return `${lines[0] ?? ''}\n${last.replace(/^[A-Za-z_.]+: /, '')}\n`;
}

describe.each(releasesToRun().map((r) => [r.name, r] as const))('Nova %s: discover_hosts byte for byte against its nova-manage', (_name, release: Release) => {
  let d: ReleaseDeployment;

  beforeAll(async () => {
    d = await createReleaseDeployment(release, 'disc');
    const made = await d.rt({ op: 'hosts', hosts: HOSTS });
    expect(made.errors, made.errors.join('\n')).toEqual([]);
  }, 600_000);
  afterAll(async () => {
    await d?.drop();
  });

  const unmapAll = async (): Promise<void> => {
    await d.query('api', 'DELETE FROM host_mappings');
    await d.query('cell1', 'UPDATE compute_nodes SET mapped = 0');
  };
  const rows = async (): Promise<{ mappings: string[]; mapped: string[] }> => {
    const m = await d.query<Row>('api', 'SELECT hm.host, cm.name FROM host_mappings hm JOIN cell_mappings cm ON cm.id = hm.cell_id ORDER BY BINARY hm.host');
    const n = await d.query<Row>('cell1', 'SELECT uuid, mapped FROM compute_nodes WHERE deleted = 0 ORDER BY id');
    return { mappings: m.map((r) => `${String(r['host'])}|${String(r['name'])}`), mapped: n.map((r) => `${String(r['uuid'])}|${String(r['mapped'])}`) };
  };

  const variants: ReadonlyArray<readonly [string, (cell: string) => string[], boolean]> = [
    ['plain', () => [], true],
    ['--verbose', () => ['--verbose'], true],
    ['--by-service --verbose', () => ['--by-service', '--verbose'], true],
    ['--cell_uuid --verbose', (cell) => ['--cell_uuid', cell, '--verbose'], true],
    ['--strict, nothing left to map', () => ['--strict'], false],
    ['--verbose, everything mapped', () => ['--verbose'], false],
    ['--cell_uuid of no cell', () => ['--cell_uuid', '9d3c3b1e-0000-4000-8000-00000000dead'], true],
  ];

  it.each(variants)('%s', async (_label, args, fromEmpty) => {
    const argv = ['cell_v2', 'discover_hosts', ...args(d.cell1Uuid)];
    if (fromEmpty) await unmapAll();
    else {
      await unmapAll();
      expect((await d.nova(['cell_v2', 'discover_hosts'])).code).toBe(0);
    }
    const theirs = await d.nova(argv);
    const theirRows = await rows();
    if (fromEmpty) await unmapAll();
    else {
      await unmapAll();
      expect((await d.nova(['cell_v2', 'discover_hosts'])).code).toBe(0);
    }
    const ours = await runBin(['--config-file', d.confPath, ...argv]);
    // The one deliberate difference (as on Zed, differential-cell-v2): an error is "An error has occurred:" and the
    // exception's message, without nova-manage's traceback.
    const theirStdout = theirs.stdout.includes('Traceback (most recent call last):') ? withoutTraceback(theirs.stdout) : theirs.stdout;
    expect({ code: ours.code, stdout: ours.stdout, stderr: ours.stderr }).toEqual({ code: theirs.code, stdout: theirStdout, stderr: theirs.stderr });
    const ourRows = await rows();
    expect(ourRows.mappings).toEqual(theirRows.mappings);
  });
});
