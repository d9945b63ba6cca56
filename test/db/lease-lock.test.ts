// The lease lock that replaces GET_LOCK on a Galera cluster (src/db/lease-lock.ts),
// exercised on the plain MariaDB server: mutual exclusion, timeout with the
// holder named, takeover of a dead holder's expired lease (by the database's
// clock), and a lease lost mid-run reported. Across nodes: test/galera/.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { describeMysql, createScratchDatabases, type ScratchDatabases } from '../helpers/mysql.js';
import { LEASE_TABLE, withLeaseLock } from '../../src/db/lease-lock.js';
import { ReconcileError } from '../../src/errors.js';

describeMysql('lease lock [mariadb]', () => {
  let s: ScratchDatabases;
  let k: Knex;
  beforeAll(async () => {
    s = await createScratchDatabases('lease', ['api']);
    k = s.knex('api');
  });
  afterAll(async () => {
    await s?.drop();
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('two holders never overlap; the second waits for the first', async () => {
    const events: string[] = [];
    const hold = (who: string) =>
      withLeaseLock(k, { database: undefined, name: 'excl', timeoutSec: 10 }, async () => {
        events.push(`${who}+`);
        await sleep(600);
        events.push(`${who}-`);
      });
    await Promise.all([hold('a'), hold('b')]);
    expect(events.join(' ')).toMatch(/^(a\+ a- b\+ b-|b\+ b- a\+ a-)$/);
    const left = await k(LEASE_TABLE).where('name', 'excl').count({ n: '*' });
    expect(Number((left[0] as { n: number }).n)).toBe(0);
  });

  it('a run that cannot get it within lock_timeout gets "another run holds the lock", naming the holder', async () => {
    let err: unknown;
    await withLeaseLock(k, { database: undefined, name: 'busy', timeoutSec: 5 }, async () => {
      err = await withLeaseLock(k, { database: undefined, name: 'busy', timeoutSec: 1 }, async () => 'got it').catch((e: unknown) => e);
    });
    expect(err).toBeInstanceOf(ReconcileError);
    expect((err as ReconcileError).kind).toBe('lock');
    expect((err as ReconcileError).message).toMatch(/another run holds the lock "busy" \(a lease in `nova_reconcile_locks`, held by .* run [0-9a-f]{8}, lease expires in \d+ s unless renewed; waited 1 s\); safe to retry/);
  });

  it("a dead holder's lease is taken over once it expires by the database's clock, not before", async () => {
    await k.raw(`INSERT INTO ${LEASE_TABLE} (name, owner, holder, taken_at, expires_at) VALUES ('dead', 'x', 'killed run', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 2 SECOND)`);
    const t0 = Date.now();
    await withLeaseLock(k, { database: undefined, name: 'dead', timeoutSec: 10 }, async () => undefined);
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(1500);
    expect(waited).toBeLessThan(5000);
  });

  it('a dead holder whose lease outlives lock_timeout is waited out: the wait extends to its expiry (issue 40 item 5)', async () => {
    // A killed run's lease: taken, renewed twice, then nothing (its expiry 4 s away, beyond the waiting run's lock_timeout of 1 s).
    await k.raw(`INSERT INTO ${LEASE_TABLE} (name, owner, holder, taken_at, expires_at, renewals) VALUES ('killed', 'x', 'killed run', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 4 SECOND, 2)`);
    const t0 = Date.now();
    await withLeaseLock(k, { database: undefined, name: 'killed', timeoutSec: 1, renewEveryMs: 300 }, async () => undefined);
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(3000);
    expect(waited).toBeLessThan(7000);
    expect(await k(LEASE_TABLE).where('name', 'killed').first()).toBeUndefined();
  });

  it('a holder that renews is alive: the wait ends at lock_timeout and the message says it is renewing', async () => {
    await withLeaseLock(k, { database: undefined, name: 'alive', timeoutSec: 5, leaseSeconds: 3, renewEveryMs: 200 }, async () => {
      const t0 = Date.now();
      const err = await withLeaseLock(k, { database: undefined, name: 'alive', timeoutSec: 2, renewEveryMs: 200 }, async () => 'got it').catch((e: unknown) => e);
      expect(Date.now() - t0).toBeLessThan(3500);
      expect((err as ReconcileError).message).toMatch(/another run holds the lock "alive" \(a lease in `nova_reconcile_locks`, held by .* run [0-9a-f]{8}, which is renewing it, lease expires in \d+ s unless renewed; waited 2 s\); safe to retry/);
    });
  });

  it('the holder renews its lease while it runs, so a long run keeps it', async () => {
    await withLeaseLock(k, { database: undefined, name: 'long', timeoutSec: 5, leaseSeconds: 2, renewEveryMs: 300 }, async () => {
      await sleep(3000);
      const err = await withLeaseLock(k, { database: undefined, name: 'long', timeoutSec: 0 }, async () => undefined).catch((e: unknown) => e);
      expect((err as ReconcileError).message).toMatch(/another run holds the lock/);
    });
    const row = await k(LEASE_TABLE).where('name', 'long').first();
    expect(row).toBeUndefined();
  });

  it('a lease taken over mid-run is reported at the end (exit 2 "lost")', async () => {
    const err = await withLeaseLock(k, { database: undefined, name: 'stolen', timeoutSec: 5, renewEveryMs: 200 }, async () => {
      await k(LEASE_TABLE).where('name', 'stolen').update({ owner: 'someone-else' });
      await sleep(600);
    }).catch((e: unknown) => e);
    expect((err as ReconcileError).kind).toBe('lock');
    expect((err as ReconcileError).message).toMatch(/was lost during the run: another run took it over/);
  });
});
