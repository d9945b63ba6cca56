// Issue 13 item 6, on MariaDB through the built binary: Placement
// bookkeeping. A re-key of a stale provider bumps the generation of every
// consumer whose allocations it moves to the new uuid; a removal of
// allocations bumps the generation of the provider that lost them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { STALE_PROVIDER } from '../../src/sandbox/scenarios/stale-provider.js';
import { insertAllocations, insertConsumer } from '../../src/sandbox/rows.js';

const ORPHAN = 'deadbeef-0000-4000-8000-0000000000c6';

async function consumerGenerations(d: TestDeployment, uuids: readonly string[]): Promise<number[]> {
  const out: number[] = [];
  for (const uuid of uuids) out.push(Number(((await d.knex('placement')('consumers').where('uuid', uuid).first()) as { generation: number }).generation));
  return out;
}

describeMysql('placement bookkeeping [mariadb]', () => {
  let d: TestDeployment;
  afterEach(async () => {
    await d.cleanup();
  });

  it('cleanup_providers: the re-key bumps each moved consumer\'s generation once; undo restores them', async () => {
    d = await createTestDeployment('mysql', 'stale-provider', 'pg');
    const S = STALE_PROVIDER;
    const consumers = [S.server.uuid, S.orphan.uuid];
    const before = await consumerGenerations(d, consumers);
    const journal = join(d.dir, 'providers.jsonl');
    const r = await runBin([...d.args, 'placement', 'cleanup_providers', '--apply', '--journal', journal]);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.stdout).toContain(`resource provider ${S.withAllocations.staleUuid}`);
    expect(r.stdout).toContain(`re-key it to that uuid`);
    expect(await consumerGenerations(d, consumers)).toEqual(before.map((g) => g + 1));
    const undo = await runBin([...d.args, 'undo', journal, '--apply']);
    expect(undo.code, undo.stdout + undo.stderr).toBe(4);
    expect(await consumerGenerations(d, consumers)).toEqual(before);
  }, 60_000);

  it('placement audit --delete: the provider that lost an orphan\'s allocations has its generation bumped', async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'pg');
    const placement = d.knex('placement');
    const rp = (await placement('resource_providers').where('name', libvirtHypervisorHostname('compute-3')).first()) as { id: number; generation: number };
    await insertConsumer(placement, { uuid: ORPHAN, projectId: 'p', userId: 'u' });
    await insertAllocations(placement, [{ providerId: Number(rp.id), consumerUuid: ORPHAN, resourceClass: 'VCPU', used: 1 }]);
    const r = await runBin([...d.args, 'placement', 'audit', '--delete']);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const after = (await placement('resource_providers').where('id', rp.id).first()) as { generation: number };
    expect(Number(after.generation)).toBe(Number(rp.generation) + 1);
    expect(await placement('consumers').where('uuid', ORPHAN)).toEqual([]);
  }, 60_000);

  it('placement audit --help and the man page say that --delete bumps the generation where nova-manage does not (issue 40 item 7)', async () => {
    const help = await runBin(['placement', 'audit', '--help']);
    expect(help.code).toBe(0);
    const differences = help.stdout.slice(help.stdout.indexOf('Deliberate differences from nova-manage:'));
    expect(differences.replace(/\s+/g, ' ')).toContain("--delete bumps the generation of each provider that lost allocations (a compare-and-swap, journaled, restored by undo); nova-manage's DELETE and PUT leave it alone.");
    const man = readFileSync(new URL('../../man/nova-reconcile.1', import.meta.url), 'utf8');
    expect(man).toContain("bumps the generation of each provider that lost allocations");
  });
});
