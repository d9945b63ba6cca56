// `npm run bench -- [options]`: parsed once, at the edge, into frozen values.
import { parseArgs } from 'node:util';

export type NovaManageMode = 'auto' | 'never' | 'always';

export interface BenchOptions {
  /** Hosts per cell, one benchmark per entry. */
  readonly sizes: readonly number[];
  readonly cells: number;
  readonly runs: number;
  /**
   * Runs per nova-manage measurement. Default 1: nova-manage takes minutes
   * at 10,000 hosts, and R runs of it would not fit the 15-minute budget of
   * the default benchmark on a 2-core machine; one run decides a 100× ratio.
   */
  readonly novaRuns: number;
  readonly novaManage: NovaManageMode;
  /** auto runs the real nova-manage only up to this many hosts in total (all cells). */
  readonly novaMaxHosts: number;
  /**
   * auto skips a nova-manage measurement that, predicted from its smaller
   * sizes, would end later than this many minutes into the benchmark; 0: no
   * limit. It keeps the default run within 15 minutes on a busy 2-core machine.
   */
  readonly budgetMinutes: number;
  /** Compute nodes per host (ironic when > 1). */
  readonly nodesPerHost: number;
  /** Where the Markdown report goes; '-' for none. */
  readonly out: string;
  /** Server for the scratch databases, mysql://user[:password]@host[:port]. */
  readonly mysqlUrl: string;
  /** Hosts of the generated clouds for the other commands (bench/reconcile.ts); empty: that section is skipped. */
  readonly reconcileSizes: readonly number[];
  /**
   * Cell parallelism across servers (bench/parallelism.ts): hosts per cell,
   * 0 to skip it. Default 10,000: about half a minute in all.
   */
  readonly parallelismHosts: number;
  /** Cells of the many-cell case (default 4). */
  readonly parallelismCells: number;
  /** Servers the cells are spread over, the main one included; S - 1 are started (default 2). */
  readonly servers: number;
  /** Only the parallelism section, none of the per-size benchmarks. */
  readonly parallelismOnly: boolean;
  /** Ironic nodes of the Ironic API section (bench/ironic.ts); 0 skips it. */
  readonly ironicNodes: number;
  /** Only the Ironic API section. */
  readonly ironicOnly: boolean;
  /** Hosts of the cloud measured on a 3-node Galera cluster next to the single server (bench/galera.ts); 0 skips it. */
  readonly galeraHosts: number;
  /** Only the Galera section. */
  readonly galeraOnly: boolean;
}

export const USAGE = `usage: npm run bench -- [--hosts N[,N...]] [--cells C] [--runs R] [--nova-runs R]
                        [--nova-manage auto|never|always] [--nova-max-hosts M]
                        [--budget-minutes B] [--nodes-per-host K] [--out FILE|-] [--mysql URL]
                        [--reconcile-hosts N[,N...]|none]
                        [--parallelism-hosts N] [--parallelism-cells C] [--servers S]
                        [--parallelism-only] [--ironic-nodes N] [--ironic-only]
                        [--galera-hosts N] [--galera-only]

  --hosts N[,N...]   hosts per cell, one benchmark per size (default 1000,10000,30000)
  --cells C          cells holding hosts, besides cell0 (default 1)
  --runs R           runs per measurement of nova-reconcile and the floor; the
                     median is reported (default 3)
  --nova-runs R      runs per measurement of nova-manage (default 1: it takes minutes)
  --nova-manage M    run the real nova-manage: auto = when python3-nova is
                     importable and the size is at most --nova-max-hosts (default auto)
  --nova-max-hosts M largest total host count (all cells) auto runs nova-manage for (default 10000)
  --budget-minutes B auto skips nova-manage runs predicted to end more than B minutes
                     into the benchmark, showing the reference figure (default 11; 0: no limit)
  --nodes-per-host K compute nodes per host, ironic-style when K > 1 (default 1)
  --out FILE|-       Markdown report (default bench/RESULTS.md; - for none)
  --mysql URL        MariaDB server for the scratch databases
                     (default $BENCH_MYSQL_URL or mysql://root@127.0.0.1:3306)
  --reconcile-hosts N[,N...]|none
                     hosts of the generated clouds on which list_hosts, audit,
                     placement audit, cleanup_orphans and cleanup_providers are
                     measured; the rebalance cloud (1,000 ironic nodes) comes
                     with them (default: the --hosts sizes; none: skip them)

Cell parallelism across servers (bench/README.md, "Several servers"):
  --parallelism-hosts N  hosts per cell for discover_hosts with 1 cell on 1 server against
                     C cells on S servers, cell_concurrency 4 and 1 (default 10000; 0: skip)
  --parallelism-cells C  cells of the many-cell case (default 4)
  --servers S        servers the cells are spread over, the --mysql one included; S - 1
                     throw-away MariaDB servers are started and removed (default 2)
  --parallelism-only only this measurement, none of the --hosts sizes; no report
                     unless --out is given

The Ironic API as the node list's source (bench/README.md, "Ironic"):
  --ironic-nodes N   ironic nodes listed from a local Ironic API, and audit with
                     --ironic-source api against audit --ironic-nodes FILE (default 10000; 0: skip)
  --ironic-only      only this measurement; no report unless --out is given

A 3-node Galera cluster next to one server (bench/README.md, "Galera"):
  --galera-hosts N   hosts of the cloud on which discover_hosts and cleanup_orphans
                     (plan, --apply, undo) run on the --mysql server and on a throw-away
                     3-node cluster (galera-4) (default 10000; 0: skip)
  --galera-only      only this measurement; no report unless --out is given`;

export class UsageError extends Error {}

export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        hosts: { type: 'string' },
        cells: { type: 'string' },
        runs: { type: 'string' },
        'nova-runs': { type: 'string' },
        'nova-manage': { type: 'string' },
        'nova-max-hosts': { type: 'string' },
        'nodes-per-host': { type: 'string' },
        'budget-minutes': { type: 'string' },
        out: { type: 'string' },
        mysql: { type: 'string' },
        'reconcile-hosts': { type: 'string' },
        'parallelism-hosts': { type: 'string' },
        'parallelism-cells': { type: 'string' },
        servers: { type: 'string' },
        'parallelism-only': { type: 'boolean' },
        'ironic-nodes': { type: 'string' },
        'ironic-only': { type: 'boolean' },
        'galera-hosts': { type: 'string' },
        'galera-only': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  if (v.help === true) throw new UsageError('');
  const problems: string[] = [];
  const sizes = (v.hosts ?? '1000,10000,30000').split(',').map((s) => positiveInt('--hosts', s.trim(), problems));
  const cells = positiveInt('--cells', v.cells ?? '1', problems);
  const runs = positiveInt('--runs', v.runs ?? '3', problems);
  const novaRuns = positiveInt('--nova-runs', v['nova-runs'] ?? '1', problems);
  const novaMaxHosts = positiveInt('--nova-max-hosts', v['nova-max-hosts'] ?? '10000', problems);
  const budgetText = v['budget-minutes'] ?? '11';
  const budgetMinutes = budgetText === '0' ? 0 : positiveInt('--budget-minutes', budgetText, problems);
  const nodesPerHost = positiveInt('--nodes-per-host', v['nodes-per-host'] ?? '1', problems);
  const mode = v['nova-manage'] ?? 'auto';
  if (mode !== 'auto' && mode !== 'never' && mode !== 'always') problems.push(`--nova-manage must be auto, never or always, not ${JSON.stringify(mode)}`);
  const mysqlUrl = v.mysql ?? process.env['BENCH_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306';
  try {
    if (new URL(mysqlUrl).protocol !== 'mysql:') problems.push(`--mysql must be a mysql:// URL, not ${JSON.stringify(mysqlUrl)}`);
  } catch {
    problems.push(`--mysql is not a URL: ${JSON.stringify(mysqlUrl)}`);
  }
  // The other commands are measured at the discover_hosts sizes unless told otherwise.
  const reconcileText = v['reconcile-hosts'] ?? v.hosts ?? '1000,10000,30000';
  const reconcileSizes = reconcileText === 'none' ? [] : reconcileText.split(',').map((s) => positiveInt('--reconcile-hosts', s.trim(), problems));
  const parallelismText = v['parallelism-hosts'] ?? '10000';
  const parallelismHosts = parallelismText === '0' ? 0 : positiveInt('--parallelism-hosts', parallelismText, problems);
  const parallelismCells = positiveInt('--parallelism-cells', v['parallelism-cells'] ?? '4', problems);
  const servers = positiveInt('--servers', v.servers ?? '2', problems);
  const parallelismOnly = v['parallelism-only'] === true;
  if (parallelismOnly && parallelismHosts === 0) problems.push('--parallelism-only needs --parallelism-hosts greater than 0');
  const ironicText = v['ironic-nodes'] ?? '10000';
  const ironicNodes = ironicText === '0' ? 0 : positiveInt('--ironic-nodes', ironicText, problems);
  const ironicOnly = v['ironic-only'] === true;
  if (ironicOnly && ironicNodes === 0) problems.push('--ironic-only needs --ironic-nodes greater than 0');
  if (ironicOnly && parallelismOnly) problems.push('--ironic-only and --parallelism-only exclude each other');
  const galeraText = v['galera-hosts'] ?? '10000';
  const galeraHosts = galeraText === '0' ? 0 : positiveInt('--galera-hosts', galeraText, problems);
  const galeraOnly = v['galera-only'] === true;
  if (galeraOnly && galeraHosts === 0) problems.push('--galera-only needs --galera-hosts greater than 0');
  if (galeraOnly && (ironicOnly || parallelismOnly)) problems.push('--galera-only, --ironic-only and --parallelism-only exclude each other');
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return Object.freeze({
    sizes: Object.freeze(sizes),
    cells,
    runs,
    novaRuns,
    novaManage: mode as NovaManageMode,
    novaMaxHosts,
    budgetMinutes,
    nodesPerHost,
    // --parallelism-only must not overwrite the full report with a partial one.
    out: v.out ?? (parallelismOnly || ironicOnly || galeraOnly ? '-' : 'bench/RESULTS.md'),
    mysqlUrl,
    reconcileSizes: Object.freeze(reconcileSizes),
    parallelismHosts,
    parallelismCells,
    servers,
    parallelismOnly,
    ironicNodes,
    ironicOnly,
    galeraHosts,
    galeraOnly,
  });
}

function positiveInt(name: string, text: string, problems: string[]): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    problems.push(`${name} must be a positive integer, not ${JSON.stringify(text)}`);
    return 1;
  }
  return n;
}
