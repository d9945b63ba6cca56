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
import { HEAL_EXIT, healInstance, indexCell, Stop, type Written } from './heal-instance.js';
import type { HealCapacity, HealCell, HealCellPart, HealEnd, HealInput, HealLookups, HealOptions, HealPlacement, HealPlan, HealStep } from './heal-model.js';

export { allocationRowsScope, capacityScope, HEAL_EXIT } from './heal-instance.js';
export type {
  HealCapacity,
  HealCell,
  HealCellPart,
  HealEnd,
  HealInput,
  HealInstanceRec,
  HealLookups,
  HealNode,
  HealOptions,
  HealPlacement,
  HealPlan,
  HealProvider,
  HealStep,
} from './heal-model.js';

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

