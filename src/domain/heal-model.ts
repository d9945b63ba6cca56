// placement heal_allocations' records and options (the walk: heal-allocations.ts;
// one instance: heal-instance.ts).
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InventoryRec, PlacementSnapshot, ProviderRec } from './model.js';
import type { EmbeddedFlavor } from './flavor-resources.js';
import type { Unit } from './plan.js';

export interface HealInstanceRec {
  readonly cellUuid: string;
  readonly id: number;
  readonly uuid: string;
  readonly host: string | null;
  readonly node: string | null;
  readonly taskState: string | null;
  readonly projectId: string | null;
  readonly userId: string | null;
  readonly createdAt: string | null;
  /** instance_extra.flavor, parsed (parseEmbeddedFlavor); null when missing or unreadable. */
  readonly flavor: EmbeddedFlavor | null;
  /** compute_utils.is_volume_backed_instance: the root BDM's destination, else an empty image_ref. */
  readonly volumeBacked: boolean;
}

export interface HealCell {
  readonly uuid: string;
  readonly name: string | null;
  readonly isCell0: boolean;
}

/**
 * One cell's part of the walk, read when the walk reaches the cell (so only
 * one cell is held at a time: operations/heal-allocations.ts).
 */
export interface HealCellPart {
  /** Live instances of the cell (all of them, or the one --instance names). */
  readonly instances: readonly HealInstanceRec[];
  /** Live compute nodes of the cell. */
  readonly computeNodes: readonly HealNode[];
  readonly placement: HealPlacement;
  /** The capacity of the providers capacityScope names (read after it). */
  readonly capacity: HealCapacity;
}

/**
 * What Placement's capacity check needs of the providers a cell's walk may
 * write to (capacityScope): their inventories, and their usage by every
 * consumer, summed per "providerId:classId". The walk refuses (an internal
 * error) to check any other provider: it would judge on rows it never read.
 */
export interface HealCapacity {
  readonly providerIds: ReadonlySet<number>;
  readonly inventories: readonly InventoryRec[];
  readonly used: ReadonlyMap<string, number>;
}

/**
 * What placement holds for one cell's instances: the providers of the
 * cell's compute nodes, the instances' consumer rows, which of them hold any
 * allocation (`withAllocations`), and the allocations rows of those
 * allocationRowsScope names with the providers they are on (read after it).
 * A superset is harmless: every lookup is by exact uuid or id. The walk
 * refuses (an internal error) to use the rows of a consumer it was not given.
 */
export interface HealPlacement {
  readonly providers: readonly HealProvider[];
  readonly consumers: readonly ConsumerRec[];
  readonly withAllocations: ReadonlySet<string>;
  readonly allocations: readonly AllocationRec[];
}

/** What the walk needs of a compute node. */
export type HealNode = Pick<ComputeNodeRec, 'cellUuid' | 'id' | 'uuid' | 'host' | 'hypervisorHostname' | 'hypervisorType' | 'deleted'>;

/** What the walk needs of a provider. */
export type HealProvider = Pick<ProviderRec, 'id' | 'uuid' | 'generation'>;

/** What every cell of the walk shares: the lookup tables. */
export interface HealLookups {
  readonly resourceClassIds: ReadonlyMap<string, number>;
  /** projects.id / users.id -> external_id (Keystone id). */
  readonly projects: ReadonlyMap<number, string>;
  readonly users: ReadonlyMap<number, string>;
}

/** The whole input at once (the unit tests): cut into cell parts and walked as the command walks them. */
export interface HealInput extends HealLookups {
  /** The cells to walk, in cell_mappings order (cell0 is skipped here, as nova skips it). */
  readonly cells: readonly HealCell[];
  /** Live instances of those cells. */
  readonly instances: readonly HealInstanceRec[];
  /** Live compute nodes. */
  readonly computeNodes: readonly ComputeNodeRec[];
  readonly placement: PlacementSnapshot;
}

export interface HealOptions {
  readonly instanceUuid: string | undefined;
  /** The page size and, unless unlimited, the total to heal. */
  readonly maxCount: number;
  readonly unlimited: boolean;
  readonly dryRun: boolean;
  readonly force: boolean;
  /**
   * Keep nova's --verbose lines (the 'say' steps). Default true; false when
   * nothing will print them (a dry run without --verbose or JSON), so that
   * a walk over every instance does not hold a line per instance.
   */
  readonly messages?: boolean;
}

export type HealStep =
  /** A line nova prints with --verbose. */
  | { readonly kind: 'say'; readonly text: string }
  | {
      readonly kind: 'heal';
      readonly instanceUuid: string;
      readonly mode: 'create' | 'update';
      /** nova's payload, as jsonutils.dumps prints it in the [dry-run] line. */
      readonly payload: string;
      readonly unit: Unit;
      /** Why the write is allowed past Placement's capacity rule (the in-use ironic node), or null. */
      readonly capacityException: string | null;
      /** Set in a dry run only: why the write would be refused (nova's PUT would fail too, exit 3). */
      readonly wouldFail: string | null;
    };

export interface HealEnd {
  readonly code: number;
  /** nova's last line; printed always for an error, only with --verbose for 0, 1 and 4. */
  readonly text: string;
  readonly always: boolean;
  /** Our reason for an exit 3, for stderr (nova prints an empty "Error: "). */
  readonly detail: string | null;
}

export interface HealPlan {
  readonly steps: readonly HealStep[];
  readonly end: HealEnd;
}

