// contrib/systemd: `systemd-analyze verify` on every unit. verify checks that
// ExecStart's program exists and that Documentation's man page opens, so the
// units are verified with /usr/bin/nova-reconcile (where `npm install -g`
// puts it) read as the checkout's bin/nova-reconcile, and with MANPATH
// holding the checkout's man page.
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assertBuilt, runBin } from '../helpers/cli.js';
import { BIN_DIR, CONTRIB, describeWithTools, REPO, runClient, scratch } from './clients.js';

const UNITS_DIR = join(CONTRIB, 'systemd');
const INSTALLED = '/usr/bin/nova-reconcile';

describeWithTools(['systemd-analyze', 'man', 'setsid'], 'systemd (systemd-analyze verify)', () => {
  let tmp: ReturnType<typeof scratch>;
  let env: Record<string, string>;

  beforeAll(() => {
    tmp = scratch('systemd');
    mkdirSync(join(tmp.dir, 'man', 'man1'), { recursive: true });
    symlinkSync(join(REPO, 'man', 'nova-reconcile.1'), join(tmp.dir, 'man', 'man1', 'nova-reconcile.1'));
    mkdirSync(join(tmp.dir, 'units'));
    env = { PATH: '/usr/bin:/bin', MANPATH: join(tmp.dir, 'man'), LANG: 'C.UTF-8', SYSTEMD_LOG_COLOR: '0' };
  });
  afterAll(() => tmp?.remove());

  /** A copy of the unit with the installed path read as the checkout's binary. */
  function staged(name: string, text = readFileSync(join(UNITS_DIR, name), 'utf8')): string {
    const path = join(tmp.dir, 'units', name);
    writeFileSync(path, text.split(INSTALLED).join(join(BIN_DIR, 'nova-reconcile')));
    return path;
  }

  const units = readdirSync(UNITS_DIR).sort();

  it('holds the audit pair and the discover-hosts pair', () => {
    expect(units).toEqual(['nova-reconcile-audit.service', 'nova-reconcile-audit.timer', 'nova-reconcile-discover-hosts.service', 'nova-reconcile-discover-hosts.timer']);
    for (const service of units.filter((u) => u.endsWith('.service'))) expect(readFileSync(join(UNITS_DIR, service), 'utf8')).toContain(`ExecStart=${INSTALLED} `);
  });

  it.each(units)('%s passes systemd-analyze verify, without a warning', (name) => {
    const paths = units.filter((u) => u.startsWith(name.replace(/\.(service|timer)$/, '.'))).map((u) => staged(u));
    const r = runClient('systemd-analyze', ['verify', ...paths], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('verify fails on a unit systemd rejects (the check can fail)', () => {
    const bad = staged('nova-reconcile-bad.timer', readFileSync(join(UNITS_DIR, 'nova-reconcile-audit.timer'), 'utf8').replace('OnCalendar=*:0/15', 'OnCalendar=every 15 minutes'));
    const r = runClient('systemd-analyze', ['verify', bad], { env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Failed to parse calendar specification');
  });

  it('and prints a warning for a misspelt key', () => {
    const bad = staged('nova-reconcile-typo.service', readFileSync(join(UNITS_DIR, 'nova-reconcile-audit.service'), 'utf8').replace('SuccessExitStatus=3', 'SuccesExitStatus=3'));
    const r = runClient('systemd-analyze', ['verify', bad], { env });
    expect(r.stderr).toContain("Unknown key 'SuccesExitStatus' in section [Service]");
  });

  it('the audit service counts exit 3 (findings) as success; discovery only 0', () => {
    const audit = readFileSync(join(UNITS_DIR, 'nova-reconcile-audit.service'), 'utf8');
    expect(audit).toMatch(/^SuccessExitStatus=3$/m);
    expect(readFileSync(join(UNITS_DIR, 'nova-reconcile-discover-hosts.service'), 'utf8')).not.toContain('SuccessExitStatus');
  });

  it.each([
    ['nova-reconcile-audit.service', 'deleted-ironic-node', 3],
    ['nova-reconcile-discover-hosts.service', 'libvirt', 0],
  ] as const)('%s: its ExecStart runs against a %s sandbox as systemd runs it (no shell, no terminal) and exits %i, a success for the unit', async (name, scenario, code) => {
    assertBuilt();
    const dir = join(tmp.dir, `sandbox-${scenario}`);
    expect((await runBin(['sandbox', 'create', dir, '--scenario', scenario])).code).toBe(0);
    const unit = readFileSync(join(UNITS_DIR, name), 'utf8');
    const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? '';
    const metrics = join(tmp.dir, `${scenario}.prom`);
    const argv = execStart
      .split(/\s+/)
      .map((a) => (a === INSTALLED ? join(BIN_DIR, 'nova-reconcile') : a === '/etc/nova/nova.conf' ? join(dir, 'nova.conf') : a === '/var/lib/node_exporter/textfile_collector/nova_reconcile.prom' ? metrics : a));
    expect(argv.filter((a) => /^\/(etc|var|usr)\//.test(a))).toEqual([]);
    const r = runClient('setsid', ['-w', ...argv], { env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` } });
    expect(r.code).toBe(code);
    const success = [0, ...(/^SuccessExitStatus=(.*)$/m.exec(unit)?.[1] ?? '').split(/\s+/).filter(Boolean).map(Number)];
    expect(success).toContain(r.code);
    if (name.includes('audit')) {
      expect(readFileSync(metrics, 'utf8')).toMatch(/^nova_reconcile_audit_success 1$/m);
    } else {
      expect(r.stdout).toContain('Creating host mapping for service compute-1');
      expect(existsSync(metrics)).toBe(false);
    }
  });
});
