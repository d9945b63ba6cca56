// A 3-node Galera cluster next to the single server (issue 17): the same
// generated cloud (src/sandbox/scale-cloud.ts) is built once on the main
// server and once on a throw-away 3-node cluster on 127.0.0.1
// (bench/galera-cluster.ts), reached through node 1 for every database; on
// each, discover_hosts (first run, every host unmapped before each run) and
// compute_node cleanup_orphans (plan, --apply, undo of its journal) are timed
// as whole `nova-reconcile --stats` processes. On the cluster every write is
// certified and replicated to two more nodes before COMMIT returns, every
// read waits for causality (wsrep_sync_wait = 1), and --apply takes the lease
// row instead of GET_LOCK: the ratios say what that costs.
import { existsSync } from 'node:fs';
import { resetDiscovery } from '../src/sandbox/scale-generator.js';
import { galeraMissing, startGaleraCluster, type GaleraCluster } from './galera-cluster.js';
import { runWithStats, type BenchContext } from './processes.js';
import { INSTANCES_PER_HOST, LIBVIRT_BROKEN, planApplyUndo, withCloud, type ReconcileContext, type ReconcileRow } from './reconcile.js';
import { formatRatio, formatSeconds, markdownTable, median } from './report.js';
import type { Server } from './scratch-deployment.js';
import type { ScratchDeployment } from './scratch-deployment.js';
import { count, WrongResultError } from './verify.js';

const RUN_TIMEOUT_MS = 10 * 60_000;
/** Each node's buffer pool: Debian's default for the single server is 128 MB, so the cluster's nodes get the same. */
const NODE_BUFFER_POOL_MB = 128;

export interface GaleraBenchOptions extends BenchContext {
  readonly hosts: number;
}

export interface GaleraTargetRows {
  /** "single server 127.0.0.1:3306" or "3-node Galera, node 1 127.0.0.1:41234". */
  readonly target: string;
  readonly rows: readonly ReconcileRow[];
}

export type GaleraSection =
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'measured'; readonly hosts: number; readonly single: GaleraTargetRows; readonly galera: GaleraTargetRows; readonly startSeconds: number; readonly cloud: string };

export async function benchmarkGalera(opts: GaleraBenchOptions): Promise<GaleraSection> {
  const missing = galeraMissing() ?? (existsSync('/usr/sbin/mariadbd') ? undefined : '/usr/sbin/mariadbd not found');
  if (missing !== undefined) return { kind: 'skipped', reason: missing };
  const single = await measureOn(opts, opts.server, `single server ${opts.server.host}:${opts.server.port}`);
  const t0 = Date.now();
  opts.progress('galera: starting a 3-node cluster');
  let cluster: GaleraCluster | undefined;
  try {
    cluster = await startGaleraCluster((line) => opts.progress(`galera: ${line}`), { bufferPoolMb: NODE_BUFFER_POOL_MB });
    const startSeconds = (Date.now() - t0) / 1000;
    const node1: Server = { host: '127.0.0.1', port: cluster.nodes[0]?.port ?? 0, user: 'root', password: undefined };
    const galera = await measureOn(opts, node1, `3-node Galera, through node 1 (127.0.0.1:${node1.port})`);
    return { kind: 'measured', hosts: opts.hosts, single: single.rows, galera: galera.rows, startSeconds, cloud: single.cloud };
  } finally {
    await cluster?.stop();
  }
}

async function measureOn(opts: GaleraBenchOptions, server: Server, target: string): Promise<{ rows: GaleraTargetRows; cloud: string }> {
  const rows: ReconcileRow[] = [];
  const ctx: ReconcileContext = { server, cli: opts.cli, runs: opts.runs, nova: undefined, novaMaxHosts: 0, progress: (m) => opts.progress(`galera: ${target}: ${m}`) };
  let cloudLine = '';
  await withCloud(ctx, { hostsPerCell: opts.hosts, instancesPerCell: Math.round(opts.hosts * INSTANCES_PER_HOST), ...LIBVIRT_BROKEN }, async (d, cloud, label) => {
    cloudLine = `${label}: ${cloud.computeNodes.toLocaleString('en-US')} compute nodes, ${cloud.providers.toLocaleString('en-US')} providers, ${cloud.orphanNodes} orphan nodes`;
    // discover_hosts, first run: every host unmapped before each run.
    const seconds: number[] = [];
    let roundTrips = 0;
    let peak = 0;
    for (let r = 0; r < opts.runs; r += 1) {
      await resetDiscovery(d.scaleDatabases);
      const { run, stats } = await runWithStats([opts.cli, '--stats', '--config-file', d.confPath, 'cell_v2', 'discover_hosts'], `${target}: discover_hosts`, 0, RUN_TIMEOUT_MS);
      await verifyNodePath(d, `discover_hosts on ${target}`);
      seconds.push(run.seconds);
      roundTrips = stats.roundTrips;
      peak = Math.max(peak, stats.maxRssKb);
      ctx.progress(`discover_hosts (first run): ${formatSeconds(run.seconds)} s`);
    }
    rows.push({ size: label, command: 'cell_v2 discover_hosts (first run)', ours: median(seconds), oursRuns: seconds, nova: { kind: 'none' }, floor: undefined, roundTrips, peakRssKb: peak, note: '' });
    rows.push(...(await planApplyUndo(ctx, d, label, ['compute_node', 'cleanup_orphans'], cloud.orphanNodes)));
  });
  return { rows: { target, rows }, cloud: cloudLine };
}

/**
 * The cloud's orphan hosts have no service left, so verify.ts's "every
 * service's host mapped" does not apply: here every live compute node must
 * be marked mapped and its host mapped to the cell, and nothing else mapped.
 */
async function verifyNodePath(d: ScratchDeployment, after: string): Promise<void> {
  const cell = d.cells[0];
  if (cell === undefined) throw new Error('internal: a deployment without a cell');
  const one = (sql: string, bindings: readonly number[] = []): Promise<number> => count(d.api, sql, bindings);
  const hosts = await one(`SELECT COUNT(DISTINCT host) AS n FROM \`${cell.database}\`.compute_nodes WHERE deleted = 0`);
  const mapped = await one(
    `SELECT COUNT(DISTINCT c.host) AS n FROM \`${cell.database}\`.compute_nodes c JOIN \`${d.apiDatabase}\`.host_mappings h ON h.host = c.host AND h.cell_id = ? WHERE c.deleted = 0`,
    [cell.id],
  );
  const total = await one('SELECT COUNT(*) AS n FROM host_mappings');
  const unmarked = await one(`SELECT COUNT(*) AS n FROM \`${cell.database}\`.compute_nodes WHERE deleted = 0 AND mapped < 1`);
  if (mapped !== hosts || total !== hosts || unmarked !== 0)
    throw new WrongResultError(`wrong result after ${after}: ${mapped} of ${hosts} compute hosts mapped to their cell, ${total} host mappings, ${unmarked} live nodes with mapped = 0`);
}

export function renderGaleraTable(s: Extract<GaleraSection, { kind: 'measured' }>): string {
  const rows = s.single.rows.map((one, i) => {
    const other = s.galera.rows[i];
    const g = other?.ours ?? NaN;
    return [one.command, formatSeconds(one.ours), formatSeconds(g), formatRatio(g / one.ours), String(one.roundTrips), String(other?.roundTrips ?? '–')];
  });
  return markdownTable(['command', 'single server (s)', '3-node Galera (s)', 'Galera/single', 'round trips (single)', 'round trips (Galera)'], rows, [false, true, true, true, true, true]);
}

export function renderGaleraSection(s: GaleraSection, runs: number): string {
  if (s.kind === 'skipped') return `## A 3-node Galera cluster next to one server\n\nNot measured: ${s.reason}.\n`;
  return [
    '## A 3-node Galera cluster next to one server',
    '',
    `The same generated cloud (${s.cloud}, with placement) on the main server and on a throw-away 3-node`,
    `Galera cluster on this machine (galera-4, ${NODE_BUFFER_POOL_MB} MB buffer pool per node, started in ${formatSeconds(s.startSeconds)} s),`,
    'every database reached through node 1. discover_hosts: median of ' + `${runs} first runs; the plan: median of ${runs}; --apply and the undo of its`,
    'journal: one run each, and the plan must come back unit for unit after the undo. All three nodes share the',
    "machine's 2 cores, so every write's replication competes with the tool for CPU: a real cluster on three",
    'hosts pays a network round trip per COMMIT instead.',
    '',
    renderGaleraTable(s),
    '',
    `Where: ${s.single.target}; ${s.galera.target}.`,
    '',
  ].join('\n');
}
