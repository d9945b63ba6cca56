// contrib/puppet: `puppet apply` of the discover_hosts class on a MariaDB cloud
// with unmapped hosts. puppet-nova's exec always reports a change; this one,
// guarded by the dry run, changes on the first run only.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIBVIRT_HOSTS } from '../../src/sandbox/scenarios/libvirt.js';
import { assertBuilt } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, hostMappings, type TestDeployment } from '../helpers/test-deployment.js';
import { BIN_DIR, CLIENT_PATH, CONTRIB, describeWithTools, runClient, scratch, type Run } from './clients.js';

describeWithTools(['puppet'], 'Puppet (puppet apply)', () => {
  it('puppet parser validate passes on the class and on the example that declares it, and fails on a broken manifest', () => {
    const tmp = scratch('puppet-parser');
    try {
      const validate = (path: string) =>
        runClient('puppet', ['parser', 'validate', '--color=false', '--vardir', join(tmp.dir, 'var'), '--confdir', join(tmp.dir, 'etc'), '--codedir', join(tmp.dir, 'code'), '--publicdir', join(tmp.dir, 'public'), '--ssldir', join(tmp.dir, 'ssl'), path], {
          env: { PATH: CLIENT_PATH, HOME: tmp.dir, LANG: 'C.UTF-8' },
        });
      for (const path of ['nova_reconcile/manifests/discover_hosts.pp', 'nova_reconcile/examples/init.pp']) {
        const r = validate(join(CONTRIB, 'puppet', path));
        expect({ path, code: r.code, stderr: r.stderr.split('\n').filter((l) => l !== '' && !l.includes('Facter:')) }).toEqual({ path, code: 0, stderr: [] });
      }
      const broken = join(tmp.dir, 'broken.pp');
      writeFileSync(broken, "class { 'nova_reconcile::discover_hosts':\n  config_file => '/etc/nova/nova.conf'\n  path => [],\n}\n");
      expect(validate(broken).code).not.toBe(0);
    } finally {
      tmp.remove();
    }
  });

  describeMysql('contrib/puppet/nova_reconcile, on MariaDB', () => {
    let tmp: ReturnType<typeof scratch>;
    let d: TestDeployment;

    beforeAll(async () => {
      assertBuilt();
      tmp = scratch('puppet');
      d = await createTestDeployment('mysql', 'libvirt', 'puppet');
    }, 120_000);
    afterAll(async () => {
      await d?.cleanup();
      tmp?.remove();
    });

    /** `puppet apply --detailed-exitcodes` of the class, with every Puppet folder in the scratch folder. */
    function apply(configFile: string): Run {
      const p = (name: string) => join(tmp.dir, name);
      mkdirSync(p('home'), { recursive: true });
      const manifest = p('site.pp');
      writeFileSync(manifest, `class { 'nova_reconcile::discover_hosts':\n  config_file => '${configFile}',\n  path        => ['${BIN_DIR}', '/usr/bin', '/bin'],\n}\n`);
      const r = runClient(
        'puppet',
        ['apply', '--detailed-exitcodes', '--color=false', '--vardir', p('var'), '--confdir', p('etc'), '--codedir', p('code'), '--logdir', p('log'), '--rundir', p('run'), '--publicdir', p('public'), '--ssldir', p('ssl'), '--modulepath', join(CONTRIB, 'puppet'), manifest],
        { env: { PATH: CLIENT_PATH, HOME: p('home'), LANG: 'C.UTF-8' } },
      );
      // Facter cannot read /proc/1/environ in a container; that is Facter's, not the manifest's.
      const stderr = r.stderr
        .split('\n')
        .filter((l) => l !== '' && !l.includes('Facter: Permission denied'))
        .join('\n');
      return { ...r, stderr };
    }

    it('the first run maps the hosts and reports a change (exit 2)', async () => {
      expect(await hostMappings(d)).toEqual([]);
      const r = apply(d.confPath);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('Exec[nova-cell_v2-discover_hosts]/returns: executed successfully');
      expect(r.code).toBe(2);
      expect((await hostMappings(d)).map(([host]) => host)).toEqual(LIBVIRT_HOSTS.map((h) => h.host));
    });

    it('the second run has nothing to map and reports no change (exit 0)', () => {
      const r = apply(d.confPath);
      expect(r.stderr).toBe('');
      expect(r.stdout).not.toContain('Exec[nova-cell_v2-discover_hosts]');
      expect(r.code).toBe(0);
    });

    it('an unreachable database fails the run instead of passing for "nothing to map" (exit 4)', () => {
      const conf = join(tmp.dir, 'unreachable.conf');
      writeFileSync(conf, '[api_database]\nconnection = mysql+pymysql://nova:secret@127.0.0.1:1/nova_api\n');
      const r = apply(conf);
      expect(r.code).toBe(4);
      expect(r.stdout + r.stderr).toContain('cannot connect to the API database');
      expect(r.stdout + r.stderr).not.toContain('secret');
    });

    it('so does a config file that cannot be read (discover_hosts exits 1 for it, as for nothing to map)', () => {
      const r = apply(join(tmp.dir, 'missing.conf'));
      expect(r.code).toBe(4);
      expect(r.stdout + r.stderr).toContain('missing.conf not found');
    });
  });
});
