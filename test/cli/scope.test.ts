// The shared scope options (--cell, --host, --node, --resource_provider,
// --max-count) through the built binary on MariaDB, for every plan command
// and audit. For each command:
//  - each scope option selects exactly the expected units, and each scoped
//    unit is, field for field, the unit of the same id in the unscoped plan;
//  - --max-count stops at N (exit 4, the rest deferred) and a re-run goes on;
//  - a scoped apply followed by an unscoped one leaves the same rows as one
//    unscoped apply on an identical deployment.
import type { Knex } from 'knex';
import { afterEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { LIBVIRT_HOSTS, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { STALE_PROVIDER } from '../../src/sandbox/scenarios/stale-provider.js';
import { IRONIC_FAILOVER } from '../../src/sandbox/scenarios/ironic-failover.js';
import { addComputeService, addIronicNode } from '../../src/sandbox/builders.js';
import { DAY, HOUR, scenarioClock } from '../../src/sandbox/clock.js';

interface Unit {
  readonly id: string;
  readonly title: string;
}
interface PlanDoc {
  readonly units: readonly Unit[];
  readonly refused: readonly unknown[];
  readonly applied?: readonly string[];
  readonly deferred_units: number;
}

const TIMEOUT = 240_000;

/**
 * Rows without their timestamps (deleted_at = now differs between two
 * deployments), sorted; `drop` names more columns to leave out.
 */
async function rows(k: Knex, tables: readonly string[], drop: readonly string[] = []): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const list: Array<Record<string, unknown>> = await k(t).select('*');
    out[t] = list
      .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([c]) => !c.endsWith('_at') && c !== 'last_seen_up' && !drop.includes(c)).map(([c, v]) => [c, v === null ? null : String(v)]))))
      .sort();
  }
  return out;
}

const CELL_TABLES = ['services', 'compute_nodes', 'instances'];
const PLACEMENT_TABLES = ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_provider_traits'];

async function everything(d: TestDeployment): Promise<unknown> {
  return {
    // discover_hosts maps the cells in parallel: mapping ids differ between two deployments.
    api: await rows(d.knex('api'), ['host_mappings'], ['id']),
    cell1: await rows(d.knex('cell1'), CELL_TABLES),
    cell2: await rows(d.knex('cell2'), CELL_TABLES),
    placement: await rows(d.knex('placement'), PLACEMENT_TABLES),
  };
}

async function plan(d: TestDeployment, command: readonly string[], ...extra: string[]): Promise<{ code: number; doc: PlanDoc; stderr: string }> {
  const r = await runBin([...d.args, ...command, '--format', 'json', ...extra]);
  if (!r.stdout.startsWith('{')) throw new Error(`no JSON from ${command.join(' ')} ${extra.join(' ')} (exit ${r.code}): ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as PlanDoc;
  if (!Array.isArray(doc.units)) throw new Error(`no plan from ${command.join(' ')} ${extra.join(' ')} (exit ${r.code}): ${r.stdout} ${r.stderr}`);
  return { code: r.code, doc, stderr: r.stderr };
}

/** The ids of the unscoped plan's units whose title names one of the needles, in plan order. */
function idsNaming(full: PlanDoc, ...needles: string[]): string[] {
  return full.units.filter((u) => needles.some((n) => u.title.includes(n))).map((u) => u.id);
}

/** Each scope selects exactly `expected` and every unit is the unscoped unit of its id. */
async function expectScope(d: TestDeployment, command: readonly string[], full: PlanDoc, args: readonly string[], expected: readonly string[]): Promise<void> {
  const before = await snapshotDeployment(d);
  const r = await plan(d, command, ...args);
  expect(r.doc.units.map((u) => u.id), args.join(' ')).toEqual(expected);
  for (const u of r.doc.units) expect(u).toEqual(full.units.find((f) => f.id === u.id));
  expect(r.code).toBe(expected.length === 0 && r.doc.refused.length === 0 ? 0 : 3);
  expect(await snapshotDeployment(d)).toEqual(before);
}

async function expectRefused(d: TestDeployment, command: readonly string[], args: readonly string[], message: RegExp): Promise<void> {
  const before = await snapshotDeployment(d);
  const r = await runBin([...d.args, ...command, '--apply', ...args]);
  expect(r.code, r.stderr).toBe(127);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(message);
  expect(await snapshotDeployment(d)).toEqual(before);
}

/** Nova's service_destroy: the service and its compute nodes soft-deleted (deleted = id). */
async function destroyService(k: Knex, host: string, nodesToo: boolean): Promise<void> {
  const at = '2026-01-02 03:04:05';
  await k('services').update({ deleted: k.raw('id'), deleted_at: at }).where({ host, deleted: 0 });
  if (nodesToo) await k('compute_nodes').update({ deleted: k.raw('id'), deleted_at: at }).where({ host, deleted: 0 });
}

const host = (name: string): (typeof LIBVIRT_HOSTS)[number] => LIBVIRT_HOSTS.find((h) => h.host === name) as (typeof LIBVIRT_HOSTS)[number];

describeMysql('scope options [mariadb]', () => {
  const made: TestDeployment[] = [];
  const deployment = async (scenario: string, prepare: (d: TestDeployment) => Promise<void>): Promise<TestDeployment> => {
    const d = await createTestDeployment('mysql', scenario, 'scope');
    made.push(d);
    await prepare(d);
    return d;
  };
  afterEach(async () => {
    for (const d of made.splice(0)) await d.cleanup();
  });

  it(
    'compute_node cleanup_orphans: --cell (name or uuid), --host, --node select exactly their orphans; --max-count; scoped then unscoped = unscoped',
    async () => {
      const CMD = ['compute_node', 'cleanup_orphans'];
      // Orphans: compute-2 and compute-3 in cell1, compute-5 in cell2 (their services deleted).
      const prepare = async (d: TestDeployment): Promise<void> => {
        await destroyService(d.knex('cell1'), 'compute-2', false);
        await destroyService(d.knex('cell1'), 'compute-3', false);
        await destroyService(d.knex('cell2'), 'compute-5', false);
      };
      const a = await deployment('libvirt', prepare);
      const full = (await plan(a, CMD)).doc;
      const [o2, o3, o5] = ['compute-2', 'compute-3', 'compute-5'].map((h) => idsNaming(full, `(${h}/`)[0] as string) as [string, string, string];
      expect(full.units.map((u) => u.id)).toEqual([o2, o3, o5]);

      await expectScope(a, CMD, full, ['--cell', 'cell1'], [o2, o3]);
      await expectScope(a, CMD, full, ['--cell', CELL.cell2.toUpperCase()], [o5]);
      await expectScope(a, CMD, full, ['--host', 'COMPUTE-3  '], [o3]);
      await expectScope(a, CMD, full, ['--node', host('compute-2').nodeUuid, '--node', libvirtHypervisorHostname('compute-5')], [o2, o5]);
      await expectScope(a, CMD, full, ['--cell', 'cell1', '--host', 'compute-5'], []);
      await expectScope(a, CMD, full, ['--host', 'compute-1'], []);
      await expectRefused(a, CMD, ['--host', 'nowhere'], /--host "nowhere": no service, compute node, host mapping or instance has this host/);
      await expectRefused(a, CMD, ['--node', 'nope'], /--node "nope": no compute node/);
      await expectRefused(a, CMD, ['--cell', 'cell9'], /--cell "cell9": no cell has this uuid or name/);

      // Scoped, one unit at a time: 4 with one deferred, 4, then nothing left in scope.
      const first = await plan(a, CMD, '--cell', 'cell1', '--apply', '--max-count', '1');
      expect([first.code, first.doc.applied, first.doc.deferred_units]).toEqual([4, [o2], 1]);
      const second = await plan(a, CMD, '--cell', 'cell1', '--apply', '--max-count', '1');
      expect([second.code, second.doc.applied, second.doc.deferred_units]).toEqual([4, [o3], 0]);
      expect((await plan(a, CMD, '--cell', 'cell1', '--apply', '--max-count', '1')).code).toBe(0);
      const rest = await plan(a, CMD, '--apply');
      expect([rest.code, rest.doc.applied]).toEqual([4, [o5]]);

      const b = await deployment('libvirt', prepare);
      const once = await plan(b, CMD, '--apply');
      expect([once.code, once.doc.applied]).toEqual([4, [o2, o3, o5]]);
      expect(await everything(a)).toEqual(await everything(b));
    },
    TIMEOUT,
  );

  it(
    'placement cleanup_providers: --cell and --resource_provider select exactly their providers; --max-count; scoped then unscoped = unscoped',
    async () => {
      const CMD = ['placement', 'cleanup_providers'];
      const S = STALE_PROVIDER;
      const a = await deployment('stale-provider', async () => {});
      const full = (await plan(a, CMD)).doc;
      const empty = idsNaming(full, S.empty.staleUuid)[0] as string;
      const withAllocations = idsNaming(full, S.withAllocations.staleUuid)[0] as string;
      expect(full.units.map((u) => u.id).sort()).toEqual([empty, withAllocations].sort());

      await expectScope(a, CMD, full, ['--cell', 'cell1'], [empty]);
      await expectScope(a, CMD, full, ['--cell', CELL.cell2], [withAllocations]);
      await expectScope(a, CMD, full, ['--resource_provider', S.withAllocations.staleUuid.toUpperCase()], [withAllocations]);
      await expectScope(a, CMD, full, ['--cell', 'cell1', '--resource_provider', S.withAllocations.staleUuid], []);
      await expectRefused(a, CMD, ['--resource_provider', 'not-a-uuid'], /--resource_provider "not-a-uuid": not a valid UUID/);
      await expectRefused(a, CMD, ['--resource_provider', 'c0ffee00-0000-4000-8000-000000000000'], /--resource_provider c0ffee00-0000-4000-8000-000000000000: no resource provider has this uuid/);

      const scoped = await plan(a, CMD, '--cell', 'cell2', '--apply');
      expect([scoped.code, scoped.doc.applied]).toEqual([4, [withAllocations]]);
      expect((await plan(a, CMD, '--cell', 'cell2', '--apply')).code).toBe(0);
      const rest = await plan(a, CMD, '--apply', '--max-count', '1');
      expect([rest.code, rest.doc.applied, rest.doc.deferred_units]).toEqual([4, [empty], 0]);

      const b = await deployment('stale-provider', async () => {});
      const first = await plan(b, CMD, '--apply', '--max-count', '1');
      expect([first.code, first.doc.applied?.length, first.doc.deferred_units]).toEqual([4, 1, 1]);
      const second = await plan(b, CMD, '--apply', '--max-count', '1');
      expect([second.code, second.doc.applied?.length, second.doc.deferred_units]).toEqual([4, 1, 0]);
      expect((await plan(b, CMD, '--apply')).code).toBe(0);
      expect(await everything(a)).toEqual(await everything(b));
    },
    TIMEOUT,
  );

  it(
    'compute_node rebalance: --cell, --host, --node select exactly their ironic nodes; --max-count; scoped then unscoped = unscoped',
    async () => {
      const CMD = ['compute_node', 'rebalance'];
      const F = IRONIC_FAILOVER;
      const NODE_A = 'a1a1a1a1-0000-4000-8000-00000000000a';
      const NODE_B = 'b2b2b2b2-0000-4000-8000-00000000000b';
      const NODE_C = 'c3c3c3c3-0000-4000-8000-00000000000c';
      // Beside the failed-over node: another node of the dead ironic-compute-0, and in cell2 a node
      // of the forced-down ironic-compute-2 (ironic-compute-3, with node C, is the ring's live member).
      const prepare = async (d: TestDeployment): Promise<void> => {
        const clock = scenarioClock();
        await addIronicNode(d.knex('cell1'), d.knex('placement'), { nodeUuid: NODE_A, host: 'ironic-compute-0', resourceClass: F.resourceClass, clock });
        await addComputeService(d.knex('cell2'), { uuid: 'e0e0e0e0-0000-4000-8000-000000000002', host: 'ironic-compute-2', clock, age: 90 * DAY, lastHeartbeatAgo: 2 * HOUR, forcedDown: true });
        await addComputeService(d.knex('cell2'), { uuid: 'e0e0e0e0-0000-4000-8000-000000000003', host: 'ironic-compute-3', clock, age: 90 * DAY });
        await addIronicNode(d.knex('cell2'), d.knex('placement'), { nodeUuid: NODE_B, host: 'ironic-compute-2', resourceClass: F.resourceClass, clock });
        await addIronicNode(d.knex('cell2'), d.knex('placement'), { nodeUuid: NODE_C, host: 'ironic-compute-3', resourceClass: F.resourceClass, clock });
      };
      const a = await deployment('ironic-failover', prepare);
      const full = (await plan(a, CMD)).doc;
      const [failover, nodeA, nodeB] = [F.nodeUuid, NODE_A, NODE_B].map((n) => idsNaming(full, `ironic node ${n}`)[0] as string) as [string, string, string];
      expect(full.units.map((u) => u.id).sort()).toEqual([failover, nodeA, nodeB].sort());

      await expectScope(a, CMD, full, ['--cell', 'cell2'], [nodeB]);
      await expectScope(a, CMD, full, ['--host', 'IRONIC-COMPUTE-0'], idsNaming(full, `ironic node ${F.nodeUuid}`, `ironic node ${NODE_A}`));
      // The duplicate's host selects the failed-over node too: its rows are on both hosts.
      await expectScope(a, CMD, full, ['--host', 'ironic-compute-1 '], [failover]);
      await expectScope(a, CMD, full, ['--node', F.duplicateUuid], [failover]);
      await expectScope(a, CMD, full, ['--node', NODE_A, '--node', NODE_B], idsNaming(full, `ironic node ${NODE_A}`, `ironic node ${NODE_B}`));
      await expectScope(a, CMD, full, ['--node', NODE_C], []);
      await expectScope(a, CMD, full, ['--cell', 'cell1', '--node', NODE_B], []);
      await expectRefused(a, CMD, ['--host', 'ironic-compute-9'], /--host "ironic-compute-9"/);

      const scoped = await plan(a, CMD, '--host', 'ironic-compute-2', '--apply');
      expect([scoped.code, scoped.doc.applied]).toEqual([4, [nodeB]]);
      const cell1 = idsNaming(full, `ironic node ${F.nodeUuid}`, `ironic node ${NODE_A}`);
      const first = await plan(a, CMD, '--cell', 'cell1', '--apply', '--max-count', '1');
      expect([first.code, first.doc.applied, first.doc.deferred_units]).toEqual([4, [cell1[0]], 1]);
      const second = await plan(a, CMD, '--cell', 'cell1', '--apply', '--max-count', '1');
      expect([second.code, second.doc.applied, second.doc.deferred_units]).toEqual([4, [cell1[1]], 0]);
      expect((await plan(a, CMD, '--apply')).code).toBe(0);

      const b = await deployment('ironic-failover', prepare);
      const once = await plan(b, CMD, '--apply');
      expect([once.code, once.doc.applied?.length]).toEqual([4, 3]);
      expect(await everything(a)).toEqual(await everything(b));
    },
    TIMEOUT,
  );

  it(
    'cell_v2 prune_host_mappings: --cell (name), --cell_uuid, --host select exactly their mappings; --max-count; scoped then unscoped = unscoped',
    async () => {
      const CMD = ['cell_v2', 'prune_host_mappings'];
      const prepare = async (d: TestDeployment): Promise<void> => {
        expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
        await destroyService(d.knex('cell1'), 'compute-2', true);
        await destroyService(d.knex('cell1'), 'compute-3', true);
        await destroyService(d.knex('cell2'), 'compute-5', true);
      };
      const a = await deployment('libvirt', prepare);
      const full = (await plan(a, CMD)).doc;
      const [m2, m3, m5] = ['compute-2', 'compute-3', 'compute-5'].map((h) => idsNaming(full, `mapping of ${h} `)[0] as string) as [string, string, string];
      expect(full.units.map((u) => u.id).sort()).toEqual([m2, m3, m5].sort());

      await expectScope(a, CMD, full, ['--cell', 'cell1'], idsNaming(full, 'mapping of compute-2 ', 'mapping of compute-3 '));
      await expectScope(a, CMD, full, ['--cell_uuid', CELL.cell2], [m5]);
      await expectScope(a, CMD, full, ['--host', 'Compute-3 '], [m3]);
      await expectRefused(a, CMD, ['--cell', 'cell1', '--cell_uuid', CELL.cell1], /give --cell or --cell_uuid, not both/);

      const cell1 = idsNaming(full, 'mapping of compute-2 ', 'mapping of compute-3 ');
      const first = await plan(a, CMD, '--cell', 'cell1', '--apply', '--max-count', '1');
      expect([first.code, first.doc.applied, first.doc.deferred_units]).toEqual([4, [cell1[0]], 1]);
      const second = await plan(a, CMD, '--cell', 'cell1', '--apply', '--max-count', '1');
      expect([second.code, second.doc.applied, second.doc.deferred_units]).toEqual([4, [cell1[1]], 0]);
      const rest = await plan(a, CMD, '--apply');
      expect([rest.code, rest.doc.applied]).toEqual([4, [m5]]);

      const b = await deployment('libvirt', prepare);
      expect((await plan(b, CMD, '--apply')).code).toBe(4);
      expect(await everything(a)).toEqual(await everything(b));
    },
    TIMEOUT,
  );

  it(
    'audit: --cell, --host and --kind select findings; the exit code follows the findings reported; a shared cell name is refused',
    async () => {
      const a = await deployment('libvirt', async (d) => {
        await destroyService(d.knex('cell1'), 'compute-2', false);
        await destroyService(d.knex('cell2'), 'compute-5', false);
      });
      const audit = async (...args: string[]): Promise<{ code: number; findings: Array<{ kind: string; cell_uuid: string | null; objects: { host?: string } }> }> => {
        const r = await runBin([...a.args, 'audit', '--format', 'json', ...args]);
        if (!r.stdout.startsWith('{')) throw new Error(`audit ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
        return { code: r.code, findings: (JSON.parse(r.stdout) as { findings: Array<{ kind: string; cell_uuid: string | null; objects: { host?: string } }> }).findings };
      };
      const all = await audit();
      const KIND = 'orphan-node-service-deleted';
      const orphans = await audit('--kind', KIND);
      expect(orphans.code).toBe(3);
      expect(orphans.findings).toEqual(all.findings.filter((f) => f.kind === KIND));
      expect(orphans.findings.map((f) => f.objects.host).sort()).toEqual(['compute-2', 'compute-5']);

      const one = await audit('--kind', `${KIND},unmapped-service`, '--host', 'COMPUTE-5 ');
      expect(one.findings.map((f) => [f.kind, f.objects.host])).toEqual([[KIND, 'compute-5']]);
      const byCell = await audit('--cell', 'cell1', '--kind', KIND);
      expect(byCell.findings.map((f) => f.objects.host)).toEqual(['compute-2']);
      const byHost = await audit('--host', 'compute-4');
      expect(byHost.findings.length).toBeGreaterThan(0);
      expect(byHost.findings.every((f) => f.objects.host === 'compute-4')).toBe(true);
      expect(byHost.findings).toEqual(all.findings.filter((f) => f.objects.host === 'compute-4'));

      // Nothing of these kinds: exit 0, though the deployment has other findings.
      const clean = await audit('--kind', 'wrong-cell-mapping,duplicate-compute-node');
      expect([clean.code, clean.findings]).toEqual([0, []]);

      for (const [args, message] of [
        [['--kind', 'bogus'], /--kind "bogus": unknown kind bogus/],
        [['--host', 'nowhere'], /--host "nowhere"/],
      ] as const) {
        const r = await runBin([...a.args, 'audit', ...args]);
        expect([r.code, r.stdout]).toEqual([127, '']);
        expect(r.stderr).toMatch(message);
      }
      // Two cells named cell1: the name is refused, the uuid still works.
      await a.knex('api')('cell_mappings').update({ name: 'cell1' }).where('uuid', CELL.cell2);
      const ambiguous = await runBin([...a.args, 'audit', '--cell', 'cell1']);
      expect([ambiguous.code, ambiguous.stdout]).toEqual([127, '']);
      expect(ambiguous.stderr).toMatch(/--cell "cell1": 2 cells have this name/);
      expect((await audit('--cell', CELL.cell2, '--kind', KIND)).findings.map((f) => f.objects.host)).toEqual(['compute-5']);
    },
    TIMEOUT,
  );
});
