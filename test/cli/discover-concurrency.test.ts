// discover_hosts is safe in parallel (DESIGN.md): 20 processes started at
// once against 2 cells × 1,000 unmapped hosts on MariaDB, mixing the node
// path and --by-service, all exit 0 and leave exactly one mapping per host,
// each in the cell that holds the host, except pre-existing wrong-cell
// mappings, which are never re-pointed. Every live compute node of a
// correctly mapped host ends with mapped = 1. (Real nova-manage exits 2 on
// the first duplicate here, nova-behaviour §1.9.)
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin, type CliResult } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { insertComputeNodes, insertHostMappings, insertServices, softDeleteRow, type ComputeNodeSpec } from '../../src/sandbox/rows.js';

const HOSTS_PER_CELL = 1000;
const PROCESSES = 20;
type CellName = 'cell1' | 'cell2';
const CELLS: readonly CellName[] = ['cell1', 'cell2'];
const OTHER: Record<CellName, CellName> = { cell1: 'cell2', cell2: 'cell1' };

const hostName = (cell: CellName, n: number): string => `${cell}-cmp-${String(n).padStart(4, '0')}`;

/** Host n of each cell:  1-5 pre-mapped to the OTHER cell; 6-10 pre-mapped correctly (nodes still mapped = 0, the crash window of §1.8). */
const WRONG_CELL = (n: number): boolean => n <= 5;
const PRE_MAPPED = (n: number): boolean => n > 5 && n <= 10;
/** 981-990: ironic-style, three nodes each; 991-1000: a service and no node yet (only --by-service maps them). */
const IRONIC = (n: number): boolean => n > 980 && n <= 990;
const NODELESS = (n: number): boolean => n > 990;
/** 11-12: also have a soft-deleted node with mapped = 0, which must stay as it is. */
const HAS_DELETED_NODE = (n: number): boolean => n === 11 || n === 12;

interface Run {
  readonly args: readonly string[];
  readonly mode: 'verbose' | 'json' | 'quiet';
}

function plannedRuns(): Run[] {
  const runs: Run[] = [];
  for (let i = 0; i < PROCESSES; i++) {
    const path = i % 2 === 0 ? [] : ['--by-service'];
    const mode = (['verbose', 'json', 'verbose', 'json', 'quiet'] as const)[i % 5] ?? 'quiet';
    const extra = mode === 'verbose' ? ['--verbose'] : mode === 'json' ? ['--format', 'json'] : [];
    runs.push({ args: ['cell_v2', 'discover_hosts', ...path, ...extra], mode });
  }
  return runs;
}

/** Hosts this run says it created, from its verbose lines or its JSON. */
function createdBy(run: Run, r: CliResult): string[] {
  if (run.mode === 'json') return (JSON.parse(r.stdout) as { created: Array<{ host: string }> }).created.map((c) => c.host);
  if (run.mode === 'quiet') return [];
  const out: string[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^Creating host mapping for (?:compute host '([^']+)': \S+|service (\S+))$/.exec(line);
    if (m !== null) out.push(m[1] ?? m[2] ?? '');
  }
  return out;
}

describeMysql('discover_hosts: 20 concurrent processes, 2 cells × 1,000 hosts [mariadb]', () => {
  let d: TestDeployment;
  const wrongIds = new Map<string, { id: number; cell_id: number; created_at: string }>();

  beforeAll(async () => {
    d = await createTestDeployment('mysql', 'empty', 'dconc');
    const created = '2026-01-01 00:00:00';
    for (const cell of CELLS) {
      const knex = d.knex(cell);
      const numbers = Array.from({ length: HOSTS_PER_CELL }, (_, i) => i + 1);
      const serviceIds = await insertServices(
        knex,
        numbers.map((n) => ({ uuid: randomUUID(), host: hostName(cell, n), lastSeenUp: created, reportCount: 100, createdAt: created })),
      );
      const nodes: ComputeNodeSpec[] = [];
      for (const n of numbers) {
        if (NODELESS(n)) continue;
        const host = hostName(cell, n);
        const serviceId = serviceIds[n - 1] ?? null;
        if (IRONIC(n)) {
          for (let k = 0; k < 3; k++) {
            const uuid = randomUUID();
            nodes.push({ uuid, host, hypervisorHostname: uuid, hypervisorType: 'ironic', serviceId, createdAt: created });
          }
        } else {
          nodes.push({ uuid: randomUUID(), host, hypervisorHostname: `${host}.example.org`, hypervisorType: 'QEMU', serviceId, createdAt: created });
        }
        if (HAS_DELETED_NODE(n)) nodes.push({ uuid: randomUUID(), host, hypervisorHostname: `${host}-old.example.org`, hypervisorType: 'QEMU', createdAt: created });
      }
      const nodeIds = await insertComputeNodes(knex, nodes);
      for (const [i, spec] of nodes.entries()) {
        if (spec.hypervisorHostname.endsWith('-old.example.org')) await softDeleteRow(knex, 'compute_nodes', nodeIds[i] ?? 0, created);
      }
      // Pre-existing mappings, written in one multi-row insert each.
      await insertHostMappings(
        d.dbs.api,
        numbers.filter(WRONG_CELL).map((n) => ({ cellId: d.dbs.cellIds[OTHER[cell]], host: hostName(cell, n), createdAt: created })),
      );
      await insertHostMappings(
        d.dbs.api,
        numbers.filter(PRE_MAPPED).map((n) => ({ cellId: d.dbs.cellIds[cell], host: hostName(cell, n), createdAt: created })),
      );
    }
    const rows = (await d.dbs.api('host_mappings').select('id', 'host', 'cell_id', 'created_at')) as Array<{ id: number; host: string; cell_id: number; created_at: string }>;
    for (const r of rows) {
      const n = Number(r.host.slice(-4));
      if (WRONG_CELL(n)) wrongIds.set(r.host, { id: Number(r.id), cell_id: Number(r.cell_id), created_at: String(r.created_at) });
    }
    expect(wrongIds.size).toBe(10);
  }, 120_000);

  afterAll(async () => {
    await d?.cleanup();
  });

  it('all exit 0; one mapping per host in the right cell; wrong-cell mappings untouched; every live node mapped', async () => {
    const runs = plannedRuns();
    const started = Date.now();
    const results = await Promise.all(runs.map((run) => runBin([...d.args, ...run.args], { timeoutMs: 60_000 })));
    const elapsed = Date.now() - started;

    for (const [i, r] of results.entries()) {
      const run = runs[i] as Run;
      const label = `process ${i} (${run.args.slice(2).join(' ') || 'node path'}): exit ${r.code}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
      expect(r.code, label).toBe(0);
      // Only the wrong-cell warnings may appear on stderr.
      for (const line of r.stderr.split('\n').filter((l) => l !== '')) expect(line, label).toMatch(/^WARNING: host '(cell1|cell2)-cmp-000[1-5]' has a compute service or node in cell /);
      expect(r.stdout, label).not.toContain('Duplicate host mapping');
      if (run.mode === 'quiet') expect(r.stdout, label).toBe('');
      if (run.mode === 'verbose') {
        expect(r.stdout, label).toMatch(/^Found 3 cell mappings\.\nSkipping cell0 since it does not contain hosts\.\n/);
        for (const cell of CELLS) expect(r.stdout, label).toMatch(new RegExp(`Found \\d+ unmapped computes in cell: ${CELL[cell]}\\n`));
      }
      if (run.mode === 'json') expect((JSON.parse(r.stdout) as { ok: boolean }).ok, label).toBe(true);
    }

    // No host was created by two processes.
    const creators = new Map<string, number>();
    for (const [i, r] of results.entries()) {
      for (const host of createdBy(runs[i] as Run, r)) {
        expect(creators.get(host), `${host} created by processes ${creators.get(host)} and ${i}`).toBeUndefined();
        creators.set(host, i);
      }
    }

    // Exactly one mapping per host, each in its own cell except the wrong-cell ones.
    const mappings = (await d.dbs.api('host_mappings').select('id', 'host', 'cell_id', 'created_at')) as Array<{ id: number; host: string; cell_id: number; created_at: string }>;
    expect(mappings).toHaveLength(CELLS.length * HOSTS_PER_CELL);
    const byHost = new Map(mappings.map((m) => [m.host, m]));
    expect(byHost.size).toBe(mappings.length);
    for (const cell of CELLS) {
      for (let n = 1; n <= HOSTS_PER_CELL; n++) {
        const host = hostName(cell, n);
        const m = byHost.get(host);
        expect(m, host).toBeDefined();
        if (WRONG_CELL(n)) {
          expect({ id: Number(m?.id), cell_id: Number(m?.cell_id), created_at: String(m?.created_at) }, host).toEqual(wrongIds.get(host));
        } else {
          expect(Number(m?.cell_id), host).toBe(d.dbs.cellIds[cell]);
        }
      }
    }

    // Every live compute node of a correctly mapped host has mapped = 1; soft-deleted ones are left alone.
    for (const cell of CELLS) {
      const nodes = (await d.knex(cell)('compute_nodes').select('host', 'mapped', 'deleted')) as Array<{ host: string; mapped: number; deleted: number }>;
      const unmapped = nodes.filter((nd) => Number(nd.deleted) === 0 && !WRONG_CELL(Number(nd.host.slice(-4))) && Number(nd.mapped) !== 1).map((nd) => nd.host);
      expect(unmapped, `${cell}: live nodes of correctly mapped hosts left unmapped`).toEqual([]);
      const deleted = nodes.filter((nd) => Number(nd.deleted) !== 0);
      expect(deleted.map((nd) => [nd.host, Number(nd.mapped)])).toEqual([
        [hostName(cell, 11), 0],
        [hostName(cell, 12), 0],
      ]);
      const live = nodes.filter((nd) => Number(nd.deleted) === 0);
      expect(live).toHaveLength(980 + 10 * 3);
    }

    // A run after all of them finds nothing to do.
    const again = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service', '--strict']);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(elapsed).toBeLessThan(40_000);
  }, 120_000);
});
