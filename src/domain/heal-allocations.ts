// `placement heal_allocations`, planned as nova-manage 26.x walks it
// (nova/cmd/manage.py PlacementCommands.heal_allocations,
// _heal_instances_in_cell, _heal_allocations_for_instance): non-cell0 cells
// in order, live instances oldest first (created_at, id) in pages of
// --max-count (50 when unlimited), and for each instance:
//  - a task_state, or no node: skipped with a verbose line;
//  - resources:VGPU or accel:device_profile in the flavor: stop, exit 8;
//  - no allocations: the flavor's resources on the provider of the compute
//    node (host, node) — a missing compute node stops with exit 2;
//  - allocations whose consumer project or user differ from the instance's:
//    the same allocations re-written with the instance's project and user;
//  - --force: replaced by the flavor's resources on the node's provider.
// Only the healed instances count toward --max-count, and nova checks the
// count only at the end of a page and of a cell; a dry run counts nothing
// (so it always ends with 4). Those quirks are kept: scripts loop on them.
//
// The one difference: nova PUTs through the Placement API and fails (exit 3)
// when the write breaks a capacity rule. Here the same rules are checked
// (src/domain/capacity.ts), with one exception that the plan states: an
// in-use ironic node's own reserved = 1 does not block its own instance.
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InventoryRec, PlacementSnapshot, ProviderRec } from './model.js';
import { HEAL_EXIT, healInstance, indexCell, Stop, type Written } from './heal-instance.js';
import type { EmbeddedFlavor } from './flavor-resources.js';
import type { Unit } from './plan.js';

export { allocationRowsScope, capacityScope, HEAL_EXIT } from './heal-instance.js';

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

/**
 * nova's walk, one cell at a time: `cell` takes each cell in order with its
 * part (read only when `wants` says the walk reaches it) and `finish` gives
 * the plan. What carries from cell to cell is the count of healed instances
 * and what the writes planned so far do to provider generations and usage.
 */
export interface HealWalk {
  /** False once the walk has ended (--max-count reached, or a stop): no further cell is read. */
  wants(cell: HealCell): boolean;
  cell(cell: HealCell, part: HealCellPart): void;
  finish(): HealPlan;
}

export function openHealWalk(lookups: HealLookups, options: HealOptions): HealWalk {
  const steps: HealStep[] = [];
  const say = options.messages === false ? () => undefined : (text: string): void => void steps.push({ kind: 'say', text });
  const written: Written = { generation: new Map(), usedDelta: new Map() };
  const { maxCount, unlimited } = options;
  let processed = 0;
  let ended: HealEnd | undefined;
  if (options.instanceUuid === undefined && unlimited) say(`Running batches of ${maxCount} until complete`);
  return {
    wants: (cell) => ended === undefined && !cell.isCell0,
    cell(cell, part) {
      if (ended !== undefined || cell.isCell0) return;
      try {
        say(`Looking for instances in cell: ${cell.name ? `${cell.uuid}(${cell.name})` : cell.uuid}`);
        const ctx = indexCell(lookups, part, written);
        const limit = unlimited ? maxCount : maxCount - processed;
        let inCell = 0;
        const candidates = (ctx.instancesByCell.get(cell.uuid) ?? []).filter((i) => options.instanceUuid === undefined || i.uuid === options.instanceUuid);
        for (let start = 0; limit > 0 && start < candidates.length; start += limit) {
          const page = candidates.slice(start, start + limit);
          say(`Found ${page.length} candidate instances.`);
          for (const inst of page) if (healInstance(inst, ctx, options, steps)) inCell += 1;
          if ((!unlimited && inCell === limit) || options.instanceUuid !== undefined) break;
        }
        processed += inCell;
        // nova compares with max_count even when unlimited (the page size, 50).
        if (processed === maxCount && options.instanceUuid === undefined)
          ended = { code: HEAL_EXIT.maxCount, text: `Max count reached. Processed ${processed} instances.`, always: false, detail: null };
      } catch (err) {
        if (!(err instanceof Stop)) throw err;
        ended = err.end;
      }
    },
    finish: () => ({
      steps,
      end: ended ?? { code: processed === 0 ? HEAL_EXIT.nothing : HEAL_EXIT.healed, text: `Processed ${processed} instances.`, always: false, detail: null },
    }),
  };
}

/** The walk over an input held whole: each cell's part cut from it, as the command reads them. */
export function planHealAllocations(input: HealInput, options: HealOptions): HealPlan {
  const walk = openHealWalk(input, options);
  const p = input.placement;
  const used = new Map<string, number>();
  for (const a of p.allocations) used.set(`${a.providerId}:${a.resourceClassId}`, (used.get(`${a.providerId}:${a.resourceClassId}`) ?? 0) + a.used);
  const placement: HealPlacement = { providers: p.providers, consumers: p.consumers, withAllocations: new Set(p.allocations.map((a) => a.consumerUuid)), allocations: p.allocations };
  const capacity: HealCapacity = { providerIds: new Set(p.providers.map((rp) => rp.id)), inventories: p.inventories, used };
  for (const cell of input.cells) {
    if (!walk.wants(cell)) continue;
    walk.cell(cell, { instances: input.instances.filter((i) => i.cellUuid === cell.uuid), computeNodes: input.computeNodes.filter((n) => n.cellUuid === cell.uuid), placement, capacity });
  }
  return walk.finish();
}

