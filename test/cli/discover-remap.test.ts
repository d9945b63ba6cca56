// cell_v2 discover_hosts --remap through the built binary, on SQLite and
// MariaDB: compute-2 was re-deployed from cell1 into cell2. Its old service
// and compute node in cell1 were deleted as Nova deletes them (deleted = id,
// the node keeps mapped = 1 in Zed), the new nova-compute registered in cell2,
// and the mapping still points at cell1. Plain discover_hosts only warns
// (nova-compatible); --remap plans, applies with exact rows, is clean on a
// re-run, and undo restores every row.
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, hostMappings, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { addLibvirtHost } from '../../src/sandbox/builders.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { insertInstance } from '../../src/sandbox/rows.js';

const ALL_MAPPINGS = LIBVIRT_HOSTS.map((h) => [h.host, CELL[h.cell]]);
const NEW_NODE = '5d4b1c1e-7f0e-4c55-9a57-2f4c8f7a1e02';

async function dump(k: Knex, tables: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows: Array<Record<string, unknown>> = await k(t).select('*').orderBy('id');
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : v instanceof Date ? v.toISOString() : String(v)]))));
  }
  return out;
}

async function everything(d: TestDeployment): Promise<Record<string, Record<string, string[]>>> {
  return {
    api: await dump(d.knex('api'), ['host_mappings', 'cell_mappings']),
    cell1: await dump(d.knex('cell1'), ['services', 'compute_nodes', 'instances']),
    cell2: await dump(d.knex('cell2'), ['services', 'compute_nodes', 'instances']),
  };
}

describeEachDialect('cell_v2 discover_hosts --remap', (dialect) => {
  let d: TestDeployment;
  let oldNodeId: number;
  let newNodeId: number;
  let mappingId: number;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'remap');
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
    const cell1 = d.knex('cell1');
    const at = '2026-01-02 03:04:05';
    await cell1('services').update({ deleted: cell1.raw('id'), deleted_at: at }).where({ host: 'compute-2', deleted: 0 });
    await cell1('compute_nodes').update({ deleted: cell1.raw('id'), deleted_at: at }).where({ host: 'compute-2', deleted: 0 });
    oldNodeId = Number(((await cell1('compute_nodes').where('host', 'compute-2').first()) as { id: number }).id);
    const rows = await addLibvirtHost(d.knex('cell2'), d.knex('placement'), {
      host: 'compute-2',
      serviceUuid: '0b6b0a52-1d0e-4f0b-8c59-4d7b4c1f2a11',
      nodeUuid: NEW_NODE,
      // Re-deployed with the new cell's domain; the old provider keeps the old name.
      hypervisorHostname: 'compute-2.cell2.sandbox.example.org',
      hostIp: '192.0.2.22',
      clock: scenarioClock(),
    });
    newNodeId = rows.computeNodeId;
    mappingId = Number(((await d.knex('api')('host_mappings').where('host', 'compute-2').first()) as { id: number }).id);
  });
  afterEach(async () => {
    await d.cleanup();
  });
  const discover = (...more: string[]) => runBin([...d.args, 'cell_v2', 'discover_hosts', ...more]);

  it('plain discover_hosts warns and exits 0 (nova-compatible); --remap: dry run unchanged, apply exact, re-run clean, undo exact', async () => {
    const before = await everything(d);
    const plain = await discover();
    expect(plain).toMatchObject({ code: 0, stdout: '' });
    expect(plain.stderr).toContain(`WARNING: host 'compute-2' has a compute service or node in cell ${CELL.cell2} but is mapped to cell ${CELL.cell1}`);
    expect(await everything(d)).toEqual(before);

    const dry = await discover('--remap');
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain('cell_v2 discover_hosts --remap: 1 unit(s), 3 change(s), 0 refused.');
    expect(dry.stdout).toContain(`[cell cell1] check that nothing live has host compute-2 in this cell, and set mapped = 0 on its 1 soft-deleted compute node(s) (id ${oldNodeId})`);
    expect(dry.stdout).toContain(`[api] move the host mapping of compute-2 (id ${mappingId}) from cell cell1 to cell cell2`);
    expect(dry.stdout).toContain(`[cell cell2] set mapped = 1 on 1 live compute node(s) of host compute-2 (id ${newNodeId})`);
    expect(await everything(d)).toEqual(before);

    const journal = join(d.dir, 'remap.jsonl');
    const applied = await discover('--remap', '--apply', '--journal', journal);
    expect(applied.code).toBe(4);
    expect(applied.stderr).toContain('nova-scheduler caches host-to-cell mappings');
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS.map(([h, c]) => [h, h === 'compute-2' ? CELL.cell2 : c]));
    const hm = (await d.knex('api')('host_mappings').where('id', mappingId).first()) as { updated_at: unknown; created_at: unknown };
    expect(hm.updated_at).not.toBeNull();
    const after = await everything(d);
    const old = (await d.knex('cell1')('compute_nodes').where('id', oldNodeId).first()) as { mapped: number };
    const fresh = (await d.knex('cell2')('compute_nodes').where('id', newNodeId).first()) as { mapped: number };
    expect([Number(old.mapped), Number(fresh.mapped)]).toEqual([0, 1]);
    // Nothing else moved: services, instances and the other nodes are as before.
    for (const cell of ['cell1', 'cell2'] as const) {
      expect(after[cell]?.['services']).toEqual(before[cell]?.['services']);
      expect(after[cell]?.['instances']).toEqual(before[cell]?.['instances']);
      expect(after[cell]?.['compute_nodes']?.filter((r) => !r.includes('"compute-2"'))).toEqual(before[cell]?.['compute_nodes']?.filter((r) => !r.includes('"compute-2"')));
    }
    expect(after['api']?.['host_mappings']?.filter((r) => !r.includes('"compute-2"'))).toEqual(before['api']?.['host_mappings']?.filter((r) => !r.includes('"compute-2"')));

    expect(await discover('--remap', '--apply')).toMatchObject({ code: 0, stdout: 'cell_v2 discover_hosts --remap: nothing to do.\n' });
    const quiet = await discover('--verbose');
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');

    expect((await runBin([...d.args, 'undo', journal, '--apply'])).code).toBe(4);
    expect(await everything(d)).toEqual(before);
  });

  it('refuses while the old cell still has a live instance on the host; nothing changes', async () => {
    await insertInstance(d.knex('cell1'), {
      uuid: 'e0b9a3c2-0a1b-4c2d-8e3f-0000000000aa',
      projectId: LIBVIRT_SERVER.projectId,
      userId: LIBVIRT_SERVER.userId,
      host: 'compute-2',
      node: libvirtHypervisorHostname('compute-2'),
      vmState: 'stopped',
    });
    const before = await everything(d);
    const dry = await discover('--remap', '--format', 'json');
    expect(dry.code).toBe(3);
    const doc = JSON.parse(dry.stdout) as { units: unknown[]; refused: Array<{ subject: string; reason: string }> };
    expect(doc.units).toEqual([]);
    expect(doc.refused).toHaveLength(1);
    expect(doc.refused[0]?.reason).toBe(`its live service is in cell cell2, but cell cell1 still has 1 live instance(s) (e0b9a3c2-0a1b-4c2d-8e3f-0000000000aa)`);
    expect([3, 5]).toContain((await discover('--remap', '--apply')).code);
    expect(await everything(d)).toEqual(before);
  });

  it('usage: --remap with discovery options, or --apply without --remap, is exit 2 and changes nothing', async () => {
    const before = await everything(d);
    for (const args of [['--remap', '--verbose'], ['--remap', '--strict'], ['--apply'], ['--wait', '5'], ['--interval', '1', '--remap']]) {
      const r = await discover(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^nova-reconcile: error: /);
    }
    expect(await everything(d)).toEqual(before);
  });
});
