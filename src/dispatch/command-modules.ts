// The command table: every command, in the order help, the man page and
// completion list them, with the module that defines it. Everything else that
// names the commands is derived from it: the registry, the dispatcher's
// index, the man page (with its JSON OUTPUT list, from each spec's
// jsonSchemas) and completion; the README's command table is checked
// against it (test/unit/command-table.test.ts).
//
// Each module is imported alone, once the dispatcher has found its command:
// in the bundle each import() below is a chunk of its own (with the chunks the
// commands share), so a run compiles only what its command runs.
import type { CommandSpec } from '../cli/spec.js';

export interface CommandModule {
  /** The command's words, as its spec's path. */
  readonly path: readonly string[];
  load(): Promise<CommandSpec>;
}

export const COMMAND_MODULES: readonly CommandModule[] = [
  { path: ['cell_v2', 'discover_hosts'], load: async () => (await import('../commands/cell-v2-discover-hosts.js')).discoverHostsCommand },
  { path: ['cell_v2', 'list_hosts'], load: async () => (await import('../commands/cell-v2-list-hosts.js')).listHostsCommand },
  { path: ['cell_v2', 'list_cells'], load: async () => (await import('../commands/cell-v2-list-cells.js')).listCellsCommand },
  { path: ['cell_v2', 'delete_host'], load: async () => (await import('../commands/cell-v2-delete-host.js')).deleteHostCommand },
  { path: ['cell_v2', 'prune_host_mappings'], load: async () => (await import('../commands/cell-v2-prune-host-mappings.js')).pruneHostMappingsCommand },
  { path: ['db', 'ironic_compute_node_move'], load: async () => (await import('../commands/db-ironic-compute-node-move.js')).ironicComputeNodeMoveCommand },
  { path: ['placement', 'audit'], load: async () => (await import('../commands/placement-audit.js')).placementAuditCommand },
  { path: ['placement', 'heal_allocations'], load: async () => (await import('../commands/placement-heal-allocations.js')).healAllocationsCommand },
  { path: ['audit'], load: async () => (await import('../commands/audit.js')).auditCommand },
  { path: ['compute_node', 'list'], load: async () => (await import('../commands/compute-node-list.js')).computeNodeListCommand },
  { path: ['compute_node', 'cleanup_orphans'], load: async () => (await import('../commands/compute-node-cleanup-orphans.js')).cleanupOrphansCommand },
  { path: ['placement', 'cleanup_providers'], load: async () => (await import('../commands/placement-cleanup-providers.js')).cleanupProvidersCommand },
  { path: ['compute_node', 'rebalance'], load: async () => (await import('../commands/compute-node-rebalance.js')).rebalanceCommand },
  { path: ['compute_node', 'move'], load: async () => (await import('../commands/compute-node-move.js')).moveCommand },
  { path: ['compute_node', 'restore'], load: async () => (await import('../commands/compute-node-restore.js')).restoreNodeCommand },
  { path: ['undo'], load: async () => (await import('../commands/undo.js')).undoCommand },
  { path: ['sandbox', 'create'], load: async () => (await import('../commands/sandbox-create.js')).sandboxCreateCommand },
  { path: ['completion'], load: loadCompletionCommand },
];

/** Completion lists every command of the table, itself included. */
async function loadCompletionCommand(): Promise<CommandSpec> {
  const { makeCompletionCommand } = await import('../commands/completion.js');
  let commands: readonly CommandSpec[] = [];
  const completion = makeCompletionCommand(() => commands);
  commands = await Promise.all(COMMAND_MODULES.map((m) => (m.load === loadCompletionCommand ? completion : m.load())));
  return completion;
}

/** Every command's spec, in the table's order (this loads every command's module). */
export async function loadCommands(): Promise<readonly CommandSpec[]> {
  return Promise.all(COMMAND_MODULES.map((m) => m.load()));
}

/** The spec of the command with exactly these words, from its own module. */
export async function loadCommandSpec(path: readonly string[]): Promise<CommandSpec | undefined> {
  return COMMAND_MODULES.find((m) => m.path.join(' ') === path.join(' '))?.load();
}
