// The Galera tier's cases, shared by the fast subset (test/galera/galera-fast.test.ts,
// in `npm test`) and the full tier (test/galera/galera.test.ts, `npm run test:galera`).
// One 3-node cluster per file; the cases run in order on one deployment.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { runAndSignal } from '../helpers/signal.js';
import { readJournal } from '../../src/operations/journal.js';
import { createGaleraDeployment, describeGalera, type GaleraDeployment } from './deployment.js';

export type GaleraCase = 'two-applies' | 'undo-elsewhere' | 'writers' | 'kill-node' | 'non-primary' | 'kill-run';

const ORPHANS = 60;
const CLEANUP = ['compute_node', 'cleanup_orphans', '--apply'];

/** Figures for docs/RELIABILITY.md, printed at the end of the file. */
const figures: string[] = [];

export function galeraSuite(name: string, cases: readonly GaleraCase[]): void {
  describeGalera(name, () => {
    let g: GaleraDeployment;
    beforeAll(async () => {
      const t0 = Date.now();
      g = await createGaleraDeployment(ORPHANS, (line) => console.log(line));
      figures.push(`cluster + deployment ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }, 400_000);
    afterAll(async () => {
      console.log(`[galera figures] ${figures.join('; ')}`);
      await g?.cleanup();
    });

    const journal = (label: string) => join(g.f.d.dir, `${label}.jsonl`);
    const unitsOf = (path: string): string[] => (existsSync(path) ? [...new Set(readJournal(path, { allowTruncatedTail: true }).changes.map((c) => c.unit))] : []);
    const liveOrphans = async (): Promise<number> => {
      const rows = (await g.f.d.knex('cell1')('compute_nodes').where('deleted', 0).whereIn('uuid', [...g.f.orphanNodes]).count({ n: '*' })) as Array<{ n: number }>;
      return Number(rows[0]?.n);
    };
    /** The same orphan rows, read through each live node: Galera must agree. */
    const nodesAgree = async (): Promise<void> => {
      const cellDb = new URL(g.f.d.url('cell1').replace(/^mysql\+pymysql:/, 'mysql:')).pathname.slice(1);
      const seen: string[] = [];
      for (const n of g.cluster.nodes.filter((x) => !x.exited)) {
        const conn = await createConnection({ host: '127.0.0.1', port: n.port, user: 'root', database: cellDb });
        try {
          await conn.query('SET SESSION wsrep_sync_wait = 1');
          const [rows] = await conn.query('SELECT uuid, deleted FROM compute_nodes ORDER BY id');
          seen.push(JSON.stringify(rows));
        } finally {
          await conn.end();
        }
      }
      expect(new Set(seen).size, 'every node holds the same compute_nodes').toBe(1);
    };

    if (cases.includes('two-applies'))
      it('two applies through two nodes at once: one applies, the other waits for the lease and finds nothing left; every unit once', async () => {
        const [a, b] = await Promise.all([runBin([...g.args(2), ...CLEANUP, '--journal', journal('a')], { timeoutMs: 300_000 }), runBin([...g.args(3), ...CLEANUP, '--journal', journal('b')], { timeoutMs: 300_000 })]);
        const codes = [a.code, b.code].sort();
        expect(codes, `A: ${a.stderr}\nB: ${b.stderr}`).toEqual([0, 4]);
        const units = [...unitsOf(journal('a')), ...unitsOf(journal('b'))];
        expect(new Set(units).size).toBe(units.length);
        expect(units.length).toBe(ORPHANS);
        expect(a.stdout + b.stdout).not.toMatch(/SKIPPED/);
        expect(await liveOrphans()).toBe(0);
        expect(await checkAll()).toEqual([]);
        await nodesAgree();
        figures.push(`two applies via nodes 2 and 3: exits ${codes.join('/')}, ${units.length} units applied once, 0 violations`);
      });

    if (cases.includes('undo-elsewhere'))
      it('a journal written through one node is undone through another; a third node sees the rows back', async () => {
        const applied = [journal('a'), journal('b')].find((p) => unitsOf(p).length > 0) ?? journal('u0');
        if (!existsSync(applied)) {
          const r = await runBin([...g.args(2), ...CLEANUP, '--journal', applied], { timeoutMs: 300_000 });
          expect(r.code, r.stderr).toBe(4);
        }
        const undo = await runBin([...g.args(1), 'undo', applied, '--apply', '--journal', journal('undo')], { timeoutMs: 300_000 });
        expect(undo.code, undo.stderr).toBe(4);
        expect(undo.stderr).not.toMatch(/another deployment/);
        expect(await liveOrphans()).toBe(ORPHANS);
        expect(await checkAll()).toEqual([]);
        await nodesAgree();
        figures.push(`undo through node 1 of a journal written through node ${applied === journal('a') ? 2 : 3}: ${ORPHANS} units restored`);
      });

    if (cases.includes('writers'))
      it('an apply while nova-compute-like writers commit through another node: changed rows are skipped, never overwritten', async () => {
        if ((await liveOrphans()) === 0) await runBin([...g.args(1), 'undo', journal('a'), '--apply', '--journal', journal('undo-w')]);
        // The writers bump providers' generations through node 3, as nova-compute's
        // inventory updates do through placement-api, each a compare-and-swap of its own.
        const subset = [...g.f.orphanNodes].slice(0, 15);
        const placementDb = new URL(g.f.d.url('placement').replace(/^mysql\+pymysql:/, 'mysql:')).pathname.slice(1);
        const writer = await createConnection({ host: '127.0.0.1', port: g.cluster.nodes[2]!.port, user: 'root', database: placementDb });
        await writer.query('SET SESSION wsrep_sync_wait = 1');
        const [startRows] = await writer.query('SELECT uuid, generation FROM resource_providers WHERE uuid IN (?)', [subset]);
        const last = new Map((startRows as Array<{ uuid: string; generation: number }>).map((r) => [r.uuid, Number(r.generation)]));
        const gone = new Set<string>();
        let stop = false;
        let writes = 0;
        let certificationFailures = 0;
        const loop = (async () => {
          while (!stop) {
            for (const uuid of subset) {
              if (gone.has(uuid)) continue;
              const gen = last.get(uuid)!;
              try {
                const [res] = await writer.query('UPDATE resource_providers SET generation = ? WHERE uuid = ? AND generation = ?', [gen + 1, uuid, gen]);
                if ((res as { affectedRows: number }).affectedRows === 1) {
                  last.set(uuid, gen + 1);
                  writes += 1;
                } else gone.add(uuid);
              } catch (err) {
                if ((err as { errno?: number }).errno !== 1213) throw err;
                certificationFailures += 1;
              }
            }
            await new Promise((r) => setTimeout(r, 20));
          }
        })();
        await new Promise((r) => setTimeout(r, 300));
        const r = await runBin([...g.args(2), ...CLEANUP, '--journal', journal('w')], { timeoutMs: 300_000 });
        stop = true;
        await loop;
        await writer.end();
        expect([4, 5], r.stderr).toContain(r.code);
        // Never overwritten: a provider the apply deleted was deleted from the
        // generation the writers had left last (their later update found no row).
        const overwritten: string[] = [];
        for (const c of readJournal(journal('w'), { allowTruncatedTail: true }).changes)
          for (const row of c.rows) {
            const before = row.before as Record<string, unknown> | null;
            if (row.table !== 'resource_providers' || row.after !== null || before === null) continue;
            const uuid = String(before['uuid']);
            if (last.has(uuid) && last.get(uuid)! > Number(before['generation'])) overwritten.push(`${uuid}: deleted at generation ${String(before['generation'])}, writers had reached ${last.get(uuid)}`);
          }
        expect(overwritten).toEqual([]);
        const skipped = (r.stdout.match(/SKIPPED/g) ?? []).length;
        expect(await checkAll([journal('w')])).toEqual([]);
        // Once the writers stop, a re-run through yet another node finishes, and a third finds nothing.
        const again = await runBin([...g.args(1), ...CLEANUP, '--journal', journal('w2')], { timeoutMs: 300_000 });
        expect([0, 4], again.stderr).toContain(again.code);
        const third = await runBin([...g.args(3), ...CLEANUP, '--journal', journal('w3')], { timeoutMs: 300_000 });
        expect(third.code, third.stderr).toBe(0);
        expect(await liveOrphans()).toBe(0);
        await nodesAgree();
        figures.push(`apply via node 2 beside a writer via node 3: exit ${r.code}, ${writes} writer commits (${certificationFailures} certification failures), ${skipped} unit(s) skipped, 0 rows overwritten; re-run exit ${again.code}`);
      });

    if (cases.includes('kill-node'))
      it("SIGKILL of the apply's node mid-run: exit 2 in one line, then a re-run through another node converges", async () => {
        // Undo what the previous cases applied, newest journal first.
        for (const p of [journal('w2'), journal('w')]) {
          if (unitsOf(p).length === 0) continue;
          const u = await runBin([...g.args(1), 'undo', p, '--apply', '--journal', `${p}.undo`], { timeoutMs: 300_000 });
          // The writer run's skipped units left a provider the writers bumped
          // afterwards: undo refuses those rows as changed since (exit 5), rightly.
          expect([4, 5], `${u.stdout}\n${u.stderr}`).toContain(u.code);
          if (u.code === 5) expect(u.stdout, u.stdout).toMatch(/changed since the journaled run/);
        }
        const before = await liveOrphans();
        expect(before).toBeGreaterThan(10);
        const jk = journal('k');
        const run = runBin([...g.args(3), ...CLEANUP, '--journal', jk], { timeoutMs: 300_000 });
        const deadline = Date.now() + 120_000;
        while (Date.now() < deadline && (!existsSync(jk) || readFileSync(jk, 'utf8').split('\n').length < 12)) await new Promise((r) => setTimeout(r, 5));
        await g.cluster.kill(3);
        const killed = await run;
        expect(killed.code, killed.stderr).toBe(2);
        expect(killed.stderr.trim().split('\n').filter((l) => !/^(hint|journal|nova-reconcile: journal)/i.test(l)).length).toBeLessThanOrEqual(2);
        // The survivors stall until they evict node 3 (evs.suspect_timeout);
        // an operator's re-run in that window times out connecting (exit 2).
        const evicted = await g.cluster.waitForSize(1, 2);
        const t0 = Date.now();
        const rerun = await runBin([...g.args(1), ...CLEANUP, '--journal', journal('k2')], { timeoutMs: 300_000 });
        const waited = (Date.now() - t0) / 1000;
        expect([0, 4], rerun.stderr).toContain(rerun.code);
        const third = await runBin([...g.args(2), ...CLEANUP, '--journal', journal('k3')], { timeoutMs: 300_000 });
        expect(third.code, third.stderr).toBe(0);
        expect(await liveOrphans()).toBe(0);
        expect(await checkAll([jk, journal('k2')])).toEqual([]);
        await nodesAgree();
        figures.push(`SIGKILL of node 3 after ${unitsOf(jk).length} unit(s): exit 2; node 3 evicted after ${evicted.toFixed(1)} s; re-run via node 1 (waited ${waited.toFixed(1)} s for the dead run's lease) exit ${rerun.code}; 0 violations`);
      });

    if (cases.includes('kill-run'))
      it('SIGKILL of an apply mid-run: a re-run through another node started at once, with the default lock_timeout (10 s, shorter than the 20 s lease), waits out the dead run\'s lease and converges (issue 40 item 5)', async () => {
        const before = await liveOrphans();
        expect(before).toBeGreaterThan(10);
        // The default lock_timeout, not the 120 s of the tier's nova.conf (a later --config-file overrides an earlier one).
        const defaults = join(g.f.d.dir, 'lock-timeout-default.conf');
        writeFileSync(defaults, '[nova_reconcile]\nlock_timeout = 10\n');
        const jk = journal('kr');
        const killed = await runAndSignal([...g.args(2), ...CLEANUP, '--journal', jk], jk, 12, 'SIGKILL');
        expect(killed.signal, killed.stderr).toBe('SIGKILL');
        const t0 = Date.now();
        const rerun = await runBin([...g.args(1), '--config-file', defaults, ...CLEANUP, '--journal', journal('kr2')], { timeoutMs: 300_000 });
        const waited = (Date.now() - t0) / 1000;
        expect([0, 4], rerun.stderr).toContain(rerun.code);
        expect(rerun.stderr).not.toMatch(/another run holds the lock/);
        // It waited past lock_timeout, for the killed run's lease.
        expect(waited).toBeGreaterThan(10);
        const third = await runBin([...g.args(3), '--config-file', defaults, ...CLEANUP, '--journal', journal('kr3')], { timeoutMs: 300_000 });
        expect(third.code, third.stderr).toBe(0);
        expect(await liveOrphans()).toBe(0);
        expect(await checkAll([jk, journal('kr2')])).toEqual([]);
        await nodesAgree();
        figures.push(`SIGKILL of an apply through node 2 after ${unitsOf(jk).length} unit(s); re-run via node 1 with lock_timeout 10 waited ${waited.toFixed(1)} s for the dead run's lease, exit ${rerun.code}; 0 violations`);
      });

    if (cases.includes('non-primary'))
      it('a node that has left the cluster (non-Primary) is refused in one line, exit 2', async () => {
        await g.cluster.isolate(2);
        const r = await runBin([...g.args(2), ...CLEANUP, '--journal', journal('np')], { timeoutMs: 120_000 });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(/WSREP has not yet prepared node for application use/);
        expect(r.stdout).toBe('');
        expect(existsSync(journal('np'))).toBe(false);
        figures.push(`non-Primary node 2 refused: ${r.stderr.split('\n')[0]}`);
      });

    async function checkAll(journals: readonly string[] = [journal('a'), journal('b')]): Promise<string[]> {
      const { checkInvariants } = await import('../faults/helpers.js');
      return checkInvariants(g.f, journals);
    }
  });
}
