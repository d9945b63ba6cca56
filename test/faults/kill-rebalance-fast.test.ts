// The fast subset of the rebalance SIGKILL campaign (test/faults/kill-rebalance.test.ts runs the full one).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeMysql } from '../helpers/mysql.js';
import { killSuite } from './kill-suite.js';
import { checkRebalanceInvariants, createRebalanceDeployment, rebalanceImage, rebalanceTarget, type RebalanceDeployment } from './rebalance-deployment.js';

killSuite('fault injection (fast): SIGKILL mid-rebalance', {
  kills: 3,
  rounds: 1,
  timeoutMs: 120_000,
  create: async () => rebalanceTarget(await createRebalanceDeployment(8, 'rbf')),
});

// The invariant checker itself: each half-applied state it must catch,
// written by hand into a small generated deployment, is reported.
describeMysql('rebalance fault invariants catch half-applied states', () => {
  let r: RebalanceDeployment;
  beforeAll(async () => {
    r = await createRebalanceDeployment(1, 'rbi');
  }, 120_000);
  afterAll(async () => {
    await r?.d.cleanup();
  });

  it('a clean deployment passes; a re-home without its instance, a retired node with its provider, an allocation without inventory, a lost allocation each fail', async () => {
    expect(await checkRebalanceInvariants(r, [])).toEqual([]);
    const cell = r.d.knex('cell1');
    const placement = r.d.knex('placement');
    const failover = r.nodes.find((n) => n.kind === 'failover');
    const renamed = r.nodes.find((n) => n.kind === 'renamed');
    if (failover === undefined || renamed === undefined) throw new Error('no generated nodes');
    const before = await rebalanceImage(r.d);

    // The node re-homed, its instance left behind.
    const dup = (await cell('compute_nodes').where('uuid', failover.u2).first()) as { id: number };
    await cell('compute_nodes').update({ deleted: dup.id, deleted_at: '2026-01-01 00:00:00' }).where('id', dup.id);
    await cell('compute_nodes').update({ host: r.liveHosts[0] }).where('uuid', failover.u1);
    expect((await checkRebalanceInvariants(r, [])).join('\n')).toMatch(/re-homed from .* but its instance .* is on/);
    await cell('compute_nodes').update({ host: r.deadHost }).where('uuid', failover.u1);
    await cell('compute_nodes').update({ deleted: 0, deleted_at: null }).where('id', dup.id);

    // A duplicate retired before its provider went (cell before placement).
    const dup2 = (await cell('compute_nodes').where('uuid', renamed.u2).first()) as { id: number };
    await cell('compute_nodes').update({ deleted: dup2.id, deleted_at: '2026-01-01 00:00:00' }).where('id', dup2.id);
    expect((await checkRebalanceInvariants(r, [])).join('\n')).toMatch(/soft-deleted while its provider remains/);
    await cell('compute_nodes').update({ deleted: 0, deleted_at: null }).where('id', dup2.id);

    // An allocation whose provider lost its inventory.
    const holder = (await placement('allocations').where('consumer_id', failover.instance).first()) as { resource_provider_id: number; resource_class_id: number };
    const inv = (await placement('inventories').where({ resource_provider_id: holder.resource_provider_id }).first()) as Record<string, unknown>;
    await placement('inventories').where('id', Number(inv['id'])).delete();
    expect((await checkRebalanceInvariants(r, [])).join('\n')).toMatch(/allocation\(s\) without the inventory/);
    await placement('inventories').insert(inv);

    // An allocation lost.
    const alloc = (await placement('allocations').where('consumer_id', renamed.instance).first()) as Record<string, unknown>;
    await placement('allocations').where('id', Number(alloc['id'])).delete();
    expect((await checkRebalanceInvariants(r, [])).join('\n')).toMatch(new RegExp(`consumer ${renamed.instance}: totals`));
    await placement('allocations').insert(alloc);

    expect(await checkRebalanceInvariants(r, [])).toEqual([]);
    expect(await rebalanceImage(r.d)).toEqual(before);
  }, 60_000);
});
