// The sandbox stays true (issue 18): its heartbeats were written when it was
// built and never again, so the tool judges liveness as of its creation
// ([nova_reconcile] sandbox_created_at). "Five minutes later" is made without
// sleeping: every timestamp in every database and the creation time in
// nova.conf are moved five minutes back, which is exactly the sandbox a user
// built five minutes ago. A control run without the creation time shows the
// staleness the issue reported. Also: the deleted-ironic-node scenario ships
// its ironic node list, the "Try next" lines work as printed, and an apply
// prints its journal line once.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';

const FILES = ['nova_api.sqlite', 'nova_cell0.sqlite', 'nova_cell1.sqlite', 'nova_cell2.sqlite', 'placement.sqlite'];
const roots: string[] = [];

afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

async function sandbox(scenario: string): Promise<{ dir: string; conf: string; stdout: string }> {
  const root = mkdtempSync(join(tmpdir(), 'nova-reconcile-sbx-'));
  roots.push(root);
  const dir = join(root, 'sbx');
  const r = await runBin(['sandbox', 'create', dir, '--scenario', scenario]);
  expect(r.code, r.stderr).toBe(0);
  return { dir, conf: join(dir, 'nova.conf'), stdout: r.stdout };
}

/** Every datetime column of every table, `seconds` earlier: the sandbox as if built that long ago. */
function age(dir: string, seconds: number): void {
  for (const file of FILES) {
    const db = new Database(join(dir, file));
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'knex_%'").all() as Array<{ name: string }>;
      for (const { name } of tables) {
        const cols = (db.prepare(`SELECT name, type FROM pragma_table_info('${name}')`).all() as Array<{ name: string; type: string }>).filter((c) => /date|time/i.test(c.type));
        for (const c of cols) db.prepare(`UPDATE "${name}" SET "${c.name}" = datetime("${c.name}", '-${seconds} seconds') WHERE "${c.name}" IS NOT NULL`).run();
      }
    } finally {
      db.close();
    }
  }
  const conf = join(dir, 'nova.conf');
  const text = readFileSync(conf, 'utf8');
  const m = /^sandbox_created_at = (.+)$/m.exec(text);
  if (m?.[1] === undefined) throw new Error('no sandbox_created_at in nova.conf');
  const earlier = new Date(Date.parse(`${m[1].replace(' ', 'T')}Z`) - seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
  writeFileSync(conf, text.replace(m[0], `sandbox_created_at = ${earlier}`));
}

/** What the tool concludes, without the timestamps it quotes. */
async function verdicts(conf: string): Promise<{ findings: unknown; rebalance: unknown; orphans: unknown; providers: unknown }> {
  const audit = await runBin(['--config-file', conf, 'audit', '--format', 'json']);
  expect(audit.stderr).toBe('');
  const doc = JSON.parse(audit.stdout) as { findings: Array<{ kind: string; cell_uuid?: string; objects: Record<string, unknown> }> };
  const plan = async (...cmd: string[]): Promise<unknown> => {
    const r = await runBin(['--config-file', conf, ...cmd, '--format', 'json']);
    expect([0, 3]).toContain(r.code);
    const p = JSON.parse(r.stdout) as { units: Array<{ id: string; changes: Array<{ kind: string }> }>; refused: Array<{ subject: string; reason: string }> };
    return { code: r.code, units: p.units.map((u) => [u.id, u.changes.map((c) => c.kind)]), refused: p.refused.map((x) => [x.subject, x.reason]) };
  };
  return {
    findings: doc.findings.map((f) => [f.kind, f.cell_uuid, Object.keys(f.objects).sort()]),
    rebalance: await plan('compute_node', 'rebalance'),
    orphans: await plan('compute_node', 'cleanup_orphans'),
    providers: await plan('placement', 'cleanup_providers'),
  };
}

describe('a sandbox plans the same five minutes after its creation', () => {
  for (const scenario of ['ironic-failover', 'stale-provider', 'ironic-ha', 'deleted-ironic-node']) {
    it(`${scenario}: audit and every plan are unchanged; without sandbox_created_at they would not be`, async () => {
      const { dir, conf } = await sandbox(scenario);
      expect(readFileSync(conf, 'utf8')).toMatch(/^sandbox_created_at = \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/m);
      const atCreation = await verdicts(conf);
      age(dir, 300);
      expect(await verdicts(conf)).toEqual(atCreation);
      if (scenario === 'ironic-failover') {
        // The control: the clock instead of the sandbox's moment sees every service dead (issue 18's report).
        writeFileSync(conf, readFileSync(conf, 'utf8').replace(/^sandbox_created_at = .*$/m, ''));
        const stale = await verdicts(conf);
        expect(stale).not.toEqual(atCreation);
        expect(JSON.stringify(stale.rebalance)).toContain('no live');
      }
    }, 60_000);
  }
});

describe('sandbox files, suggested commands and the journal line', () => {
  it('deleted-ironic-node ships ironic-nodes.json; every "Try next" line runs as printed', async () => {
    const { dir, stdout } = await sandbox('deleted-ironic-node');
    const nodes = JSON.parse(readFileSync(join(dir, 'ironic-nodes.json'), 'utf8')) as Array<{ UUID: string }>;
    expect(nodes.map((n) => n.UUID)).toEqual(['57714aaa-ae8c-4f99-9593-c6b6b8e45a8e']);
    const tryNext = stdout.slice(stdout.indexOf('Try next:')).split('\n').slice(1).filter((l) => l.trim() !== '').map((l) => l.trim());
    expect(tryNext.length).toBeGreaterThanOrEqual(3);
    expect(tryNext.some((l) => l.includes(`--ironic-nodes ${dir}/ironic-nodes.json`))).toBe(true);
    // The test runs the binary with `node bin/nova-reconcile`, not from PATH: the lines say so.
    for (const line of tryNext) {
      expect(line.startsWith('nova-reconcile ')).toBe(false);
      const r = spawnSync('sh', ['-c', line], { encoding: 'utf8', env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' } });
      expect([0, 3], `${line}\n${r.stderr}`).toContain(r.status);
    }
    const audit = spawnSync('sh', ['-c', tryNext.find((l) => l.includes('audit --ironic-nodes')) ?? 'false'], { encoding: 'utf8' });
    expect(audit.stdout).toContain('orphan-node-ironic-deleted');
    // --force replaces it, shipped file included.
    const again = await runBin(['sandbox', 'create', dir, '--scenario', 'deleted-ironic-node', '--force']);
    expect(again.code, again.stderr).toBe(0);
  }, 60_000);

  it('an apply prints its journal line once, on stderr only', async () => {
    const { conf } = await sandbox('ironic-failover');
    const r = await runBin(['--config-file', conf, 'compute_node', 'rebalance', '--apply']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).not.toContain('journal:');
    expect(r.stderr.match(/^journal: /gm)).toHaveLength(1);
  }, 60_000);
});
