// Every command, in the order --help and the man page list them.
import { auditCommand } from '../commands/audit.js';
import { deleteHostCommand } from '../commands/cell-v2-delete-host.js';
import { discoverHostsCommand } from '../commands/cell-v2-discover-hosts.js';
import { pruneHostMappingsCommand } from '../commands/cell-v2-prune-host-mappings.js';
import { listCellsCommand } from '../commands/cell-v2-list-cells.js';
import { listHostsCommand } from '../commands/cell-v2-list-hosts.js';
import { cleanupOrphansCommand } from '../commands/compute-node-cleanup-orphans.js';
import { computeNodeListCommand } from '../commands/compute-node-list.js';
import { moveCommand } from '../commands/compute-node-move.js';
import { rebalanceCommand } from '../commands/compute-node-rebalance.js';
import { restoreNodeCommand } from '../commands/compute-node-restore.js';
import { ironicComputeNodeMoveCommand } from '../commands/db-ironic-compute-node-move.js';
import { cleanupProvidersCommand } from '../commands/placement-cleanup-providers.js';
import { placementAuditCommand } from '../commands/placement-audit.js';
import { healAllocationsCommand } from '../commands/placement-heal-allocations.js';
import { sandboxCreateCommand } from '../commands/sandbox-create.js';
import { undoCommand } from '../commands/undo.js';
import { makeCompletionCommand } from '../commands/completion.js';
import type { CommandSpec } from '../cli/spec.js';

export const COMMANDS: readonly CommandSpec[] = [
  discoverHostsCommand,
  listHostsCommand,
  listCellsCommand,
  deleteHostCommand,
  pruneHostMappingsCommand,
  ironicComputeNodeMoveCommand,
  placementAuditCommand,
  healAllocationsCommand,
  auditCommand,
  computeNodeListCommand,
  cleanupOrphansCommand,
  cleanupProvidersCommand,
  rebalanceCommand,
  moveCommand,
  restoreNodeCommand,
  undoCommand,
  sandboxCreateCommand,
  makeCompletionCommand(() => COMMANDS),
];
