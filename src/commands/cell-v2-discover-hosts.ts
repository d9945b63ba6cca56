// cell_v2 discover_hosts: nova-manage's options, output and exit codes.
import { renderDiscoverJson, renderDiscoverVerbose, renderDiscoverWarnings, firstFailure } from '../cli/render-discover.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { discoverHosts } from '../operations/discover-hosts.js';
import { useDeployment } from './shared/deployment.js';
import { jsonResult, lines, report } from '../cli/results.js';
import { parseDiscoverHosts, logDiscoveryPass, runExpect, runRemap, type DiscoverHostsOptions } from './shared/discover-hosts-modes.js';

const DUPLICATE_NOTE = 'never returned by nova-reconcile: a mapping that a concurrent run created is counted as mapped';

export const discoverHostsCommand: CommandSpec<DiscoverHostsOptions> = {
  path: ['cell_v2', 'discover_hosts'],
  family: 'compatible',
  summary: 'map compute hosts to their cell in host_mappings (nova-manage compatible, safe in parallel)',
  description: [
    'Searches every cell (or the one given with --cell_uuid) for compute hosts without a host mapping and maps them. ' +
      'By default the candidates are live compute nodes with mapped < 1; with --by-service they are the live nova-compute services ' +
      '(disabled ones included), which also maps ironic hosts that have no compute node yet (bug 1755602). cell0 is skipped; disabled cells are not.',
    'Output, options and exit codes are those of nova-manage 26.x. Without --verbose a successful run prints nothing.',
    '--expect HOST[,HOST...] and/or --expect-file FILE, with --wait SECONDS: discovery is repeated every --interval seconds (default 10) ' +
      'until every expected host has a host mapping, or the wait runs out; mappings made on the way are kept. Exit 0 when all are mapped; ' +
      'exit 1 (as --strict when nothing was found) naming the missing hosts on stderr. With --verbose the lines of the first pass and of ' +
      'every pass that mapped a host are printed. On a terminal one progress line on stderr shows what is still awaited. ' +
      'This replaces the wait loops deployers wrap around nova-manage (kolla bugs 1835002, 1869371).',
    '--remap: for a host mapped to cell A whose live nova-compute service is in cell B (re-deployed into another cell; discover_hosts only ' +
      'warns). A plan, like the reconciliation commands: without --apply it is printed and the run exits 3. With --apply the mapping\'s cell_id ' +
      'moves to B in one transaction on the API database, a compare-and-swap on the old cell id, only when cell A has no live service, ' +
      'compute node or instance with that host (re-checked under lock), and B\'s nodes of the host get mapped = 1. Journaled; `undo` puts it back. ' +
      'nova-scheduler caches host-to-cell mappings: SIGHUP or restart it after an apply.',
  ],
  options: [
    { flags: '--cell_uuid <cell_uuid>', description: 'only search this cell for new hosts to map' },
    { flags: '--verbose', description: 'print every host checked and every mapping created, as nova-manage does' },
    { flags: '--strict', description: 'exit 0 only when at least one new host mapping was created, 1 otherwise' },
    { flags: '--by-service', description: 'discover hosts by nova-compute service instead of by compute node' },
    { flags: '--dry-run', description: 'show what would be mapped ("Would create ..." lines with --verbose) and write nothing; with --remap: print the plan, the default without --apply' },
    { flags: '--expect <hosts>', description: 'comma-separated hosts that must end up mapped; repeatable', repeatable: true },
    { flags: '--expect-file <file>', description: 'expected hosts, one per line (# comments and blank lines ignored)' },
    { flags: '--wait <seconds>', description: 'with --expect: keep discovering for up to this many seconds until every expected host is mapped (default 0: one pass)' },
    { flags: '--interval <seconds>', description: 'with --wait: seconds between passes (default 10)' },
    { flags: '--remap', description: 'plan (with --apply, do) moving mappings that point at a cell without the host to the cell whose live service has it' },
    { flags: '--apply', description: 'with --remap: apply the plan; without it the plan is printed and nothing changes' },
    { flags: '--journal <file>', description: 'with --remap --apply: write the journal here (default: a timestamped file in [nova_reconcile] journal_dir)' },
    FORMAT_OPTION,
  ],
  jsonSchemas: ['cell_v2-discover_hosts', { schema: 'plan', with: '--remap' }],
  exitCodes: [
    [0, 'success; with --strict, at least one host mapping was created; with --expect, every expected host is mapped; with --remap, nothing to remap'],
    [1, '--strict and nothing was created (also with --cell_uuid pointing at cell0); --expect and some expected host is not mapped after the wait; or a config file could not be read'],
    [2, `a duplicate host mapping was hit: ${DUPLICATE_NOTE}; or invalid usage`],
    [3, '--remap without --apply: a plan was printed; nothing changed'],
    [4, '--remap --apply: every change was applied'],
    [5, '--remap --apply: partly applied (some units skipped or refused)'],
    [255, 'any other error ("An error has occurred:" and one line on stdout): unknown cell, database unreachable, apply lock held'],
  ],
  differences: [
    'Safe to run in parallel: a host that a concurrent run mapped to the same cell counts as mapped, so cron, Ansible and an operator running at once all exit 0 with exactly one mapping per host.',
    'Once a host is mapped (or found mapped) to the cell that holds it, every live compute node of that host gets mapped = 1 in one UPDATE; nova only flags the first node, so ironic hosts are re-checked forever. Re-runs therefore print fewer "Checking" lines.',
    'A live compute node with mapped = 1 but no host mapping is mapped again (bug 2085135).',
    'A host mapped to a different cell than the one holding it is never re-pointed; a WARNING line goes to stderr.',
    'Set-based: one candidate query per cell, batched lookups and multi-row inserts instead of one API round trip per node; cells are processed concurrently ([nova_reconcile] cell_concurrency) while output keeps nova\'s cell order.',
    "On MySQL, when a cell database is proved to be on the API database's server (the API connection takes a user lock under a random name and the cell's connection must see that connection hold it), the hosts without a mapping (bug 2085135's nodes, --by-service's services) are found by one join there; the host columns must share a collation and the cell's user must be able to read host_mappings. Otherwise both tables are read, as before; --debug logs which way each cell went.",
    'Discovery does not rewrite NULL allocation ratios of compute nodes as a side effect (nova-manage does, from its own config).',
    'Errors print one line after "An error has occurred:" instead of a traceback; an unreachable database fails within [nova_reconcile] connect_timeout (10 s) instead of oslo.db\'s ~100 s of retries.',
    '--format json and --dry-run are additions. The JSON document also lists, as warnings, live nova-compute services that still have no mapping and were not mapped by this run (an ironic service with no compute node, without --by-service).',
    '--expect, --expect-file, --wait, --interval and --remap (with --apply, --journal) are additions; without them the command is byte-identical to nova-manage.',
  ],
  examples: [
    'nova-reconcile cell_v2 discover_hosts --by-service --verbose',
    'nova-reconcile --config-file /etc/nova/nova.conf cell_v2 discover_hosts --format json',
    'nova-reconcile cell_v2 discover_hosts --by-service --expect compute-1,compute-2 --wait 600 --interval 10',
    'nova-reconcile cell_v2 discover_hosts --remap',
  ],
  parse: parseDiscoverHosts,
  async run(ctx, o) {
    if (o.mode === 'remap') return runRemap(ctx, o);
    const options = {
      cellUuid: o.cellUuid,
      byService: o.byService,
      dryRun: o.dryRun,
      concurrency: ctx.loadConfig().reconcile.cellConcurrency,
      reportUnmappedServices: o.json,
    };
    if (o.mode === 'expect') return runExpect(ctx, o, options);
    const result = await useDeployment(ctx, (d) => discoverHosts(d, options));
    for (const w of renderDiscoverWarnings(result)) ctx.reporter.warn(w);
    logDiscoveryPass(ctx, result);
    const failure = firstFailure(result);
    const exitCode = failure !== undefined ? 255 : o.strict && !result.cells.some((c) => c.kind === 'discovered' && c.created.length > 0) ? 1 : 0;
    if (o.json) return jsonResult(renderDiscoverJson(result), exitCode);
    const text = o.verbose ? lines(renderDiscoverVerbose(result)) : '';
    // nova-manage prints its lines, then fails with the cell's error.
    return failure === undefined ? report(text, exitCode) : { kind: 'failed', text, error: failure.error };
  },
};
