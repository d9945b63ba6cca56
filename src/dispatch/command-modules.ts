// Each command's module, imported alone once the dispatcher has found the
// command (issue 20: process start). The registry imports every command and
// everything they run, about 600 kB of bundle that V8 compiled on every run;
// `cell_v2 list_cells` needs a tenth of it, discover_hosts under half. In the
// bundle each import() below is a chunk of its own (with the chunks the
// commands share), so a run compiles only what its command runs.
//
// The registry (registry.ts) stays the list of commands in their order, for
// help, the man page and completion. test/unit/command-modules.test.ts checks
// that this table and the registry name the same commands with the same
// specs, so that a command added to one and not the other fails there.
import type { CommandSpec } from '../cli/spec.js';

type Loader = () => Promise<CommandSpec>;

const MODULES: ReadonlyMap<string, Loader> = new Map<string, Loader>([
  ['cell_v2 discover_hosts', async () => (await import('../commands/cell-v2-discover-hosts.js')).discoverHostsCommand],
  ['cell_v2 list_hosts', async () => (await import('../commands/cell-v2-list-hosts.js')).listHostsCommand],
  ['cell_v2 list_cells', async () => (await import('../commands/cell-v2-list-cells.js')).listCellsCommand],
  ['cell_v2 delete_host', async () => (await import('../commands/cell-v2-delete-host.js')).deleteHostCommand],
  ['cell_v2 prune_host_mappings', async () => (await import('../commands/cell-v2-prune-host-mappings.js')).pruneHostMappingsCommand],
  ['db ironic_compute_node_move', async () => (await import('../commands/db-ironic-compute-node-move.js')).ironicComputeNodeMoveCommand],
  ['placement audit', async () => (await import('../commands/placement-audit.js')).placementAuditCommand],
  ['placement heal_allocations', async () => (await import('../commands/placement-heal-allocations.js')).healAllocationsCommand],
  ['audit', async () => (await import('../commands/audit.js')).auditCommand],
  ['compute_node list', async () => (await import('../commands/compute-node-list.js')).computeNodeListCommand],
  ['compute_node cleanup_orphans', async () => (await import('../commands/compute-node-cleanup-orphans.js')).cleanupOrphansCommand],
  ['placement cleanup_providers', async () => (await import('../commands/placement-cleanup-providers.js')).cleanupProvidersCommand],
  ['compute_node rebalance', async () => (await import('../commands/compute-node-rebalance.js')).rebalanceCommand],
  ['compute_node move', async () => (await import('../commands/compute-node-move.js')).moveCommand],
  ['compute_node restore', async () => (await import('../commands/compute-node-restore.js')).restoreNodeCommand],
  ['undo', async () => (await import('../commands/undo.js')).undoCommand],
  ['sandbox create', async () => (await import('../commands/sandbox-create.js')).sandboxCreateCommand],
  // Completion lists every command: it is the registry's own.
  ['completion', async () => commandOfRegistry(['completion'])],
]);

async function commandOfRegistry(path: readonly string[]): Promise<CommandSpec> {
  const { COMMANDS } = await import('./registry.js');
  const spec = COMMANDS.find((c) => c.path.join(' ') === path.join(' '));
  if (spec === undefined) throw new Error(`internal: the registry holds no command ${path.join(' ')}`);
  return spec;
}

/** The paths this table loads, for the test that compares it with the registry. */
export function commandModulePaths(): string[] {
  return [...MODULES.keys()];
}

/** The spec of the command with exactly these words, from its own module. */
export async function loadCommandSpec(path: readonly string[]): Promise<CommandSpec | undefined> {
  return MODULES.get(path.join(' '))?.();
}
