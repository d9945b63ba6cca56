// The apply lock: while another session holds it, a mutating run waits
// [nova_reconcile] lock_timeout and then exits 2 with "safe to retry",
// changing nothing.
import knexFactory from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { mysqlKnex } from '../helpers/mysql.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { mysqlLockName } from '../../src/db/locks.js';
import { APPLY_LOCK } from '../../src/operations/apply-plan.js';

describeEachDialect('apply lock', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'lk');
    await d.knex('cell1')('services').update({ deleted: d.knex('cell1').raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('host', 'compute-3');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('a held lock makes --apply exit 2 with "safe to retry" and change nothing', async () => {
    const release = await holdLock(d);
    try {
      const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply'], { env: { OS_NOVA_RECONCILE__LOCK_TIMEOUT: '1' } });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/another run holds the lock .*safe to retry/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      await release();
    }
    const live = await d.knex('cell1')('compute_nodes').where('deleted', 0);
    expect(live).toHaveLength(3);
    // Once the lock is free the same command applies.
    expect((await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply'])).code).toBe(4);
  });

  it('two applies at once: one applies, the other then finds nothing to do (nothing applied twice)', async () => {
    const [a, b] = await Promise.all([
      runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']),
      runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']),
    ]);
    expect([a.code, b.code].sort()).toEqual([0, 4]);
    const deleted = await d.knex('cell1')('compute_nodes').whereNot('deleted', 0);
    expect(deleted).toHaveLength(1);
  });
});

async function holdLock(d: TestDeployment): Promise<() => Promise<void>> {
  if (d.dialect === 'mysql') {
    const dbName = /\/([^/?]+)(\?|$)/.exec(d.url('api'))?.[1] ?? '';
    const k = mysqlKnex(dbName);
    const conn: unknown = await k.client.acquireConnection();
    const name = mysqlLockName(APPLY_LOCK, dbName);
    const got = (await k.raw('SELECT GET_LOCK(?, 10) AS got', [name]).connection(conn)) as Array<Array<{ got: number }>>;
    if (got[0]?.[0]?.got !== 1) throw new Error(`the test could not take the lock ${name}`);
    return async () => {
      await k.raw('SELECT RELEASE_LOCK(?)', [name]).connection(conn);
      await k.client.releaseConnection(conn);
      await k.destroy();
    };
  }
  const apiFile = d.url('api').replace(/^sqlite:\/\/\//, '');
  const k = knexFactory({ client: 'better-sqlite3', connection: { filename: `${apiFile}.${APPLY_LOCK}.lock` }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
  await k.raw('BEGIN IMMEDIATE');
  return async () => {
    await k.raw('ROLLBACK');
    await k.destroy();
  };
}
