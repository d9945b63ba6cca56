// Ctrl-C and SIGTERM during an apply (issue 18 item 4): no unit starts after
// the signal, the units in flight finish, a summary says what was applied,
// where the journal is and how to undo it, and the exit code is 130 / 143.
// The undo command printed in the summary restores every table exactly, also
// when the undo itself is interrupted and run again as its summary says.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runAndSignal as applyAndSignal } from '../helpers/signal.js';
import { checksumMysqlDatabases, mysqlDatabaseOf } from '../helpers/db-checksum.js';
import { describeMysql } from '../helpers/mysql.js';
import type { DbName } from '../helpers/test-deployment.js';
import { createFaultDeployment, type FaultDeployment } from '../faults/helpers.js';
import { readJournal } from '../../src/operations/journal.js';

const ORPHANS = 400;
const DBS: readonly DbName[] = ['api', 'cell1', 'cell2', 'placement'];

describeMysql('Ctrl-C and SIGTERM during an apply', () => {
  let f: FaultDeployment;
  let names: string[];
  let before: Record<string, string>;
  beforeAll(async () => {
    f = await createFaultDeployment(ORPHANS, 0, 'int');
    names = DBS.map((n) => mysqlDatabaseOf(f.d.url(n)));
    before = { ...(await checksumMysqlDatabases(names)) };
  }, 180_000);
  afterAll(async () => {
    await f?.d.cleanup();
  });

  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${sig}: stops starting units, finishes those in flight, prints the summary, exits ${code}; the printed undo restores exactly`, async () => {
      const journal = join(f.d.dir, `interrupted-${sig}.jsonl`);
      const r = await applyAndSignal([...f.d.args, 'compute_node', 'cleanup_orphans', '--apply', '--journal', journal], journal, 40, sig);
      expect(r.signal, r.stderr).toBeNull();
      expect(r.code, r.stderr).toBe(code);
      const summary = new RegExp(`^nova-reconcile: interrupted by ${sig}: (\\d+) of ${ORPHANS} unit\\(s\\) applied, (\\d+) already done or skipped, (\\d+) not started\\.$`, 'm').exec(r.stderr);
      expect(summary, r.stderr).not.toBeNull();
      const applied = Number(summary?.[1]);
      const notStarted = Number(summary?.[3]);
      expect(applied).toBeGreaterThan(0);
      expect(notStarted).toBeGreaterThan(0);
      expect(applied + Number(summary?.[2]) + notStarted).toBe(ORPHANS);
      expect(r.stderr).toContain(`\n  journal: ${journal}\n`);
      expect(r.stderr).toContain('  to finish: run the same command again');
      expect(r.stderr).toContain(`nova-reconcile: ${sig}: no new unit is started; waiting for the units in flight`);
      // stdout still reports what was applied, unit by unit.
      expect(r.stdout).toMatch(new RegExp(`^applied ${applied} unit\\(s\\)`));

      // Every change in the journal committed (units in flight finished), and the rows agree with the count.
      const j = readJournal(journal);
      expect(j.changes.every((c) => j.committed.has(c.seq))).toBe(true);
      expect(new Set(j.changes.map((c) => c.unit)).size).toBe(applied);
      const cell = f.d.knex('cell1');
      const deleted = (await cell('compute_nodes').whereIn('uuid', [...f.orphanNodes]).whereNot('deleted', 0).count({ n: '*' })) as Array<{ n: number | string }>;
      expect(Number(deleted[0]?.n)).toBe(applied);

      // The undo line, run as printed.
      const undoLine = /^ {2}to undo what was applied: (.+)$/m.exec(r.stderr)?.[1];
      expect(undoLine).toContain(`undo ${journal} --apply`);
      expect(undoLine).toContain(`--config-file ${f.d.confPath}`);
      let finishLine = undoLine ?? 'false';
      if (sig === 'SIGINT') {
        // The undo is interrupted too: the change in flight finishes, the rest waits for a re-run.
        const undoJournal = join(f.d.dir, 'undo-interrupted.jsonl');
        const u = await applyAndSignal([...f.d.args, 'undo', journal, '--apply', '--journal', undoJournal], undoJournal, 20, 'SIGINT');
        expect(u.code, u.stderr).toBe(130);
        const told = /^nova-reconcile: interrupted by SIGINT: (\d+) change\(s\) restored, (\d+) not started\.$/m.exec(u.stderr);
        expect(told, u.stderr).not.toBeNull();
        expect(Number(told?.[1])).toBeGreaterThan(0);
        expect(Number(told?.[2])).toBeGreaterThan(0);
        const uj = readJournal(undoJournal);
        expect(uj.changes.every((c) => uj.committed.has(c.seq))).toBe(true);
        expect(uj.changes).toHaveLength(Number(told?.[1]));
        finishLine = /^ {2}to finish: (.+) \(rows already restored are left alone\)$/m.exec(u.stderr)?.[1] ?? 'false';
        expect(finishLine).toBe(undoLine);
      }
      const undo = spawnSync('sh', ['-c', finishLine], { encoding: 'utf8', env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' } });
      expect(undo.status, undo.stderr).toBe(4);
      expect(await checksumMysqlDatabases(names)).toEqual(before);
    }, 180_000);
  }
});
