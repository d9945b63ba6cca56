// One instance of placement heal_allocations' walk (heal-allocations.ts):
// what nova would write for it, the capacity check Placement would make, and
// the lines nova prints; and the per-cell lookups the walk judges it on.
import { checkCapacity } from './capacity.js';
import { extraSpec, resourcesFromFlavor, type EmbeddedFlavor } from './flavor-resources.js';
import type { AllocationRec, ConsumerRec, InventoryRec } from './model.js';
import { footprintOfChanges, type Change, type PlannedChange, type Unit } from './plan.js';
import { pushTo } from './text-and-maps.js';
import { nodeKey } from './snapshot-index.js';
import type { HealCapacity, HealCellPart, HealEnd, HealInstanceRec, HealLookups, HealNode, HealOptions, HealProvider, HealStep } from './heal-model.js';

export const HEAL_EXIT = { healed: 0, maxCount: 1, noNode: 2, failed: 3, nothing: 4, unsupported: 8, input: 127 } as const;

interface Built {
  readonly change: Extract<Change, { kind: 'put-allocations' }>;
  readonly capacityException: string | null;
}

export class Stop {
  constructor(readonly end: HealEnd) {}
}

/** What the writes planned in earlier cells left: provider generations, and usage added or removed per "providerId:classId". */
export interface Written {
  readonly generation: Map<number, number>;
  readonly usedDelta: Map<string, number>;
}

interface Ctx {
  readonly lookups: HealLookups;
  readonly computeNodes: readonly HealNode[];
  /** The live nodes by nodeKey (liveNodeAt), once asked for. */
  readonly nodeByKey: { index?: Map<string, HealNode> };
  readonly instancesByCell: ReadonlyMap<string, HealInstanceRec[]>;
  readonly providerByUuid: ReadonlyMap<string, HealProvider>;
  readonly providerById: ReadonlyMap<number, HealProvider>;
  readonly capacity: HealCapacity;
  readonly inventory: ReadonlyMap<string, InventoryRec>;
  /** The rows read (HealPlacement.allocations), per consumer: see currentRows. */
  readonly allocationsByConsumer: ReadonlyMap<string, AllocationRec[]>;
  readonly withAllocations: ReadonlySet<string>;
  /** Sum of `used` per "provider:class" by every consumer, as read. */
  readonly used: ReadonlyMap<string, number>;
  readonly written: Written;
  readonly consumerByUuid: ReadonlyMap<string, ConsumerRec>;
  /** Instances per (cell, host, node), lower-cased as MySQL's collation compares them. */
  readonly instancesOnNode: ReadonlyMap<string, number>;
}

export function indexCell(lookups: HealLookups, part: HealCellPart, written: Written): Ctx {
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
    withAllocations: p.withAllocations,
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
export function healInstance(inst: HealInstanceRec, ctx: Ctx, options: HealOptions, steps: HealStep[]): boolean {
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
    unit: change === null ? unit : { ...unit, footprint: footprintOfChanges(unit.changes, (c) => currentRows(ctx, c).map((a) => a.providerId)) },
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
  const held = ctx.withAllocations.has(inst.uuid);
  const consumer = ctx.consumerByUuid.get(inst.uuid);
  let mode: 'create' | 'update' | null = null;
  let wanted: Wanted | null = null;
  if (!held) {
    mode = 'create';
    wanted = fromFlavor(inst, ctx, flavor);
  } else if (ownerDiffers(inst, ctx, consumer)) {
    mode = 'update';
    wanted = { kind: 'keep', rows: currentRows(ctx, inst.uuid) };
  }
  if (options.force) {
    say(`Force flag passed for instance ${inst.uuid}`);
    mode = 'update';
    wanted = fromFlavor(inst, ctx, flavor);
  }
  return { mode, wanted, current: mode === null ? [] : currentRows(ctx, inst.uuid), consumer };
}

/** Whether the consumer's project or user is not the instance's (nova re-writes the allocations then). */
function ownerDiffers(inst: HealInstanceRec, ctx: Ctx, consumer: ConsumerRec | undefined): boolean {
  const project = consumer === undefined ? undefined : ctx.lookups.projects.get(consumer.projectId);
  const user = consumer === undefined ? undefined : ctx.lookups.users.get(consumer.userId);
  return project !== inst.projectId || user !== inst.userId;
}

/** A consumer's allocation rows, in id order: none when it holds none; an internal error when they were not read (allocationRowsScope). */
function currentRows(ctx: Ctx, consumerUuid: string): readonly AllocationRec[] {
  if (!ctx.withAllocations.has(consumerUuid)) return [];
  const rows = ctx.allocationsByConsumer.get(consumerUuid);
  if (rows === undefined) throw new Error(`internal: heal_allocations needs the allocations of consumer ${consumerUuid}, which allocationRowsScope did not name`);
  return rows;
}

/** The flavor of an instance the walk judges (wantedOf), or undefined where it says a line and moves on, or stops first. */
function judgedFlavor(inst: HealInstanceRec, options: HealOptions): EmbeddedFlavor | undefined {
  const flavor = inst.flavor;
  if ((options.instanceUuid !== undefined && inst.uuid !== options.instanceUuid) || inst.taskState !== null || inst.node === null || flavor === null) return undefined;
  if (truthy(extraSpec(flavor, 'resources:VGPU')) || truthy(extraSpec(flavor, 'accel:device_profile'))) return undefined;
  return flavor;
}

/**
 * The consumers whose allocation rows a cell's walk may use: the instances
 * that hold allocations and that nova would re-write (their project or user
 * differs, or --force). Pure; the part's rows and capacity are not looked at.
 * A healthy cell names none.
 */
export function allocationRowsScope(lookups: HealLookups, cellUuid: string, part: Omit<HealCellPart, 'capacity'>, options: HealOptions): string[] {
  const ctx = indexCell(lookups, { ...part, capacity: NO_CAPACITY }, { generation: new Map(), usedDelta: new Map() });
  const out: string[] = [];
  for (const inst of ctx.instancesByCell.get(cellUuid) ?? []) {
    if (judgedFlavor(inst, options) === undefined || !ctx.withAllocations.has(inst.uuid)) continue;
    if (options.force || ownerDiffers(inst, ctx, ctx.consumerByUuid.get(inst.uuid))) out.push(inst.uuid);
  }
  return out;
}

const NO_CAPACITY: HealCapacity = Object.freeze({ providerIds: new Set<number>(), inventories: [], used: new Map<string, number>() });

/**
 * The providers whose capacity a cell's walk may check (HealCapacity): the
 * provider of the node of each instance nova would create allocations for
 * (or --force), and those of the allocations it would re-write with the
 * instance's project and user. Pure; the part's capacity is not looked at.
 * A healthy cell names none, so its inventories and usage are never read.
 */
export function capacityScope(lookups: HealLookups, cellUuid: string, part: Omit<HealCellPart, 'capacity'>, options: HealOptions): number[] {
  const ctx = indexCell(lookups, { ...part, capacity: NO_CAPACITY }, { generation: new Map(), usedDelta: new Map() });
  const out = new Set<number>();
  for (const inst of ctx.instancesByCell.get(cellUuid) ?? []) {
    const flavor = judgedFlavor(inst, options);
    if (flavor === undefined) continue;
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
function liveNodeAt(ctx: Ctx, key: string): HealNode | undefined {
  if (ctx.nodeByKey.index === undefined) {
    const index = new Map<string, HealNode>();
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
