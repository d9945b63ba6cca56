// The `sh` lines of docs/operations/automation.md, run as written, one after the
// other, from a folder that holds what they name (nodes.json, and contrib/ as
// in a checkout), with nova.conf where nova-manage would find it (~/.nova/).
// A line's expected exit code is the `exit N` its comment gives; 0 otherwise.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deletedIronicNodeIronicList, DELETED_IRONIC_NODE } from '../../src/sandbox/scenarios/deleted-ironic-node.js';
import { assertBuilt } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, hostMappings, type TestDeployment } from '../helpers/test-deployment.js';
import { automationSection, CLIENT_PATH, CONTRIB, describeWithTools, fencedBlocks, runClient, scratch } from './clients.js';

/** Every command line of the section's sh blocks, with the exit code its comment promises. */
function readmeShellLines(): Array<{ line: string; code: number }> {
  return fencedBlocks(automationSection())
    .filter((b) => b.lang === 'sh')
    .flatMap((b) => b.body.split('\n'))
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => ({ line, code: Number(/#.*\bexit (\d+)/.exec(line)?.[1] ?? 0) }));
}

describeWithTools(['sh', 'ansible-galaxy', 'ansible-doc'], "the documented sh lines", () => {
  describeMysql('run as written, on MariaDB', () => {
    let tmp: ReturnType<typeof scratch>;
    let d: TestDeployment;
    let env: Record<string, string>;
    let work: string;
    const lines = readmeShellLines();

    beforeAll(async () => {
      assertBuilt();
      tmp = scratch('shell');
      d = await createTestDeployment('mysql', 'deleted-ironic-node', 'shell');
      const home = join(tmp.dir, 'home');
      mkdirSync(join(home, '.nova'), { recursive: true });
      mkdirSync(join(home, 'tmp'));
      writeFileSync(join(home, '.nova', 'nova.conf'), readFileSync(d.confPath, 'utf8'));
      work = join(tmp.dir, 'work');
      mkdirSync(work);
      writeFileSync(join(work, 'nodes.json'), deletedIronicNodeIronicList());
      symlinkSync(CONTRIB, join(work, 'contrib'));
      env = { PATH: CLIENT_PATH, HOME: home, LANG: 'C.UTF-8', ANSIBLE_LOCAL_TEMP: join(home, 'tmp'), ANSIBLE_NOCOLOR: '1', PYTHONDONTWRITEBYTECODE: '1' };
    }, 120_000);
    afterAll(async () => {
      await d?.cleanup();
      tmp?.remove();
    });

    it('the section has the collection install, the reviewed large plan and the stale-mapping prune', () => {
      expect(lines.map((l) => l.line.split('#')[0]?.trim())).toEqual([
        'ansible-galaxy collection install contrib/ansible',
        'ansible-doc openstack_ops.nova_reconcile.nova_reconcile',
        'nova-reconcile compute_node cleanup_orphans --ironic-nodes nodes.json --plan-out plan.json',
        'nova-reconcile compute_node cleanup_orphans --ironic-nodes nodes.json --plan-in plan.json --apply --allow-large-plan',
        'nova-reconcile cell_v2 prune_host_mappings --host compute-9',
        'nova-reconcile cell_v2 prune_host_mappings --host compute-9 --apply',
      ]);
      expect(lines.map((l) => l.code)).toEqual([0, 0, 3, 4, 3, 4]);
    });

    it('each line exits as its comment says, in order', () => {
      for (const { line, code } of lines) {
        const r = runClient('sh', ['-c', line], { env, cwd: work, timeoutMs: 120_000 });
        expect({ line, code: r.code }, r.stdout + r.stderr).toEqual({ line, code });
      }
    });

    it('and left the cloud as they say: the orphans removed, the stale mapping gone', async () => {
      const nodes: Array<{ uuid: string }> = await d.knex('cell1')('compute_nodes').select('uuid').where('deleted', 0);
      expect(nodes.map((n) => n.uuid)).not.toContain(DELETED_IRONIC_NODE.libvirt.nodeUuid);
      expect(nodes.map((n) => n.uuid)).not.toContain(DELETED_IRONIC_NODE.goneNodeUuid);
      // compute-9's mapping went stale when cleanup_orphans removed its node.
      expect((await hostMappings(d)).map(([host]) => host)).not.toContain('compute-9');
    });
  });
});
