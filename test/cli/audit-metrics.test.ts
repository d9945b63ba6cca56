// audit for monitoring from cron (issue 18 item 7): --format prometheus and
// --metrics-file PATH (atomic), read back with a Prometheus text-format
// parser from npm: findings per kind and cell, duration, success and time.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { FINDING_KINDS } from '../../src/domain/audit/index.js';

const CELL1 = '4dde17f6-6b53-4318-915d-00c67a4771f4';
const CELL2 = '39d68972-336c-428f-8ff5-77ff98269691';

type Families = ReturnType<typeof parsePrometheusTextFormat>;

function family(fams: Families, name: string): Families[number] {
  const f = fams.find((x) => x.name === name);
  if (f === undefined) throw new Error(`no ${name} in the metrics`);
  return f;
}

/** kind/cell → count, from the findings family. */
function findingCounts(fams: Families): Map<string, number> {
  return new Map(family(fams, 'nova_reconcile_audit_findings').metrics.map((m) => [`${m.labels?.['kind']}/${m.labels?.['cell_uuid']}`, Number(m.value)]));
}

describe('audit metrics for the textfile collector', () => {
  let root: string;
  let conf: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'nova-reconcile-metrics-'));
    const r = await runBin(['sandbox', 'create', join(root, 'sbx'), '--scenario', 'stale-provider']);
    expect(r.code, r.stderr).toBe(0);
    conf = join(root, 'sbx', 'nova.conf');
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('--format prometheus: findings per kind and cell agree with the JSON audit; success 1, duration and time', async () => {
    const startedS = Date.now() / 1000;
    const r = await runBin(['--config-file', conf, 'audit', '--format', 'prometheus']);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('');
    const fams = parsePrometheusTextFormat(r.stdout);
    for (const f of fams) expect(f.type).toBe('GAUGE');
    const counts = findingCounts(fams);
    // Every kind, for each cell and for "no cell", zeros included.
    expect(counts.size).toBe(FINDING_KINDS.length * 3);
    const json = JSON.parse((await runBin(['--config-file', conf, 'audit', '--format', 'json'])).stdout) as { findings: Array<{ kind: string; cell_uuid?: string }> };
    const expected = new Map<string, number>();
    for (const kind of FINDING_KINDS) for (const cell of [CELL1, CELL2, '']) expected.set(`${kind}/${cell}`, 0);
    for (const f of json.findings) expected.set(`${f.kind}/${f.cell_uuid ?? ''}`, (expected.get(`${f.kind}/${f.cell_uuid ?? ''}`) ?? 0) + 1);
    expect(counts).toEqual(expected);
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(json.findings.length);
    expect(json.findings.length).toBeGreaterThan(0);
    const cellNames = new Set(family(fams, 'nova_reconcile_audit_findings').metrics.map((m) => m.labels?.['cell']));
    expect(cellNames).toEqual(new Set(['cell1', 'cell2', '']));
    expect(family(fams, 'nova_reconcile_audit_success').metrics.map((m) => m.value)).toEqual(['1']);
    const duration = Number(family(fams, 'nova_reconcile_audit_duration_seconds').metrics[0]?.value);
    expect(duration).toBeGreaterThan(0);
    expect(duration).toBeLessThan(60);
    const at = Number(family(fams, 'nova_reconcile_audit_last_run_timestamp_seconds').metrics[0]?.value);
    expect(at).toBeGreaterThanOrEqual(startedS - 1);
    expect(at).toBeLessThanOrEqual(Date.now() / 1000 + 1);
  }, 60_000);

  it('--metrics-file: written atomically beside the normal output; no temporary file is left; replaced on each run', async () => {
    const dir = join(root, 'textfile');
    mkdirSync(dir);
    const path = join(dir, 'nova_reconcile.prom');
    writeFileSync(path, 'old content\n');
    const oldInode = statSync(path).ino;
    const r = await runBin(['--config-file', conf, 'audit', '--metrics-file', path]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('provider-name-conflict');
    expect(readdirSync(dir)).toEqual(['nova_reconcile.prom']);
    // A new file renamed over the old one (a reader never sees a half-written file), not the old one rewritten in place.
    expect(statSync(path).ino).not.toBe(oldInode);
    const fams = parsePrometheusTextFormat(readFileSync(path, 'utf8'));
    expect(family(fams, 'nova_reconcile_audit_success').metrics[0]?.value).toBe('1');
    expect(findingCounts(fams).get(`provider-name-conflict/${CELL1}`)).toBeGreaterThan(0);
  }, 60_000);

  it('a failed audit writes success 0 (and no findings); the error is reported as usual', async () => {
    const dir = join(root, 'textfile-fail');
    mkdirSync(dir);
    const path = join(dir, 'nova_reconcile.prom');
    const broken = join(root, 'broken.conf');
    writeFileSync(broken, `${readFileSync(conf, 'utf8')}\n[placement_database]\nconnection = mysql+pymysql://placement:Secr3tPw@127.0.0.1:1/placement\n`);
    const r = await runBin(['--config-file', broken, 'audit', '--metrics-file', path, '--format', 'prometheus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^nova-reconcile: error: .*\n$/);
    for (const text of [r.stdout, readFileSync(path, 'utf8')]) {
      const fams = parsePrometheusTextFormat(text);
      expect(fams.map((f) => f.name).sort()).toEqual(['nova_reconcile_audit_duration_seconds', 'nova_reconcile_audit_last_run_timestamp_seconds', 'nova_reconcile_audit_success']);
      expect(family(fams, 'nova_reconcile_audit_success').metrics[0]?.value).toBe('0');
      expect(text).not.toContain('Secr3tPw');
    }
  }, 60_000);

  it('bad input: a --metrics-file in a directory that does not exist is refused before anything is read (exit 127)', async () => {
    const r = await runBin(['--config-file', conf, 'audit', '--metrics-file', join(root, 'missing-dir', 'x.prom')]);
    expect(r.code).toBe(127);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^nova-reconcile: error: --metrics-file .*: the directory .*missing-dir does not exist \(.*\)\n$/);
  });
});
