// What a command reads, stated before anything is read (the named recipes
// are in recipes.ts). readSnapshot executes a ReadRecipe; readForPlan a
// PlanReadRecipe: a first read, the planner's pure scope functions on it,
// then only the rows they name.
import type { PlacementRead } from '../../db/placement/snapshot-reads.js';
import type { SnapshotIndex } from '../../domain/snapshot-index.js';

export interface ReadRecipe {
  /**
   * Every cell, or only this cell's databases, for per-cell views
   * (compute_node list). Such a snapshot cannot tell a stale provider or
   * mapping from one that belongs to another cell, so the audit and the
   * planners read every cell.
   */
  readonly cells: 'all' | { readonly uuid: string };
  /** What each cell's databases give: the snapshot is read cell by cell. */
  readonly cell: CellRecipe;
  /**
   * Placement's rows: none (Snapshot.placement undefined), or as
   * db/placement/snapshot-reads.ts readPlacement reads them. 'audit':
   * without allocations and consumers, which the audit streams afterwards
   * (PlacementSnapshot.streamed). 'placement-audit': the providers and
   * consumer rows only (placement audit streams the allocations).
   */
  readonly placement: 'none' | PlacementRead;
  /**
   * Refuse a cell whose services table is empty while it has live compute
   * nodes (checkGroundTruth); false for views that judge no node by its
   * service (compute_node list, placement audit).
   */
  readonly requireServices: boolean;
  /**
   * Take nova.conf's Ironic partitions and shard into the snapshot: reading
   * them fails on a bad [ironic] (load-config.ts, failingOnIronic), so the
   * commands nova-manage also has, which judge no node by its conductor
   * group, say false.
   */
  readonly ironicSettings: boolean;
}

export interface CellRecipe {
  /**
   * 'whole': every table. 'no-services': every compute node, but of the
   * services only the counts checkGroundTruth needs, and no host mapping
   * (Snapshot.nodeScope), for a planner that judges no node by its service
   * and takes no --host. 'orphan-candidates' (orphan-candidates.ts):
   * on MySQL only the live nodes that may be orphans, their hosts' services
   * and their providers, no host mapping, and `names` looked up; else
   * 'whole'. 'stale-provider-candidates' (stale-provider-candidates.ts): on
   * MySQL of the nodes only their uuids and names, the soft-deleted ones and
   * the live ones whose name a candidate provider holds, of placement's
   * providers only the candidates with their trees; else 'no-services'.
   */
  readonly nodes: 'whole' | 'no-services' | 'orphan-candidates' | 'stale-provider-candidates';
  /** With 'orphan-candidates': the --host and --node values the planner's scope will check (Snapshot.scopeNames). */
  readonly names?: ScopeNames;
  /** The live instances; false when a plan's second step reads those of its scope (PlanReadRecipe.instanceHostsOf). */
  readonly instances: boolean;
}

/** --host and --node values; a value that is not plain ASCII makes the read whole. */
export interface ScopeNames {
  readonly host?: string;
  readonly nodes?: readonly string[];
}

/** A host whose live instances a plan looks at; without a cell: in every cell. */
export interface InstanceHost {
  readonly cellUuid?: string;
  readonly host: string | null;
}

/**
 * A planner's read: `base` (placement as 'audit' reads it), then only the
 * allocations, consumers and inventories of the providers `scopeOf` names on
 * it (PlacementSnapshot.scope). A planner that asks the index beyond them
 * fails instead of planning on a partial view.
 */
export interface PlanReadRecipe {
  readonly base: ReadRecipe;
  /** The provider ids (trees included) whose placement rows the planner will look at. Pure. */
  readonly scopeOf: (ix: SnapshotIndex) => readonly number[];
  /**
   * When given (and base.cell.instances is false), the live instances are
   * read only for the planner's scope too (Snapshot.instanceScope): those on
   * the hosts this names, and those whose uuid is a consumer of the scoped
   * placement read. A host that is NULL or not plain ASCII (whose folding
   * the database and hostKey might not share) makes every instance read.
   */
  readonly instanceHostsOf?: (ix: SnapshotIndex) => readonly InstanceHost[];
}
