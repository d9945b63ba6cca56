// Issue 13 item 2 and issue 17 item 2, on MariaDB through the built binary:
// a unit verifies and holds its compute node (SELECT ... FOR UPDATE in a cell
// transaction kept open) before it writes anything in placement. Another
// writer is simulated the way nova-compute would act: a transaction that
// already holds the compute node's row when the apply starts, and commits
// while the apply waits for it.
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql, waitForLockWait } from '../helpers/mysql.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { readJournal } from '../../src/operations/journal.js';
import { LIBVIRT_HOSTS } from '../../src/sandbox/scenarios/libvirt.js';

function nodeUuid(host: string): string {
  return LIBVIRT_HOSTS.find((h) => h.host === host)?.nodeUuid ?? '';
}

async function deleteService(d: TestDeployment, host: string): Promise<void> {
  await d.knex('cell1')('services').update({ deleted: d.knex('cell1').raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('host', host);
}

async function providerOf(d: TestDeployment, host: string): Promise<Record<string, unknown> | undefined> {
  return (await d.knex('placement')('resource_providers').where('uuid', nodeUuid(host)).first()) as Record<string, unknown> | undefined;
}

function databaseName(url: string): string {
  return new URL(url.replace(/^mysql\+pymysql:/, 'mysql:')).pathname.slice(1).split('?')[0] ?? '';
}

describeMysql('apply: ownership before placement [mariadb]', () => {
  let d: TestDeployment;
  afterEach(async () => {
    await d.cleanup();
  });

  it('cleanup_orphans: nova-compute on another host takes the node during the apply; its provider survives, the unit is skipped with the reason', async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'own');
    await deleteService(d, 'compute-3');
    const cell = d.knex('cell1');
    const providerBefore = await providerOf(d, 'compute-3');
    expect(providerBefore).toBeDefined();

    // nova-compute on compute-2 takes the node: its UPDATE holds the row, and commits mid-apply.
    const trx = await cell.transaction();
    await trx('compute_nodes').update({ host: 'compute-2' }).where('uuid', nodeUuid('compute-3'));
    const journal = join(d.dir, 'apply.jsonl');
    const run = runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--journal', journal]);
    await waitForLockWait(databaseName(d.url('cell1')));
    // The apply now waits for the node's row: nothing in placement may have changed yet.
    expect(await providerOf(d, 'compute-3')).toEqual(providerBefore);
    await trx.commit();
    const r = await run;

    // Skipped and nothing written: 3, not 5 "partly applied" (issue 13.4).
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain('applied 0 unit(s), skipped 1, refused 0.');
    expect(r.stdout).toContain(`ownership changed: compute node ${nodeUuid('compute-3')} is now on host compute-2, not compute-3; nothing was changed`);
    expect(r.stdout).not.toContain('re-run to finish');
    expect(r.stderr).toContain('done 1/1 unit(s): 0 applied, 0 already done, 1 skipped');
    expect(r.stderr).not.toMatch(/applied 1\/1/);
    // The live node on compute-2 keeps its provider, inventories and all.
    expect(await providerOf(d, 'compute-3')).toEqual(providerBefore);
    const node = (await cell('compute_nodes').where('uuid', nodeUuid('compute-3')).first()) as { host: string; deleted: number };
    expect(node).toMatchObject({ host: 'compute-2', deleted: 0 });
    // Nothing was journaled as changed.
    expect(readJournal(journal).changes).toEqual([]);
  }, 60_000);

  it('units whose target state another run already reached are "already done": exit 4 with one applied, 0 when none was', async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'own');
    await deleteService(d, 'compute-2');
    await deleteService(d, 'compute-3');
    const cell = d.knex('cell1');
    const placement = d.knex('placement');

    // Another run (through another Galera node, say) does compute-3's unit while this one plans and applies.
    const trx = await cell.transaction();
    const node3 = (await trx('compute_nodes').where('uuid', nodeUuid('compute-3')).forUpdate().first()) as { id: number };
    const run = runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--format', 'json']);
    await waitForLockWait(databaseName(d.url('cell1')));
    const rp3 = (await providerOf(d, 'compute-3')) as { id: number };
    await placement.transaction(async (p) => {
      for (const t of ['inventories', 'resource_provider_traits', 'resource_provider_aggregates']) await p(t).delete().where('resource_provider_id', rp3.id);
      await p('resource_providers').update({ root_provider_id: null }).where('id', rp3.id);
      await p('resource_providers').delete().where('id', rp3.id);
    });
    await trx('compute_nodes').update({ deleted: node3.id, deleted_at: '2026-01-01 00:00:00' }).where('id', node3.id);
    await trx.commit();
    const r = await run;

    expect(r.code, r.stderr).toBe(4);
    const doc = JSON.parse(r.stdout) as { applied: string[]; already_done: string[]; skipped: unknown[] };
    expect(doc.applied).toHaveLength(1);
    expect(doc.already_done).toHaveLength(1);
    expect(doc.already_done[0]).toMatch(new RegExp(`^orphan-node:.*:${node3.id}$`));
    expect(doc.skipped).toEqual([]);
    expect(r.stderr).toContain('done 2/2 unit(s): 1 applied, 1 already done, 0 skipped');
    expect(await providerOf(d, 'compute-2')).toBeUndefined();

    // The same, with nothing left for this run: every unit already done, exit 0.
    await deleteService(d, 'compute-1');
    await placement('allocations').delete();
    await placement('consumers').delete();
    await cell('instance_extra').delete();
    await cell('instances').delete();
    const cn1 = (await cell('compute_nodes').where('uuid', nodeUuid('compute-1')).first()) as { id: number };
    const hold = await cell.transaction();
    await hold('compute_nodes').where('id', cn1.id).forUpdate();
    const second = runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']);
    await waitForLockWait(databaseName(d.url('cell1')));
    const rp1 = (await providerOf(d, 'compute-1')) as { id: number };
    await placement.transaction(async (p) => {
      for (const t of ['inventories', 'resource_provider_traits', 'resource_provider_aggregates']) await p(t).delete().where('resource_provider_id', rp1.id);
      await p('resource_providers').update({ root_provider_id: null }).where('id', rp1.id);
      await p('resource_providers').delete().where('id', rp1.id);
    });
    await hold('compute_nodes').update({ deleted: cn1.id, deleted_at: '2026-01-01 00:00:00' }).where('id', cn1.id);
    await hold.commit();
    const s = await second;
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toContain('applied 0 unit(s), already done 1, skipped 0, refused 0.');
    expect(s.stdout).toContain('already done: orphan compute node');
    expect(s.stdout).not.toContain('re-run to finish');
  }, 60_000);
});
