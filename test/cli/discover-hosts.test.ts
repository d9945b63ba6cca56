// cell_v2 discover_hosts through the built binary, on SQLite and MariaDB:
// stdout, stderr, exit code and the resulting rows.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, hostMappings, nodeFlags, type TestDeployment } from '../helpers/test-deployment.js';
import { IRONIC_HA } from '../../src/sandbox/scenarios/ironic-ha.js';
import { LIBVIRT_HOSTS } from '../../src/sandbox/scenarios/libvirt.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';

const NODE = IRONIC_HA.nodeUuid;

describeEachDialect('discover_hosts on ironic-ha', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'ironic-ha', 'dh');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('node path: maps only the host with a compute node, prints nova-manage lines, re-run is quiet', async () => {
    const first = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--verbose']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      [
        'Found 3 cell mappings.',
        'Skipping cell0 since it does not contain hosts.',
        `Getting computes from cell 'cell1': ${CELL.cell1}`,
        `Checking host mapping for compute host 'ironic-compute-0': ${NODE}`,
        `Creating host mapping for compute host 'ironic-compute-0': ${NODE}`,
        `Found 1 unmapped computes in cell: ${CELL.cell1}`,
        `Getting computes from cell 'cell2': ${CELL.cell2}`,
        `Found 0 unmapped computes in cell: ${CELL.cell2}`,
        '',
      ].join('\n'),
    );
    expect(await hostMappings(d)).toEqual([['ironic-compute-0', CELL.cell1]]);
    expect(await nodeFlags(d, 'cell1')).toEqual([['ironic-compute-0', NODE, 1]]);

    const again = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--verbose', '--strict']);
    expect(again.code).toBe(1);
    expect(again.stdout).not.toContain('Checking host mapping');
    expect(again.stdout).toContain(`Found 0 unmapped computes in cell: ${CELL.cell1}`);
  });

  it('--by-service maps every nova-compute service; --strict is 0 then 1', async () => {
    const first = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service', '--strict', '--verbose']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      [
        `Getting computes from cell 'cell1': ${CELL.cell1}`,
        'Creating host mapping for service ironic-compute-0',
        'Creating host mapping for service ironic-compute-1',
        'Creating host mapping for service ironic-compute-2',
        `Found 3 unmapped computes in cell: ${CELL.cell1}`,
      ].join('\n'),
    );
    expect((await hostMappings(d)).map(([h]) => h)).toEqual([...IRONIC_HA.hosts]);
    // Deliberate difference: the node of a mapped host is flagged too.
    expect(await nodeFlags(d, 'cell1')).toEqual([['ironic-compute-0', NODE, 1]]);
    const again = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service', '--strict']);
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: '' });
  });

  it('without --verbose a successful run prints nothing', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts']);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('accepts argparse-style prefixes (--verb, --by)', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by', '--verb']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Creating host mapping for service ironic-compute-2');
  });

  it('--cell_uuid cell0: skip line only, no "Found N cell mappings", --strict exits 1', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--cell_uuid', CELL.cell0, '--verbose', '--strict']);
    expect(r).toMatchObject({ code: 1, stdout: 'Skipping cell0 since it does not contain hosts.\n' });
  });

  it('an unknown --cell_uuid is nova\'s 255 with a one-line reason on stdout, and writes nothing', async () => {
    const uuid = '11111111-2222-3333-4444-555555555555';
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--cell_uuid', uuid]);
    expect(r.code).toBe(255);
    expect(r.stdout).toBe(`An error has occurred:\nCell ${uuid} has no mapping.\n`);
    expect(await hostMappings(d)).toEqual([]);
  });

  it('a mapping that differs only in case and trailing spaces counts as existing', async () => {
    const now = '2026-01-01 00:00:00';
    await d.knex('api')('host_mappings').insert({ created_at: now, cell_id: d.dbs.cellIds.cell1, host: 'IRONIC-COMPUTE-0 ' });
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--verbose', '--strict']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`Checking host mapping for compute host 'ironic-compute-0': ${NODE}\nFound 0 unmapped computes`);
    expect(await hostMappings(d)).toEqual([['IRONIC-COMPUTE-0 ', CELL.cell1]]);
    expect(await nodeFlags(d, 'cell1')).toEqual([['ironic-compute-0', NODE, 1]]);
  });

  it('a host mapped to another cell is never re-pointed; a warning goes to stderr', async () => {
    await d.knex('api')('host_mappings').insert({ created_at: '2026-01-01 00:00:00', cell_id: d.dbs.cellIds.cell2, host: 'ironic-compute-1' });
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('service ironic-compute-1');
    expect(r.stderr).toContain(`WARNING: host 'ironic-compute-1' has a compute service or node in cell ${CELL.cell1} but is mapped to cell ${CELL.cell2}`);
    expect(await hostMappings(d)).toEqual([
      ['ironic-compute-0', CELL.cell1],
      ['ironic-compute-1', CELL.cell2],
      ['ironic-compute-2', CELL.cell1],
    ]);
  });

  it('bug 2085135: a node with mapped = 1 but no host mapping is mapped again', async () => {
    await d.knex('cell1')('compute_nodes').update({ mapped: 1 });
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Creating host mapping for compute host 'ironic-compute-0': ${NODE}`);
    expect(await hostMappings(d)).toEqual([['ironic-compute-0', CELL.cell1]]);
  });

  it('--dry-run shows what would be mapped and writes nothing', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service', '--dry-run', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Would create host mapping for service ironic-compute-1');
    expect(await hostMappings(d)).toEqual([]);
    expect(await nodeFlags(d, 'cell1')).toEqual([['ironic-compute-0', NODE, 0]]);
  });

  it('--format json reports changed and the created hosts', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service', '--format', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { changed: boolean; created: Array<{ host: string; cell_uuid: string }> };
    expect(doc.changed).toBe(true);
    expect(doc.created.map((c) => c.host)).toEqual([...IRONIC_HA.hosts]);
    const again = JSON.parse((await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service', '--format', 'json'])).stdout) as { changed: boolean };
    expect(again.changed).toBe(false);
  });
});

describeEachDialect('discover_hosts on libvirt (two cells)', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'dhl');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('maps every host to the cell that holds it, in nova\'s cell order, and flags every node', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--verbose']);
    expect(r.code).toBe(0);
    const expected = ['Found 3 cell mappings.', 'Skipping cell0 since it does not contain hosts.'];
    for (const cell of ['cell1', 'cell2'] as const) {
      expected.push(`Getting computes from cell '${cell}': ${CELL[cell]}`);
      const hosts = LIBVIRT_HOSTS.filter((h) => h.cell === cell);
      for (const h of hosts) {
        expected.push(`Checking host mapping for compute host '${h.host}': ${h.nodeUuid}`, `Creating host mapping for compute host '${h.host}': ${h.nodeUuid}`);
      }
      expected.push(`Found ${hosts.length} unmapped computes in cell: ${CELL[cell]}`);
    }
    expect(r.stdout).toBe(expected.join('\n') + '\n');
    expect(await hostMappings(d)).toEqual(LIBVIRT_HOSTS.map((h) => [h.host, CELL[h.cell]]));
    expect((await nodeFlags(d, 'cell2')).map(([, , m]) => m)).toEqual([1, 1]);
    const again = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--strict']);
    expect(again).toMatchObject({ code: 1, stdout: '' });
  });
});
