// `npm run bench`: nova-reconcile's discover_hosts against the real
// nova-manage and against the floor (the bare SQL), on generated
// deployments of N hosts per cell. See bench/README.md.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateScale, resetDiscovery } from '../src/sandbox/scale-generator.js';
import { parseBenchArgs, USAGE, UsageError, type BenchOptions } from './args.js';
import { openFloorRunner, type DiscoveryPath } from './floor.js';
import { runParallelismSection } from './parallelism.js';
import { busyWarning, describeMachine, formatLoad } from './machine.js';
import { findNovaManage, NOVA_MANAGE_MAIN, novaStderrWithoutWarning, runTimed, runWithStats, running, type NovaInstall } from './processes.js';
import {
  COMMANDS,
  commandLabel,
  discoverGrowth,
  formatSeconds,
  median,
  novaReference,
  renderReport,
  renderGrowthTable,
  renderResultsTable,
  renderTargetsTable,
  sizeLabel,
  type CommandKey,
  type CommandResult,
  type NovaFigure,
  type SizeResult,
} from './report.js';
import { benchmarkReconcile, reconcileGrowth, renderReconcileSection, renderReconcileTables, type ReconcileSection } from './reconcile.js';
import {
  createScratchDeployment,
  dropDatabases,
  live,
  parseServer,
  removeScratchDirsSync,
  serverKnex,
  type ScratchDeployment,
  type Server,
} from './scratch-deployment.js';
import { killAllServersSync, liveServers, stopAllServers } from './servers.js';
import { verifyMappings } from './verify.js';
import { benchTables, renderTableTimings } from './tables.js';
import { killAllGaleraSync } from './galera-cluster.js';
import { benchmarkGalera, renderGaleraSection, renderGaleraTable, type GaleraSection } from './galera.js';
import { benchmarkIronic, renderIronicSection, renderIronicTable, type IronicSection } from './ironic.js';

const OURS_TIMEOUT_MS = 10 * 60_000;
const NOVA_TIMEOUT_MS = 30 * 60_000;

/** The repository root, from dist/bench/run.js (compiled) or bench/run.ts. */
const REPO_ROOT = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.endsWith(join('dist', 'bench')) ? resolve(here, '..', '..') : resolve(here, '..');
})();
const CLI = join(REPO_ROOT, 'bin', 'nova-reconcile');

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

interface Env {
  readonly opts: BenchOptions;
  readonly server: Server;
  readonly nova: NovaInstall | undefined;
  readonly startupSeconds: number;
  readonly nodeStartSeconds: number;
  /** Date.now() when the benchmark began: the time budget counts from here. */
  readonly began: number;
  /** The last measured nova-manage time per command, to predict the next size's. */
  readonly novaHistory: Map<CommandKey, { readonly hosts: number; readonly seconds: number }>;
}

async function main(argv: readonly string[]): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseBenchArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      if (err.message !== '') process.stderr.write(err.message.split('\n').map((line) => `bench: ${line}\n`).join(''));
      process.stderr.write(`${USAGE}\n`);
      return err.message === '' ? 0 : 2;
    }
    throw err;
  }
  if (!existsSync(join(REPO_ROOT, 'dist', 'src', 'bundle', 'nova-reconcile.mjs'))) {
    throw new Error(`dist/src/bundle/nova-reconcile.mjs is missing: run \`npm run build\` in ${REPO_ROOT}`);
  }
  const server = parseServer(opts.mysqlUrl);
  activeServer = server;
  const began = Date.now();
  installSignalHandlers(server);

  let nova: NovaInstall | undefined;
  if (opts.novaManage !== 'never') {
    progress('looking for the real nova-manage (python3-nova)');
    nova = findNovaManage();
    if (nova === undefined && opts.novaManage === 'always') {
      throw new Error('--nova-manage always: python3-nova is not importable (set NRC_NOVA_PYTHON to the interpreter that has it)');
    }
    progress(nova === undefined ? 'nova-manage not available: reference figures only' : `nova-manage: Nova ${nova.version} via ${nova.python}`);
  }

  const admin = serverKnex(server);
  let machine: string[];
  try {
    machine = await describeMachine(admin, nova, REPO_ROOT, opts.novaManage === 'never');
  } catch (err) {
    throw new Error(`cannot reach MariaDB at ${server.host}:${server.port}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  } finally {
    await admin.destroy();
  }

  const busy = busyWarning();
  if (busy !== undefined) progress(`WARNING: ${busy}`);
  const { startupSeconds, nodeStartSeconds } = await measureStartup(Math.max(5, opts.runs));
  progress(`nova-reconcile process start (--version): ${formatSeconds(startupSeconds)} s; bare node -e 0: ${formatSeconds(nodeStartSeconds)} s`);
  const env: Env = { opts, server, nova, startupSeconds, nodeStartSeconds, began, novaHistory: new Map() };
  // In-process and seconds long: the table renderer's time against its rows (issue 18).
  const tableTimings = renderTableTimings(benchTables());
  process.stderr.write(`\n${tableTimings}\n\n`);

  const sizes: SizeResult[] = [];
  const notes: string[] = [];
  const only = opts.parallelismOnly || opts.ironicOnly || opts.galeraOnly;
  for (const hostsPerCell of only ? [] : opts.sizes) {
    const { result, notes: sizeNotes } = await benchmarkSize(env, hostsPerCell);
    sizes.push(result);
    notes.push(...sizeNotes);
    process.stderr.write(`\n${renderResultsTable([result])}\n\n`);
  }
  let reconcile: ReconcileSection | undefined;
  if (!only && opts.reconcileSizes.length > 0) {
    reconcile = await benchmarkReconcile({ server, cli: CLI, runs: opts.runs, nova, novaMaxHosts: opts.novaMaxHosts, progress }, opts.reconcileSizes);
    process.stderr.write(`\n${renderReconcileTables(reconcile)}\n\n`);
  }
  let ironic: IronicSection | undefined;
  if (!opts.parallelismOnly && !opts.galeraOnly && opts.ironicNodes > 0) {
    ironic = await benchmarkIronic({ server, cli: CLI, runs: opts.runs, progress }, opts.ironicNodes);
    process.stderr.write(`\n${renderIronicTable(ironic)}\n\n`);
  }
  const parallelism = opts.ironicOnly || opts.galeraOnly ? undefined : await runParallelismSection(opts, server, CLI, progress);
  if (parallelism !== undefined) process.stderr.write(`\n${parallelism.table}\n\n`);
  let galera: GaleraSection | undefined;
  if (!opts.parallelismOnly && !opts.ironicOnly && opts.galeraHosts > 0) {
    galera = await benchmarkGalera({ server, cli: CLI, runs: opts.runs, hosts: opts.galeraHosts, progress });
    if (galera.kind === 'measured') process.stderr.write(`\n${renderGaleraTable(galera)}\n\n`);
    else progress(`galera: not measured: ${galera.reason}`);
  }
  const totalSeconds = (Date.now() - began) / 1000;
  notes.push(`The whole benchmark took ${formatSeconds(totalSeconds)} s; load average at the end: ${formatLoad()}.`);
  if (opts.nodesPerHost > 1) {
    notes.push(`${opts.nodesPerHost} compute nodes per host (ironic): nova-manage's node path marks only the first node of a host mapped, so its re-runs re-check the others.`);
  }

  const growthPoints = [...discoverGrowth(sizes), ...(reconcile === undefined ? [] : reconcileGrowth(reconcile.rows))];
  const growth =
    growthPoints.length === 0
      ? undefined
      : `## Growth: round trips and peak RSS against size\n\nEvery command above, its round trips and peak RSS (from its \`stats:\` line) at each size it ran at; the last columns divide the largest size's figures by the smallest's, beside the growth of the cloud. Round trips that grow with the cloud are batches (1,000 rows a statement) or one transaction per change; RSS that grows with it is a snapshot held whole.\n\n${renderGrowthTable(growthPoints)}`;
  const report = renderReport(
    {
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      commandLine: `npm run bench -- ${argv.join(' ')}`.trim(),
      machine,
      runs: opts.runs,
      novaRuns: opts.novaRuns,
      notes,
      sections: [
        ...(reconcile === undefined ? [] : [renderReconcileSection(reconcile)]),
        ...(growth === undefined ? [] : [growth]),
        ...(ironic === undefined ? [] : [renderIronicSection(ironic, opts.runs)]),
        ...(galera === undefined ? [] : [renderGaleraSection(galera, opts.runs)]),
        `## Table rendering\n\nThe reconciliation tables (\`compute_node list\`, \`audit\`) rendered in-process, median of 3 runs; the target is 30,000 rows in at most 1 s.\n\n${tableTimings}`, ...(parallelism === undefined ? [] : [parallelism.markdown])],
    },
    sizes,
  );
  if (sizes.length > 0) process.stdout.write(`${renderResultsTable(sizes)}\n\nTargets:\n\n${renderTargetsTable(sizes)}\n`);
  if (reconcile !== undefined) process.stdout.write(`\nThe other commands:\n\n${renderReconcileTables(reconcile)}\n`);
  if (ironic !== undefined) process.stdout.write(`${sizes.length > 0 ? '\n' : ''}The Ironic API as the node list's source:\n\n${renderIronicTable(ironic)}\n`);
  if (parallelism !== undefined) process.stdout.write(`${sizes.length > 0 ? '\n' : ''}Cell parallelism across servers:\n\n${parallelism.table}\n`);
  if (galera?.kind === 'measured') process.stdout.write(`\nA 3-node Galera cluster next to one server:\n\n${renderGaleraTable(galera)}\n`);
  process.stdout.write(`\nTable rendering:\n\n${tableTimings}\n`);
  if (opts.out !== '-') {
    const out = resolve(opts.out);
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, report);
    progress(`wrote ${out}`);
  }
  progress(`done in ${formatSeconds(totalSeconds)} s`);
  return 0;
}

async function benchmarkSize(env: Env, hostsPerCell: number): Promise<{ result: SizeResult; notes: string[] }> {
  const { opts, server, nova } = env;
  const shape = { hostsPerCell, cells: opts.cells, nodesPerHost: opts.nodesPerHost };
  const label = sizeLabel(shape);
  const totalHosts = hostsPerCell * opts.cells;
  const runNova = nova !== undefined && (opts.novaManage === 'always' || totalHosts <= opts.novaMaxHosts);
  const notes: string[] = [];
  if (nova !== undefined && !runNova) {
    notes.push(`${label}: nova-manage not run (${totalHosts} hosts > --nova-max-hosts ${opts.novaMaxHosts}); its figures are DESIGN.md's reference where one exists.`);
  } else if (nova === undefined) {
    notes.push(`${label}: nova-manage not run (${opts.novaManage === 'never' ? '--nova-manage never' : 'python3-nova not importable'}); its figures are DESIGN.md's reference where one exists.`);
  }

  progress(`${label}: creating and migrating scratch databases`);
  let t = Date.now();
  const deployment = await createScratchDeployment(server, opts.cells);
  const migrate = (Date.now() - t) / 1000;
  progress(`${label}: databases ${deployment.apiDatabase} + ${deployment.cells.length + 1} cells ready in ${formatSeconds(migrate)} s`);
  try {
    t = Date.now();
    const generated = await generateScale(deployment.scaleDatabases, { hostsPerCell, nodesPerHost: opts.nodesPerHost });
    const generate = (Date.now() - t) / 1000;
    progress(`${label}: generated ${generated.services} services and ${generated.computeNodes} compute nodes in ${formatSeconds(generate)} s`);

    const ours = new Map<CommandKey, OursRuns>();
    for (const command of COMMANDS) ours.set(command.key, await measureOurs(env, deployment, hostsPerCell, command.key));

    const floors = new Map<CommandKey, number>();
    const floor = await openFloorRunner(server, deployment);
    try {
      for (const [key, path] of [
        ['node-first', 'node'],
        ['service-first', 'service'],
      ] as const satisfies readonly (readonly [CommandKey, DiscoveryPath])[]) {
        const runs: number[] = [];
        for (let r = 0; r < opts.runs; r += 1) {
          await resetDiscovery(deployment.scaleDatabases);
          runs.push(await floor.run(path));
          await verifyMappings(deployment, { hostsPerCell, allNodesMapped: path === 'node', after: `the floor (${path} path)` });
        }
        floors.set(key, median(runs));
        progress(`${label}: floor, ${path} path: ${runs.map(formatSeconds).join(', ')} s`);
      }
    } finally {
      await floor.close();
    }

    const novaRuns = new Map<CommandKey, number[]>();
    if (runNova && nova !== undefined) {
      for (const command of COMMANDS) {
        const key = command.key;
        // A no-op re-run of the node path must follow nova-manage's own first run of it.
        if (key === 'node-noop' && !novaRuns.has('node-first')) {
          notes.push(`${label}: nova-manage ${commandLabel(key)} not run, because its first run was not.`);
          continue;
        }
        const measured = await measureNova(env, nova, deployment, hostsPerCell, key);
        if (measured.skipped !== undefined) notes.push(measured.skipped);
        if (measured.runs.length > 0) {
          novaRuns.set(key, measured.runs);
          env.novaHistory.set(key, { hosts: totalHosts, seconds: median(measured.runs) });
        }
      }
    }

    const results: CommandResult[] = COMMANDS.map(({ key }) => {
      const o = ours.get(key);
      if (o === undefined) throw new Error(`internal: no measurement for ${key}`);
      const measured = novaRuns.get(key);
      const novaFigure: NovaFigure = measured !== undefined ? { kind: 'measured', seconds: median(measured) } : novaReference(shape, key);
      return {
        key,
        ours: median(o.runs),
        oursRuns: o.runs,
        oursInProcessMs: o.inProcessMs,
        roundTrips: o.roundTrips,
        peakRssKb: o.peakRssKb,
        nova: novaFigure,
        novaRuns: measured ?? [],
        floor: floors.get(key),
      };
    });
    return { result: { ...shape, results, setupSeconds: { migrate, generate }, startupSeconds: env.startupSeconds, nodeStartSeconds: env.nodeStartSeconds }, notes };
  } finally {
    progress(`${label}: dropping scratch databases`);
    await deployment.drop();
  }
}

interface OursRuns {
  readonly runs: number[];
  /** elapsed_ms of each run's stats: line: the run minus process start and module loading. */
  readonly inProcessMs: number[];
  readonly roundTrips: number;
  readonly peakRssKb: number;
}

function commandArgs(key: CommandKey): string[] {
  const byService = COMMANDS.find((c) => c.key === key)?.byService === true;
  return ['cell_v2', 'discover_hosts', ...(byService ? ['--by-service'] : [])];
}

function isFirstRun(key: CommandKey): boolean {
  return COMMANDS.find((c) => c.key === key)?.first === true;
}

async function measureOurs(
  env: Env,
  deployment: ScratchDeployment,
  hostsPerCell: number,
  key: CommandKey,
): Promise<OursRuns> {
  const label = `${sizeLabel({ hostsPerCell, cells: env.opts.cells, nodesPerHost: env.opts.nodesPerHost })}: ours, ${commandLabel(key)}`;
  const args = [CLI, '--stats', '--config-file', deployment.confPath, ...commandArgs(key)];
  const node = !COMMANDS.find((c) => c.key === key)?.byService;
  if (!isFirstRun(key)) await verifyMappings(deployment, { hostsPerCell, allNodesMapped: false, after: `the setup of ${label}` });
  const runs: number[] = [];
  const inProcessMs: number[] = [];
  let roundTrips = 0;
  let peakRssKb = 0;
  for (let r = 0; r < env.opts.runs; r += 1) {
    if (isFirstRun(key)) await resetDiscovery(deployment.scaleDatabases);
    const { run, stats } = await runWithStats(args, label, 0, OURS_TIMEOUT_MS);
    await verifyMappings(deployment, { hostsPerCell, allNodesMapped: node, after: label });
    runs.push(run.seconds);
    inProcessMs.push(stats.elapsedMs);
    roundTrips = stats.roundTrips;
    peakRssKb = Math.max(peakRssKb, stats.maxRssKb);
    progress(
      `${label}: ${formatSeconds(run.seconds)} s (${stats.elapsedMs} ms in-process), ${stats.roundTrips} round trips, ${(stats.maxRssKb / 1024).toFixed(1)} MB`,
    );
  }
  return { runs, inProcessMs, roundTrips, peakRssKb };
}

/**
 * nova-manage's time for a command at a size: linear in the hosts from its
 * last measured size (it makes round trips per host), except the node path's
 * no-op, which only lists nodes; DESIGN.md's figure when nothing was measured.
 */
function predictNova(env: Env, key: CommandKey, totalHosts: number): number | undefined {
  const last = env.novaHistory.get(key);
  if (last !== undefined) return key === 'node-noop' ? last.seconds : (last.seconds * totalHosts) / last.hosts;
  const reference = novaReference({ hostsPerCell: totalHosts, cells: 1, nodesPerHost: env.opts.nodesPerHost }, key);
  return reference.kind === 'none' ? undefined : reference.seconds;
}

async function measureNova(
  env: Env,
  nova: NovaInstall,
  deployment: ScratchDeployment,
  hostsPerCell: number,
  key: CommandKey,
): Promise<{ runs: number[]; skipped: string | undefined }> {
  const label = `${sizeLabel({ hostsPerCell, cells: env.opts.cells, nodesPerHost: env.opts.nodesPerHost })}: nova-manage, ${commandLabel(key)}`;
  const args = ['-c', NOVA_MANAGE_MAIN, '--config-file', deployment.confPath, ...commandArgs(key)];
  const node = !COMMANDS.find((c) => c.key === key)?.byService;
  if (!isFirstRun(key)) await verifyMappings(deployment, { hostsPerCell, allNodesMapped: false, after: `the setup of ${label}` });
  const runs: number[] = [];
  const totalHosts = hostsPerCell * env.opts.cells;
  const budget = env.opts.novaManage === 'auto' ? env.opts.budgetMinutes * 60 : 0;
  for (let r = 0; r < env.opts.novaRuns; r += 1) {
    const predicted = predictNova(env, key, totalHosts);
    const elapsed = (Date.now() - env.began) / 1000;
    if (budget > 0 && predicted !== undefined && elapsed + predicted > budget) {
      const why =
        `${label}: ${runs.length === 0 ? 'not run' : `stopped after ${runs.length} run(s)`}: predicted ${formatSeconds(predicted)} s ` +
        `would end ${formatSeconds((elapsed + predicted) / 60)} min into the benchmark, past --budget-minutes ${env.opts.budgetMinutes}` +
        `${runs.length === 0 ? ' (the reference figure is shown where one exists)' : ''}.`;
      progress(why);
      return { runs, skipped: why };
    }
    if (isFirstRun(key)) await resetDiscovery(deployment.scaleDatabases);
    progress(`${label}: running (run ${r + 1} of ${env.opts.novaRuns})`);
    const run = await runTimed(nova.python, args, NOVA_TIMEOUT_MS);
    if (run.code !== 0) {
      throw new Error(
        `${label}: nova-manage exited ${run.code}\n  stdout: ${run.stdout.trim() || '(empty)'}\n  stderr: ${novaStderrWithoutWarning(run.stderr) || '(empty)'}`,
      );
    }
    // Nova marks only the first node of a host mapped (nova-behaviour.md §1.3).
    await verifyMappings(deployment, { hostsPerCell, allNodesMapped: node && env.opts.nodesPerHost === 1, after: label });
    runs.push(run.seconds);
    progress(`${label}: ${formatSeconds(run.seconds)} s`);
  }
  return { runs, skipped: undefined };
}

/** Medians of `nova-reconcile --version` and of a bare `node -e 0`, taken in turns. */
async function measureStartup(runs: number): Promise<{ startupSeconds: number; nodeStartSeconds: number }> {
  const ours: number[] = [];
  const bare: number[] = [];
  for (let r = 0; r < runs; r += 1) {
    const run = await runTimed(process.execPath, [CLI, '--version'], 60_000);
    if (run.code !== 0) throw new Error(`nova-reconcile --version exited ${run.code}: ${run.stderr.trim()}`);
    ours.push(run.seconds);
    const node = await runTimed(process.execPath, ['-e', '0'], 60_000);
    if (node.code !== 0) throw new Error(`node -e 0 exited ${node.code}`);
    bare.push(node.seconds);
  }
  return { startupSeconds: median(ours), nodeStartSeconds: median(bare) };
}

function installSignalHandlers(server: Server): void {
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\nbench: ${signal}: stopping, dropping ${live.size} scratch database(s), stopping ${liveServers.size} extra server(s)\n`);
    for (const child of running) child.kill('SIGKILL');
    Promise.all([
      dropDatabases(server, [...live]).catch((err: unknown) => process.stderr.write(`bench: could not drop ${[...live].join(', ')}: ${String(err)}\n`)),
      stopAllServers().catch((err: unknown) => process.stderr.write(`bench: could not stop the extra servers: ${String(err)}\n`)),
    ]).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Whatever way the process ends, no extra server outlives it, nor a nova.conf folder.
  process.on('exit', () => {
    killAllServersSync();
    killAllGaleraSync();
    removeScratchDirsSync();
  });
}

/**
 * Set by the signal handler: the measurement it interrupted then fails (its
 * child was killed), and that failure must not exit before the handler has
 * cleaned up, nor with 1 instead of 130/143.
 */
let stopping = false;

/** The server of the scratch databases, once known: what a failure must clean up on. */
let activeServer: Server | undefined;

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (stopping) return;
    process.stderr.write(`bench: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
    if (err instanceof Error && err.stack !== undefined && process.env['BENCH_DEBUG'] === '1') process.stderr.write(`${err.stack}\n`);
    // The finally blocks drop each deployment's databases; whatever is left
    // (a failure while creating them) is dropped here.
    const cleanup = activeServer === undefined || live.size === 0 ? Promise.resolve() : dropDatabases(activeServer, [...live]);
    Promise.all([cleanup.catch(() => undefined), stopAllServers().catch(() => undefined)]).finally(() => process.exit(1));
  },
);
