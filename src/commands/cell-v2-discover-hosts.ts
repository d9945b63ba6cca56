// cell_v2 discover_hosts: nova-manage's options, output and exit codes.
import { renderDiscoverJson, renderDiscoverVerbose, renderDiscoverWarnings, firstFailure } from '../cli/render-discover.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { discoverHosts } from '../operations/discover-hosts.js';
import { printJson, useDeployment } from './deployment.js';

const DUPLICATE_NOTE = 'never returned by nova-reconcile: a mapping that a concurrent run created is counted as mapped';

export const discoverHostsCommand: CommandSpec = {
  path: ['cell_v2', 'discover_hosts'],
  family: 'compatible',
  summary: 'map compute hosts to their cell in host_mappings (nova-manage compatible, safe in parallel)',
  description: [
    'Searches every cell (or the one given with --cell_uuid) for compute hosts without a host mapping and maps them. ' +
      'By default the candidates are live compute nodes with mapped < 1; with --by-service they are the live nova-compute services ' +
      '(disabled ones included), which also maps ironic hosts that have no compute node yet (bug 1755602). cell0 is skipped; disabled cells are not.',
    'Output, options and exit codes are those of nova-manage 26.x. Without --verbose a successful run prints nothing.',
  ],
  options: [
    { flags: '--cell_uuid <cell_uuid>', description: 'only search this cell for new hosts to map' },
    { flags: '--verbose', description: 'print every host checked and every mapping created, as nova-manage does' },
    { flags: '--strict', description: 'exit 0 only when at least one new host mapping was created, 1 otherwise' },
    { flags: '--by-service', description: 'discover hosts by nova-compute service instead of by compute node' },
    { flags: '--dry-run', description: 'show what would be mapped ("Would create ..." lines with --verbose) and write nothing' },
    FORMAT_OPTION,
  ],
  exitCodes: [
    [0, 'success; with --strict, at least one host mapping was created'],
    [1, '--strict and nothing was created (also with --cell_uuid pointing at cell0); or a config file could not be read'],
    [2, `a duplicate host mapping was hit: ${DUPLICATE_NOTE}; or invalid usage`],
    [255, 'any other error ("An error has occurred:" and one line on stdout): unknown cell, database unreachable'],
  ],
  differences: [
    'Safe to run in parallel: a host that a concurrent run mapped to the same cell counts as mapped, so cron, Ansible and an operator running at once all exit 0 with exactly one mapping per host.',
    'Once a host is mapped (or found mapped) to the cell that holds it, every live compute node of that host gets mapped = 1 in one UPDATE; nova only flags the first node, so ironic hosts are re-checked forever. Re-runs therefore print fewer "Checking" lines.',
    'A live compute node with mapped = 1 but no host mapping is mapped again (bug 2085135).',
    'A host mapped to a different cell than the one holding it is never re-pointed; a WARNING line goes to stderr.',
    'Set-based: one candidate query per cell, batched lookups and multi-row inserts instead of one API round trip per node; cells are processed concurrently ([nova_reconcile] cell_concurrency) while output keeps nova\'s cell order.',
    'Discovery does not rewrite NULL allocation ratios of compute nodes as a side effect (nova-manage does, from its own config).',
    'Errors print one line after "An error has occurred:" instead of a traceback; an unreachable database fails within [nova_reconcile] connect_timeout (10 s) instead of oslo.db\'s ~100 s of retries.',
    '--format json and --dry-run are additions.',
  ],
  examples: [
    'nova-reconcile cell_v2 discover_hosts --by-service --verbose',
    'nova-reconcile --config-file /etc/nova/nova.conf cell_v2 discover_hosts --format json',
  ],
  async run(ctx, o) {
    const result = await useDeployment(ctx, (d) =>
      discoverHosts(d, {
        cellUuid: typeof o['cell_uuid'] === 'string' ? o['cell_uuid'] : undefined,
        byService: o['byService'] === true,
        dryRun: o['dryRun'] === true,
        concurrency: ctx.loadConfig().reconcile.cellConcurrency,
      }),
    );
    for (const w of renderDiscoverWarnings(result)) ctx.stderr.write(w + '\n');
    const failure = firstFailure(result);
    if (o['format'] === 'json') printJson(ctx, renderDiscoverJson(result));
    else if (o['verbose'] === true) for (const line of renderDiscoverVerbose(result)) ctx.stdout.write(line + '\n');
    if (failure !== undefined) {
      if (o['format'] === 'json') return 255;
      throw failure.error;
    }
    if (o['strict'] === true) return result.cells.some((c) => c.kind === 'discovered' && c.created.length > 0) ? 0 : 1;
    return 0;
  },
};
