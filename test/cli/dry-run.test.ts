// --dry-run on every plan command (issue 38): the default without --apply,
// so it is accepted and changes nothing, the output the same as without it;
// with --apply it is a usage error in one line, before anything is read.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { IRONIC_FAILOVER } from '../../src/sandbox/scenarios/ironic-failover.js';

const [DEAD, LIVE] = IRONIC_FAILOVER.hosts;

/** Every plan command, with the arguments it needs to plan. */
const PLAN_COMMANDS: ReadonlyArray<readonly string[]> = [
  ['compute_node', 'cleanup_orphans', '--ironic-nodes', 'NODES'],
  ['placement', 'cleanup_providers'],
  ['compute_node', 'rebalance'],
  ['compute_node', 'move', '--from-host', DEAD, '--to-host', LIVE],
  ['compute_node', 'restore', '--uuid', IRONIC_FAILOVER.nodeUuid],
  ['cell_v2', 'prune_host_mappings'],
];

describeEachDialect('--dry-run on the plan commands', (dialect) => {
  let d: TestDeployment;
  beforeAll(async () => {
    d = await createTestDeployment(dialect, 'ironic-failover', 'dr');
    writeFileSync(join(d.dir, 'nodes.txt'), `${IRONIC_FAILOVER.nodeUuid}\n`);
  });
  /** The command line, with the ironic node list in the deployment's folder. */
  const line = (command: readonly string[], ...extra: string[]): string[] => [...d.args, ...command.map((a) => (a === 'NODES' ? join(d.dir, 'nodes.txt') : a)), ...extra];
  afterAll(async () => {
    await d.cleanup();
  });

  it.each(PLAN_COMMANDS.map((c) => [c.slice(0, 2).join(' '), c] as const))('%s --dry-run prints what the run without it prints, exits the same, and changes nothing', async (_name, command) => {
    const before = await snapshotDeployment(d);
    const plain = await runBin(line(command));
    const dry = await runBin(line(command, '--dry-run'));
    expect(dry.stderr).not.toContain('unknown option');
    expect({ code: dry.code, stdout: dry.stdout, stderr: dry.stderr }).toEqual({ code: plain.code, stdout: plain.stdout, stderr: plain.stderr });
    expect(await snapshotDeployment(d)).toEqual(before);
  });

  it.each(PLAN_COMMANDS.map((c) => [c.slice(0, 2).join(' '), c] as const))('%s --dry-run --apply is a usage error: exit 127, one line, nothing changed', async (_name, command) => {
    const before = await snapshotDeployment(d);
    for (const order of [['--dry-run', '--apply'], ['--apply', '--dry-run']]) {
      const r = await runBin(line(command, ...order));
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('nova-reconcile: error: --dry-run and --apply contradict each other: without --apply the plan is only printed (the dry run), with it the plan is applied\n');
      expect(r.code).toBe(127);
    }
    expect(await snapshotDeployment(d)).toEqual(before);
  });

  it('a plan written with --dry-run --plan-out applies with --plan-in --apply (--dry-run is not a plan option)', async () => {
    const file = join(d.dir, 'plan.json');
    const dry = await runBin([...d.args, 'compute_node', 'rebalance', '--dry-run', '--plan-out', file]);
    expect(dry.code).toBe(3);
    const apply = await runBin([...d.args, 'compute_node', 'rebalance', '--plan-in', file, '--apply']);
    expect(apply.stderr).not.toContain('error');
    expect(apply.code).toBe(4);
  });

  it('cell_v2 discover_hosts --remap takes --dry-run as its default; with --apply it is a usage error (exit 2, as discover_hosts\' other usage errors)', async () => {
    const before = await snapshotDeployment(d);
    const plain = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--remap']);
    const dry = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--remap', '--dry-run']);
    expect({ code: dry.code, stdout: dry.stdout, stderr: dry.stderr }).toEqual({ code: plain.code, stdout: plain.stdout, stderr: plain.stderr });
    const both = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--remap', '--dry-run', '--apply']);
    expect(both.stderr).toContain('--dry-run and --apply contradict each other');
    expect(both.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(both.code).toBe(2);
    expect(await snapshotDeployment(d)).toEqual(before);
  });
});
