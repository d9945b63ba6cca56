// `npm run bench:memory`: peak RSS and wall time of the commands that judge
// the whole cloud (audit, placement audit, placement heal_allocations
// --dry-run) against the size of the cloud and the size of its largest cell,
// on clouds with the full instance load (one instance per compute node, each
// with its allocations, as Nova writes them). With --old DIR (a built
// checkout of an earlier commit) every command also runs on that build, and
// its stdout must be byte-identical: a memory change must not change a
// finding. See bench/README.md, "Memory per cell".
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateCloud } from '../src/sandbox/scale-cloud.js';
import { formatSeconds, markdownTable, median } from './report.js';
import { runWithStats } from './processes.js';
import { createScratchDeployment, live, parseServer, removeScratchDirsSync, dropDatabases, type ScratchDeployment, type Server } from './scratch-deployment.js';

const TIMEOUT_MS = 20 * 60_000;

const REPO_ROOT = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.endsWith(join('dist', 'bench')) ? resolve(here, '..', '..') : resolve(here, '..');
})();

/** The commands measured, with the exit code each must give on these clouds (they hold orphans and stale providers). */
export const MEMORY_COMMANDS: ReadonlyArray<{ readonly args: readonly string[]; readonly code: number }> = [
  { args: ['audit'], code: 3 },
  { args: ['placement', 'audit'], code: 3 },
  { args: ['placement', 'heal_allocations', '--dry-run'], code: 4 },
];

/** A cloud: cells × hosts per cell. */
export interface CloudShape {
  readonly cells: number;
  readonly hostsPerCell: number;
}

export interface MemoryRow {
  readonly shape: CloudShape;
  readonly command: string;
  readonly seconds: number;
  readonly peakRssKb: number;
  /** Against the --old build: 'identical', 'DIFFERS', or undefined without --old. */
  readonly old?: { readonly same: boolean; readonly peakRssKb: number; readonly seconds: number };
}

const USAGE = `usage: node dist/bench/memory.js [--clouds 1x30000,1x100000,10x30000] [--runs N] [--only TEXT] [--old DIR] [--out FILE] [--mysql URL]

  --clouds LIST  clouds to build, CELLSxHOSTS_PER_CELL (default 1x30000,1x100000,10x30000)
  --runs N       runs of each command and build, the builds taking turns (default 2): the median time, the highest RSS
  --only TEXT    only the commands whose arguments contain TEXT (e.g. heal)
  --old DIR      a built checkout of an earlier commit: its outputs must be identical
  --out FILE     write the report (markdown) to FILE
  --mysql URL    the server (default mysql://root@127.0.0.1:3306, or BENCH_MYSQL_URL)
`;

export function parseShapes(text: string): CloudShape[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)x(\d+)\s*$/.exec(part);
    if (m === null || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`--clouds: ${JSON.stringify(part)} is not CELLSxHOSTS (e.g. 10x30000)`);
    return { cells: Number(m[1]), hostsPerCell: Number(m[2]) };
  });
}

export function shapeLabel(s: CloudShape): string {
  return `${s.cells} × ${s.hostsPerCell.toLocaleString('en-US')}`;
}

function progress(message: string): void {
  process.stderr.write(`bench:memory: ${message}\n`);
}

async function runOne(cliRoot: string, d: ScratchDeployment, args: readonly string[], code: number): Promise<{ seconds: number; peakRssKb: number; digest: string }> {
  const argv = [join(cliRoot, 'bin', 'nova-reconcile'), '--stats', '--config-file', d.confPath, ...args];
  const { run, stats } = await runWithStats(argv, args.join(' '), code, TIMEOUT_MS);
  return { seconds: run.seconds, peakRssKb: stats.maxRssKb, digest: createHash('sha256').update(run.stdout).digest('hex') };
}

/** One cloud of `shape` (1% orphan hosts, 1% stale providers, one instance per node), every command on it. */
export async function measureCloud(server: Server, shape: CloudShape, old: string | undefined, runs: number, only?: string): Promise<MemoryRow[]> {
  const label = shapeLabel(shape);
  progress(`${label}: creating the cloud`);
  const d = await createScratchDeployment(server, shape.cells, { withPlacement: true });
  const rows: MemoryRow[] = [];
  try {
    if (d.placement === undefined) throw new Error('internal: scratch deployment without placement');
    const started = Date.now();
    const cloud = await generateCloud(
      { ...d.scaleDatabases, placement: d.placement },
      { hostsPerCell: shape.hostsPerCell, instancesPerCell: shape.hostsPerCell, orphanFraction: 0.01, staleProviderFraction: 0.01 },
    );
    progress(`${label}: generated in ${formatSeconds((Date.now() - started) / 1000)} s: ${cloud.computeNodes} nodes, ${cloud.instances} instances, ${cloud.allocations} allocations`);
    for (const { args, code } of MEMORY_COMMANDS) {
      if (only !== undefined && !args.join(' ').includes(only)) continue;
      // The builds take turns, so that neither always meets the database's cache cold.
      const ours: Array<Awaited<ReturnType<typeof runOne>>> = [];
      const theirs: Array<Awaited<ReturnType<typeof runOne>>> = [];
      for (let r = 0; r < runs; r += 1) {
        const first = old !== undefined && r % 2 === 1;
        if (first) theirs.push(await runOne(old, d, args, code));
        ours.push(await runOne(REPO_ROOT, d, args, code));
        if (old !== undefined && !first) theirs.push(await runOne(old, d, args, code));
      }
      const digests = new Set([...ours, ...theirs].map((x) => x.digest));
      const row: MemoryRow = {
        shape,
        command: args.join(' '),
        seconds: median(ours.map((x) => x.seconds)),
        peakRssKb: Math.max(...ours.map((x) => x.peakRssKb)),
        ...(old === undefined ? {} : { old: { same: digests.size === 1, peakRssKb: Math.max(...theirs.map((x) => x.peakRssKb)), seconds: median(theirs.map((x) => x.seconds)) } }),
      };
      progress(
        `${label}: ${row.command}: ${formatSeconds(row.seconds)} s, ${mb(row.peakRssKb)} MB` +
          (row.old === undefined ? '' : `; old build ${formatSeconds(row.old.seconds)} s, ${mb(row.old.peakRssKb)} MB, stdout ${row.old.same ? 'identical' : 'DIFFERS'}`),
      );
      rows.push(row);
    }
  } finally {
    await d.drop();
  }
  return rows;
}

function mb(kb: number): string {
  return (kb / 1024).toFixed(1);
}

/** The table, and each command's figures on C cells of H against one cell of H (the ratios). */
export function renderMemoryReport(rows: readonly MemoryRow[]): string {
  const table = markdownTable(
    ['cloud (cells × hosts per cell)', 'hosts', 'command', 'wall s', 'peak RSS MB', 'old build'],
    rows.map((r) => [
      shapeLabel(r.shape),
      (r.shape.cells * r.shape.hostsPerCell).toLocaleString('en-US'),
      r.command,
      formatSeconds(r.seconds),
      mb(r.peakRssKb),
      r.old === undefined ? '' : `${formatSeconds(r.old.seconds)} s, ${mb(r.old.peakRssKb)} MB, stdout ${r.old.same ? 'identical' : 'DIFFERS'}`,
    ]),
    [false, true, false, true, true, false],
  );
  const ratios: string[][] = [];
  for (const r of rows) {
    if (r.shape.cells === 1) continue;
    const one = rows.find((o) => o.command === r.command && o.shape.cells === 1 && o.shape.hostsPerCell === r.shape.hostsPerCell);
    if (one === undefined) continue;
    ratios.push([r.command, `${shapeLabel(r.shape)} / 1 × ${r.shape.hostsPerCell.toLocaleString('en-US')}`, (r.peakRssKb / one.peakRssKb).toFixed(2), (r.seconds / one.seconds).toFixed(2)]);
  }
  const ratioTable = ratios.length === 0 ? '' : `\n${markdownTable(['command', 'clouds', 'peak RSS ratio', 'wall time ratio'], ratios, [false, false, true, true])}`;
  return `${table}${ratioTable}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { clouds: { type: 'string' }, only: { type: 'string' }, runs: { type: 'string' }, old: { type: 'string' }, out: { type: 'string' }, mysql: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help === true) {
    process.stdout.write(USAGE);
    return;
  }
  const shapes = parseShapes(values.clouds ?? '1x30000,1x100000,10x30000');
  const server = parseServer(values.mysql ?? process.env['BENCH_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306');
  const old = values.old === undefined ? undefined : resolve(values.old);
  const runs = Number(values.runs ?? '2');
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs ${values.runs ?? ''}: a whole number of runs, 1 or more`);
  const cleanup = (): void => {
    removeScratchDirsSync();
    void dropDatabases(server, [...live]).finally(() => process.exit(130));
  };
  process.once('SIGINT', cleanup);
  process.once('SIGTERM', cleanup);
  const rows: MemoryRow[] = [];
  for (const shape of shapes) rows.push(...(await measureCloud(server, shape, old, runs, values.only)));
  const report = renderMemoryReport(rows);
  process.stdout.write(`${report}\n`);
  if (values.out !== undefined) await writeFile(values.out, `${report}\n`);
  if (rows.some((r) => r.old !== undefined && !r.old.same)) {
    process.stderr.write('bench:memory: an output differs from the old build\n');
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench:memory: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
