// compute_node rebalance through the built binary, on SQLite and MariaDB:
// the states of seed bug 1714248 (the 409 and the renamed provider), the
// allocation move with the in-use ironic exception, the re-key, undo, bad
// input, and a concurrent nova-compute re-homing the node mid-apply.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { mysqlKnex, describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { IRONIC_FAILOVER } from '../../src/sandbox/scenarios/ironic-failover.js';

const F = IRONIC_FAILOVER;
const N = F.nodeUuid;
const U2 = F.duplicateUuid;
const I = F.server.uuid;
const [DEAD, LIVE] = F.hosts;
const TABLES = {
  cell1: ['compute_nodes', 'instances', 'services'],
  placement: ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_provider_traits', 'resource_provider_aggregates'],
};

async function dump(k: Knex, tables: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows: Array<Record<string, unknown>> = await k(t).select('*');
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  }
  return out;
}

async function snapshotAll(d: TestDeployment): Promise<unknown> {
  return { cell1: await dump(d.knex('cell1'), TABLES.cell1), placement: await dump(d.knex('placement'), TABLES.placement) };
}

async function provider(d: TestDeployment, uuid: string): Promise<{ id: number; name: string; generation: number } | undefined> {
  return (await d.knex('placement')('resource_providers').where('uuid', uuid).first()) as { id: number; name: string; generation: number } | undefined;
}

/** The "done when", for the node of the scenario. */
async function expectRepaired(d: TestDeployment, providerUuid: string): Promise<void> {
  const live: Array<{ uuid: string; host: string }> = await d.knex('cell1')('compute_nodes').select('uuid', 'host').where({ hypervisor_hostname: N, deleted: 0 });
  expect(live).toEqual([{ uuid: providerUuid, host: LIVE }]);
  const dup = (await d.knex('cell1')('compute_nodes').where('uuid', providerUuid === N ? U2 : N).first()) as { id: number; deleted: number } | undefined;
  if (dup !== undefined) expect(Number(dup.deleted)).toBe(Number(dup.id));
  const rp = await provider(d, providerUuid);
  expect(rp?.name).toBe(N);
  const allocations: Array<{ resource_provider_id: number; used: number }> = await d.knex('placement')('allocations').select('resource_provider_id', 'used').where('consumer_id', I);
  expect(allocations.map((a) => [Number(a.resource_provider_id), Number(a.used)])).toEqual([[Number(rp?.id), 1]]);
  expect(await d.knex('placement')('resource_providers').where('name', N).andWhereNot('uuid', providerUuid)).toEqual([]);
  const inst = (await d.knex('cell1')('instances').where('uuid', I).first()) as { host: string; node: string };
  expect([inst.host, inst.node]).toEqual([LIVE, N]);
}

async function rerunIsClean(d: TestDeployment): Promise<void> {
  const again = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
  expect(again.code, again.stdout + again.stderr).toBe(0);
  expect(again.stdout).toContain('nothing to do');
}

describeEachDialect('compute_node rebalance', (dialect) => {
  let d: TestDeployment;
  afterEach(async () => {
    await d.cleanup();
  });

  describe('the 409 state', () => {
    beforeEach(async () => {
      d = await createTestDeployment(dialect, 'ironic-failover', 'rb');
    });

    it('plans, applies, converges, and undo restores every row', async () => {
      const before = await snapshotAll(d);
      const dry = await runBin([...d.args, 'compute_node', 'rebalance']);
      expect(dry.code).toBe(3);
      expect(dry.stdout).toContain('compute_node rebalance: 1 unit(s), 2 change(s), 0 refused.');
      expect(dry.stdout).toContain(`soft-delete compute node`);
      expect(dry.stdout).toContain(`re-home compute node 1 (${N}, ${N}) from host ${DEAD} to ${LIVE}`);
      // The instance moves in the re-home's own transaction.
      expect(dry.stdout).toMatch(new RegExp(`re-home compute node 1 \\(${N}, ${N}\\) from host ${DEAD} to ${LIVE} \\(service \\d+\\), with instance ${I}`));
      expect(dry.stdout).not.toContain(`move instance ${I}`);
      expect(await snapshotAll(d)).toEqual(before);
      const rpBefore = await provider(d, N);

      const journal = join(d.dir, 'rebalance.jsonl');
      const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply', '--journal', journal, '--format', 'json']);
      expect(applied.code, applied.stderr).toBe(4);
      expect(JSON.parse(applied.stdout)).toMatchObject({ changed: true, skipped: [], refused: [], applied: [`rebalance:${d.dbs.cellUuids.cell1}:${N}`] });
      await expectRepaired(d, N);
      // Placement needed no change: the provider is untouched.
      expect(await provider(d, N)).toEqual(rpBefore);
      const cn = (await d.knex('cell1')('compute_nodes').where('uuid', N).first()) as { service_id: number; updated_at: string };
      const svc = (await d.knex('cell1')('services').where('host', LIVE).first()) as { id: number };
      expect(Number(cn.service_id)).toBe(Number(svc.id));
      const lines = readFileSync(journal, 'utf8').trim().split('\n');
      expect(lines.filter((l) => l.includes('"type":"commit"'))).toHaveLength(2);
      await rerunIsClean(d);

      const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
      expect(undo.code, undo.stdout + undo.stderr).toBe(4);
      expect(await snapshotAll(d)).toEqual(before);
    });

    it('refuses a node with two live instances and changes nothing', async () => {
      const cell = d.knex('cell1');
      const row = (await cell('instances').where('uuid', I).first()) as Record<string, unknown>;
      await cell('instances').insert({ ...row, id: undefined, uuid: 'a1b2c3d4-0000-4000-8000-00000000aaaa', reservation_id: 'r-second' });
      const before = await snapshotAll(d);
      const r = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
      // Every unit refused, nothing written: 3 (issue 13.4), the refusal listed.
      expect(r.code).toBe(3);
      expect(r.stdout).toContain('2 live instances are on it');
      expect(await snapshotAll(d)).toEqual(before);
    });

    it('refuses the whole plan when placement is unreachable, before any cell write', async () => {
      const before = await snapshotAll(d);
      const conf = join(d.dir, 'no-placement.conf');
      writeFileSync(conf, readFileSync(d.confPath, 'utf8').replace(/\[placement_database\]\nconnection = .*/, '[placement_database]\nconnection = mysql+pymysql://root@127.0.0.1:1/placement'));
      const r = await runBin(['--config-file', conf, 'compute_node', 'rebalance', '--apply']);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/placement database/);
      expect(await snapshotAll(d)).toEqual(before);
    });
  });

  describe('the renamed-provider state', () => {
    beforeEach(async () => {
      d = await createTestDeployment(dialect, 'ironic-failover-renamed', 'rr');
    });

    it("deletes the empty duplicate provider, gives U1's provider its name back, and converges", async () => {
      const dry = await runBin([...d.args, 'compute_node', 'rebalance']);
      expect(dry.code).toBe(3);
      expect(dry.stdout).toContain(`delete resource provider ${U2} (${N})`);
      expect(dry.stdout).toContain(`rename resource provider ${N} from ${F.renamedProviderName} to ${N}`);
      const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
      expect(applied.code, applied.stdout + applied.stderr).toBe(4);
      await expectRepaired(d, N);
      expect(await provider(d, U2)).toBeUndefined();
      expect(await d.knex('placement')('inventories').where('resource_provider_id', 2)).toEqual([]);
      // A rename does not bump the generation.
      expect(Number((await provider(d, N))?.generation)).toBe(4);
      await rerunIsClean(d);
    });
  });

  describe('allocations on a stale provider', () => {
    beforeEach(async () => {
      // U1's row is gone (soft-deleted), its renamed provider still holds the allocation; U2 has an empty provider named after the node.
      d = await createTestDeployment(dialect, 'ironic-failover-renamed', 'rm');
      const cn = (await d.knex('cell1')('compute_nodes').where('uuid', N).first()) as { id: number };
      await d.knex('cell1')('compute_nodes').update({ deleted: cn.id, deleted_at: '2026-01-01 00:00:00' }).where('id', cn.id);
    });

    it('moves them onto the canonical provider under the in-use ironic exception, stated in the plan', async () => {
      const u2Before = await provider(d, U2);
      const dry = await runBin([...d.args, 'compute_node', 'rebalance']);
      expect(dry.code).toBe(3);
      expect(dry.stdout).toContain(`move the allocations of consumer ${I} (${F.resourceClass}=1) from provider ${N} to ${U2} [over capacity, allowed:`);
      expect(dry.stdout).toContain('the direct write allows exactly this case');
      const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
      expect(applied.code, applied.stdout + applied.stderr).toBe(4);
      await expectRepaired(d, U2);
      // Target provider and consumer generations + 1; the stale provider is gone with its inventory and traits.
      expect(Number((await provider(d, U2))?.generation)).toBe(Number(u2Before?.generation) + 1);
      const consumer = (await d.knex('placement')('consumers').where('uuid', I).first()) as { generation: number };
      expect(Number(consumer.generation)).toBe(2);
      expect(await provider(d, N)).toBeUndefined();
      expect(await d.knex('placement')('resource_provider_traits').where('resource_provider_id', 1)).toEqual([]);
      await rerunIsClean(d);
    });
  });

  describe('the canonical provider does not exist', () => {
    beforeEach(async () => {
      // U1's row is gone, U2 has no provider: U1's provider (named after the node) holds the allocation.
      d = await createTestDeployment(dialect, 'ironic-failover', 'rk');
      const cn = (await d.knex('cell1')('compute_nodes').where('uuid', N).first()) as { id: number };
      await d.knex('cell1')('compute_nodes').update({ deleted: cn.id, deleted_at: '2026-01-01 00:00:00' }).where('id', cn.id);
    });

    it('re-keys the stale provider to the canonical uuid; no allocation row moves', async () => {
      const allocBefore = await d.knex('placement')('allocations').where('consumer_id', I);
      const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply', '--format', 'json']);
      expect(applied.code, applied.stdout + applied.stderr).toBe(4);
      const doc = JSON.parse(applied.stdout) as { units: Array<{ changes: Array<{ kind: string }> }> };
      expect(doc.units[0]?.changes.map((c) => c.kind)).toEqual(['rekey-provider', 'move-instance']);
      await expectRepaired(d, U2);
      expect(await d.knex('placement')('allocations').where('consumer_id', I)).toEqual(allocBefore);
      expect(Number((await provider(d, U2))?.generation)).toBe(5);
      await rerunIsClean(d);
    });
  });
});

describeEachDialect('compute_node rebalance: bad input', (dialect) => {
  let d: TestDeployment;
  let before: unknown;
  beforeAll(async () => {
    d = await createTestDeployment(dialect, 'ironic-failover', 'rx');
    before = await snapshotAll(d);
  });
  afterAll(async () => {
    expect(await snapshotAll(d)).toEqual(before);
    await d.cleanup();
  });

  it.each([
    // --node takes a uuid or a hypervisor_hostname (the shared scope option): a name no node has is unknown.
    ['an unknown node name', ['--node', 'not-a-uuid'], /--node "not-a-uuid": no compute node, live or soft-deleted, has this uuid or hypervisor_hostname/],
    ['an unknown node uuid', ['--node', 'c0ffee00-0000-4000-8000-000000000000'], /--node "c0ffee00-0000-4000-8000-000000000000": no compute node, live or soft-deleted, has this uuid/],
    ['an unknown cell', ['--cell', 'c0ffee00-0000-4000-8000-000000000000'], /cell c0ffee00-0000-4000-8000-000000000000 has no mapping/],
    ['ring members that are not services', ['--ring-members', 'ironic-compute-1,nope'], /--ring-members: nope is not a nova-compute service/],
  ])('%s → exit 127, one line, no change', async (_name, args, message) => {
    const r = await runBin([...d.args, 'compute_node', 'rebalance', '--apply', ...args]);
    expect(r.code).toBe(127);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
  });

  it('--node selects the node (by its duplicate uuid too) without changing anything in a dry run', async () => {
    const r = await runBin([...d.args, 'compute_node', 'rebalance', '--node', U2]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('1 unit(s), 2 change(s)');
  });
});

// MariaDB only: SQLite has one writer per file, so a second writer cannot
// hold a row while the apply runs.
describeMysql('compute_node rebalance: a concurrent nova-compute [mariadb]', () => {
  const dialect = 'mysql' as const;
  let d: TestDeployment;
  beforeAll(async () => {
    d = await createTestDeployment(dialect, 'ironic-failover', 'rc');
  });
  afterAll(async () => {
    await d.cleanup();
  });

  it('a node re-homed by nova-compute while the plan is applied is skipped (exit 5), never overwritten', async () => {
    const admin = mysqlKnex();
    try {
      const cellDb = new URL(d.url('cell1').replace(/^mysql\+pymysql:/, 'mysql:')).pathname.slice(1);
      const run = await d.knex('cell1').transaction(async (trx) => {
        // nova-compute on ironic-compute-1 holds U1's row, as its resource tracker's save would.
        const [u1] = (await trx('compute_nodes').select('id').where('uuid', N).forUpdate()) as Array<{ id: number }>;
        const child = runBin([...d.args, 'compute_node', 'rebalance', '--apply', '--format', 'json']);
        let exited: { code: number; stdout: string; stderr: string } | undefined;
        void child.then((r) => (exited = r));
        // Wait until the apply is blocked on that row (it has retired U2 by then).
        const deadline = Date.now() + 120_000;
        for (;;) {
          if (exited !== undefined) throw new Error(`the apply ended without waiting for the row: exit ${exited.code}: ${exited.stdout}${exited.stderr}`);
          // The re-home's locking read of U1, blocked (INNODB_TRX does not list a transaction that holds no lock yet).
          const [rows] = (await admin.raw('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE db = ? AND info = ?', [
            cellDb,
            `select * from \`compute_nodes\` where \`id\` = ${Number(u1?.id)} for update`,
          ])) as [Array<{ n: number }>];
          if (Number(rows[0]?.n ?? 0) > 0) break;
          if (Date.now() > deadline) throw new Error('the apply never waited for the row');
          await new Promise((r) => setTimeout(r, 50));
        }
        await trx('compute_nodes').update({ host: LIVE, updated_at: '2026-06-01 12:00:00' }).where('uuid', N);
        // Boxed: a returned promise would keep the transaction open until the apply exits.
        return { child };
      });
      const r = await run.child;
      expect(r.code, r.stderr).toBe(5);
      const doc = JSON.parse(r.stdout) as { skipped: Array<{ reason: string; changes_applied: number }> };
      expect(doc.skipped).toHaveLength(1);
      expect(doc.skipped[0]?.reason).toContain(`moved from host ${DEAD} to ${LIVE}`);
      expect(doc.skipped[0]?.changes_applied).toBe(1);
      const cn = (await d.knex('cell1')('compute_nodes').where('uuid', N).first()) as { host: string; updated_at: string; service_id: number | null };
      expect([cn.host, cn.updated_at, cn.service_id]).toEqual([LIVE, '2026-06-01 12:00:00', null]);
      // The next run finishes the job: the instance follows its node.
      const next = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
      expect(next.code, next.stdout).toBe(4);
      expect(next.stdout).toContain(`move instance ${I}`);
      await expectRepaired(d, N);
      await rerunIsClean(d);
    } finally {
      await admin.destroy();
    }
  }, 240_000);
});
