// Ctrl-C and SIGTERM while placement heal_allocations writes: no instance is
// written after the signal, the one in flight finishes, a summary on stderr
// says how many were healed, where the journal is and how to undo it, and the
// exit code is 130 / 143. The rows agree with the journal, the undo printed
// in the summary restores every table, and a re-run heals the rest.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { checksumMysqlDatabases, mysqlDatabaseOf } from '../helpers/db-checksum.js';
import { describeMysql } from '../helpers/mysql.js';
import { runAndSignal } from '../helpers/signal.js';
import { createTestDeployment, generateTestCloud, type DbName, type TestDeployment } from '../helpers/test-deployment.js';
import { readJournal } from '../../src/operations/journal.js';

const INSTANCES = 200;
const DBS: readonly DbName[] = ['api', 'cell1', 'cell2', 'placement'];

describeMysql('Ctrl-C and SIGTERM during placement heal_allocations', () => {
  let d: TestDeployment;
  let names: string[];
  let lost: Record<string, string>;
  beforeEach(async () => {
    d = await createTestDeployment('mysql', 'empty', 'hint');
    // Half of them in each of the two cells.
    const cloud = await generateTestCloud(d, { hostsPerCell: INSTANCES / 2, instancesPerCell: INSTANCES / 2 });
    expect(cloud.instances).toBe(INSTANCES);
    // Every instance's allocations lost (a placement database restored from an old backup, say).
    const p = d.knex('placement');
    await p('allocations').delete();
    await p('consumers').delete();
    names = DBS.map((n) => mysqlDatabaseOf(d.url(n)));
    lost = { ...(await checksumMysqlDatabases(names)) };
  }, 120_000);
  afterEach(async () => {
    await d?.cleanup();
  });

  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${sig}: the instance in flight finishes, none after it; the summary's count, journal and undo agree with the rows; exit ${code}`, async () => {
      const journal = join(d.dir, `heal-${sig}.jsonl`);
      const r = await runAndSignal([...d.args, 'placement', 'heal_allocations', '--verbose', '--journal', journal], journal, 40, sig);
      expect(r.signal, r.stderr).toBeNull();
      expect(r.code, r.stderr).toBe(code);
      const summary = new RegExp(`^nova-reconcile: interrupted by ${sig}: (\\d+) instance\\(s\\) healed, (\\d+) not started\\.$`, 'm').exec(r.stderr);
      expect(summary, r.stderr).not.toBeNull();
      const healed = Number(summary?.[1]);
      const notStarted = Number(summary?.[2]);
      expect(healed).toBeGreaterThan(0);
      expect(notStarted).toBeGreaterThan(0);
      expect(healed + notStarted).toBe(INSTANCES);
      expect(r.stderr).toContain(`\n  journal: ${journal}\n`);
      expect(r.stderr).toContain('  to finish: run the same command again (it heals what is still missing).');
      // stdout: nova's line for each instance healed, and no closing line claiming a finished run.
      expect(r.stdout.split('\n').filter((l) => /^Successfully created allocations for instance /.test(l))).toHaveLength(healed);
      expect(r.stdout).not.toMatch(/Processed \d+ instances\./);

      // Every journaled write committed, one per instance healed, and placement holds exactly those consumers.
      const j = readJournal(journal);
      expect(j.changes.every((c) => j.committed.has(c.seq))).toBe(true);
      expect(j.changes).toHaveLength(healed);
      const consumers = (await d.knex('placement')('consumers').count({ n: '*' })) as Array<{ n: number | string }>;
      expect(Number(consumers[0]?.n)).toBe(healed);

      // The undo line, run as printed, gives back the state before the run.
      const undoLine = /^ {2}to undo what was healed: (.+)$/m.exec(r.stderr)?.[1] ?? 'false';
      expect(undoLine).toContain(`undo ${journal} --apply`);
      const undo = spawnSync('sh', ['-c', undoLine], { encoding: 'utf8', env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' } });
      expect(undo.status, undo.stderr).toBe(4);
      expect(await checksumMysqlDatabases(names)).toEqual(lost);

      // A run to the end heals every instance.
      const full = await runBin([...d.args, 'placement', 'heal_allocations']);
      expect(full.code, full.stderr).toBe(0);
      const after = (await d.knex('placement')('consumers').count({ n: '*' })) as Array<{ n: number | string }>;
      expect(Number(after[0]?.n)).toBe(INSTANCES);
    }, 120_000);
  }
});
