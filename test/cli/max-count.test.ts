// --max-count on the plan commands: the first N units of the plan, the rest
// left for the next run; bad values refused before any database is touched.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';

interface PlanDoc {
  readonly units: ReadonlyArray<{ readonly id: string }>;
  readonly applied?: readonly string[];
  readonly deferred_units: number;
}

describeEachDialect('--max-count', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'stale-provider', 'mc');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  const run = async (...extra: string[]): Promise<{ code: number; doc: PlanDoc; stderr: string }> => {
    const r = await runBin([...d.args, 'placement', 'cleanup_providers', '--format', 'json', ...extra]);
    if (!r.stdout.startsWith('{')) throw new Error(`no JSON (exit ${r.code}): ${r.stderr}`);
    return { code: r.code, doc: JSON.parse(r.stdout) as PlanDoc, stderr: r.stderr };
  };

  it('takes the plan one unit at a time: 4, 4, then 0; the units are the full plan in order', async () => {
    const full = await run();
    expect(full.code).toBe(3);
    expect(full.doc.units).toHaveLength(2);
    expect(full.doc.deferred_units).toBe(0);
    const ids = full.doc.units.map((u) => u.id);

    const before = await snapshotDeployment(d);
    const dry = await runBin([...d.args, 'placement', 'cleanup_providers', '--max-count', '1']);
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain('placement cleanup_providers: 1 unit(s)');
    expect(dry.stdout).toContain('1 more unit(s) left for a later run (--max-count 1).');
    expect(await snapshotDeployment(d)).toEqual(before);

    const first = await run('--apply', '--max-count', '1');
    expect([first.code, first.doc.applied, first.doc.deferred_units]).toEqual([4, [ids[0]], 1]);
    const second = await run('--apply', '--max-count', '1');
    expect([second.code, second.doc.applied, second.doc.deferred_units]).toEqual([4, [ids[1]], 0]);
    const third = await run('--apply', '--max-count', '1');
    expect([third.code, third.doc.units, third.doc.deferred_units]).toEqual([0, [], 0]);
  });

  it.each(['0', '-1', '1.5', 'abc', '1e3', ''])('refuses --max-count %j with 127, one line, nothing changed', async (value) => {
    const before = await snapshotDeployment(d);
    for (const command of [['placement', 'cleanup_providers'], ['compute_node', 'cleanup_orphans'], ['compute_node', 'rebalance']]) {
      const r = await runBin([...d.args, ...command, '--apply', `--max-count=${value}`]);
      expect(r.code, `${command.join(' ')}: ${r.stderr}`).toBe(127);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain('--max-count must be a positive integer');
      expect(r.stdout).toBe('');
    }
    expect(await snapshotDeployment(d)).toEqual(before);
  });
});
