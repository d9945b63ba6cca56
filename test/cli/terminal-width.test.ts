// Tables on a real terminal: the binary runs under a pseudo-terminal
// (script(1)) at 80 and 120 columns, and every uuid and every fix command
// that its JSON document holds must appear whole in what the terminal shows.
// Lines other than a kept-whole command fit the width.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/cli.js';

const SCENARIOS = ['ironic-ha', 'libvirt', 'stale-provider', 'ironic-failover'] as const;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/** What a terminal of `columns` columns shows of the command's stdout, colours and carriage returns removed. */
function onTerminal(columns: number, args: readonly string[]): string {
  return rawTerminal(columns, args, '2>/dev/null').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
}

/** The bytes a terminal receives from the command, `redirect` applied (e.g. stderr only). */
function rawTerminal(columns: number, args: readonly string[], redirect: string): string {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-qec', `stty cols ${columns} rows 50; ${quoted} ${redirect}`, '/dev/null'], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', TERM: 'xterm' },
  });
  return r.stdout;
}

describe.runIf(hasScript || process.env['CI'] === 'true')('tables on a terminal', () => {
  let work: string;
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'nova-reconcile-test-width-'));
    for (const scenario of SCENARIOS) {
      const r = await runBin(['sandbox', 'create', join(work, scenario), '--scenario', scenario]);
      expect(r.code, r.stderr).toBe(0);
    }
  }, 120_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  for (const scenario of SCENARIOS) {
    for (const columns of [80, 120]) {
      it(`${scenario} at ${columns} columns: audit shows every uuid and fix command whole`, async () => {
        const conf = ['--config-file', join(work, scenario, 'nova.conf')];
        const json = await runBin([...conf, 'audit', '--format', 'json']);
        const doc = JSON.parse(json.stdout) as { findings: { summary: string; suggestion: string }[] };
        const shown = onTerminal(columns, [...conf, 'audit']);
        expect(doc.findings.length).toBeGreaterThan(0);
        for (const f of doc.findings) {
          expect(shown).toContain(f.suggestion);
          for (const uuid of f.summary.match(UUID) ?? []) expect(shown).toContain(uuid);
        }
        const commands = new Set(doc.findings.map((f) => f.suggestion));
        for (const line of shown.split('\n')) {
          if (![...commands].some((c) => line.includes(c))) expect(line.length, line).toBeLessThanOrEqual(columns);
        }
      }, 60_000);

      it(`${scenario} at ${columns} columns: compute_node list shows every uuid whole`, async () => {
        const conf = ['--config-file', join(work, scenario, 'nova.conf')];
        const json = await runBin([...conf, 'compute_node', 'list', '--format', 'json']);
        const doc = JSON.parse(json.stdout) as { compute_nodes: { uuid: string; hypervisor_hostname: string }[] };
        const uuids = doc.compute_nodes.flatMap((n) => [n.uuid, n.hypervisor_hostname]);
        const shown = onTerminal(columns, [...conf, 'compute_node', 'list']);
        expect(uuids.length).toBeGreaterThan(0);
        for (const uuid of uuids) expect(shown).toContain(uuid);
        for (const line of shown.split('\n')) expect(line.length, line).toBeLessThanOrEqual(columns);
      }, 60_000);
    }
  }

  for (const command of [['compute_node', 'list'], ['compute_node', 'rebalance'], ['placement', 'cleanup_providers'], ['audit']]) {
    it(`${command.join(' ')} redraws its progress in place and erases it`, () => {
      const stderr = rawTerminal(100, ['--config-file', join(work, 'ironic-failover', 'nova.conf'), ...command], '2>&1 >/dev/null');
      expect(stderr).toContain("\r\x1b[Kreading cell 'cell1'");
      expect(stderr).not.toMatch(/reading[^\r]*\n/);
      expect(stderr.endsWith('\r\x1b[K')).toBe(true);
    }, 60_000);
  }
});
