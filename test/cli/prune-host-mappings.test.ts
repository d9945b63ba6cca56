// cell_v2 prune_host_mappings through the built binary, on SQLite and
// MariaDB. The states are written as Nova writes them: the libvirt scenario
// after a discover, then a host whose service and compute node were
// soft-deleted (deleted = id; Zed keeps mapped = 1 on the node) while its
// mapping stayed. Dry run changes nothing; apply deletes exactly the mapping
// and resets mapped on the deleted node; a re-run is clean; undo restores
// every row.
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, hostMappings, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER } from '../../src/sandbox/scenarios/libvirt.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';

const ALL_MAPPINGS = LIBVIRT_HOSTS.map((h) => [h.host, CELL[h.cell]]);
const NOTE = 'note: nova-scheduler caches host-to-cell mappings; send it SIGHUP (or restart it) so that it forgets the changed mappings\n';

async function dump(k: Knex, tables: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows: Array<Record<string, unknown>> = await k(t).select('*').orderBy('id');
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : v instanceof Date ? v.toISOString() : String(v)]))));
  }
  return out;
}

async function everything(d: TestDeployment): Promise<unknown> {
  return {
    api: await dump(d.knex('api'), ['host_mappings', 'cell_mappings']),
    cell1: await dump(d.knex('cell1'), ['services', 'compute_nodes', 'instances']),
    cell2: await dump(d.knex('cell2'), ['services', 'compute_nodes', 'instances']),
  };
}

/** Nova's service_destroy in Zed: the service and its compute nodes soft-deleted (deleted = id), nodes keep mapped = 1. */
async function destroyService(k: Knex, host: string): Promise<void> {
  const at = '2026-01-02 03:04:05';
  await k('services').update({ deleted: k.raw('id'), deleted_at: at }).where({ host, deleted: 0 });
  await k('compute_nodes').update({ deleted: k.raw('id'), deleted_at: at }).where({ host, deleted: 0 });
}

describeEachDialect('cell_v2 prune_host_mappings', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'prune');
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);
  });
  afterEach(async () => {
    await d.cleanup();
  });
  const prune = (...more: string[]) => runBin([...d.args, 'cell_v2', 'prune_host_mappings', ...more]);

  it('a stale mapping: dry run unchanged, apply deletes exactly it and resets mapped on the deleted node, re-run clean, undo exact', async () => {
    await destroyService(d.knex('cell1'), 'compute-3');
    const node3 = (await d.knex('cell1')('compute_nodes').where('host', 'compute-3').first()) as Record<string, unknown>;
    expect(Number(node3['mapped'])).toBe(1);
    const mapping3 = (await d.knex('api')('host_mappings').where('host', 'compute-3').first()) as { id: number };
    const before = await everything(d);

    const dry = await prune();
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain('cell_v2 prune_host_mappings: 1 unit(s), 2 change(s), 0 refused.');
    expect(dry.stdout).toContain('stale host mapping of compute-3 to cell cell1');
    expect(dry.stdout).toContain(`set mapped = 0 on its 1 soft-deleted compute node(s) (id ${String(node3['id'])})`);
    expect(dry.stdout).toContain(`delete the host mapping of compute-3 (id ${mapping3.id}) to cell cell1`);
    expect(dry.stdout).toContain('Nothing was changed.');
    expect(await everything(d)).toEqual(before);

    const journal = join(d.dir, 'prune.jsonl');
    const applied = await prune('--apply', '--journal', journal);
    expect(applied.code).toBe(4);
    expect(applied.stdout).toContain('applied 1 unit(s), skipped 0, refused 0.');
    expect(applied.stderr).toContain(`journal: ${journal}`);
    expect(applied.stderr.endsWith(NOTE)).toBe(true);
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS.filter(([h]) => h !== 'compute-3'));
    // Exactly one compute node column changed: mapped on the deleted node; updated_at is kept (a deleted row is not re-saved).
    const after = await everything(d);
    const node3After = (await d.knex('cell1')('compute_nodes').where('id', Number(node3['id'])).first()) as Record<string, unknown>;
    expect(Number(node3After['mapped'])).toBe(0);
    expect(String(node3After['updated_at'])).toBe(String(node3['updated_at']));
    expect(String(node3After['deleted'])).toBe(String(node3['deleted']));
    const b = before as Record<string, Record<string, string[]>>;
    const a = after as Record<string, Record<string, string[]>>;
    expect(a['cell1']?.['services']).toEqual(b['cell1']?.['services']);
    expect(a['cell1']?.['instances']).toEqual(b['cell1']?.['instances']);
    expect(a['cell2']).toEqual(b['cell2']);
    expect(a['cell1']?.['compute_nodes']?.filter((r) => !r.includes('"compute-3"'))).toEqual(b['cell1']?.['compute_nodes']?.filter((r) => !r.includes('"compute-3"')));

    const again = await prune('--apply');
    expect(again).toMatchObject({ code: 0, stdout: 'cell_v2 prune_host_mappings: nothing to do.\n' });
    expect((await prune()).code).toBe(0);

    const dryUndo = await runBin([...d.args, 'undo', journal, '--dry-run']);
    expect(dryUndo.code, dryUndo.stdout + dryUndo.stderr).toBe(3);
    expect(await everything(d)).toEqual(after);
    const undo = await runBin([...d.args, 'undo', journal, '--apply']);
    expect(undo.code).toBe(4);
    expect(await everything(d)).toEqual(before);
    expect((await runBin([...d.args, 'undo', journal, '--apply'])).code).toBe(0);
  });

  it('--format json and scoping: --cell_uuid and --host pick the mapping; audit suggests the command', async () => {
    await destroyService(d.knex('cell1'), 'compute-3');
    await destroyService(d.knex('cell2'), 'compute-5');
    const audit = await runBin([...d.args, 'audit', '--format', 'json']);
    const findings = (JSON.parse(audit.stdout) as { findings: Array<{ kind: string; suggestion: string; objects: { host: string } }> }).findings.filter((f) => f.kind === 'stale-mapping');
    expect(findings.map((f) => [f.objects.host, f.suggestion])).toEqual([
      ['compute-3', `nova-reconcile --config-file ${d.confPath} cell_v2 prune_host_mappings --host compute-3`],
      ['compute-5', `nova-reconcile --config-file ${d.confPath} cell_v2 prune_host_mappings --host compute-5`],
    ]);

    const cell2 = await prune('--cell_uuid', CELL.cell2, '--format', 'json');
    expect(cell2.code).toBe(3);
    expect((JSON.parse(cell2.stdout) as { units: Array<{ id: string }> }).units).toHaveLength(1);
    const one = await prune('--host', 'COMPUTE-5', '--apply', '--format', 'json');
    expect(one.code).toBe(4);
    const doc = JSON.parse(one.stdout) as { changed: boolean; applied: string[]; units: Array<{ changes: Array<{ kind: string; host: string }> }> };
    expect(doc.changed).toBe(true);
    expect(doc.units[0]?.changes.map((c) => [c.kind, c.host])).toEqual([
      ['release-host-in-cell', 'compute-5'],
      ['delete-host-mapping', 'compute-5'],
    ]);
    expect((await hostMappings(d)).map(([h]) => h)).toEqual(['compute-1', 'compute-2', 'compute-3', 'compute-4']);
    const bad = await prune('--cell_uuid', 'not-a-uuid');
    expect(bad.code).toBe(127);
    expect(bad.stderr).toContain('--cell_uuid "not-a-uuid": not a valid UUID');
  });

  it('refuses, with the reason, a host that still has live instances (not stale), and one whose live service is in another cell; healthy mappings are left alone', async () => {
    // compute-1 runs web-1: its service and node are gone, the instance row is live.
    expect(LIBVIRT_SERVER.host).toBe('compute-1');
    await destroyService(d.knex('cell1'), 'compute-1');
    // compute-4's mapping points at cell1, its live service is in cell2 (the wrong-cell state).
    await d.knex('api')('host_mappings').update({ cell_id: d.dbs.cellIds.cell1 }).where('host', 'compute-4');
    const before = await everything(d);

    const dry = await prune();
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain('cell_v2 prune_host_mappings: 0 unit(s), 0 change(s), 2 refused.');
    expect(dry.stdout).toContain(`host mapping of compute-1 (id`);
    expect(dry.stdout).toContain(`1 live instance(s) are on the host (${LIBVIRT_SERVER.uuid}): not stale`);
    expect(dry.stdout).toMatch(/host mapping of compute-4 \(id \d+\) to cell cell1: a live nova-compute service or compute node has the host in cell cell2: the mapping points at the wrong cell \(see: nova-reconcile (--config-file \S+ )?cell_v2 discover_hosts --remap\)/);
    const applied = await prune('--apply');
    expect([3, 5]).toContain(applied.code);
    expect(await everything(d)).toEqual(before);

    // audit: the instance-bearing mapping is its own finding, never stale-mapping.
    const audit = JSON.parse((await runBin([...d.args, 'audit', '--format', 'json'])).stdout) as { findings: Array<{ kind: string; objects: { host: string } }> };
    const mappingKinds = ['stale-mapping', 'mapping-host-has-instances'];
    expect(audit.findings.filter((f) => f.objects.host === 'compute-1' && mappingKinds.includes(f.kind)).map((f) => f.kind)).toEqual(['mapping-host-has-instances']);
    expect(audit.findings.some((f) => f.kind === 'stale-mapping')).toBe(false);

    // A healthy mapping is refused only when named.
    const named = await prune('--host', 'compute-2');
    expect(named.code).toBe(3);
    expect(named.stdout).toContain('the host has a live nova-compute service');
    expect(await everything(d)).toEqual(before);
  });
});
