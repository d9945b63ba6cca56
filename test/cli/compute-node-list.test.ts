// `compute_node list` through the built binary, on SQLite and MariaDB: each
// node's own health (seed bug 2013), filters, and the "unknown" columns.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { DELETED_IRONIC_NODE, deletedIronicNodeIronicList } from '../../src/sandbox/scenarios/deleted-ironic-node.js';

const S = DELETED_IRONIC_NODE;

type Row = Record<string, unknown>;

async function listJson(d: TestDeployment, ...extra: string[]): Promise<Row[]> {
  const r = await runBin([...d.args, 'compute_node', 'list', '--format', 'json', ...extra]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { compute_nodes: Row[] }).compute_nodes;
}

function pick(rows: readonly Row[], ...keys: string[]): unknown[][] {
  return rows.map((r) => keys.map((k) => r[k]));
}

describeEachDialect('compute_node list on deleted-ironic-node', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'deleted-ironic-node', 'cnl');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it("shows each node's own health; without ironic truth the ironic column is unknown", async () => {
    const rows = await listJson(d);
    expect(pick(rows, 'uuid', 'cell_name', 'host', 'hypervisor_type', 'service_state', 'mapped', 'provider', 'allocations', 'instances', 'ironic_node')).toEqual([
      [S.goneNodeUuid, 'cell1', S.host, 'ironic', 'up', true, 'yes', 0, 0, 'unknown'],
      [S.healthyNodeUuid, 'cell1', S.host, 'ironic', 'up', true, 'yes', 1, 1, 'unknown'],
      [S.libvirt.nodeUuid, 'cell1', S.libvirt.host, 'QEMU', 'deleted', true, 'yes', 0, 0, 'n/a'],
    ]);
    expect(rows[0]).toMatchObject({ cell_uuid: CELL.cell1, hypervisor_hostname: S.goneNodeUuid, service_disabled: false, mapped_flag: 1, mapped_elsewhere: false });
  });

  it('with --ironic-nodes it says which ironic nodes are gone', async () => {
    const file = join(d.dir, 'nodes.json');
    writeFileSync(file, deletedIronicNodeIronicList());
    const rows = await listJson(d, '--ironic-nodes', file);
    expect(pick(rows, 'uuid', 'ironic_node')).toEqual([
      [S.goneNodeUuid, 'no'],
      [S.healthyNodeUuid, 'yes'],
      [S.libvirt.nodeUuid, 'n/a'],
    ]);
  });

  it('--host matches as the database does; --cell limits to one cell', async () => {
    expect(pick(await listJson(d, '--host', 'COMPUTE-9'), 'uuid')).toEqual([[S.libvirt.nodeUuid]]);
    expect(await listJson(d, '--cell', CELL.cell2)).toEqual([]);
    expect(await listJson(d, '--cell', CELL.cell1, '--host', S.host)).toHaveLength(2);
  });

  it('prints a plain table', async () => {
    const r = await runBin([...d.args, 'compute_node', 'list', '--host', S.libvirt.host]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^\| uuid +\| cell +\| host +\| hypervisor_hostname +\| type +\| service +\| mapped +\| provider +\| allocations +\| instances +\| ironic_node +\|$/);
    expect(lines[3]).toMatch(new RegExp(`^\\| ${S.libvirt.nodeUuid} \\| cell1 +\\| compute-9 +\\| compute-9\\.sandbox\\.example\\.org \\| QEMU +\\| deleted +\\| yes +\\| yes +\\| 0 +\\| 0 +\\| n/a +\\|$`));
    expect(lines).toHaveLength(5);
  });

  it('a stopped or forced-down service shows as down / forced-down', async () => {
    await d.knex('cell1')('services').update({ forced_down: 1 }).where('host', S.host);
    expect(pick(await listJson(d, '--host', S.host), 'service_state')).toEqual([['forced-down'], ['forced-down']]);
    await d.knex('cell1')('services').update({ forced_down: 0, last_seen_up: '2020-01-01 00:00:00' }).where('host', S.host);
    expect(pick(await listJson(d, '--host', S.host), 'service_state')).toEqual([['down'], ['down']]);
  });

  it('a malformed or unknown --cell exits 127 with one line', async () => {
    const bad = await runBin([...d.args, 'compute_node', 'list', '--cell', 'nope']);
    expect(bad).toMatchObject({ code: 127, stdout: '' });
    expect(bad.stderr.trimEnd().split('\n')).toHaveLength(1);
    const unknown = await runBin([...d.args, 'compute_node', 'list', '--cell', '11111111-2222-3333-4444-555555555555']);
    expect(unknown.code).toBe(127);
    expect(unknown.stderr).toBe(
      // The hint repeats the --config-file given (issue 13.8).
      `nova-reconcile: error: cell 11111111-2222-3333-4444-555555555555 has no mapping (run \`nova-reconcile --config-file ${d.confPath} cell_v2 list_cells\` to see the cells)\n`,
    );
  });

  it('without [placement_database] it still lists, with provider and allocations unknown', async () => {
    const conf = join(d.dir, 'no-placement.conf');
    writeFileSync(conf, ['[api_database]', `connection = ${d.url('api')}`, '[database]', `connection = ${d.url('cell1')}`, ''].join('\n'));
    const r = await runBin(['--config-file', conf, 'compute_node', 'list', '--format', 'json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const rows = (JSON.parse(r.stdout) as { compute_nodes: Row[] }).compute_nodes;
    expect(pick(rows, 'provider', 'allocations')).toEqual([
      ['unknown', null],
      ['unknown', null],
      ['unknown', null],
    ]);
  });
});
