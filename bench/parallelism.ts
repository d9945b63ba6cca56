// Cell parallelism across database servers: `discover_hosts` (first run, node
// path) with one cell on one server against several cells spread over several
// servers, the same hosts per cell. nova-reconcile works on the cells
// concurrently ([nova_reconcile] cell_concurrency, default 4), so four cells
// should take well under four times one cell; the same four cells with
// cell_concurrency = 1 are the serial comparison. See bench/README.md,
// "Several servers".
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { generateScale, resetDiscovery } from '../src/sandbox/scale-generator.js';
import { runWithStats } from './processes.js';
import { formatSeconds, markdownTable, median } from './report.js';
import { createScratchDeployment, type ScratchDeployment, type Server } from './scratch-deployment.js';
import { startServers, stopAllServers } from './servers.js';
import { WrongResultError } from './verify.js';

const RUN_TIMEOUT_MS = 10 * 60_000;

export interface ParallelismOptions {
  /** The main server: API, cell0 and server 0 of the cells. */
  readonly server: Server;
  /** Servers the cells are spread over, the main one included (extra ones are started). */
  readonly servers: number;
  /** Cells of the many-cell case. */
  readonly cells: number;
  readonly hostsPerCell: number;
  readonly runs: number;
  /** The nova-reconcile launcher (bin/nova-reconcile). */
  readonly cli: string;
  readonly progress: (line: string) => void;
}

export interface ParallelismCase {
  readonly cells: number;
  readonly servers: number;
  readonly cellConcurrency: number;
  readonly hostsPerCell: number;
  /** Wall-clock seconds of each run, process start included. */
  readonly runs: readonly number[];
  /** elapsed_ms of each run's stats: line: the run minus process start. */
  readonly inProcessMs: readonly number[];
  readonly roundTrips: number;
}

export interface ParallelismResult {
  /** The single-cell baseline first, then the many-cell cases (concurrency high, then 1). */
  readonly cases: readonly ParallelismCase[];
  /** Ports of the servers, for the notes: "127.0.0.1:3306 (main), 127.0.0.1:41234 (started)". */
  readonly serverList: readonly string[];
  /** Seconds to start the extra servers. */
  readonly startSeconds: number;
}

/** The default cell_concurrency, stated explicitly in the config of the parallel cases. */
export const DEFAULT_CELL_CONCURRENCY = 4;

export async function measureParallelism(opts: ParallelismOptions): Promise<ParallelismResult> {
  const { progress } = opts;
  let t = Date.now();
  progress(`parallelism: starting ${opts.servers - 1} extra MariaDB server(s)`);
  const extras = await startServers(opts.servers - 1, { progress: (line) => progress(`parallelism: ${line}`) });
  const startSeconds = (Date.now() - t) / 1000;
  try {
    const all = [opts.server, ...extras.map((e) => e.server)];
    const serverList = [`${opts.server.host}:${opts.server.port} (main)`, ...extras.map((e) => `${e.server.host}:${e.server.port} (started)`)];
    const cases: ParallelismCase[] = [];

    // One cell, on the main server with the API.
    t = Date.now();
    const single = await prepare(opts, 1, [opts.server]);
    try {
      progress(`parallelism: 1 cell × ${opts.hostsPerCell} hosts ready in ${formatSeconds((Date.now() - t) / 1000)} s`);
      const [baseline] = await measureInterleaved(opts, single, 1, [DEFAULT_CELL_CONCURRENCY]);
      if (baseline !== undefined) cases.push(baseline);
    } finally {
      await single.drop();
    }

    // Many cells, cell i on server i mod S; cell_concurrency as configured by
    // default, and 1 for the serial comparison, run alternately so that a
    // change in the machine's load hits both alike.
    t = Date.now();
    const many = await prepare(opts, opts.cells, all);
    try {
      progress(`parallelism: ${opts.cells} cells × ${opts.hostsPerCell} hosts on ${all.length} servers ready in ${formatSeconds((Date.now() - t) / 1000)} s`);
      cases.push(...(await measureInterleaved(opts, many, all.length, [DEFAULT_CELL_CONCURRENCY, 1])));
    } finally {
      await many.drop();
    }
    return { cases, serverList, startSeconds };
  } finally {
    progress(`parallelism: stopping ${extras.length} extra MariaDB server(s)`);
    await stopAllServers();
  }
}

async function prepare(opts: ParallelismOptions, cells: number, servers: readonly Server[]): Promise<ScratchDeployment> {
  const deployment = await createScratchDeployment(opts.server, cells, { cellServers: servers });
  try {
    await generateScale(deployment.scaleDatabases, { hostsPerCell: opts.hostsPerCell, nodesPerHost: 1 });
    return deployment;
  } catch (err) {
    await deployment.drop().catch(() => undefined);
    throw err;
  }
}

/** The deployment's nova.conf plus [nova_reconcile] cell_concurrency = N, next to it. */
async function confWithConcurrency(deployment: ScratchDeployment, concurrency: number): Promise<string> {
  const path = join(dirname(deployment.confPath), `nova-concurrency-${concurrency}.conf`);
  const base = await readFile(deployment.confPath, 'utf8');
  await writeFile(path, `${base.trimEnd()}\n\n[nova_reconcile]\ncell_concurrency = ${concurrency}\n`);
  return path;
}

async function measureInterleaved(
  opts: ParallelismOptions,
  deployment: ScratchDeployment,
  servers: number,
  concurrencies: readonly number[],
): Promise<ParallelismCase[]> {
  const cells = deployment.cells.length;
  const confs = await Promise.all(concurrencies.map((c) => confWithConcurrency(deployment, c)));
  const runs = concurrencies.map(() => ({ seconds: [] as number[], inProcessMs: [] as number[], roundTrips: 0 }));
  for (let r = 0; r < opts.runs; r += 1) {
    for (const [i, concurrency] of concurrencies.entries()) {
      const label = `parallelism: ${plural(cells, 'cell')} on ${plural(servers, 'server')}, cell_concurrency ${concurrency}`;
      await resetDiscovery(deployment.scaleDatabases);
      const args = [opts.cli, '--stats', '--config-file', confs[i] as string, 'cell_v2', 'discover_hosts'];
      const { run, stats } = await runWithStats(args, label, 0, RUN_TIMEOUT_MS);
      await verifyAcrossServers(deployment, opts.hostsPerCell, label);
      const into = runs[i] as (typeof runs)[number];
      into.seconds.push(run.seconds);
      into.inProcessMs.push(stats.elapsedMs);
      into.roundTrips = stats.roundTrips;
      opts.progress(`${label}: ${formatSeconds(run.seconds)} s (${stats.elapsedMs} ms in-process), ${stats.roundTrips} round trips`);
    }
  }
  return concurrencies.map((cellConcurrency, i) => {
    const m = runs[i] as (typeof runs)[number];
    return { cells, servers, cellConcurrency, hostsPerCell: opts.hostsPerCell, runs: m.seconds, inProcessMs: m.inProcessMs, roundTrips: m.roundTrips };
  });
}

/**
 * verify.ts joins the API and cell databases in one query, which needs them on
 * one server; here each side is read from its own server and compared: every
 * cell's nova-compute hosts mapped to that cell, nothing else mapped, and no
 * live compute node left with mapped = 0.
 */
export async function verifyAcrossServers(deployment: ScratchDeployment, hostsPerCell: number, after: string): Promise<void> {
  const problems: string[] = [];
  const mappingRows = (await deployment.api('host_mappings').select('host', 'cell_id')) as { host: string; cell_id: number | string }[];
  const expectedTotal = hostsPerCell * deployment.cells.length;
  if (mappingRows.length !== expectedTotal) problems.push(`host_mappings has ${mappingRows.length} rows, expected ${expectedTotal} (one per host)`);
  const cellOf = new Map(mappingRows.map((r) => [r.host, Number(r.cell_id)]));
  for (const cell of deployment.cells) {
    const hosts = (await cell.knex('services').distinct('host').where({ deleted: 0, binary: 'nova-compute' })) as { host: string }[];
    const wrong = hosts.filter((h) => cellOf.get(h.host) !== cell.id).length;
    if (hosts.length !== hostsPerCell) problems.push(`${cell.name}: ${hosts.length} nova-compute hosts, expected ${hostsPerCell}`);
    if (wrong > 0) problems.push(`${cell.name}: ${wrong} of ${hosts.length} hosts are not mapped to their cell`);
    const unmarked = (await cell.knex('compute_nodes').count({ n: '*' }).where({ deleted: 0 }).andWhere((q) => q.whereNull('mapped').orWhere('mapped', '<', 1))) as {
      n: number | string;
    }[];
    const n = Number(unmarked[0]?.n ?? NaN);
    if (n !== 0) problems.push(`${cell.name}: ${n} live compute nodes still have mapped = 0`);
  }
  if (problems.length > 0) throw new WrongResultError(`wrong result after ${after}:\n  ${problems.join('\n  ')}`);
}

// --- rendering (pure) ---

/** "4 cells / 2 servers, cell_concurrency 4" and the ratios against the single-cell baseline. */
export function renderParallelismTable(result: ParallelismResult): string {
  const baseline = result.cases[0];
  const header = ['cells', 'servers', 'cell_concurrency', 'hosts', 'ours (s)', 'in-process (s)', 'in-process vs 1 cell', 'round trips'];
  const rows = result.cases.map((c) => {
    const inProcess = median(c.inProcessMs) / 1000;
    const ratio = baseline === undefined ? NaN : inProcess / (median(baseline.inProcessMs) / 1000);
    return [
      String(c.cells),
      String(c.servers),
      String(c.cellConcurrency),
      `${c.cells} × ${c.hostsPerCell.toLocaleString('en-US')}`,
      formatSeconds(median(c.runs)),
      formatSeconds(inProcess),
      c === baseline ? '1 (baseline)' : `${ratio.toFixed(2)}×`,
      String(c.roundTrips),
    ];
  });
  return markdownTable(header, rows, [true, true, true, true, true, true, true, true]);
}

/** The report section: heading, what was measured, the table, the runs. */
export function renderParallelismSection(result: ParallelismResult, runs: number): string {
  const runLines = result.cases.map(
    (c) =>
      `- ${plural(c.cells, 'cell')} on ${plural(c.servers, 'server')}, cell_concurrency ${c.cellConcurrency}: ${c.runs.map(formatSeconds).join(' / ')} s ` +
      `(in-process ${c.inProcessMs.map(String).join(' / ')} ms)`,
  );
  return [
    '## Cell parallelism across servers',
    '',
    '`discover_hosts` (first run, node path) with one cell on one server against several cells, the same',
    'hosts per cell, cell i on server i mod S; the API database is on the main server. Median of',
    `${runs} run${runs === 1 ? '' : 's'}. "in-process" is nova-reconcile's own elapsed time (its \`stats:\` line), without`,
    'the process start; the ratio compares it with the single cell. The cell_concurrency 4 and 1 runs',
    'alternated. Every run was checked: each host mapped once, to its own cell.',
    '',
    renderParallelismTable(result),
    '',
    ...parallelismSummary(result).map((line) => `${line}\n`),
    ...renderTargets(parallelismTargets(result)),
    `Servers: ${result.serverList.join(', ')}; the extra ones started in ${formatSeconds(result.startSeconds)} s and were removed afterwards.`,
    '',
    ...runLines,
  ].join('\n');
}

export interface ParallelismSection {
  /** The Markdown section for the report. */
  readonly markdown: string;
  /** The table and its one-line summary, for stdout. */
  readonly table: string;
  readonly result: ParallelismResult;
}

/** What bench/run.ts calls: the measurement (unless --parallelism-hosts 0) and its rendering. */
export async function runParallelismSection(
  bench: { readonly parallelismHosts: number; readonly parallelismCells: number; readonly servers: number; readonly runs: number },
  server: Server,
  cli: string,
  progress: (line: string) => void,
): Promise<ParallelismSection | undefined> {
  if (bench.parallelismHosts === 0) return undefined;
  const result = await measureParallelism({
    server,
    servers: bench.servers,
    cells: bench.parallelismCells,
    hostsPerCell: bench.parallelismHosts,
    runs: bench.runs,
    cli,
    progress,
  });
  return {
    markdown: renderParallelismSection(result, bench.runs),
    table: [renderParallelismTable(result), ...parallelismSummary(result), ...renderTargets(parallelismTargets(result))].join('\n\n'),
    result,
  };
}

/**
 * "4 cells on 2 servers took 2.42× one cell with cell_concurrency 4, 3.81× with
 * 1": the many-cell cases against the baseline and against each other.
 */
export function parallelismSummary(result: ParallelismResult): string[] {
  const [baseline, ...rest] = result.cases;
  if (baseline === undefined || rest.length === 0) return [];
  const inProcess = (c: ParallelismCase): number => median(c.inProcessMs);
  const parts = rest.map((c, i) => `${(inProcess(c) / inProcess(baseline)).toFixed(2)}×${i === 0 ? ' the time of one cell' : ''} with cell_concurrency ${c.cellConcurrency}`);
  const first = rest[0] as ParallelismCase;
  const serial = rest.find((c) => c.cellConcurrency === 1);
  const speedup =
    serial === undefined || serial === first ? '' : `; cell_concurrency ${first.cellConcurrency} was ${(inProcess(serial) / inProcess(first)).toFixed(2)}× faster than 1`;
  return [`${plural(first.cells, 'cell')} on ${plural(first.servers, 'server')} took ${parts.join(' and ')} (in-process times)${speedup}.`];
}

/** Issue 20's targets for cells in parallel. */
export const PARALLELISM_TARGETS = {
  /** 4 cells on 2 servers, in-process, against one cell. */
  maxFourCellsOnTwoServers: 2.2,
  /** 100,000 hosts in 10 cells on 3 servers, the whole process. */
  maxSecondsFor100kIn10Cells: 6,
} as const;

export interface ParallelismTarget {
  readonly what: string;
  readonly value: string;
  readonly met: boolean;
}

/** The targets this measurement's shape answers (4 cells on 2 servers; 10 cells of 10,000 hosts on 3 servers), with the default cell_concurrency. */
export function parallelismTargets(result: ParallelismResult): ParallelismTarget[] {
  const [baseline, ...rest] = result.cases;
  const parallel = rest.find((c) => c.cellConcurrency === DEFAULT_CELL_CONCURRENCY);
  if (baseline === undefined || parallel === undefined) return [];
  const out: ParallelismTarget[] = [];
  if (parallel.cells === 4 && parallel.servers === 2) {
    const ratio = median(parallel.inProcessMs) / median(baseline.inProcessMs);
    out.push({ what: `4 cells on 2 servers vs 1 cell (in-process): ≤ ${PARALLELISM_TARGETS.maxFourCellsOnTwoServers}×`, value: `${ratio.toFixed(2)}×`, met: ratio <= PARALLELISM_TARGETS.maxFourCellsOnTwoServers });
  }
  if (parallel.cells === 10 && parallel.servers === 3 && parallel.cells * parallel.hostsPerCell >= 100_000) {
    const seconds = median(parallel.runs);
    out.push({
      what: `${(parallel.cells * parallel.hostsPerCell).toLocaleString('en-US')} hosts in 10 cells on 3 servers, discover_hosts first run: ≤ ${PARALLELISM_TARGETS.maxSecondsFor100kIn10Cells} s`,
      value: `${formatSeconds(seconds)} s`,
      met: seconds <= PARALLELISM_TARGETS.maxSecondsFor100kIn10Cells,
    });
  }
  return out;
}

function renderTargets(targets: readonly ParallelismTarget[]): string[] {
  if (targets.length === 0) return [];
  return [markdownTable(['target', 'value', 'result'], targets.map((t) => [t.what, t.value, t.met ? 'met' : 'MISSED']), [false, true, false]), ''];
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
