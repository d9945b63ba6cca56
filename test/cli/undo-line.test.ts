// After an --apply that wrote something, stderr gives the command that undoes
// it, right after the apply's count, with the user's --config-file and
// --config-dir; the JSON document carries it as undo_command (issue 38).
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, dumpTables, type TestDeployment } from '../helpers/test-deployment.js';

/** The rows a rebalance writes (the cell's compute nodes and instances; placement's providers and allocations). */
const rows = async (d: TestDeployment): Promise<unknown> => ({
  cell1: await dumpTables(d.knex('cell1'), ['compute_nodes', 'instances']),
  placement: await dumpTables(d.knex('placement'), ['resource_providers', 'allocations', 'consumers']),
});

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describeEachDialect('the undo line after an apply', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'ironic-failover', 'ul');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('follows the count on stderr, keeps --config-file and --config-dir in order, and restores what the apply wrote when run as printed', async () => {
    const confDir = join(d.dir, 'nova.conf.d');
    mkdirSync(confDir);
    const args = [...d.args, '--config-dir', confDir];
    const before = await rows(d);
    const dry = await runBin([...args, 'compute_node', 'rebalance']);
    expect(dry.code).toBe(3);
    expect(dry.stderr).toBe('');

    const applied = await runBin([...args, 'compute_node', 'rebalance', '--apply']);
    expect(applied.code, applied.stderr).toBe(4);
    const journal = /^journal: (\S+)$/m.exec(applied.stderr)?.[1] ?? '';
    expect(journal).not.toBe('');
    expect(applied.stderr).toMatch(
      new RegExp(
        `^journal: ${escape(journal)}\\ndone 1/1 unit\\(s\\): 1 applied, 0 already done, 0 skipped\\n` +
          `undo: (?:nova-reconcile|\\S*node \\S+) --config-file ${escape(d.confPath)} --config-dir ${escape(confDir)} undo ${escape(journal)} --apply\\n$`,
      ),
    );
    expect(await rows(d)).not.toEqual(before);

    const undoLine = /^undo: (.+)$/m.exec(applied.stderr)?.[1] ?? 'false';
    const undo = spawnSync('sh', ['-c', undoLine], { encoding: 'utf8', env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' } });
    expect(undo.status, undo.stderr).toBe(4);
    expect(await rows(d)).toEqual(before);
  });

  it('--format json: undo_command is the same line; an apply that writes nothing prints none and says null', async () => {
    const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply', '--format', 'json']);
    expect(applied.code, applied.stderr).toBe(4);
    const doc = JSON.parse(applied.stdout) as { undo_command: string | null; journal: string };
    expect(`undo: ${doc.undo_command ?? ''}\n`).toBe(/^undo: .+\n/m.exec(applied.stderr)?.[0]);
    expect(doc.undo_command).toMatch(new RegExp(` --config-file ${escape(d.confPath)} undo ${escape(doc.journal)} --apply$`));

    const again = await runBin([...d.args, 'compute_node', 'rebalance', '--apply', '--format', 'json']);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(JSON.parse(again.stdout)).toMatchObject({ changed: false, journal: null, undo_command: null });
  });
});
