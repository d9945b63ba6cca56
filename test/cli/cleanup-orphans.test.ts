// compute_node cleanup_orphans + undo through the built binary, on SQLite and MariaDB.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { insertAllocations, insertConsumer } from '../../src/sandbox/rows.js';

const PLACEMENT_TABLES = ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_provider_traits', 'resource_provider_aggregates'];
const ORPHAN_CONSUMER = 'deadbeef-0000-4000-8000-000000000001';

async function dump(k: Knex, tables: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of tables) {
    const rows: Array<Record<string, unknown>> = await k(t).select('*');
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  }
  return out;
}

async function snapshotAll(d: TestDeployment): Promise<unknown> {
  return { cell1: await dump(d.knex('cell1'), ['compute_nodes', 'services', 'instances']), cell2: await dump(d.knex('cell2'), ['compute_nodes']), placement: await dump(d.knex('placement'), PLACEMENT_TABLES) };
}

async function providerId(d: TestDeployment, host: string): Promise<number> {
  const row = (await d.knex('placement')('resource_providers').where('name', libvirtHypervisorHostname(host)).first()) as { id: number };
  return Number(row.id);
}

async function deleteService(d: TestDeployment, cell: 'cell1' | 'cell2', host: string): Promise<void> {
  await d.knex(cell)('services').update({ deleted: d.knex(cell).raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('host', host);
}

describeEachDialect('compute_node cleanup_orphans', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'co');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('plans, applies, converges, and undo restores every row exactly', async () => {
    // compute-3's service was deleted; its provider holds an orphaned consumer
    // and an evacuation leftover of web-1 (which lives on compute-1).
    await deleteService(d, 'cell1', 'compute-3');
    const rp3 = await providerId(d, 'compute-3');
    await insertConsumer(d.knex('placement'), { uuid: ORPHAN_CONSUMER, projectId: 'p', userId: 'u' });
    await insertAllocations(d.knex('placement'), [
      { providerId: rp3, consumerUuid: ORPHAN_CONSUMER, resourceClass: 'VCPU', used: 1 },
      { providerId: rp3, consumerUuid: LIBVIRT_SERVER.uuid, resourceClass: 'VCPU', used: 2 },
    ]);
    const web1Before = (await d.knex('placement')('consumers').where('uuid', LIBVIRT_SERVER.uuid).first()) as { generation: number };
    const before = await snapshotAll(d);

    const dry = await runBin([...d.args, 'compute_node', 'cleanup_orphans']);
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain('compute_node cleanup_orphans: 1 unit(s), 4 change(s), 0 refused.');
    expect(dry.stdout).toContain('Nothing was changed.');
    expect(await snapshotAll(d)).toEqual(before);

    const journal = join(d.dir, 'run.jsonl');
    const applied = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--journal', journal, '--format', 'json']);
    expect(applied.stderr).toContain(`journal: ${journal}`);
    expect(applied.code).toBe(4);
    const doc = JSON.parse(applied.stdout) as { changed: boolean; applied: string[]; skipped: unknown[] };
    expect(doc).toMatchObject({ changed: true, skipped: [] });
    expect(doc.applied).toHaveLength(1);

    const node3 = LIBVIRT_HOSTS.find((h) => h.host === 'compute-3');
    const cn = (await d.knex('cell1')('compute_nodes').where('uuid', node3?.nodeUuid ?? '').first()) as { id: number; deleted: number; mapped: number; deleted_at: string | null };
    expect(Number(cn.deleted)).toBe(Number(cn.id));
    expect(cn.deleted_at).not.toBeNull();
    expect(await d.knex('placement')('resource_providers').where('id', rp3)).toEqual([]);
    expect(await d.knex('placement')('inventories').where('resource_provider_id', rp3)).toEqual([]);
    expect(await d.knex('placement')('consumers').where('uuid', ORPHAN_CONSUMER)).toEqual([]);
    // web-1 kept its allocations on compute-1; its generation was bumped once.
    const web1 = (await d.knex('placement')('consumers').where('uuid', LIBVIRT_SERVER.uuid).first()) as { generation: number };
    expect(Number(web1.generation)).toBe(Number(web1Before.generation) + 1);
    const web1Allocs = await d.knex('placement')('allocations').where('consumer_id', LIBVIRT_SERVER.uuid);
    expect(web1Allocs.length).toBe(3);

    const lines = readFileSync(journal, 'utf8').trim().split('\n');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ type: 'header', command: 'compute_node cleanup_orphans' });
    expect(lines.filter((l) => l.includes('"type":"commit"'))).toHaveLength(4);

    const again = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to do');

    // A journal cut mid-line (as by a killed run) is refused unless the operator says so.
    const text = readFileSync(journal, 'utf8');
    const cut = join(d.dir, 'cut.jsonl');
    writeFileSync(cut, text.slice(0, text.length - 5));
    const refusedCut = await runBin([...d.args, 'undo', cut]);
    expect(refusedCut.code).toBe(127);
    expect(refusedCut.stderr).toMatch(/truncated .*--allow-truncated/);
    expect(await snapshotAll(d)).not.toEqual(before);

    const undo = await runBin([...d.args, 'undo', cut, '--apply', '--allow-truncated', '--journal', join(d.dir, 'undo.jsonl')]);
    expect(undo.stderr).not.toContain('error');
    expect(undo.code).toBe(4);
    expect(await snapshotAll(d)).toEqual(before);
    const undoAgain = await runBin([...d.args, 'undo', journal, '--apply']);
    expect(undoAgain.code, undoAgain.stdout + undoAgain.stderr).toBe(0);
  });

  it('refuses an orphan that still has a live instance, and changes nothing', async () => {
    await deleteService(d, 'cell1', 'compute-1');
    const before = await snapshotAll(d);
    const dry = await runBin([...d.args, 'compute_node', 'cleanup_orphans']);
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain(`live instance ${LIBVIRT_SERVER.uuid} is on it`);
    // A libvirt node: the rebalance only moves ironic nodes, so the way out is its nova-compute registering again.
    expect(dry.stdout).toContain('(see: start nova-compute on compute-1 (it registers its service again and keeps the node)');
    expect(dry.stdout).not.toContain('compute_node rebalance');
    // Issue 13.4: a plan of refusals only has nothing to apply, and says so.
    expect(dry.stdout).toContain('--apply would change nothing: every item is refused');
    expect(dry.stdout).not.toContain('Re-run with --apply');
    const applied = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']);
    // All refused, nothing written: 3 (not 5, "partly applied"), the refusal listed.
    expect(applied.code).toBe(3);
    expect(applied.stdout).toContain('applied 0 unit(s), skipped 0, refused 1.');
    expect(applied.stdout).toContain(`refused: compute node`);
    expect(applied.stdout).toContain(`live instance ${LIBVIRT_SERVER.uuid} is on it`);
    const json = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--format', 'json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ changed: false, applied: [], skipped: [], refused: [{ reason: expect.stringContaining('live instance') as unknown }] });
    expect(await snapshotAll(d)).toEqual(before);
  });

  it('a clean deployment has nothing to do', async () => {
    const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans']);
    expect(r).toMatchObject({ code: 0 });
  });
});

describeEachDialect('undo refuses bad journals', (dialect) => {
  let d: TestDeployment;
  beforeAll(async () => {
    d = await createTestDeployment(dialect, 'empty', 'uj');
  });
  afterAll(async () => {
    await d.cleanup();
  });

  it.each([
    ['missing', null, /cannot read the journal/],
    ['empty', '', /is empty/],
    ['truncated', '{"type":"header"', /truncated/],
    ['corrupt', '{"type":"header","format":"nova-reconcile-journal/1","deployment":{"api":"x","cells":[]}}\nnot json\n', /corrupt at line 2/],
    ['foreign', '{"type":"header","format":"nova-reconcile-journal/1","command":"x","deployment":{"api":"mysql://elsewhere:3306/nova_api","cells":[]}}\n', /another deployment/],
    ['not a journal', '{"hello":1}\n', /not a nova-reconcile journal/],
  ])('%s journal → exit 127, one line', async (_name, content, pattern) => {
    const path = join(d.dir, 'j.jsonl');
    if (content !== null) (await import('node:fs')).writeFileSync(path, content);
    const r = await runBin([...d.args, 'undo', path]);
    expect(r.code).toBe(127);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(pattern);
  });
});
