// contrib/prometheus and the audit's metrics, through the real promtool:
// `check metrics` on `audit --format prometheus` of a clean cloud and of one
// with findings (MariaDB), `check rules` on the rules file, `test rules` on
// its unit tests, whose input series must be spelled as the audit prints them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assertBuilt, runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { CONTRIB, describeWithTools, readRepoFile, runClient, scratch } from './clients.js';

const RULES = join(CONTRIB, 'prometheus', 'nova-reconcile.rules.yml');
const RULE_TESTS = join(CONTRIB, 'prometheus', 'nova-reconcile.rules.test.yml');
const env = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' };

/** Sample lines of an exposition: [metric name, sorted label names, the kind label]. */
function series(text: string): Array<{ name: string; labels: string[]; kind: string | undefined }> {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s/.exec(l);
      if (m === null) throw new Error(`not a sample line: ${l}`);
      const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)];
      return { name: m[1] ?? '', labels: labels.map((x) => x[1] ?? '').sort(), kind: labels.find((x) => x[1] === 'kind')?.[2] };
    });
}

describeWithTools(['promtool'], 'Prometheus (promtool)', () => {
  it('promtool check rules passes on the rules file: the three alerts docs/operations/monitoring.md names', () => {
    const r = runClient('promtool', ['check', 'rules', RULES], { env });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('SUCCESS: 3 rules found');
    expect(r.code).toBe(0);
    const rules = readRepoFile('contrib/prometheus/nova-reconcile.rules.yml');
    for (const expr of ['sum by (kind) (nova_reconcile_audit_findings) > 0', 'nova_reconcile_audit_success == 0', 'time() - nova_reconcile_audit_last_run_timestamp_seconds > 3600']) {
      expect(rules).toContain(`expr: ${expr}\n`);
    }
  });

  it('promtool test rules: each alert fires on what it is meant for, and only then', () => {
    const r = runClient('promtool', ['test', 'rules', RULE_TESTS], { env, cwd: join(CONTRIB, 'prometheus') });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('SUCCESS');
    expect(r.code).toBe(0);
    const tests = readRepoFile('contrib/prometheus/nova-reconcile.rules.test.yml');
    for (const alert of ['NovaReconcileAuditFindings', 'NovaReconcileAuditFailed', 'NovaReconcileAuditNotRunning']) {
      // Each alert is expected to fire somewhere (exp_alerts with labels) and to stay silent somewhere.
      const sections = tests.split(/\n(?=\s+- eval_time:)/).filter((s) => s.includes(`alertname: ${alert}\n`));
      expect(sections.some((s) => s.includes('exp_labels:'))).toBe(true);
      expect(sections.some((s) => s.includes('exp_alerts: []'))).toBe(true);
    }
  });

  it('promtool test rules fails when an alert does not fire as expected (the check can fail)', () => {
    const tmp = scratch('promtool');
    try {
      const broken = readRepoFile('contrib/prometheus/nova-reconcile.rules.yml').replace('sum by (kind) (nova_reconcile_audit_findings) > 0', 'sum by (kind) (nova_reconcile_audit_findings) > 5');
      writeFileSync(join(tmp.dir, 'nova-reconcile.rules.yml'), broken);
      writeFileSync(join(tmp.dir, 'nova-reconcile.rules.test.yml'), readRepoFile('contrib/prometheus/nova-reconcile.rules.test.yml'));
      const r = runClient('promtool', ['test', 'rules', 'nova-reconcile.rules.test.yml'], { env, cwd: tmp.dir });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toContain('alertname: NovaReconcileAuditFindings');
    } finally {
      tmp.remove();
    }
  });

  describeMysql('audit --format prometheus, on MariaDB', () => {
    let clean: TestDeployment;
    let findings: TestDeployment;

    beforeAll(async () => {
      assertBuilt();
      clean = await createTestDeployment('mysql', 'empty', 'promclean');
      findings = await createTestDeployment('mysql', 'deleted-ironic-node', 'promfind');
    }, 120_000);
    afterAll(async () => {
      await clean?.cleanup();
      await findings?.cleanup();
    });

    it('promtool check metrics passes on a clean cloud (exit 0, every finding 0, success 1)', async () => {
      const audit = await runBin([...clean.args, 'audit', '--format', 'prometheus']);
      expect(audit.code).toBe(0);
      const r = runClient('promtool', ['check', 'metrics'], { env, input: audit.stdout });
      expect(r.stdout + r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(audit.stdout).toMatch(/^nova_reconcile_audit_success 1$/m);
      expect(audit.stdout).not.toMatch(/^nova_reconcile_audit_findings\{.*\} [1-9]/m);
    });

    it('promtool check metrics passes on a cloud with findings (exit 3)', async () => {
      const audit = await runBin([...findings.args, 'audit', '--format', 'prometheus']);
      expect(audit.code).toBe(3);
      const r = runClient('promtool', ['check', 'metrics'], { env, input: audit.stdout });
      expect(r.stdout + r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(audit.stdout).toMatch(/^nova_reconcile_audit_findings\{kind="orphan-node-service-deleted",cell="cell1",cell_uuid="[0-9a-f-]{36}"\} 1$/m);
    });

    it('promtool check metrics catches an exposition it cannot parse (the check can fail)', () => {
      const r = runClient('promtool', ['check', 'metrics'], { env, input: '# TYPE nova_reconcile_audit_success gauge\nnova_reconcile_audit_success{kind=unquoted} 1\n' });
      expect(r.code).not.toBe(0);
    });

    it("the rule tests' input series are spelled as the audit prints them (names, labels, kinds)", async () => {
      const audit = await runBin([...findings.args, 'audit', '--format', 'prometheus']);
      const printed = series(audit.stdout);
      const tests = readRepoFile('contrib/prometheus/nova-reconcile.rules.test.yml');
      const inputs = [...tests.matchAll(/- series: '([^']+)'/g)].map((m) => series(`${m[1] ?? ''} 0\n`)[0]);
      expect(inputs.length).toBeGreaterThan(5);
      for (const input of inputs) {
        // The scrape adds job and instance; everything else comes from the audit.
        const own = (input?.labels ?? []).filter((l) => l !== 'job' && l !== 'instance');
        const match = printed.find((p) => p.name === input?.name && p.labels.join() === own.join() && p.kind === input?.kind);
        expect(match, `${input?.name}{${own.join()}} kind=${input?.kind}`).toBeDefined();
      }
    });
  });
});
