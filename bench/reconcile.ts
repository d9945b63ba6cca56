// The rest of the commands on generated clouds (src/sandbox/scale-cloud.ts):
// list_hosts, audit, placement audit, cleanup_orphans, cleanup_providers
// (plan, apply and undo) on libvirt clouds of N hosts, and rebalance on an
// ironic cloud whose hosts half failed over. Each figure is the whole
// `nova-reconcile --stats` process; each run's exit code is checked, and an
// undo must bring the plan back unit for unit, or the benchmark stops.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type Connection } from 'mysql2/promise';
import { generateCloud, type CloudOptions, type CloudResult } from '../src/sandbox/scale-cloud.js';
import { formatRatio, formatSeconds, markdownTable, median, type GrowthPoint, type NovaFigure } from './report.js';
import { NOVA_MANAGE_MAIN, novaStderrWithoutWarning, runTimed, runWithStats, type NovaInstall } from './processes.js';
import { createScratchDeployment, type ScratchDeployment, type Server } from './scratch-deployment.js';

export interface ReconcileContext {
  readonly server: Server;
  readonly cli: string;
  readonly runs: number;
  readonly nova: NovaInstall | undefined;
  /** The real nova-manage is run up to this many hosts. */
  readonly novaMaxHosts: number;
  readonly progress: (message: string) => void;
}

export interface ReconcileRow {
  readonly size: string;
  readonly command: string;
  readonly ours: number;
  readonly oursRuns: readonly number[];
  readonly nova: NovaFigure;
  readonly floor: number | undefined;
  readonly roundTrips: number;
  readonly peakRssKb: number;
  readonly note: string;
}

export interface ReconcileSection {
  readonly rows: readonly ReconcileRow[];
  readonly clouds: readonly string[];
  readonly targets: readonly ReconcileTarget[];
}

export interface ReconcileTarget {
  readonly what: string;
  readonly value: string;
  readonly met: boolean;
  readonly note: string;
}

const TIMEOUT_MS = 10 * 60_000;

/** Broken shares of the libvirt clouds: enough to plan hundreds of units at 30,000 hosts. */
export const LIBVIRT_BROKEN = { orphanFraction: 0.01, staleProviderFraction: 0.01 } as const;
/**
 * Orphan nodes: 1,000 from 10,000 hosts up (issue 20's "cleanup apply of
 * 1,000 units"), 1% of the hosts beyond 100,000, 10% below 10,000.
 */
export function orphanFractionFor(hosts: number): number {
  return Math.max(LIBVIRT_BROKEN.orphanFraction, Math.min(0.1, 1000 / hosts));
}
/** 30,000 nodes carry 100,000 allocations (3 per libvirt instance), as the issue's audit target. */
export const INSTANCES_PER_HOST = 10 / 9;

/** The rebalance cloud: 1,000 ironic nodes on 4 hosts, 2 of which died and failed over. */
export const REBALANCE_CLOUD: CloudOptions = { hostsPerCell: 4, nodesPerHost: 250, failedOverFraction: 0.5 };

export async function benchmarkReconcile(ctx: ReconcileContext, hostSizes: readonly number[]): Promise<ReconcileSection> {
  const rows: ReconcileRow[] = [];
  const clouds: string[] = [];
  for (const hosts of hostSizes) {
    const opts: CloudOptions = { hostsPerCell: hosts, instancesPerCell: Math.round(hosts * INSTANCES_PER_HOST), ...LIBVIRT_BROKEN, orphanFraction: orphanFractionFor(hosts) };
    await withCloud(ctx, opts, async (d, cloud, label) => {
      clouds.push(describeCloud(label, cloud));
      const floor = await openReadFloor(ctx.server, d);
      try {
        rows.push((await measure(ctx, d, label, ['cell_v2', 'list_hosts'], 0, { floor: () => floor.listHosts(), novaHosts: hosts })).row);
        rows.push((await measure(ctx, d, label, ['audit'], 3, { floor: () => floor.snapshot() })).row);
        rows.push((await measure(ctx, d, label, ['placement', 'audit'], 3, { floor: () => floor.placementAudit(), note: 'nova-manage needs a Placement API endpoint: not run' })).row);
        // Every instance has its allocations: a walk over all of them that heals nothing (exit 4, as a dry run always is).
        rows.push(
          (await measure(ctx, d, label, ['placement', 'heal_allocations', '--dry-run'], 4, { floor: () => floor.snapshot(), note: 'nova-manage needs a Placement API endpoint: not run' })).row,
        );
      } finally {
        await floor.close();
      }
      rows.push(...(await planApplyUndo(ctx, d, label, ['compute_node', 'cleanup_orphans'], cloud.orphanNodes)));
      rows.push(...(await planApplyUndo(ctx, d, label, ['placement', 'cleanup_providers'], cloud.staleProviders)));
    });
  }
  await withCloud(ctx, REBALANCE_CLOUD, async (d, cloud, label) => {
    clouds.push(describeCloud(label, cloud));
    rows.push(...(await planApplyUndo(ctx, d, label, ['compute_node', 'rebalance'], cloud.duplicateNodes)));
  });
  return { rows, clouds, targets: checkReconcileTargets(rows) };
}

export async function withCloud(
  ctx: ReconcileContext,
  opts: CloudOptions,
  fn: (d: ScratchDeployment, cloud: CloudResult, label: string) => Promise<void>,
): Promise<void> {
  const nodes = opts.hostsPerCell * (opts.nodesPerHost ?? 1);
  const label = opts.nodesPerHost === undefined ? `${opts.hostsPerCell.toLocaleString('en-US')} hosts` : `${nodes.toLocaleString('en-US')} ironic nodes`;
  ctx.progress(`${label}: creating the cloud`);
  const d = await createScratchDeployment(ctx.server, 1, { withPlacement: true });
  try {
    const started = Date.now();
    if (d.placement === undefined) throw new Error('internal: scratch deployment without placement');
    const cloud = await generateCloud({ ...d.scaleDatabases, placement: d.placement }, opts);
    ctx.progress(`${label}: generated in ${formatSeconds((Date.now() - started) / 1000)} s: ${describeCloud(label, cloud)}`);
    await fn(d, cloud, label);
  } finally {
    await d.drop();
  }
}

function describeCloud(label: string, c: CloudResult): string {
  return (
    `${label}: ${c.computeNodes.toLocaleString('en-US')} compute nodes, ${c.providers.toLocaleString('en-US')} providers, ` +
    `${c.instances.toLocaleString('en-US')} instances, ${c.allocations.toLocaleString('en-US')} allocations; broken: ` +
    `${c.orphanNodes} orphan nodes, ${c.staleProviders} stale providers, ${c.duplicateNodes} duplicate nodes`
  );
}

interface MeasureOptions {
  readonly floor?: () => Promise<number>;
  /** Run the real nova-manage with the same arguments too (a compatible command), at this many hosts. */
  readonly novaHosts?: number;
  readonly runs?: number;
  readonly note?: string;
  readonly label?: string;
}

interface OneRun {
  readonly seconds: number;
  readonly stdout: string;
  readonly roundTrips: number;
  readonly maxRssKb: number;
}

async function runOurs(ctx: ReconcileContext, d: ScratchDeployment, args: readonly string[], expectCode: number): Promise<OneRun> {
  const { run, stats } = await runWithStats([ctx.cli, '--stats', '--config-file', d.confPath, ...args], args.join(' '), expectCode, TIMEOUT_MS);
  return { seconds: run.seconds, stdout: run.stdout, roundTrips: stats.roundTrips, maxRssKb: stats.maxRssKb };
}

async function measure(ctx: ReconcileContext, d: ScratchDeployment, size: string, args: readonly string[], expectCode: number, opts: MeasureOptions = {}): Promise<{ readonly row: ReconcileRow; readonly stdout: string }> {
  const command = opts.label ?? args.join(' ');
  const runs: OneRun[] = [];
  for (let r = 0; r < (opts.runs ?? ctx.runs); r += 1) runs.push(await runOurs(ctx, d, args, expectCode));
  const floors: number[] = [];
  if (opts.floor !== undefined) for (let r = 0; r < ctx.runs; r += 1) floors.push(await opts.floor());
  let nova: NovaFigure = { kind: 'none' };
  let note = opts.note ?? '';
  if (opts.novaHosts !== undefined && ctx.nova !== undefined) {
    if (opts.novaHosts <= ctx.novaMaxHosts) {
      const theirs = await runNova(ctx.nova, d, args, expectCode);
      nova = { kind: 'measured', seconds: theirs.seconds };
      note = theirs.stdout === (runs[0]?.stdout ?? '') ? 'stdout identical to nova-manage' : 'stdout DIFFERS from nova-manage';
    } else {
      note = `nova-manage not run above ${ctx.novaMaxHosts.toLocaleString('en-US')} hosts`;
    }
  }
  const row: ReconcileRow = {
    size,
    command,
    ours: median(runs.map((r) => r.seconds)),
    oursRuns: runs.map((r) => r.seconds),
    nova,
    floor: floors.length === 0 ? undefined : median(floors),
    roundTrips: runs[0]?.roundTrips ?? 0,
    peakRssKb: Math.max(...runs.map((r) => r.maxRssKb)),
    note,
  };
  ctx.progress(`${size}: ${command}: ${row.oursRuns.map(formatSeconds).join(' / ')} s, ${row.roundTrips} round trips, ${(row.peakRssKb / 1024).toFixed(1)} MB`);
  return { row, stdout: runs[0]?.stdout ?? '' };
}

/**
 * The dry run (median), then one --apply and one undo of its journal: the
 * undo must bring back exactly the planned units, so the next dry run plans
 * them again (and the next size or command starts from the same cloud).
 */
export async function planApplyUndo(ctx: ReconcileContext, d: ScratchDeployment, size: string, args: readonly string[], expectedUnits: number): Promise<ReconcileRow[]> {
  const plan = await measure(ctx, d, size, [...args, '--format', 'json'], 3, { label: `${args.join(' ')} (plan)` });
  const units = unitsIn(plan.stdout);
  if (units !== expectedUnits) throw new Error(`${args.join(' ')} planned ${units} units on ${size}, the cloud has ${expectedUnits} broken objects`);
  const journalDir = join(d.confPath, '..', 'journal');
  const before = new Set(listJournals(journalDir));
  const apply = await measure(ctx, d, size, [...args, '--apply'], 4, { runs: 1, label: `${args.join(' ')} --apply (${units} units)` });
  const journal = listJournals(journalDir).find((j) => !before.has(j));
  if (journal === undefined) throw new Error(`${args.join(' ')} --apply left no journal in ${journalDir}`);
  const undo = await measure(ctx, d, size, ['undo', join(journalDir, journal), '--apply'], 4, { runs: 1, label: `undo of that journal` });
  const again = await countUnits(ctx, d, args);
  if (again !== units) throw new Error(`after undo, ${args.join(' ')} plans ${again} units, not the ${units} it applied`);
  return [plan.row, apply.row, undo.row];
}

async function countUnits(ctx: ReconcileContext, d: ScratchDeployment, args: readonly string[]): Promise<number> {
  return unitsIn((await runOurs(ctx, d, [...args, '--format', 'json'], 3)).stdout);
}

function unitsIn(planJson: string): number {
  return (JSON.parse(planJson) as { units: unknown[] }).units.length;
}

function listJournals(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.jsonl') && !f.startsWith('undo-'));
  } catch {
    return [];
  }
}

async function runNova(nova: NovaInstall, d: ScratchDeployment, args: readonly string[], expectCode: number): Promise<{ seconds: number; stdout: string }> {
  const run = await runTimed(nova.python, ['-c', NOVA_MANAGE_MAIN, '--config-file', d.confPath, ...args], TIMEOUT_MS);
  if (run.code !== expectCode) throw new Error(`nova-manage ${args.join(' ')} exited ${run.code}: ${novaStderrWithoutWarning(run.stderr)}`);
  return { seconds: run.seconds, stdout: run.stdout };
}

interface ReadFloor {
  listHosts(): Promise<number>;
  /** Every row the audit's snapshot reads, from all databases at once. */
  snapshot(): Promise<number>;
  /** Allocations, consumers and the instance and migration uuids nova's audit checks them against. */
  placementAudit(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The floor of a read-only command: the bare SELECTs of the rows it needs,
 * over connections opened beforehand, one per database, in parallel.
 */
async function openReadFloor(server: Server, d: ScratchDeployment): Promise<ReadFloor> {
  const cell = d.cells[0];
  if (cell === undefined || d.placementDatabase === undefined) throw new Error('internal: the read floor needs a cell and placement');
  const names = { api: d.apiDatabase, cell: cell.database, placement: d.placementDatabase };
  const conns = new Map<string, Connection>();
  for (const [key, database] of Object.entries(names)) {
    const options: Parameters<typeof createConnection>[0] = { host: server.host, port: server.port, user: server.user, database, timezone: 'Z', dateStrings: true };
    if (server.password !== undefined) options.password = server.password;
    conns.set(key, await createConnection(options));
  }
  const timed = async (work: Record<string, readonly string[]>): Promise<number> => {
    const started = process.hrtime.bigint();
    await Promise.all(
      Object.entries(work).map(async ([db, statements]) => {
        const conn = conns.get(db);
        if (conn === undefined) throw new Error(`internal: no floor connection to ${db}`);
        for (const sql of statements) await conn.query(sql);
      }),
    );
    return Number(process.hrtime.bigint() - started) / 1e9;
  };
  return {
    listHosts: () => timed({ api: ['SELECT hm.host, c.uuid, c.name FROM host_mappings hm JOIN cell_mappings c ON c.id = hm.cell_id ORDER BY c.name, hm.host'] }),
    snapshot: () =>
      timed({
        api: ['SELECT uuid, name, database_connection FROM cell_mappings', 'SELECT hm.id, hm.host, c.uuid FROM host_mappings hm JOIN cell_mappings c ON c.id = hm.cell_id'],
        cell: [
          'SELECT id, uuid, host, `binary`, disabled, forced_down, last_seen_up, created_at, updated_at, deleted FROM services',
          'SELECT id, uuid, host, hypervisor_hostname, hypervisor_type, service_id, mapped, created_at, updated_at, deleted FROM compute_nodes',
          'SELECT id, uuid, host, node, vm_state, task_state FROM instances WHERE deleted = 0',
          "SELECT id, uuid, instance_uuid, source_compute, dest_compute, status FROM migrations WHERE deleted = 0 AND status NOT IN ('confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled', 'done')",
        ],
        placement: [
          'SELECT id, uuid, name, generation, root_provider_id, parent_provider_id FROM resource_providers',
          'SELECT resource_provider_id, trait_id FROM resource_provider_traits',
          'SELECT id, resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio FROM inventories',
          'SELECT id, resource_provider_id, consumer_id, resource_class_id, used FROM allocations',
          'SELECT id, uuid, generation, project_id, user_id FROM consumers',
        ],
      }),
    placementAudit: () =>
      timed({
        placement: ['SELECT rp.uuid, a.consumer_id, a.resource_class_id, a.used FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id'],
        cell: ['SELECT uuid FROM instances WHERE deleted = 0', 'SELECT uuid FROM migrations WHERE deleted = 0'],
      }),
    close: async () => {
      await Promise.all([...conns.values()].map((c) => c.end().catch(() => undefined)));
    },
  };
}

/** The issue's targets for these commands (bench/README.md). */
export const RECONCILE_TARGETS = {
  auditSeconds: 5,
  auditRssMb: 300,
  placementAuditSeconds: 5,
  /** heal_allocations --dry-run: the audit's targets (issue 14). */
  healSeconds: 5,
  healRssMb: 300,
  rebalanceSeconds: 3,
  /** Issue 20: an undo takes at most this many times its apply. */
  maxUndoFactor: 1.2,
  /** Issue 20: seconds of a cleanup --apply (compute_node cleanup_orphans, placement cleanup_providers) of 1,000 units or more. */
  cleanupApplySeconds: 2,
  /** Issue 20: the audit at 100,000 hosts, seconds; and its RSS against 30,000 hosts. */
  auditSecondsAt100k: 8,
  maxRssGrowth30kTo100k: 1.3,
} as const;

export function checkReconcileTargets(rows: readonly ReconcileRow[]): ReconcileTarget[] {
  const out: ReconcileTarget[] = [];
  const at30k = (command: string): ReconcileRow | undefined => rows.find((r) => r.size === '30,000 hosts' && r.command === command);
  const audit = at30k('audit');
  if (audit !== undefined) {
    out.push({ what: `audit, 30,000 hosts: ≤ ${RECONCILE_TARGETS.auditSeconds} s`, value: `${formatSeconds(audit.ours)} s`, met: audit.ours <= RECONCILE_TARGETS.auditSeconds, note: '' });
    const mb = audit.peakRssKb / 1024;
    out.push({ what: `audit, 30,000 hosts: ≤ ${RECONCILE_TARGETS.auditRssMb} MB RSS`, value: `${mb.toFixed(1)} MB`, met: mb <= RECONCILE_TARGETS.auditRssMb, note: '' });
  }
  const placementAudit = at30k('placement audit');
  if (placementAudit !== undefined) {
    out.push({
      what: `placement audit, 30,000 hosts: ≤ ${RECONCILE_TARGETS.placementAuditSeconds} s`,
      value: `${formatSeconds(placementAudit.ours)} s`,
      met: placementAudit.ours <= RECONCILE_TARGETS.placementAuditSeconds,
      note: '',
    });
  }
  const heal = at30k('placement heal_allocations --dry-run');
  if (heal !== undefined) {
    out.push({ what: `placement heal_allocations --dry-run, 30,000 hosts: ≤ ${RECONCILE_TARGETS.healSeconds} s`, value: `${formatSeconds(heal.ours)} s`, met: heal.ours <= RECONCILE_TARGETS.healSeconds, note: '' });
    const mb = heal.peakRssKb / 1024;
    out.push({ what: `placement heal_allocations --dry-run, 30,000 hosts: ≤ ${RECONCILE_TARGETS.healRssMb} MB RSS`, value: `${mb.toFixed(1)} MB`, met: mb <= RECONCILE_TARGETS.healRssMb, note: '' });
  }
  out.push(...checkIssue20Targets(rows));
  const rebalance = rows.find((r) => r.command.startsWith('compute_node rebalance --apply'));
  if (rebalance !== undefined) {
    out.push({
      what: `${rebalance.command}, 1,000 ironic nodes: ≤ ${RECONCILE_TARGETS.rebalanceSeconds} s`,
      value: `${formatSeconds(rebalance.ours)} s`,
      met: rebalance.ours <= RECONCILE_TARGETS.rebalanceSeconds,
      note: rebalance.ours <= RECONCILE_TARGETS.rebalanceSeconds ? '' : 'one compare-and-swap transaction per change: the round trips cost client CPU (bench/README.md, "Rebalance and its 3 s target")',
    });
  }
  return out;
}

/** Issue 20's targets: undo against its apply, a 1,000-unit cleanup, the audit at 100,000 hosts. */
function checkIssue20Targets(rows: readonly ReconcileRow[]): ReconcileTarget[] {
  const out: ReconcileTarget[] = [];
  rows.forEach((undo, i) => {
    const apply = rows[i - 1];
    if (undo.command !== 'undo of that journal' || apply === undefined) return;
    const factor = undo.ours / apply.ours;
    out.push({
      what: `undo of ${apply.command}, ${undo.size}: ≤ ${RECONCILE_TARGETS.maxUndoFactor}× the apply`,
      value: formatRatio(factor),
      met: factor <= RECONCILE_TARGETS.maxUndoFactor,
      note: factor <= RECONCILE_TARGETS.maxUndoFactor ? '' : `${formatSeconds(undo.ours)} s against ${formatSeconds(apply.ours)} s: undo restores placement one change at a time and the other databases ${'[nova_reconcile] apply_concurrency'} changes at a time, the apply runs that many units side by side`,
    });
  });
  for (const r of rows) {
    const units = /^(?:compute_node cleanup_orphans|placement cleanup_providers) --apply \(([\d,]+) units\)$/.exec(r.command);
    if (units === null || Number((units[1] ?? '').replace(/,/g, '')) < 1000) continue;
    out.push({ what: `${r.command}, ${r.size}: ≤ ${RECONCILE_TARGETS.cleanupApplySeconds} s`, value: `${formatSeconds(r.ours)} s`, met: r.ours <= RECONCILE_TARGETS.cleanupApplySeconds, note: `${r.roundTrips} round trips` });
  }
  const audit = (size: string): ReconcileRow | undefined => rows.find((r) => r.size === size && r.command === 'audit');
  const at100k = audit('100,000 hosts');
  if (at100k !== undefined) {
    const mb = at100k.peakRssKb / 1024;
    out.push({ what: `audit, 100,000 hosts: ≤ ${RECONCILE_TARGETS.auditSecondsAt100k} s`, value: `${formatSeconds(at100k.ours)} s`, met: at100k.ours <= RECONCILE_TARGETS.auditSecondsAt100k, note: '' });
    out.push({ what: `audit, 100,000 hosts: ≤ ${RECONCILE_TARGETS.auditRssMb} MB RSS`, value: `${mb.toFixed(1)} MB`, met: mb <= RECONCILE_TARGETS.auditRssMb, note: 'the allocations are streamed; the nodes, services, providers and instances and their index are held (bench/README.md, "Memory")' });
    const at30k = audit('30,000 hosts');
    if (at30k !== undefined) {
      const growth = at100k.peakRssKb / at30k.peakRssKb;
      out.push({ what: `audit: RSS at 100,000 hosts ≤ ${RECONCILE_TARGETS.maxRssGrowth30kTo100k}× RSS at 30,000`, value: formatRatio(growth), met: growth <= RECONCILE_TARGETS.maxRssGrowth30kTo100k, note: `${(at30k.peakRssKb / 1024).toFixed(1)} MB → ${mb.toFixed(1)} MB` });
    }
  }
  return out;
}

/** The reconciliation rows as growth points: an apply without its unit count, an undo named by its apply. */
export function reconcileGrowth(rows: readonly ReconcileRow[]): GrowthPoint[] {
  return rows.map((r, i) => {
    const previous = rows[i - 1];
    const command = r.command === 'undo of that journal' && previous !== undefined ? `undo of ${previous.command}` : r.command;
    return { size: r.size, scale: Number((/^[\d,]+/.exec(r.size)?.[0] ?? '0').replace(/,/g, '')), command: command.replace(/ \([\d,]+ units\)/, ''), roundTrips: r.roundTrips, peakRssKb: r.peakRssKb };
  });
}

export function renderReconcileTables(section: ReconcileSection): string {
  const header = ['size', 'command', 'ours (s)', 'nova-manage (s)', 'nova/ours', 'floor (s)', 'ours/floor', 'round trips', 'peak RSS (MB)', 'note'];
  const rows = section.rows.map((r) => [
    r.size,
    r.command,
    formatSeconds(r.ours),
    r.nova.kind === 'none' ? '–' : formatSeconds(r.nova.seconds),
    r.nova.kind === 'none' ? '–' : formatRatio(r.nova.seconds / r.ours),
    r.floor === undefined ? '–' : formatSeconds(r.floor),
    r.floor === undefined ? '–' : formatRatio(r.ours / r.floor),
    String(r.roundTrips),
    (r.peakRssKb / 1024).toFixed(1),
    r.note,
  ]);
  const targets = section.targets.map((t) => [t.what, t.value, t.met ? 'met' : 'MISSED', t.note]);
  return [
    markdownTable(header, rows, [false, false, true, true, true, true, true, true, true, false]),
    '',
    markdownTable(['target', 'value', 'result', 'note'], targets, [false, true, false, false]),
  ].join('\n');
}

/** The Markdown section of RESULTS.md. */
export function renderReconcileSection(section: ReconcileSection): string {
  return [
    '## The other commands',
    '',
    'Generated clouds (src/sandbox/scale-cloud.ts), one cell, as Nova and Placement write them:',
    '',
    ...section.clouds.map((c) => `- ${c}`),
    '',
    '"(plan)" is the dry run with `--format json` (exit 3), median of the runs; `--apply` (exit 4) and the',
    '`undo` of its journal (exit 4) are one run each, and after the undo the dry run must plan the same',
    'units again. The floor of a read-only command is the bare SELECTs of the rows it reads, over',
    'connections opened beforehand, one per database, in parallel. list_hosts is compared byte for byte',
    "with the real nova-manage's output where nova-manage runs.",
    '',
    renderReconcileTables(section),
  ].join('\n');
}
