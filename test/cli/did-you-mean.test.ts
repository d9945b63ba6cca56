// A mistyped command or option gets a "did you mean" on its one error line
// (issue 38), and keeps its family's usage exit code: argparse's 2 under
// nova-manage's categories (cell_v2, placement, db), 127 under the tool's own.
import { describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';

const HELP = 'run `nova-reconcile --help` for the list of commands';

describe('did you mean', () => {
  it.each([
    [['cell_v2', 'discover_host'], 2, '"cell_v2 discover_host"', '"cell_v2 discover_hosts"'],
    [['placement', 'heal_allocation', '--dry-run'], 2, '"placement heal_allocation"', '"placement heal_allocations"'],
    [['compute_node', 'cleanup_orphan', '--apply'], 127, '"compute_node cleanup_orphan"', '"compute_node cleanup_orphans"'],
    [['audti'], 127, '"audti"', '"audit"'],
    [['compute_nod', 'list'], 127, '"compute_nod list"', '"compute_node list"'],
    [['compute_nod'], 127, '"compute_nod"', '"compute_node"'],
    [['help', 'compute_node', 'lst'], 127, '"compute_node lst"', '"compute_node list"'],
  ] as const)('%j: exit %i, one line naming the command meant', async (argv, code, given, meant) => {
    const r = await runBin(argv);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`nova-reconcile: error: unknown command ${given} (Did you mean ${meant}? ${HELP})\n`);
    expect(r.code).toBe(code);
  });

  it('nothing close: no guess, the error as before', async () => {
    for (const [argv, code] of [[['frobnicate', 'everything'], 127], [['cell_v2', 'map_everything'], 2]] as const) {
      const r = await runBin(argv);
      expect(r.stderr).toBe(`nova-reconcile: error: unknown command "${argv.join(' ')}" (${HELP})\n`);
      expect(r.code).toBe(code);
    }
  });

  // Unknown options: commander's own suggestion, already on the error's one line (pinned here, not new).
  it.each([
    [['cell_v2', 'discover_hosts', '--strct'], 2, 'nova-reconcile cell_v2 discover_hosts: error: unknown option \'--strct\' (Did you mean --strict?)'],
    [['compute_node', 'cleanup_orphans', '--dry-rn'], 127, 'nova-reconcile compute_node cleanup_orphans: error: unknown option \'--dry-rn\' (Did you mean --dry-run?)'],
  ] as const)('%j: exit %i, commander\'s suggestion on the error line', async (argv, code, line) => {
    const r = await runBin(argv);
    expect(r.stderr).toBe(`${line}\n`);
    expect(r.code).toBe(code);
  });
});
