// A bad [ironic] section (or [nova_reconcile] ironic_partitions) fails only
// the commands that read it (src/config/load-config.ts, failingOnIronic):
// a controller's nova.conf whose [ironic] names an auth plugin nova-reconcile
// does not read still runs the cell_v2 commands, as it does with nova-manage; a
// command that plans from the cloud's state stops with the config error,
// exit 2, one line, nothing changed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { createTestDeployment, hostMappings, type TestDeployment } from '../helpers/test-deployment.js';

const BAD_IRONIC = '[ironic]\nauth_type = v3oidcpassword\nauth_url = http://keystone.example.org:5000/v3\n';

describe('a bad [ironic] section [sqlite deployment]', () => {
  let d: TestDeployment;
  let args: string[];
  beforeEach(async () => {
    d = await createTestDeployment('sqlite', 'libvirt', 'ics');
    const extra = join(d.dir, 'ironic.conf');
    writeFileSync(extra, BAD_IRONIC);
    args = [...d.args, '--config-file', extra];
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('does not stop the commands that never read it', async () => {
    const discover = await runBin([...args, 'cell_v2', 'discover_hosts', '--verbose']);
    expect(discover.stderr).toBe('');
    expect(discover.code).toBe(0);
    expect((await hostMappings(d)).length).toBeGreaterThan(0);
    // The same answer as without the bad section, from commands that read no snapshot and from those that read one without judging ironic nodes.
    for (const command of [['cell_v2', 'list_hosts'], ['cell_v2', 'list_cells'], ['cell_v2', 'prune_host_mappings'], ['cell_v2', 'discover_hosts', '--remap'], ['placement', 'audit'], ['placement', 'heal_allocations', '--dry-run']]) {
      const withBad = await runBin([...args, ...command]);
      const without = await runBin([...d.args, ...command]);
      expect({ code: withBad.code, stdout: withBad.stdout, stderr: withBad.stderr }, command.join(' ')).toEqual({ code: without.code, stdout: without.stdout, stderr: without.stderr });
      expect(withBad.stderr).not.toContain('auth_type');
    }
  });

  it('stops a command that plans from the state: exit 2, one line naming the option, nothing changed', async () => {
    const before = await snapshotDeployment(d);
    for (const command of [['compute_node', 'cleanup_orphans', '--apply'], ['audit'], ['compute_node', 'list'], ['placement', 'cleanup_providers', '--apply']]) {
      const r = await runBin([...args, ...command]);
      expect(r.code, command.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toMatch(/^nova-reconcile: error: \[ironic\] auth_type = v3oidcpassword is not supported/);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
    expect(await snapshotDeployment(d)).toEqual(before);
  });
});
