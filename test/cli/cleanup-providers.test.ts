// placement cleanup_providers through the built binary, on SQLite and MariaDB:
// stale providers removed under Placement's rules, blocked names freed by a
// delete (empty) or a re-key (with allocations), foreign providers untouched.
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { insertAllocations, insertConsumer, insertProviderTraits, insertResourceProvider } from '../../src/sandbox/rows.js';

const NEW_UUID = { 'compute-1': '11111111-aaaa-4aaa-8aaa-000000000001', 'compute-2': '11111111-aaaa-4aaa-8aaa-000000000002' } as const;
const ORPHAN = 'deadbeef-0000-4000-8000-0000000000c3';
const TABLES = ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_provider_traits', 'resource_provider_aggregates'];

async function dump(k: Knex): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of TABLES) out[t] = ((await k(t).select('*')) as Array<Record<string, unknown>>).map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  return out;
}

function uuidOf(host: string): string {
  return LIBVIRT_HOSTS.find((h) => h.host === host)?.nodeUuid ?? '';
}

/** Nova (Zed, non-ironic) re-created the node with a new uuid; the old row is soft-deleted and its provider stays. */
async function recreateNode(d: TestDeployment, host: 'compute-1' | 'compute-2'): Promise<void> {
  const cell = d.knex('cell1');
  const old = (await cell('compute_nodes').where('uuid', uuidOf(host)).first()) as Record<string, unknown>;
  await cell('compute_nodes').update({ deleted: Number(old['id']), deleted_at: '2026-01-01 00:00:00' }).where('id', Number(old['id']));
  const { id: _id, ...rest } = old;
  await cell('compute_nodes').insert({ ...rest, uuid: NEW_UUID[host], deleted: 0, deleted_at: null });
}

describeEachDialect('placement cleanup_providers', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'cp');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('deletes stale providers, frees blocked names, leaves foreign providers alone, and undo restores', async () => {
    const p = d.knex('placement');
    await recreateNode(d, 'compute-1'); // its old provider holds web-1's allocations: re-key
    await recreateNode(d, 'compute-2'); // its old provider is empty: delete
    // compute-3's node is gone entirely; its provider holds an orphaned consumer.
    await d.knex('cell1')('compute_nodes').update({ deleted: d.knex('cell1').raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('uuid', uuidOf('compute-3'));
    const rp3 = Number(((await p('resource_providers').where('uuid', uuidOf('compute-3')).first()) as { id: number }).id);
    await insertConsumer(p, { uuid: ORPHAN, projectId: 'p', userId: 'u' });
    await insertAllocations(p, [{ providerId: rp3, consumerUuid: ORPHAN, resourceClass: 'DISK_GB', used: 10 }]);
    // Not compute-node providers: never touched.
    await insertResourceProvider(p, { uuid: '22222222-bbbb-4bbb-8bbb-000000000001', name: 'neutron-agent-ovs' });
    const sharing = await insertResourceProvider(p, { uuid: '22222222-bbbb-4bbb-8bbb-000000000002', name: 'shared-disk' });
    await insertProviderTraits(p, sharing, ['MISC_SHARES_VIA_AGGREGATE', 'COMPUTE_NODE']);
    const before = await dump(p);
    const rp1Before = (await p('resource_providers').where('uuid', uuidOf('compute-1')).first()) as { id: number; generation: number };

    const dry = await runBin([...d.args, 'placement', 'cleanup_providers']);
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain('placement cleanup_providers: 3 unit(s)');
    expect(dry.stdout).toContain(`re-key resource provider ${uuidOf('compute-1')} to ${NEW_UUID['compute-1']}`);
    expect(await dump(p)).toEqual(before);

    const journal = join(d.dir, 'providers.jsonl');
    const applied = await runBin([...d.args, 'placement', 'cleanup_providers', '--apply', '--journal', journal]);
    expect(applied.code).toBe(4);

    // Re-keyed: same row, new uuid, generation + 1, web-1's allocations untouched.
    const rp1 = (await p('resource_providers').where('id', rp1Before.id).first()) as { uuid: string; generation: number; name: string };
    expect(rp1).toMatchObject({ uuid: NEW_UUID['compute-1'], name: libvirtHypervisorHostname('compute-1') });
    expect(Number(rp1.generation)).toBe(Number(rp1Before.generation) + 1);
    expect((await p('allocations').where('consumer_id', LIBVIRT_SERVER.uuid)).every((a: { resource_provider_id: number }) => Number(a.resource_provider_id) === Number(rp1Before.id))).toBe(true);
    // Empty blocker and orphan-holding provider deleted with their inventories; orphan consumer gone.
    expect(await p('resource_providers').whereIn('uuid', [uuidOf('compute-2'), uuidOf('compute-3')])).toEqual([]);
    expect(await p('inventories').where('resource_provider_id', rp3)).toEqual([]);
    expect(await p('consumers').where('uuid', ORPHAN)).toEqual([]);
    // Foreign providers are still there.
    expect((await p('resource_providers').whereIn('name', ['neutron-agent-ovs', 'shared-disk'])).length).toBe(2);

    expect((await runBin([...d.args, 'placement', 'cleanup_providers', '--apply'])).code).toBe(0);

    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
    expect(undo.code).toBe(4);
    expect(await dump(p)).toEqual(before);
  });

  it('refuses a stale provider that holds a live instance\'s only allocations', async () => {
    const p = d.knex('placement');
    // compute-1's node row is gone (no replacement), but web-1 still runs there.
    await d.knex('cell1')('compute_nodes').update({ deleted: d.knex('cell1').raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('uuid', uuidOf('compute-1'));
    const before = await dump(p);
    const dry = await runBin([...d.args, 'placement', 'cleanup_providers', '--format', 'json']);
    expect(dry.code).toBe(3);
    const doc = JSON.parse(dry.stdout) as { units: unknown[]; refused: Array<{ reason: string }> };
    expect(doc.units).toEqual([]);
    expect(doc.refused[0]?.reason).toContain(`live instance ${LIBVIRT_SERVER.uuid} is on this node`);
    // Every unit refused, nothing written: 3, the refusal listed (issue 13.4).
    const applied = await runBin([...d.args, 'placement', 'cleanup_providers', '--apply']);
    expect(applied.code).toBe(3);
    expect(applied.stdout).toContain(`live instance ${LIBVIRT_SERVER.uuid} is on this node`);
    expect(await dump(p)).toEqual(before);
  });
});
