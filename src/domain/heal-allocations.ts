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
import { checkCapacity } from './capacity.js';
import { extraSpec, resourcesFromFlavor, type EmbeddedFlavor } from './flavor-resources.js';
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InventoryRec, PlacementSnapshot, ProviderRec } from './model.js';
import { footprintOfChanges, type Change, type PlannedChange, type Unit } from './plan.js';
import { pushTo } from './text-and-maps.js';
import { nodeKey } from './snapshot-index.js';

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
  readonly computeNodes: readonly ComputeNodeRec[];
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
 * cell's compute nodes and those its instances hold allocations on, and the
 * instances' allocations and consumer rows. A superset is harmless: every
 * lookup is by exact uuid or id.
 */
export interface HealPlacement {
  readonly providers: readonly HealProvider[];
  readonly allocations: readonly AllocationRec[];
  readonly consumers: readonly ConsumerRec[];
}

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

export const HEAL_EXIT = { healed: 0, maxCount: 1, noNode: 2, failed: 3, nothing: 4, unsupported: 8, input: 127 } as const;

interface Built {
  readonly change: Extract<Change, { kind: 'put-allocations' }>;
  readonly capacityException: string | null;
}

class Stop {
  constructor(readonly end: HealEnd) {}
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
  const placement: HealPlacement = { providers: p.providers, allocations: p.allocations, consumers: p.consumers };
  const capacity: HealCapacity = { providerIds: new Set(p.providers.map((rp) => rp.id)), inventories: p.inventories, used };
  for (const cell of input.cells) {
    if (!walk.wants(cell)) continue;
    walk.cell(cell, { instances: input.instances.filter((i) => i.cellUuid === cell.uuid), computeNodes: input.computeNodes.filter((n) => n.cellUuid === cell.uuid), placement, capacity });
  }
  return walk.finish();
}

/** What the writes planned in earlier cells left: provider generations, and usage added or removed per "providerId:classId". */
interface Written {
  readonly generation: Map<number, number>;
  readonly usedDelta: Map<string, number>;
}

interface Ctx {
  readonly lookups: HealLookups;
  readonly computeNodes: readonly ComputeNodeRec[];
  /** The live nodes by nodeKey (liveNodeAt), once asked for. */
  readonly nodeByKey: { index?: Map<string, ComputeNodeRec> };
  readonly instancesByCell: ReadonlyMap<string, HealInstanceRec[]>;
  readonly providerByUuid: ReadonlyMap<string, HealProvider>;
  readonly providerById: ReadonlyMap<number, HealProvider>;
  readonly capacity: HealCapacity;
  readonly inventory: ReadonlyMap<string, InventoryRec>;
  readonly allocationsByConsumer: ReadonlyMap<string, AllocationRec[]>;
  /** Sum of `used` per "provider:class" by every consumer, as read. */
  readonly used: ReadonlyMap<string, number>;
  readonly written: Written;
  readonly consumerByUuid: ReadonlyMap<string, ConsumerRec>;
  /** Instances per (cell, host, node), lower-cased as MySQL's collation compares them. */
  readonly instancesOnNode: ReadonlyMap<string, number>;
}

function indexCell(lookups: HealLookups, part: HealCellPart, written: Written): Ctx {
  const instancesByCell = new Map<string, HealInstanceRec[]>();
  const instancesOnNode = new Map<string, number>();
  for (const i of part.instances) {
    pushTo(instancesByCell, i.cellUuid, i);
    const k = nodeKey(i.cellUuid, i.host, i.node);
    instancesOnNode.set(k, (instancesOnNode.get(k) ?? 0) + 1);
  }
  // InstanceList.get_by_filters(sort_key='created_at', sort_dir='asc') sorts by (created_at, id); NULLs first, as MySQL does.
  for (const list of instancesByCell.values())
    list.sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || (a.createdAt === null ? -1 : 0) - (b.createdAt === null ? -1 : 0) || a.id - b.id);
  const p = part.placement;
  const allocationsByConsumer = new Map<string, AllocationRec[]>();
  for (const a of [...p.allocations].sort((x, y) => x.id - y.id)) pushTo(allocationsByConsumer, a.consumerUuid, a);
  return {
    lookups,
    computeNodes: part.computeNodes,
    nodeByKey: {},
    instancesByCell,
    providerByUuid: new Map(p.providers.map((r) => [r.uuid, r])),
    providerById: new Map(p.providers.map((r) => [r.id, r])),
    capacity: part.capacity,
    inventory: new Map(part.capacity.inventories.map((inv) => [`${inv.providerId}:${inv.resourceClassId}`, inv])),
    allocationsByConsumer,
    used: part.capacity.used,
    written,
    consumerByUuid: new Map(p.consumers.map((c) => [c.uuid, c])),
    instancesOnNode,
  };
}

/** Usage of "provider:class" by every consumer, as the writes planned so far leave it. */
function usedOf(ctx: Ctx, providerId: number, key: string): number {
  checkCapacityRead(ctx, providerId);
  return (ctx.used.get(key) ?? 0) + (ctx.written.usedDelta.get(key) ?? 0);
}

function inventoryOf(ctx: Ctx, providerId: number, key: string): InventoryRec | undefined {
  checkCapacityRead(ctx, providerId);
  return ctx.inventory.get(key);
}

function checkCapacityRead(ctx: Ctx, providerId: number): void {
  if (!ctx.capacity.providerIds.has(providerId)) throw new Error(`internal: heal_allocations checked the capacity of provider ${providerId}, which capacityScope did not name`);
}

function generationOf(ctx: Ctx, rp: HealProvider): number {
  return ctx.written.generation.get(rp.id) ?? rp.generation;
}

/** true when the instance is healed (counts toward --max-count); throws Stop to end the run. */
function healInstance(inst: HealInstanceRec, ctx: Ctx, options: HealOptions, steps: HealStep[]): boolean {
  // The lines of every instance are not even formatted when nothing will print them.
  const says = options.messages !== false;
  const say = (text: string): void => void steps.push({ kind: 'say', text });
  if (inst.taskState !== null) {
    if (says) say(`Instance ${inst.uuid} is undergoing a task state transition: ${inst.taskState}`);
    return false;
  }
  if (inst.node === null) {
    if (says) say(`Instance ${inst.uuid} is not on a host.`);
    return false;
  }
  const flavor = inst.flavor;
  if (flavor === null) throw failed(inst.uuid, `instance ${inst.uuid} has no readable flavor in instance_extra.flavor`);
  if (truthy(extraSpec(flavor, 'resources:VGPU')))
    throw new Stop({ code: HEAL_EXIT.unsupported, text: `Healing allocation for instance ${inst.uuid} with vGPU resource request is not supported.`, always: true, detail: null });
  if (truthy(extraSpec(flavor, 'accel:device_profile')))
    throw new Stop({
      code: HEAL_EXIT.unsupported,
      text: `Healing allocation for instance ${inst.uuid} with Cyborg device profile request is not supported.`,
      always: true,
      detail: null,
    });

  const { mode, wanted, current, consumer } = wantedOf(inst, flavor, ctx, options, says ? say : () => undefined);
  if (mode === null || wanted === null) {
    if (says) say(`The allocation of instance ${inst.uuid} is up-to-date. Nothing to be healed.`);
    return false;
  }
  const consumerGeneration = current.length === 0 ? null : (consumer?.generation ?? null);
  const built = buildChange(inst, ctx, wanted, current, consumer === undefined ? null : consumer.generation);
  if (!built.ok && !options.dryRun) throw failed(inst.uuid, built.reason);
  const payload = wanted.kind === 'keep' ? keepPayload(inst, ctx, wanted.rows, consumerGeneration) : createPayload(inst, wanted, consumerGeneration);
  if (built.ok && !options.dryRun) recordWrite(ctx, built.value.change);
  const verb = mode === 'create' ? 'created' : 'updated';
  const change = built.ok ? built.value.change : null;
  const unit: Unit = {
    id: `heal-allocations:${inst.uuid}`,
    title: `${mode === 'create' ? 'create' : 'update'} the allocations of instance ${inst.uuid}`,
    changes: change === null ? [] : [{ change, reason: `instance ${inst.uuid}: allocations ${verb} from its flavor and its project/user` } satisfies PlannedChange],
  };
  steps.push({
    kind: 'heal',
    instanceUuid: inst.uuid,
    mode,
    payload,
    unit: change === null ? unit : { ...unit, footprint: footprintOfChanges(unit.changes, (c) => (ctx.allocationsByConsumer.get(c) ?? []).map((a) => a.providerId)) },
    capacityException: built.ok ? built.value.capacityException : null,
    wouldFail: built.ok ? null : built.reason,
  });
  return !options.dryRun;
}

/** What nova would write for the instance (null: nothing, it is up to date); throws Stop as nova stops. */
function wantedOf(
  inst: HealInstanceRec,
  flavor: EmbeddedFlavor,
  ctx: Ctx,
  options: HealOptions,
  say: (text: string) => void,
): { mode: 'create' | 'update' | null; wanted: Wanted | null; current: readonly AllocationRec[]; consumer: ConsumerRec | undefined } {
  const current = ctx.allocationsByConsumer.get(inst.uuid) ?? [];
  const consumer = ctx.consumerByUuid.get(inst.uuid);
  const project = consumer === undefined ? undefined : ctx.lookups.projects.get(consumer.projectId);
  const user = consumer === undefined ? undefined : ctx.lookups.users.get(consumer.userId);
  let mode: 'create' | 'update' | null = null;
  let wanted: Wanted | null = null;
  if (current.length === 0) {
    mode = 'create';
    wanted = fromFlavor(inst, ctx, flavor);
  } else if (project !== inst.projectId || user !== inst.userId) {
    mode = 'update';
    wanted = { kind: 'keep', rows: current };
  }
  if (options.force) {
    say(`Force flag passed for instance ${inst.uuid}`);
    mode = 'update';
    wanted = fromFlavor(inst, ctx, flavor);
  }
  return { mode, wanted, current, consumer };
}

/**
 * The providers whose capacity a cell's walk may check (HealCapacity): the
 * provider of the node of each instance nova would create allocations for
 * (or --force), and those of the allocations it would re-write with the
 * instance's project and user. Pure; the part's capacity is not looked at.
 * A healthy cell names none, so its inventories and usage are never read.
 */
export function capacityScope(lookups: HealLookups, cellUuid: string, part: Omit<HealCellPart, 'capacity'>, options: HealOptions): number[] {
  const ctx = indexCell(lookups, { ...part, capacity: { providerIds: new Set(), inventories: [], used: new Map() } }, { generation: new Map(), usedDelta: new Map() });
  const out = new Set<number>();
  for (const inst of ctx.instancesByCell.get(cellUuid) ?? []) {
    const flavor = inst.flavor;
    if ((options.instanceUuid !== undefined && inst.uuid !== options.instanceUuid) || inst.taskState !== null || inst.node === null || flavor === null) continue;
    try {
      const { wanted } = wantedOf(inst, flavor, ctx, options, () => undefined);
      if (wanted?.kind === 'keep') for (const a of wanted.rows) out.add(a.providerId);
      const rp = wanted?.kind === 'flavor' ? ctx.providerByUuid.get(wanted.nodeUuid) : undefined;
      if (rp !== undefined) out.add(rp.id);
    } catch (err) {
      // Where nova stops, the walk stops too: no capacity is checked there.
      if (!(err instanceof Stop)) throw err;
    }
  }
  return [...out].sort((a, b) => a - b);
}

type Wanted =
  | { readonly kind: 'flavor'; readonly nodeUuid: string; readonly resources: ReadonlyArray<readonly [string, number]>; readonly ironicNode: boolean }
  | { readonly kind: 'keep'; readonly rows: readonly AllocationRec[] };

function fromFlavor(inst: HealInstanceRec, ctx: Ctx, flavor: EmbeddedFlavor): Wanted {
  // ComputeNode.get_by_host_and_nodename: live rows, host and node compared as MySQL's collation does.
  const cn = liveNodeAt(ctx, nodeKey(inst.cellUuid, inst.host, inst.node));
  if (cn === undefined || cn.uuid === null)
    throw new Stop({ code: HEAL_EXIT.noNode, text: `Compute host ${inst.host ?? 'None'} could not be found.`, always: true, detail: null });
  const res = resourcesFromFlavor(flavor, inst.volumeBacked);
  if (!res.ok) throw failed(inst.uuid, res.reason);
  const ironicNode = cn.hypervisorType === 'ironic' && ctx.instancesOnNode.get(nodeKey(inst.cellUuid, inst.host, inst.node)) === 1;
  return { kind: 'flavor', nodeUuid: cn.uuid, resources: res.resources, ironicNode };
}

/** The live compute node of a (cell, host, node) key with the lowest id; the index is built on first use (a healthy cell never needs it). */
function liveNodeAt(ctx: Ctx, key: string): ComputeNodeRec | undefined {
  if (ctx.nodeByKey.index === undefined) {
    const index = new Map<string, ComputeNodeRec>();
    for (const n of [...ctx.computeNodes].sort((a, b) => a.id - b.id)) {
      const k = nodeKey(n.cellUuid, n.host, n.hypervisorHostname);
      if (!n.deleted && !index.has(k)) index.set(k, n);
    }
    ctx.nodeByKey.index = index;
  }
  return ctx.nodeByKey.index.get(key);
}

type BuildResult = { readonly ok: true; readonly value: Built } | { readonly ok: false; readonly reason: string };

function buildChange(
  inst: HealInstanceRec,
  ctx: Ctx,
  wanted: Wanted,
  current: readonly AllocationRec[],
  consumerRowGeneration: number | null,
): BuildResult {
  if (inst.projectId === null || inst.userId === null) return { ok: false, reason: `instance ${inst.uuid} has no project_id or user_id` };
  const rows: Array<{ providerId: number; providerUuid: string; providerGeneration: number; resourceClassId: number; resourceClass: string; used: number; ownNode: boolean }> = [];
  if (wanted.kind === 'flavor') {
    const rp = ctx.providerByUuid.get(wanted.nodeUuid);
    if (rp === undefined) return { ok: false, reason: `no resource provider has the compute node's uuid ${wanted.nodeUuid}` };
    for (const [rc, used] of wanted.resources) {
      const classId = ctx.lookups.resourceClassIds.get(rc);
      if (classId === undefined) return { ok: false, reason: `resource class ${rc} does not exist in placement` };
      rows.push({ providerId: rp.id, providerUuid: rp.uuid, providerGeneration: generationOf(ctx, rp), resourceClassId: classId, resourceClass: rc, used, ownNode: wanted.ironicNode });
    }
  } else {
    for (const a of wanted.rows) {
      const rp = ctx.providerById.get(a.providerId);
      if (rp === undefined) return { ok: false, reason: `allocation ${a.id} names resource provider ${a.providerId}, which does not exist` };
      rows.push({ providerId: rp.id, providerUuid: rp.uuid, providerGeneration: generationOf(ctx, rp), resourceClassId: a.resourceClassId, resourceClass: a.resourceClass, used: a.used, ownNode: false });
    }
  }
  // Placement's capacity check: the consumer's own allocations are deleted first (nova-facts §8.2).
  const mine = new Map<string, number>();
  for (const a of current) mine.set(`${a.providerId}:${a.resourceClassId}`, (mine.get(`${a.providerId}:${a.resourceClassId}`) ?? 0) + a.used);
  let capacityException: string | null = null;
  for (const r of rows) {
    const k = `${r.providerId}:${r.resourceClassId}`;
    const verdict = checkCapacity(inventoryOf(ctx, r.providerId, k), {
      resourceClass: r.resourceClass,
      providerUuid: r.providerUuid,
      amount: r.used,
      usedByOthers: usedOf(ctx, r.providerId, k) - (mine.get(k) ?? 0),
      ownIronicInstance: r.ownNode,
    });
    if (!verdict.ok) return { ok: false, reason: verdict.reason };
    if (verdict.exception !== null) capacityException = verdict.exception;
  }
  return {
    ok: true,
    value: {
      change: {
        kind: 'put-allocations',
        target: { db: 'placement' },
        consumerUuid: inst.uuid,
        consumerGeneration: consumerRowGeneration,
        projectExternalId: inst.projectId,
        userExternalId: inst.userId,
        replaces: current.map((a) => ({ providerId: a.providerId, resourceClassId: a.resourceClassId, used: a.used })),
        allocations: rows.map(({ ownNode: _own, ...r }) => r),
        capacityException,
      },
      capacityException,
    },
  };
}

/** What a planned write changes for the writes planned after it: provider generations and usage. */
function recordWrite(ctx: Ctx, change: Built['change']): void {
  for (const r of change.replaces) {
    const k = `${r.providerId}:${r.resourceClassId}`;
    ctx.written.usedDelta.set(k, (ctx.written.usedDelta.get(k) ?? 0) - r.used);
  }
  const bumped = new Set<number>();
  for (const a of change.allocations) {
    const k = `${a.providerId}:${a.resourceClassId}`;
    ctx.written.usedDelta.set(k, (ctx.written.usedDelta.get(k) ?? 0) + a.used);
    if (!bumped.has(a.providerId)) ctx.written.generation.set(a.providerId, a.providerGeneration + 1);
    bumped.add(a.providerId);
  }
}

function failed(instanceUuid: string, reason: string): Stop {
  // AllocationUpdateFailed(consumer_uuid, error='') is what nova prints when its PUT is refused.
  return new Stop({ code: HEAL_EXIT.failed, text: `Failed to update allocations for consumer ${instanceUuid}. Error: `, always: true, detail: reason });
}

/** Python truthiness of an extra spec value (a non-empty string). */
function truthy(v: string | undefined): boolean {
  return v !== undefined && v !== '';
}

function createPayload(inst: HealInstanceRec, wanted: Extract<Wanted, { kind: 'flavor' }>, consumerGeneration: number | null): string {
  return pyJson({
    allocations: { [wanted.nodeUuid]: { resources: Object.fromEntries(wanted.resources) } },
    project_id: inst.projectId,
    user_id: inst.userId,
    consumer_generation: consumerGeneration,
  });
}

/** GET /allocations/{consumer} at 1.28, with project and user replaced (nova's _heal_missing_project_and_user_id). */
function keepPayload(inst: HealInstanceRec, ctx: Ctx, rows: readonly AllocationRec[], consumerGeneration: number | null): string {
  const byRp: Record<string, { resources: Record<string, number>; generation: number }> = {};
  for (const a of rows) {
    const rp = ctx.providerById.get(a.providerId);
    const key = rp?.uuid ?? String(a.providerId);
    const entry = (byRp[key] ??= { resources: {}, generation: rp === undefined ? (ctx.written.generation.get(a.providerId) ?? 0) : generationOf(ctx, rp) });
    entry.resources[a.resourceClass] = a.used;
  }
  return pyJson({ allocations: byRp, project_id: inst.projectId, user_id: inst.userId, consumer_generation: consumerGeneration });
}

/** json.dumps with Python's default separators, keys in insertion order. */
function pyJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`)
      .join(', ')}}`;
  return JSON.stringify(value);
}
