// cell_v2 delete_host through the built binary, on SQLite and MariaDB, on the
// libvirt scenario after a discover: nova-manage's checks in its order, the
// exact messages on stdout, exit codes 0-4, and the rows (nova-behaviour §2.2).
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, hostMappings, nodeFlags, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER } from '../../src/sandbox/scenarios/libvirt.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { insertInstance, softDeleteRow } from '../../src/sandbox/rows.js';

const UNKNOWN_CELL = '11111111-2222-3333-4444-555555555555';
const ALL_MAPPINGS = LIBVIRT_HOSTS.map((h) => [h.host, CELL[h.cell]]);

describeEachDialect('cell_v2 delete_host on libvirt after discover', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'delh');
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts']);
    expect(r.code).toBe(0);
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
  });
  afterEach(async () => {
    await d.cleanup();
  });

  const deleteHost = (cellUuid: string, host: string, ...more: string[]) =>
    runBin([...d.args, 'cell_v2', 'delete_host', '--cell_uuid', cellUuid, '--host', host, ...more]);

  const liveRows = async (table: 'services' | 'compute_nodes', cell: 'cell1' | 'cell2'): Promise<string[]> =>
    ((await d.knex(cell)(table).select('host').where('deleted', 0).orderBy('id')) as Array<{ host: string }>).map((r) => r.host);

  it('0: deletes the mapping, sets mapped = 0 on the host\'s nodes, keeps services and nodes; prints nothing', async () => {
    await d.knex('cell1')('compute_nodes').update({ updated_at: '2020-01-01 00:00:00' }).where('host', 'compute-2');
    const r = await deleteHost(CELL.cell1, 'compute-2');
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS.filter(([h]) => h !== 'compute-2'));
    expect(await nodeFlags(d, 'cell1')).toEqual([
      ['compute-1', LIBVIRT_HOSTS[0]?.nodeUuid, 1],
      ['compute-2', LIBVIRT_HOSTS[1]?.nodeUuid, 0],
      ['compute-3', LIBVIRT_HOSTS[2]?.nodeUuid, 1],
    ]);
    expect(await nodeFlags(d, 'cell2')).toEqual(LIBVIRT_HOSTS.filter((h) => h.cell === 'cell2').map((h) => [h.host, h.nodeUuid, 1]));
    // updated_at = now, as ComputeNode.save() writes it (naive UTC).
    const after = (await d.knex('cell1')('compute_nodes').where('host', 'compute-2').first()) as { updated_at: string | Date | null };
    expect(String(after.updated_at)).toMatch(/^20\d\d-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(String(after.updated_at) > '2020-01-01 00:00:00').toBe(true);
    expect(await liveRows('services', 'cell1')).toEqual(['compute-1', 'compute-2', 'compute-3']);
    expect(await liveRows('compute_nodes', 'cell1')).toEqual(['compute-1', 'compute-2', 'compute-3']);

    // The next discover maps it again, since its service and node are still there.
    const again = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--strict']);
    expect(again.code).toBe(0);
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
  });

  it('1: an unknown cell is reported first, whatever the host', async () => {
    const r = await deleteHost(UNKNOWN_CELL, 'no-such-host');
    expect(r).toMatchObject({ code: 1, stdout: `Cell with uuid ${UNKNOWN_CELL} was not found.\n`, stderr: '' });
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
  });

  it('2: a host without a mapping', async () => {
    const r = await deleteHost(CELL.cell1, 'compute-9');
    expect(r).toMatchObject({ code: 2, stdout: 'The host compute-9 was not found.\n', stderr: '' });
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
  });

  it('3: a host mapped to another cell', async () => {
    const r = await deleteHost(CELL.cell1, 'compute-4');
    expect(r).toMatchObject({ code: 3, stdout: `The host compute-4 was not found in the cell ${CELL.cell1}.\n`, stderr: '' });
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
    expect((await nodeFlags(d, 'cell2')).map(([, , m]) => m)).toEqual([1, 1]);
  });

  it('4: a host with a live instance; nothing is changed', async () => {
    expect(LIBVIRT_SERVER.host).toBe('compute-1');
    const r = await deleteHost(CELL.cell1, 'compute-1');
    expect(r).toMatchObject({ code: 4, stdout: 'There are instances on the host compute-1.\n', stderr: '' });
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
    expect((await nodeFlags(d, 'cell1')).map(([, , m]) => m)).toEqual([1, 1, 1]);
  });

  it('soft-deleted instances and instances with host NULL do not block; a SOFT_DELETED vm_state does', async () => {
    const common = { projectId: LIBVIRT_SERVER.projectId, userId: LIBVIRT_SERVER.userId };
    // A deleted server that ran on compute-2.
    const gone = await insertInstance(d.knex('cell1'), { ...common, uuid: 'e0b9a3c2-0a1b-4c2d-8e3f-000000000001', host: 'compute-2', node: 'compute-2.sandbox.example.org', vmState: 'deleted' });
    await softDeleteRow(d.knex('cell1'), 'instances', gone, '2026-01-01 00:00:00');
    // A shelved-offloaded server launched on compute-2: host and node are NULL.
    await insertInstance(d.knex('cell1'), { ...common, uuid: 'e0b9a3c2-0a1b-4c2d-8e3f-000000000002', host: null, node: null, vmState: 'shelved_offloaded' });
    await d.knex('cell1')('instances').update({ launched_on: 'compute-2' }).where('uuid', 'e0b9a3c2-0a1b-4c2d-8e3f-000000000002');
    // A soft-deleted (restorable) server on compute-3 is still a live row.
    await insertInstance(d.knex('cell1'), { ...common, uuid: 'e0b9a3c2-0a1b-4c2d-8e3f-000000000003', host: 'compute-3', node: 'compute-3.sandbox.example.org', vmState: 'soft-delete' });

    const three = await deleteHost(CELL.cell1, 'compute-3');
    expect(three).toMatchObject({ code: 4, stdout: 'There are instances on the host compute-3.\n' });
    const two = await deleteHost(CELL.cell1, 'compute-2');
    expect(two).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect((await hostMappings(d)).map(([h]) => h)).toEqual(['compute-1', 'compute-3', 'compute-4', 'compute-5']);
  });

  it('a second delete of the same host is "not found" (2)', async () => {
    expect((await deleteHost(CELL.cell2, 'compute-5')).code).toBe(0);
    expect(await deleteHost(CELL.cell2, 'compute-5')).toMatchObject({ code: 2, stdout: 'The host compute-5 was not found.\n' });
    expect(await nodeFlags(d, 'cell2')).toEqual(LIBVIRT_HOSTS.filter((h) => h.cell === 'cell2').map((h) => [h.host, h.nodeUuid, h.host === 'compute-5' ? 0 : 1]));
  });

  it('missing --host: exit 2, a usage error on stderr, nothing on stdout, nothing changed', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'delete_host', '--cell_uuid', CELL.cell1]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--host/);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    const noCell = await runBin([...d.args, 'cell_v2', 'delete_host', '--host', 'compute-2']);
    expect(noCell.code).toBe(2);
    expect(noCell.stdout).toBe('');
    expect(noCell.stderr).toMatch(/--cell_uuid/);
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
  });

  it('--format json: one document with the result and the exit code', async () => {
    const r = await deleteHost(CELL.cell1, 'compute-1', '--format', 'json');
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({ result: 'has-instances', message: 'There are instances on the host compute-1.', exit_code: 4 });
    const ok = await deleteHost(CELL.cell1, 'compute-3', '--format', 'json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ result: 'deleted', exit_code: 0 });
  });

  // host_mappings.host and the cell tables' host columns are utf8mb3_general_ci
  // in a real deployment: nova's HostMapping.get_by_host('COMPUTE-2') finds
  // compute-2, and the cell queries (instances, compute nodes) match compute-2's
  // rows too. The SQLite tier emulates that collation; it must agree.
  it('--host in another case finds the mapping (collation), and the host\'s instances and nodes too', async () => {
    const busy = await deleteHost(CELL.cell1, 'COMPUTE-1');
    expect(busy).toMatchObject({ code: 4, stdout: 'There are instances on the host COMPUTE-1.\n', stderr: '' });
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);

    const r = await deleteHost(CELL.cell1, 'COMPUTE-2');
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS.filter(([h]) => h !== 'compute-2'));
    expect((await nodeFlags(d, 'cell1')).map(([h, , m]) => [h, m])).toEqual([
      ['compute-1', 1],
      ['compute-2', 0],
      ['compute-3', 1],
    ]);
    // Wrong cell in another case is still 3, with the host as given.
    expect(await deleteHost(CELL.cell1, 'Compute-4')).toMatchObject({ code: 3, stdout: `The host Compute-4 was not found in the cell ${CELL.cell1}.\n` });
  });
});
