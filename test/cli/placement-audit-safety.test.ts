// Issue 13 item 1, on MariaDB through the built binary: `placement audit
// --delete` never deletes what nova-manage would and loses data with: an
// allocation on a provider that is not a compute-node provider (a sharing
// provider), and the last allocations of an instance that is live in some
// cell (the stale-provider sandbox's db-1, which `audit` calls
// live-instance-on-node). Both are reported as kept, with the reason.
import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_SERVER } from '../../src/sandbox/scenarios/libvirt.js';
import { STALE_PROVIDER } from '../../src/sandbox/scenarios/stale-provider.js';
import { insertAllocations, insertInventories, insertProviderTraits, insertResourceProvider } from '../../src/sandbox/rows.js';

interface AuditDoc {
  orphans: Array<{ consumer_uuid: string; resource_provider_uuid: string; status: string }>;
  kept: Array<{ consumer_uuid: string; resource_provider_uuid: string; resources: Record<string, number>; status: string; reason: string }>;
  processed: number;
  exit_code: number;
}

async function allocationsOf(d: TestDeployment, consumer: string): Promise<Array<[string, number, number]>> {
  const rows: Array<{ uuid: string; resource_class_id: number; used: number }> = await d
    .knex('placement')('allocations as a')
    .join('resource_providers as rp', 'rp.id', 'a.resource_provider_id')
    .select('rp.uuid', 'a.resource_class_id', 'a.used')
    .where('a.consumer_id', consumer)
    .orderBy(['rp.uuid', 'a.resource_class_id']);
  return rows.map((r) => [r.uuid, Number(r.resource_class_id), Number(r.used)]);
}

describeMysql('placement audit --delete keeps what is not Nova\'s to delete [mariadb]', () => {
  let d: TestDeployment;
  afterEach(async () => {
    await d.cleanup();
  });

  it('a live instance\'s DISK_GB on a sharing provider (MISC_SHARES_VIA_AGGREGATE) is kept and reported, not deleted', async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'pas');
    const placement = d.knex('placement');
    const shared = randomUUID();
    const rp = await insertResourceProvider(placement, { uuid: shared, name: 'shared-storage-1', generation: 2 });
    await insertInventories(placement, [{ providerId: rp, resourceClass: 'DISK_GB', total: 10_000 }]);
    await insertProviderTraits(placement, rp, ['MISC_SHARES_VIA_AGGREGATE']);
    await insertAllocations(placement, [{ providerId: rp, consumerUuid: LIBVIRT_SERVER.uuid, resourceClass: 'DISK_GB', used: 10 }]);
    const before = await allocationsOf(d, LIBVIRT_SERVER.uuid);

    const audit = await runBin([...d.args, 'placement', 'audit', '--verbose']);
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    expect(audit.stdout).toContain(
      `Allocations for consumer UUID ${LIBVIRT_SERVER.uuid} on Resource Provider ${shared} are kept, not deleted: provider ${shared} (shared-storage-1) is a sharing provider (MISC_SHARES_VIA_AGGREGATE), not a compute node's`,
    );
    expect(audit.stdout).not.toContain('can be deleted');

    const del = await runBin([...d.args, 'placement', 'audit', '--delete', '--format', 'json']);
    expect(del.code, del.stdout + del.stderr).toBe(0);
    const doc = JSON.parse(del.stdout) as AuditDoc;
    expect(doc.orphans).toEqual([]);
    expect(doc.kept).toHaveLength(1);
    expect(doc.kept[0]).toMatchObject({ consumer_uuid: LIBVIRT_SERVER.uuid, resource_provider_uuid: shared, resources: { DISK_GB: 10 }, status: 'kept' });
    expect(doc.kept[0]?.reason).toContain('sharing provider');
    expect(await allocationsOf(d, LIBVIRT_SERVER.uuid)).toEqual(before);
  }, 60_000);

  it("stale-provider sandbox: db-1's only allocations (live-instance-on-node) are kept; the deleted server's are deleted; audit still reports db-1", async () => {
    d = await createTestDeployment('mysql', 'stale-provider', 'pas');
    const S = STALE_PROVIDER;
    const auditBefore = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(auditBefore.stdout).toContain('live-instance-on-node');
    expect(auditBefore.stdout).toContain(S.server.uuid);
    const db1 = await allocationsOf(d, S.server.uuid);
    expect(db1.length).toBeGreaterThan(0);

    const del = await runBin([...d.args, 'placement', 'audit', '--delete', '--verbose']);
    expect(del.code, del.stdout + del.stderr).toBe(4);
    expect(del.stdout).toContain(`Deleted allocations for consumer UUID ${S.orphan.uuid} on Resource Provider ${S.withAllocations.staleUuid}`);
    expect(del.stdout).toContain(
      `Allocations for consumer UUID ${S.server.uuid} on Resource Provider ${S.withAllocations.staleUuid} are kept, not deleted: they are the last allocations on a compute-node provider of instance ${S.server.uuid}, which is live in cell`,
    );
    expect(del.stdout).toContain('Processed 1 allocation.');
    expect(await allocationsOf(d, S.server.uuid)).toEqual(db1);
    expect(await allocationsOf(d, S.orphan.uuid)).toEqual([]);

    const auditAfter = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(auditAfter.stdout).toContain('live-instance-on-node');
    expect(auditAfter.stdout).toContain(S.server.uuid);
  }, 60_000);
});
