// The read of each command family, named, so that a command states what it
// reads before anything is read (recipe.ts says what each field means).
import { orphanCleanupInstanceHosts, orphanCleanupPlacementScope } from '../../domain/orphan-nodes.js';
import { providerCleanupPlacementScope } from '../../domain/stale-providers.js';
import type { CellRecipe, PlanReadRecipe, ReadRecipe, ScopeNames } from './recipe.js';

const WHOLE_CELL: CellRecipe = { nodes: 'whole', instances: true };

const EVERY_CELL_WHOLE = { cells: 'all', cell: WHOLE_CELL } as const;

/** audit: every cell, placement without its allocations (streamed afterwards: streamAllocations). */
export const AUDIT_READ: ReadRecipe = { ...EVERY_CELL_WHOLE, placement: 'audit', requireServices: true, ironicSettings: true };

/** placement audit --delete, and the report when a consumer's rows split: placement whole. */
export const PLACEMENT_AUDIT_READ: ReadRecipe = { ...EVERY_CELL_WHOLE, placement: 'whole', requireServices: false, ironicSettings: false };

/** placement audit's report: the providers and consumer rows (the allocations are streamed). */
export const PLACEMENT_AUDIT_STREAMED_READ: ReadRecipe = { ...PLACEMENT_AUDIT_READ, placement: 'placement-audit' };

/** compute_node move and restore: the cells only. */
export const CELLS_READ: ReadRecipe = { ...EVERY_CELL_WHOLE, placement: 'none', requireServices: true, ironicSettings: true };

/** prune_host_mappings and discover_hosts --remap: the cells only (every one: a host held in a cell not read would look stale). */
export const HOST_MAPPINGS_READ: ReadRecipe = { ...CELLS_READ, ironicSettings: false };

/** Everything, of every cell: compute_node rebalance. */
export const WHOLE_READ: ReadRecipe = { ...EVERY_CELL_WHOLE, placement: 'whole', requireServices: true, ironicSettings: true };

/** compute_node list: a view of one cell or all, placement when it is configured (else the provider columns say unknown). */
export function computeNodeListRead(cellUuid: string | undefined, placement: boolean): ReadRecipe {
  return { cells: cellsOf(cellUuid), cell: WHOLE_CELL, placement: placement ? 'whole' : 'none', requireServices: false, ironicSettings: true };
}

/**
 * compute_node cleanup_orphans: only the nodes that may be orphans, then the
 * rows of their provider trees and the instances of their hosts, of --host
 * (checked against its instances too) and of those providers' consumers.
 */
export function orphanCleanupRead(names: ScopeNames): PlanReadRecipe {
  return {
    base: planBase({ nodes: 'orphan-candidates', names, instances: false }),
    scopeOf: orphanCleanupPlacementScope,
    instanceHostsOf: (ix) => [...orphanCleanupInstanceHosts(ix), ...(names.host === undefined ? [] : [{ host: names.host }])],
  };
}

/**
 * placement cleanup_providers: no service or host mapping, and of the nodes
 * and providers only what may be stale unless `everyNode` (--resource_provider
 * must name any provider, an ironic node list is checked against every live
 * ironic node); then the rows of the stale providers' trees and the instances
 * of their consumers.
 */
export function providerCleanupRead(everyNode: boolean): PlanReadRecipe {
  return {
    base: planBase({ nodes: everyNode ? 'no-services' : 'stale-provider-candidates', instances: false }),
    scopeOf: providerCleanupPlacementScope,
    instanceHostsOf: () => [],
  };
}

function planBase(cell: CellRecipe): ReadRecipe {
  return { cells: 'all', cell, placement: 'audit', requireServices: true, ironicSettings: true };
}

function cellsOf(cellUuid: string | undefined): ReadRecipe['cells'] {
  return cellUuid === undefined ? 'all' : { uuid: cellUuid };
}
