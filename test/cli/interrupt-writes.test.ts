// Ctrl-C and SIGTERM during the commands that write without a plan, one
// journaled transaction per item: placement heal_allocations (an instance's
// lost allocations written again) and placement audit --delete (an orphaned
// consumer's allocations deleted). No item is written after the signal, the
// one in flight finishes, a summary on stderr says how many were written,
// where the journal is and how to undo it, and the exit code is 130 / 143.
// The rows agree with the journal, the undo printed in the summary restores
// every table, and a re-run finishes the job.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { checksumMysqlDatabases, mysqlDatabaseOf } from '../helpers/db-checksum.js';
import { describeMysql } from '../helpers/mysql.js';
import { runAndSignal } from '../helpers/signal.js';
import { createTestDeployment, generateTestCloud, type DbName, type TestDeployment } from '../helpers/test-deployment.js';
import { readJournal } from '../../src/operations/journal.js';

/** Half of them in each of the two cells. */
const INSTANCES = 200;
const DBS: readonly DbName[] = ['api', 'cell1', 'cell2', 'placement'];

async function countOf(k: Knex, table: string): Promise<number> {
  const rows = (await k(table).count({ n: '*' })) as Array<{ n: number | string }>;
  return Number(rows[0]?.n);
}

interface Case {
  readonly name: string;
  readonly argv: readonly string[];
  /** Break the generated cloud so that the command has INSTANCES items to write. */
  readonly breakIt: (d: TestDeployment) => Promise<void>;
  /** The summary's count line, its two numbers captured. */
  readonly summary: (sig: string) => RegExp;
  readonly undoLabel: string;
  readonly finish: string;
  /** stdout's line for each item written (with --verbose). */
  readonly writtenLine: RegExp;
  /** The consumers in placement after `written` items were written. */
  readonly consumersAfter: (written: number) => number;
  /** Exit code of a run to the end. */
  readonly fullExit: number;
}

const CASES: readonly Case[] = [
  {
    name: 'placement heal_allocations',
    argv: ['placement', 'heal_allocations', '--verbose'],
    // Every instance's allocations lost (a placement database restored from an old backup, say).
    breakIt: async (d) => {
      await d.knex('placement')('allocations').delete();
      await d.knex('placement')('consumers').delete();
    },
    summary: (sig) => new RegExp(`^nova-reconcile: interrupted by ${sig}: (\\d+) instance\\(s\\) healed, (\\d+) not started\\.$`, 'm'),
    undoLabel: 'to undo what was healed',
    finish: '  to finish: run the same command again (it heals what is still missing).',
    writtenLine: /^Successfully created allocations for instance /,
    consumersAfter: (written) => written,
    fullExit: 0,
  },
  {
    name: 'placement audit --delete',
    argv: ['placement', 'audit', '--delete', '--verbose'],
    // Every instance deleted in Nova while its allocations stayed behind.
    breakIt: async (d) => {
      for (const cell of ['cell1', 'cell2'] as const) await d.knex(cell)('instances').update({ deleted: d.knex(cell).raw('??', ['id']), deleted_at: '2026-12-05 00:00:00' });
    },
    summary: (sig) => new RegExp(`^nova-reconcile: interrupted by ${sig}: the allocations of (\\d+) orphaned consumer\\(s\\) deleted, (\\d+) not started\\.$`, 'm'),
    undoLabel: 'to undo what was deleted',
    finish: '  to finish: run the same command again (it audits what is there now).',
    writtenLine: /^Deleted allocations for consumer UUID /,
    consumersAfter: (written) => INSTANCES - written,
    fullExit: 4,
  },
];

for (const c of CASES) {
  describeMysql(`Ctrl-C and SIGTERM during ${c.name}`, () => {
    let d: TestDeployment;
    let names: string[];
    let broken: Record<string, string>;
    beforeEach(async () => {
      d = await createTestDeployment('mysql', 'empty', 'iw');
      const cloud = await generateTestCloud(d, { hostsPerCell: INSTANCES / 2, instancesPerCell: INSTANCES / 2 });
      expect(cloud.instances).toBe(INSTANCES);
      await c.breakIt(d);
      names = DBS.map((n) => mysqlDatabaseOf(d.url(n)));
      broken = { ...(await checksumMysqlDatabases(names)) };
    }, 120_000);
    afterEach(async () => {
      await d?.cleanup();
    });

    for (const [sig, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      it(`${sig}: the item in flight finishes, none after it; the summary's count, journal and undo agree with the rows; exit ${code}`, async () => {
        const journal = join(d.dir, `${sig}.jsonl`);
        const r = await runAndSignal([...d.args, ...c.argv, '--journal', journal], journal, 40, sig);
        expect(r.signal, r.stderr).toBeNull();
        expect(r.code, r.stderr).toBe(code);
        const summary = c.summary(sig).exec(r.stderr);
        expect(summary, r.stderr).not.toBeNull();
        const written = Number(summary?.[1]);
        const notStarted = Number(summary?.[2]);
        expect(written).toBeGreaterThan(0);
        expect(notStarted).toBeGreaterThan(0);
        expect(written + notStarted).toBe(INSTANCES);
        expect(r.stderr).toContain(`\n  journal: ${journal}\n`);
        expect(r.stderr).toContain(c.finish);
        expect(r.stdout.split('\n').filter((l) => c.writtenLine.test(l))).toHaveLength(written);

        // Every journaled write committed, one per item written, and placement agrees.
        const j = readJournal(journal);
        expect(j.changes.every((x) => j.committed.has(x.seq))).toBe(true);
        expect(j.changes).toHaveLength(written);
        expect(await countOf(d.knex('placement'), 'consumers')).toBe(c.consumersAfter(written));

        // The undo line, run as printed, gives back the state before the run.
        const undoLine = new RegExp(`^ {2}${c.undoLabel}: (.+)$`, 'm').exec(r.stderr)?.[1] ?? 'false';
        expect(undoLine).toContain(`undo ${journal} --apply`);
        const undo = spawnSync('sh', ['-c', undoLine], { encoding: 'utf8', env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' } });
        expect(undo.status, undo.stderr).toBe(4);
        expect(await checksumMysqlDatabases(names)).toEqual(broken);

        // A run to the end writes every item.
        const full = await runBin([...d.args, ...c.argv]);
        expect(full.code, full.stderr).toBe(c.fullExit);
        expect(await countOf(d.knex('placement'), 'consumers')).toBe(c.consumersAfter(INSTANCES));
      }, 120_000);
    }
  });
}
