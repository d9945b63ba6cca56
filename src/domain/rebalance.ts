// Planning `compute_node rebalance` (seed bug 1714248): after an ironic node
// moved between nova-compute services through a hash-ring rebalance or a
// failover, its records diverge. Per ironic node (hypervisor_hostname) and
// cell, the plan
//  1. chooses the canonical compute node: the row whose provider holds the
//     node's allocations, else the row with the node's instance, else the
//     oldest;
//  2. placement first: makes the canonical row's provider the one that holds
//     the allocations and the node's name — a stale provider holding the name
//     is dealt with first; the instance's allocations are moved onto the
//     canonical provider (Placement's capacity rules, with the in-use ironic
//     exception of capacity.ts), or the stale provider is re-keyed to the
//     canonical uuid when the canonical provider does not exist; emptied
//     stale providers are deleted with their inventories, traits and
//     aggregate links;
//  3. then the cell: soft-deletes the duplicates (host-guarded, bug 1853009).
//     When the canonical row's own service is up (legacy duplicates of
//     pre-Rocky random uuids while both services are up), that is all unless
//     its instance is on another up host: the row stays, placement is left
//     alone, and with no provider behind any row the node is refused.
//     Otherwise the canonical row is re-homed onto
//     the host of its instance when that service is up (a node with an
//     instance belongs there, §6), else onto the newest duplicate's host when
//     that service is up, or, when its own service is dead, onto the owner
//     that Nova's hash ring picks among the live members; its instance moves
//     in the same transaction (instances.host; node unchanged); an instance
//     left on a dead host by an earlier run follows its node on its own.
// Each change is its own compare-and-swap transaction, in this order, so a
// crash after any of them leaves a state from which the next run finishes:
// the canonical choice is stable under every step (the provider that ends up
// holding the allocations is the canonical row's).
import type { AllocationRec, ComputeNodeRec, InstanceRec, ProviderRec, ServiceRec, Snapshot } from './model.js';
import { COMPUTE_NODE_TRAIT, SHARING_TRAIT } from './model.js';
import { checkCapacity } from './capacity.js';
import { buildHashRing, ringOwner, type HashRing } from './hash-ring.js';
import { isUuid } from './ironic-nodes.js';
import { ironicTruthArgs } from './orphan-nodes.js';
import { ANY_GROUP, partitionOfNode, unservedGroup, type IronicPartition } from './partitions.js';
import { isServiceUp, serviceHealth, type ServiceHealth } from './liveness.js';
import type { AllocationPart, Plan, PlannedChange, Refusal, Unit } from './plan.js';
import { bumpConsumersOn, newPlanState, planProviderTreeRemoval, type PlanState } from './provider-removal.js';
import { hostKey, indexSnapshot, serviceKey, unitFootprint, type SnapshotIndex } from './snapshot-index.js';
import { ReconcileError } from '../errors.js';
import { selectInScope, type PlanScope, type ScopedRefusal, type ScopedUnit, type ScopeSubject } from './plan-scope.js';

export const REBALANCE = 'compute_node rebalance';

export interface RingMembers {
  readonly hosts: readonly string[];
  /** Where they came from, for messages: "--ring-members" or "[nova_reconcile] ironic_ring_members". */
  readonly source: string;
}

export interface RebalanceOptions {
  /** Also treat services down for longer than service_down_time as dead (forced down always is). */
  readonly includeDown: boolean;
  readonly cellUuid?: string;
  /** Ironic node uuids (hypervisor_hostname) or compute node uuids; all ironic nodes when absent. */
  readonly nodes?: readonly string[];
  /** Only the ironic nodes with a compute node on this host (case- and trailing-space-insensitive). */
  readonly host?: string;
  readonly ringMembers?: RingMembers;
}

interface Ctx {
  readonly s: Snapshot;
  readonly ix: SnapshotIndex;
  readonly includeDown: boolean;
  readonly state: PlanState;
  readonly instancesByNode: ReadonlyMap<string, readonly InstanceRec[]>;
  /** Soft-deleted compute nodes by groupKey: their providers are this node's stale providers. */
  readonly deletedByNode: ReadonlyMap<string, readonly ComputeNodeRec[]>;
  readonly rings: Map<string, CellRing>;
  readonly ringMembers: ReadonlySet<string> | undefined;
}

interface CellRing {
  readonly ring: HashRing;
  /** Lower-cased member → its service. */
  readonly services: ReadonlyMap<string, ServiceRec>;
}

export function planRebalance(snapshot: Snapshot, options: RebalanceOptions): Plan {
  const ix = indexSnapshot(snapshot);
  const cells = scopeCells(snapshot, options.cellUuid);
  const ringMembers = options.ringMembers === undefined ? undefined : checkRingMembers(snapshot, options.ringMembers, cells);
  // Every ironic node is planned, the scope only selects (plan-scope.ts): an
  // earlier node's generations are what a later node's unit expects.
  const groups = ironicNodeGroups(ix, scopeCells(snapshot, undefined));
  // Each --node must be an ironic node somewhere; with --cell too the two narrow together (another cell's node selects nothing).
  if (options.nodes !== undefined) selectGroups(ix, groups, options.nodes, undefined);
  const scope: PlanScope = {
    ...(options.cellUuid === undefined ? {} : { cellUuid: [...cells][0] as string }),
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.nodes === undefined ? {} : { nodes: options.nodes }),
  };
  const ctx: Ctx = {
    s: snapshot,
    ix,
    includeDown: options.includeDown,
    state: newPlanState(),
    instancesByNode: indexInstancesByNode(snapshot),
    deletedByNode: indexDeletedNodes(snapshot),
    rings: new Map(),
    ringMembers,
  };
  const units: ScopedUnit[] = [];
  const refused: ScopedRefusal[] = [];
  for (const rows of groups.values()) {
    const result = planNode(ctx, rows);
    const subject: ScopeSubject = { cells: [rows[0]?.cellUuid ?? null], hosts: rows.map((r) => r.host), nodes: rows, providers: [] };
    if (result.kind === 'unit') units.push({ unit: result.unit, subject, keys: result.unit.footprint ?? [] });
    else if (result.kind === 'refused') refused.push({ refusal: result.refusal, subject });
  }
  return selectInScope(REBALANCE, units, refused, scope);
}

// ---------------------------------------------------------------------------
// Scope and input checks.

function scopeCells(s: Snapshot, cellUuid: string | undefined): Set<string> {
  const cells = s.cells.filter((c) => !c.isCell0);
  if (cellUuid === undefined) return new Set(cells.map((c) => c.uuid));
  const cell = cells.find((c) => c.uuid.toLowerCase() === cellUuid.toLowerCase());
  if (cell === undefined) throw new ReconcileError('not-found', `cell ${cellUuid} has no mapping`, { hint: 'run `nova-reconcile cell_v2 list_cells` to see the cells' });
  return new Set([cell.uuid]);
}

function checkRingMembers(s: Snapshot, members: RingMembers, cells: ReadonlySet<string>): Set<string> {
  const known = new Set(s.services.filter((svc) => !svc.deleted && svc.binary === 'nova-compute' && cells.has(svc.cellUuid)).map((svc) => hostKey(svc.host)));
  const unknown = members.hosts.filter((h) => !known.has(hostKey(h)));
  if (members.hosts.length === 0) throw new ReconcileError('input', `${members.source} names no host`, { hint: 'give a comma-separated list of nova-compute hosts' });
  if (unknown.length > 0)
    throw new ReconcileError('input', `${members.source}: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not a nova-compute service' : 'are not nova-compute services'}`, {
      hint: 'list the services with `openstack compute service list --service nova-compute`',
    });
  return new Set(members.hosts.map(hostKey));
}

/** Live ironic compute nodes by `${cellUuid}|${lower(hypervisor_hostname)}`, in a stable order. */
function ironicNodeGroups(ix: SnapshotIndex, cells: ReadonlySet<string>): Map<string, ComputeNodeRec[]> {
  const groups = new Map<string, ComputeNodeRec[]>();
  for (const n of ix.liveNodes) {
    if (n.hypervisorType !== 'ironic' || n.hypervisorHostname === null || !cells.has(n.cellUuid)) continue;
    const key = groupKey(n.cellUuid, n.hypervisorHostname);
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [n]);
    else list.push(n);
  }
  return new Map([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function groupKey(cellUuid: string, hypervisorHostname: string): string {
  return `${cellUuid}|${hypervisorHostname.toLowerCase()}`;
}

function selectGroups(ix: SnapshotIndex, groups: ReadonlyMap<string, readonly ComputeNodeRec[]>, nodes: readonly string[], cellUuid: string | undefined): Set<string> {
  const wanted = new Set<string>();
  for (const raw of nodes) {
    const value = raw.toLowerCase();
    let found = false;
    for (const [key, rows] of groups) {
      if (rows.some((r) => (r.hypervisorHostname ?? '').toLowerCase() === value || (r.uuid ?? '').toLowerCase() === value)) {
        wanted.add(key);
        found = true;
      }
    }
    if (found) continue;
    const other = ix.liveNodes.find((n) => (n.uuid ?? '').toLowerCase() === value || (n.hypervisorHostname ?? '').toLowerCase() === value);
    if (other !== undefined && other.hypervisorType !== 'ironic')
      throw new ReconcileError('input', `--node ${raw}: compute node ${other.uuid ?? other.id} is a ${other.hypervisorType} node, not an ironic node`);
    throw new ReconcileError('not-found', `--node ${raw}: no live ironic compute node has this uuid${cellUuid === undefined ? '' : ` in cell ${cellUuid}`}`, {
      hint: 'list the nodes with `nova-reconcile compute_node list`',
    });
  }
  return wanted;
}

function indexDeletedNodes(s: Snapshot): Map<string, ComputeNodeRec[]> {
  const out = new Map<string, ComputeNodeRec[]>();
  for (const n of s.computeNodes) {
    if (!n.deleted || n.hypervisorHostname === null || n.uuid === null) continue;
    const key = groupKey(n.cellUuid, n.hypervisorHostname);
    const list = out.get(key);
    if (list === undefined) out.set(key, [n]);
    else list.push(n);
  }
  return out;
}

function indexInstancesByNode(s: Snapshot): Map<string, InstanceRec[]> {
  const out = new Map<string, InstanceRec[]>();
  for (const i of s.instances) {
    if (i.node === null) continue;
    const key = groupKey(i.cellUuid, i.node);
    const list = out.get(key);
    if (list === undefined) out.set(key, [i]);
    else list.push(i);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Liveness and the ring.

function healthOf(ctx: Ctx, cellUuid: string, host: string | null): ServiceHealth {
  return serviceHealth(ctx.s, ctx.ix.liveComputeService.get(serviceKey(cellUuid, host)));
}

function isDead(ctx: Ctx, health: ServiceHealth): boolean {
  return health === 'forced-down' || health === 'gone' || (ctx.includeDown && health === 'down');
}

function describeHealth(health: ServiceHealth): string {
  switch (health) {
    case 'up':
      return 'up';
    case 'down':
      return 'down for longer than service_down_time';
    case 'forced-down':
      return 'forced down';
    case 'gone':
      return 'gone (no live nova-compute service)';
  }
}

/**
 * Nova's ring membership (§6): the up, enabled nova-compute services of the
 * cell that have ironic compute nodes (soft-deleted rows count, as in Nova's
 * join); or the operator's list, which stands for [ironic] peer_list.
 */
function ringOf(ctx: Ctx, cellUuid: string, partition?: IronicPartition, exclude?: string): CellRing {
  // One ring per partition (Nova hashes a partition's nodes over its peer_list only); "*" is the unpartitioned ring.
  const peers = partition === undefined || partition.group === ANY_GROUP ? undefined : new Set(partition.hosts);
  const cacheKey = `${peers === undefined ? cellUuid : `${cellUuid}\u0000${partition?.group ?? ''}`}\u0000${exclude ?? ''}`;
  const cached = ctx.rings.get(cacheKey);
  if (cached !== undefined) return cached;
  const ironicHosts = new Set(ctx.s.computeNodes.filter((n) => n.cellUuid === cellUuid && n.hypervisorType === 'ironic').map((n) => hostKey(n.host)));
  const services = new Map<string, ServiceRec>();
  for (const svc of ctx.s.services) {
    if (svc.cellUuid !== cellUuid || svc.deleted || svc.binary !== 'nova-compute' || svc.host === null || svc.disabled) continue;
    if (!isServiceUp(svc, ctx.s.takenAt, ctx.s.serviceDownTime)) continue;
    // A shard's nova-compute lists only its shard's nodes: it takes no other node, whatever a ring says.
    if (exclude !== undefined && svc.host.toLowerCase() === exclude) continue;
    if (ctx.ringMembers !== undefined ? !ctx.ringMembers.has(hostKey(svc.host)) : peers !== undefined ? !peers.has(svc.host.toLowerCase()) : !ironicHosts.has(hostKey(svc.host))) continue;
    services.set(svc.host.toLowerCase(), svc);
  }
  const ring: CellRing = { ring: buildHashRing(services.keys()), services };
  ctx.rings.set(cacheKey, ring);
  return ring;
}

// ---------------------------------------------------------------------------
// One ironic node.

type NodeResult = { readonly kind: 'unit'; readonly unit: Unit } | { readonly kind: 'refused'; readonly refusal: Refusal } | { readonly kind: 'clean' };

type Step = { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly suggestion?: string };

const OK: Step = { ok: true };

interface NodePlan {
  readonly ctx: Ctx;
  readonly cellUuid: string;
  readonly hh: string;
  readonly rows: readonly ComputeNodeRec[];
  readonly canonical: ComputeNodeRec;
  readonly instance: InstanceRec | undefined;
  /** The node's state of generations and removed allocations; merged into ctx.state on success. */
  readonly state: PlanState;
  readonly changes: PlannedChange[];
  /** What the unit does, for its title. */
  readonly notes: string[];
}

function planNode(ctx: Ctx, group: readonly ComputeNodeRec[]): NodeResult {
  const result = planListedNode(ctx, group);
  if (result.kind === 'clean') return result;
  // With ironic truth, a node Ironic does not list is gone, not moved: it is
  // not re-homed nor its duplicates retired, whatever the ring says, because
  // its rows belong to cleanup_orphans (which removes them all, or refuses
  // while an instance is on it). A complete listing is guaranteed upstream.
  const hh = (group[0] as ComputeNodeRec).hypervisorHostname as string;
  if (ctx.s.ironicNodes === undefined || !isUuid(hh) || ctx.ix.ironicNodeByUuid.has(hh.toLowerCase())) return result;
  const origin = ctx.s.ironicOrigin;
  return {
    kind: 'refused',
    refusal: {
      subject: `ironic node ${hh} in cell ${(group[0] as ComputeNodeRec).cellUuid}`,
      reason: `${origin?.label ?? 'the ironic node list'} does not list it (${origin?.nodes ?? ctx.s.ironicNodes.length} nodes): it is gone from Ironic, so it is not re-homed; its compute node(s) are orphans`,
      suggestion: `nova-reconcile compute_node cleanup_orphans${ironicTruthArgs(origin)} --node ${hh}`,
    },
  };
}

function planListedNode(ctx: Ctx, group: readonly ComputeNodeRec[]): NodeResult {
  const rows = [...group].sort(byAge);
  const first = rows[0] as ComputeNodeRec;
  const cellUuid = first.cellUuid;
  const key = groupKey(cellUuid, first.hypervisorHostname as string);
  const instances = ctx.instancesByNode.get(key) ?? [];
  const subject = `ironic node ${first.hypervisorHostname as string} in cell ${cellUuid}`;
  const refuse = (reason: string, suggestion?: string): NodeResult => ({ kind: 'refused', refusal: { subject, reason, ...(suggestion === undefined ? {} : { suggestion }) } });

  if (instances.length > 1)
    return refuse(
      `${instances.length} live instances are on it (${instances.map((i) => `${i.uuid} on ${i.host ?? '-'}`).join(', ')}); an ironic node has at most one`,
      "delete the Nova instances that do not match the instance_uuid Ironic records for the node, then re-run",
    );
  const instance = instances[0];
  if (instance !== undefined && instance.host === null) return refuse(`its instance ${instance.uuid} has no host`);
  if (rows.some((r) => r.host === null)) return refuse('one of its compute nodes has no host, so it cannot be changed with the host guard');

  const canonical = chooseCanonical(ctx, rows, instance);
  const legacy = checkLegacyDuplicates(ctx, rows, canonical);
  if (!legacy.ok) return refuse(legacy.reason, legacy.suggestion);
  const np: NodePlan = { ctx, cellUuid, hh: canonical.hypervisorHostname as string, rows, canonical, instance, state: cloneState(ctx.state), changes: [], notes: [] };
  if (ctx.s.placement !== undefined) {
    const placement = planPlacement(np);
    if (!placement.ok) return refuse(placement.reason, placement.suggestion);
  }
  const cell = planCell(np);
  if (!cell.ok) return refuse(cell.reason, cell.suggestion);
  if (np.changes.length === 0) return { kind: 'clean' };
  mergeState(ctx.state, np.state);
  return {
    kind: 'unit',
    unit: {
      id: `rebalance:${cellUuid}:${np.hh}`,
      title: `${subject}: ${np.notes.join('; ')}`,
      changes: np.changes,
      // One ironic node's records: disjoint from every other node's, so the
      // nodes can be applied side by side (the apply serialises any overlap).
      footprint: unitFootprint(ctx.ix, np.changes),
    },
  };
}

/** Oldest first: created_at, then id. */
function byAge(a: ComputeNodeRec, b: ComputeNodeRec): number {
  const ca = a.createdAt ?? '';
  const cb = b.createdAt ?? '';
  return ca < cb ? -1 : ca > cb ? 1 : a.id - b.id;
}

/** The row whose provider holds the node's allocations; then the row with the node's instance; then the oldest. */
function chooseCanonical(ctx: Ctx, rows: readonly ComputeNodeRec[], instance: InstanceRec | undefined): ComputeNodeRec {
  const holding = rows.find((r) => {
    const rp = r.uuid === null ? undefined : ctx.ix.providerByUuid.get(r.uuid);
    if (rp === undefined) return false;
    const allocations = ctx.ix.allocationsOnProvider.get(rp.id) ?? [];
    return instance === undefined ? allocations.length > 0 : allocations.some((a) => a.consumerUuid === instance.uuid);
  });
  if (holding !== undefined) return holding;
  const withInstance = instance === undefined ? undefined : rows.find((r) => hostKey(r.host) === hostKey(instance.host));
  return withInstance ?? (rows[0] as ComputeNodeRec);
}

/**
 * Legacy duplicates while both services are up (pre-Rocky random compute node
 * uuids, bug 1714248): two live rows for one ironic node, on two services
 * that both heartbeat. Nothing moved: the row to keep is the one whose
 * provider exists (and, by chooseCanonical, holds the instance's
 * allocations); the other is a leftover that Zed's own orphan cleanup would
 * soft-delete host-guarded on the service that does not own the node (§5.1).
 * Without a provider behind either row there is no evidence which row Nova
 * uses, so nothing is guessed.
 */
function checkLegacyDuplicates(ctx: Ctx, rows: readonly ComputeNodeRec[], canonical: ComputeNodeRec): Step {
  if (rows.length < 2 || healthOf(ctx, canonical.cellUuid, canonical.host) !== 'up') return OK;
  const upHosts = new Set(rows.filter((r) => healthOf(ctx, r.cellUuid, r.host) === 'up').map((r) => hostKey(r.host)));
  if (upHosts.size < 2) return OK;
  const hh = canonical.hypervisorHostname as string;
  if (ctx.s.placement === undefined)
    return { ok: false, reason: `its compute nodes on ${rows.map((r) => r.host ?? '-').join(', ')} are all on services that are up, and without placement nothing tells which row Nova uses`, suggestion: 'configure [placement_database] connection and re-run' };
  if (rows.some((r) => r.uuid !== null && ctx.ix.providerByUuid.has(r.uuid))) return OK;
  return {
    ok: false,
    reason: `its compute nodes ${rows.map((r) => `${r.uuid ?? r.id} on ${r.host ?? '-'}`).join(', ')} are all on services that are up, and no resource provider has any of their uuids: nothing tells which row Nova uses`,
    suggestion: `let nova-compute create the provider of the row it uses (its next update_available_resource; if a stale provider holds the name ${hh}: nova-reconcile placement cleanup_providers), then re-run nova-reconcile compute_node rebalance`,
  };
}

// ---------------------------------------------------------------------------
// Placement: the canonical provider ends up named after the node and holding
// its instance's allocations; stale providers go.

function planPlacement(np: NodePlan): Step {
  const { ctx, canonical, instance, hh } = np;
  const ix = ctx.ix;
  const group = new Set(np.rows.map((r) => r.uuid));
  let canonicalRp = canonical.uuid === null ? undefined : ix.providerByUuid.get(canonical.uuid);
  const nameHolder = ix.providerByName.get(hh.toLowerCase());
  const staleName = nameHolder !== undefined && nameHolder !== canonicalRp ? nameHolder : undefined;

  // Providers that are ours to repair: the duplicates' providers, the stale
  // provider holding the name, and stale compute-node providers holding the
  // instance's allocations (allocations on other providers — sharing, network
  // bandwidth, another live node — are left alone).
  const stale = new Map<number, ProviderRec>();
  if (staleName !== undefined) stale.set(staleName.id, staleName);
  for (const r of np.rows) {
    if (r === canonical || r.uuid === null) continue;
    const rp = ix.providerByUuid.get(r.uuid);
    if (rp !== undefined) stale.set(rp.id, rp);
  }
  // A soft-deleted row of this node whose provider stayed behind (Nova ignores the 409, §5.2; or a
  // crash between two steps of an earlier run).
  for (const d of ctx.deletedByNode.get(groupKey(np.cellUuid, hh)) ?? []) {
    const rp = d.uuid === null || ix.liveNodeByUuid.has(d.uuid) ? undefined : ix.providerByUuid.get(d.uuid);
    if (rp !== undefined && rp !== canonicalRp) stale.set(rp.id, rp);
  }
  const holdersOfInstance: ProviderRec[] = [];
  if (instance !== undefined) {
    for (const pid of new Set((ix.allocationsOfConsumer.get(instance.uuid) ?? []).map((a) => a.providerId))) {
      const rp = ix.providerById.get(pid);
      if (rp === undefined || rp === canonicalRp) continue;
      if (stale.has(rp.id) || (isComputeNodeProvider(ix, rp, hh) && !ix.liveNodeByUuid.has(rp.uuid))) {
        stale.set(rp.id, rp);
        holdersOfInstance.push(rp);
      }
    }
  }
  for (const rp of stale.values()) {
    const why = untouchable(ix, rp, group);
    if (why !== undefined) return { ok: false, reason: why, suggestion: 'inspect the placement database by hand' };
  }

  const done = new Set<number>();
  if (canonicalRp === undefined) {
    const target = holdersOfInstance.find((rp) => rp === staleName) ?? [...holdersOfInstance].sort((a, b) => a.id - b.id)[0] ?? staleName;
    if (target === undefined) return OK; // nothing holds the name: nova-compute creates the provider itself.
    if (canonical.uuid === null) return { ok: false, reason: `its canonical compute node ${canonical.id} has no uuid` };
    if (staleName !== undefined && staleName !== target) {
      const removed = removeStale(np, staleName, `it holds the node's name ${hh}, which the canonical provider needs`);
      if (!removed.ok) return removed;
      done.add(staleName.id);
    }
    const generation = generationOf(np, target);
    np.changes.push({
      change: { kind: 'rekey-provider', target: { db: 'placement' }, providerId: target.id, fromUuid: target.uuid, toUuid: canonical.uuid, generation },
      reason: `no provider has the uuid of canonical compute node ${canonical.uuid}; this stale provider ${target === staleName ? "holds the node's name" : "holds the instance's allocations"} and keeps its inventories, traits, aggregates and allocations`,
    });
    np.state.providerGeneration.set(target.id, generation + 1);
    bumpConsumersOn(np.ctx.ix, target.id, np.state);
    np.notes.push(`re-key provider ${target.uuid} to ${canonical.uuid}`);
    done.add(target.id);
    canonicalRp = { ...target, uuid: canonical.uuid };
  } else if (staleName !== undefined) {
    const moved = moveInstanceAllocations(np, staleName, canonicalRp);
    if (!moved.ok) return moved;
    const removed = removeStale(np, staleName, `it holds the node's name ${hh}, which canonical provider ${canonicalRp.uuid} needs`);
    if (!removed.ok) return removed;
    done.add(staleName.id);
  }
  if (canonicalRp.name !== hh) {
    np.changes.push({
      change: { kind: 'rename-provider', target: { db: 'placement' }, providerId: canonicalRp.id, uuid: canonicalRp.uuid, fromName: canonicalRp.name, toName: hh, generation: generationOf(np, canonicalRp) },
      reason: 'Nova names a compute node\'s provider after its hypervisor_hostname',
    });
    np.notes.push(`rename provider ${canonicalRp.uuid} to ${hh}`);
  }
  for (const rp of [...stale.values()].sort((a, b) => a.id - b.id)) {
    if (done.has(rp.id)) continue;
    const moved = moveInstanceAllocations(np, rp, canonicalRp);
    if (!moved.ok) return moved;
    const removed = removeStale(np, rp, ix.liveNodeByUuid.has(rp.uuid) ? 'it is the provider of a duplicate compute node' : 'it is a stale provider of this node');
    if (!removed.ok) return removed;
  }
  return OK;
}

/** A compute-node provider of this node: COMPUTE_NODE trait, a deleted compute node's uuid, or the node's name. */
function isComputeNodeProvider(ix: SnapshotIndex, rp: ProviderRec, hh: string): boolean {
  return rp.traits.includes(COMPUTE_NODE_TRAIT) || ix.deletedNodeByUuid.has(rp.uuid) || (rp.name ?? '').toLowerCase() === hh.toLowerCase();
}

function untouchable(ix: SnapshotIndex, rp: ProviderRec, group: ReadonlySet<string | null>): string | undefined {
  if (rp.traits.includes(SHARING_TRAIT)) return `provider ${rp.uuid} (${rp.name ?? '-'}) is a sharing provider and is never touched`;
  if (rp.parentId !== null) return `provider ${rp.uuid} (${rp.name ?? '-'}) is a child provider; ironic node providers are roots`;
  if ((ix.childrenOf.get(rp.id) ?? []).length > 0) return `provider ${rp.uuid} (${rp.name ?? '-'}) has child providers`;
  const owner = ix.liveNodeByUuid.get(rp.uuid);
  if (owner !== undefined && !group.has(rp.uuid))
    return `provider ${rp.uuid} (${rp.name ?? '-'}) belongs to live compute node ${owner.uuid ?? owner.id} (${owner.hypervisorHostname ?? '-'}) on ${owner.host ?? '-'}`;
  return undefined;
}

function removeStale(np: NodePlan, rp: ProviderRec, why: string): Step {
  const removal = planProviderTreeRemoval(np.ctx.ix, rp, undefined, np.state);
  if (!removal.ok) return { ok: false, reason: removal.reason, suggestion: removal.suggestion };
  const changes = removal.changes.map((pc) => (pc.change.kind === 'delete-provider' && pc.change.providerId === rp.id ? { ...pc, reason: `${why}; it is empty now` } : pc));
  np.changes.push(...changes);
  np.notes.push(`delete stale provider ${rp.uuid}`);
  return OK;
}

/** Every allocation row of the node's instance on `from` goes to `to`, under Placement's capacity rules. */
function moveInstanceAllocations(np: NodePlan, from: ProviderRec, to: ProviderRec): Step {
  const { ctx, instance } = np;
  if (instance === undefined) return OK;
  const ix = ctx.ix;
  const moving = (ix.allocationsOnProvider.get(from.id) ?? []).filter((a) => a.consumerUuid === instance.uuid && !np.state.removedAllocations.has(a.id));
  if (moving.length === 0) return OK;
  const consumer = ix.consumerByUuid.get(instance.uuid);
  if (consumer === undefined) return { ok: false, reason: `allocations of ${instance.uuid} on provider ${from.uuid} have no consumer row`, suggestion: 'inspect the placement database by hand' };

  const byClass = new Map<number, { name: string; amount: number }>();
  for (const a of moving) byClass.set(a.resourceClassId, { name: a.resourceClass, amount: (byClass.get(a.resourceClassId)?.amount ?? 0) + a.used });
  const onTarget = (ix.allocationsOnProvider.get(to.id) ?? []).filter((a) => !np.state.removedAllocations.has(a.id));
  const exceptions: string[] = [];
  for (const [classId, { name, amount }] of byClass) {
    if (onTarget.some((a) => a.consumerUuid === instance.uuid && a.resourceClassId === classId))
      return { ok: false, reason: `instance ${instance.uuid} holds ${name} on both provider ${from.uuid} and canonical provider ${to.uuid}`, suggestion: 'inspect the placement database by hand' };
    const inv = (ix.inventoriesOf.get(to.id) ?? []).find((i) => i.resourceClassId === classId);
    const usedByOthers = onTarget.filter((a) => a.resourceClassId === classId && a.consumerUuid !== instance.uuid).reduce((n, a) => n + a.used, 0);
    const verdict = checkCapacity(inv, { resourceClass: name, providerUuid: to.uuid, amount, usedByOthers, ownIronicInstance: np.canonical.hypervisorType === 'ironic' });
    if (!verdict.ok) return { ok: false, reason: `the allocations of instance ${instance.uuid} cannot move to canonical provider ${to.uuid}: ${verdict.reason}` };
    if (verdict.exception !== null) exceptions.push(verdict.exception);
  }

  const consumerGeneration = np.state.consumerGeneration.get(instance.uuid) ?? consumer.generation;
  const parts: AllocationPart[] = moving.map((a) => ({ resourceClassId: a.resourceClassId, resourceClass: a.resourceClass, used: a.used }));
  const toGeneration = generationOf(np, to);
  np.changes.push({
    change: {
      kind: 'move-allocations',
      target: { db: 'placement' },
      consumerUuid: instance.uuid,
      consumerGeneration,
      fromProviderId: from.id,
      fromProviderUuid: from.uuid,
      toProviderId: to.id,
      toProviderUuid: to.uuid,
      toGeneration,
      allocations: parts,
      capacityException: exceptions.length === 0 ? null : exceptions.join('; '),
    },
    reason: `the node's instance ${instance.uuid} must be allocated on the canonical provider; target and consumer generations + 1, the source is left alone (Placement)`,
  });
  np.notes.push(`move the allocations of ${instance.uuid} from ${from.uuid} to ${to.uuid}${exceptions.length === 0 ? '' : ' (in-use ironic node: over capacity by design)'}`);
  // Placement bumps every provider of the consumer's new allocation set, once.
  for (const a of moving) np.state.removedAllocations.add(a.id);
  const keeps = new Set((ix.allocationsOfConsumer.get(instance.uuid) ?? []).filter((a: AllocationRec) => !np.state.removedAllocations.has(a.id)).map((a) => a.providerId));
  keeps.delete(to.id);
  np.state.providerGeneration.set(to.id, toGeneration + 1);
  for (const pid of keeps) np.state.providerGeneration.set(pid, (np.state.providerGeneration.get(pid) ?? ix.providerById.get(pid)?.generation ?? 0) + 1);
  np.state.consumerGeneration.set(instance.uuid, consumerGeneration + 1);
  return OK;
}

function generationOf(np: NodePlan, rp: ProviderRec): number {
  return np.state.providerGeneration.get(rp.id) ?? rp.generation;
}

// ---------------------------------------------------------------------------
// The cell: retire the duplicates, re-home the canonical row, move the instance.

function planCell(np: NodePlan): Step {
  const { ctx, cellUuid, canonical, instance, hh } = np;
  const target = { db: 'cell' as const, cellUuid };
  const duplicates = np.rows.filter((r) => r !== canonical);
  for (const d of duplicates) {
    np.changes.push({
      change: { kind: 'soft-delete-compute-node', target, id: d.id, uuid: d.uuid, host: d.host as string, hypervisorHostname: d.hypervisorHostname },
      reason: `duplicate of canonical compute node ${canonical.uuid ?? canonical.id} for ironic node ${hh}`,
    });
  }
  if (duplicates.length > 0) np.notes.push(`retire ${duplicates.length} duplicate compute node(s) (${duplicates.map((d) => `${d.uuid ?? d.id} on ${d.host ?? '-'}`).join(', ')})`);

  const from = canonical.host as string;
  const canonicalHealth = healthOf(ctx, cellUuid, from);
  const newest = [...duplicates].sort(byAge).pop();
  // Nova's ironic driver gives a node that carries an instance to the
  // instance's host, whatever the ring says (§6): an up service there owns it.
  const instanceService = instance === undefined ? undefined : ctx.ix.liveComputeService.get(serviceKey(cellUuid, instance.host));
  const instanceOwner =
    instanceService !== undefined && hostKey(instanceService.host) !== hostKey(from) && healthOf(ctx, cellUuid, instanceService.host) === 'up' ? instanceService : undefined;
  let dest: ServiceRec | undefined;
  let why = '';
  if (canonicalHealth === 'up') {
    // Legacy duplicates while both services are up (pre-Rocky random uuids,
    // bug 1714248): nothing moved, so the canonical row stays where it is and
    // only the duplicates go, host-guarded; placement is left as it is. The
    // one exception is the ownership rule above.
    if (instanceOwner !== undefined) {
      dest = instanceOwner;
      why = `its instance ${instance?.uuid ?? '-'} is on ${instanceOwner.host ?? '-'}, which is up and owns the node`;
    }
  } else if (instanceOwner !== undefined && (isDead(ctx, canonicalHealth) || (newest !== undefined && healthOf(ctx, cellUuid, newest.host) === 'up'))) {
    dest = instanceOwner;
    why = `its service on ${from} is ${describeHealth(canonicalHealth)}; its instance is on ${instanceOwner.host ?? '-'}, which is up and owns the node`;
  } else if (newest !== undefined && hostKey(newest.host) !== hostKey(from) && healthOf(ctx, cellUuid, newest.host) === 'up') {
    dest = ctx.ix.liveComputeService.get(serviceKey(cellUuid, newest.host));
    why = `the newest duplicate was created by ${newest.host ?? '-'}, which is up: that service has taken the node over`;
  } else if (isDead(ctx, canonicalHealth)) {
    const partitions = ctx.s.ironicPartitions;
    const listed = ctx.ix.ironicNodeByUuid.get(hh.toLowerCase());
    // Nova 2024.1 [ironic] shard: that nova-compute's ring is itself alone, so it owns every node of its shard and no other.
    const shard = ctx.ringMembers === undefined ? ctx.s.ironicShard : undefined;
    if (shard !== undefined && typeof listed?.shard === 'string' && listed.shard === shard.shard) {
      if (shard.host === undefined)
        return {
          ok: false,
          reason: `its service on ${from} is ${describeHealth(canonicalHealth)}; Ironic puts it in shard "${shard.shard}", the given nova.conf's [ironic] shard, but that file sets no [DEFAULT] host, so which nova-compute owns the shard is not known`,
          suggestion: 'use the nova.conf of the shard\'s nova-compute (with its [DEFAULT] host), or name the ring with --ring-members',
        };
      const svc = ctx.ix.liveComputeService.get(serviceKey(cellUuid, shard.host));
      if (svc === undefined || hostKey(svc.host) === hostKey(from) || healthOf(ctx, cellUuid, svc.host) !== 'up')
        return {
          ok: false,
          reason: `its service on ${from} is ${describeHealth(canonicalHealth)}; Ironic puts it in shard "${shard.shard}", whose nova-compute (${shard.host}: [ironic] shard and [DEFAULT] host of the given nova.conf) is not an up service of cell ${cellUuid}, and no other nova-compute takes a node of that shard`,
          suggestion: `start nova-compute on ${shard.host}, or name the ring with --ring-members`,
        };
      dest = svc;
      why = `its service on ${from} is ${describeHealth(canonicalHealth)}; Ironic puts it in shard "${shard.shard}", which ${svc.host ?? '-'} serves alone ([ironic] shard): it owns every node of the shard`;
    } else {
      const partition = ctx.ringMembers === undefined && partitions !== undefined ? partitionOfNode(partitions, canonical, listed) : undefined;
      // Ironic's conductor group decides the ring; one that no nova-compute serves leaves the node unmanaged (audit's ironic-node-unmanaged), not for a ring to take.
      const unserved = ctx.ringMembers === undefined ? unservedGroup(partitions, listed) : undefined;
      if (unserved !== undefined)
        return {
          ok: false,
          reason: `its service on ${from} is ${describeHealth(canonicalHealth)}, and Ironic puts it in conductor group "${unserved}", which no nova-compute of [nova_reconcile] ironic_partitions serves: no ring owns it`,
          suggestion: `serve conductor group "${unserved}" (a nova-compute with [ironic] partition_key = ${unserved}, named in ironic_partitions), or move the node back in Ironic; without an instance, compute_node cleanup_orphans removes it`,
        };
      if (ctx.ringMembers === undefined && partitions !== undefined && partition === undefined)
        return {
          ok: false,
          reason: `its service on ${from} is ${describeHealth(canonicalHealth)}, and which partition's ring owns it is not known: ${from} is in no single partition of [nova_reconcile] ironic_partitions and the ironic truth does not give the node's conductor group`,
          suggestion: 'name the host in [nova_reconcile] ironic_partitions, or give the ring with --ring-members',
        };
      const ring = ringOf(ctx, cellUuid, partition, shard?.host);
      const owner = ringOwner(ring.ring, hh);
      if (owner === undefined)
        return {
          ok: false,
          reason: `its service on ${from} is ${describeHealth(canonicalHealth)}, and no live ironic nova-compute service in cell ${cellUuid}${partition === undefined || partition.group === ANY_GROUP ? '' : ` serving conductor group "${partition.group}"`} can take it over`,
          suggestion: 'start a nova-compute service for ironic, or name the ring with --ring-members; if Ironic no longer lists the node: nova-reconcile compute_node cleanup_orphans --ironic-nodes FILE',
        };
      dest = ring.services.get(owner);
      why = `its service on ${from} is ${describeHealth(canonicalHealth)}; Nova's hash ring of the live members${partition === undefined || partition.group === ANY_GROUP ? '' : ` of conductor group "${partition.group}"`} (${ring.ring.members.join(', ')}) gives the node to ${owner}`;
    }
  }
  const rehomeTo = dest !== undefined && dest.host !== null && hostKey(dest.host) !== hostKey(from) ? dest : undefined;
  const finalHost = rehomeTo?.host ?? from;
  const moving = instance !== undefined && instance.host !== null && hostKey(instance.host) !== hostKey(finalHost) ? instance : undefined;
  if (moving !== undefined) {
    const health = healthOf(ctx, cellUuid, moving.host);
    if (health === 'up')
      return {
        ok: false,
        reason: `its instance ${moving.uuid} is on ${moving.host ?? '-'}, which is up, but its compute node ${finalHost === from ? 'is' : 'would be'} on ${finalHost}`,
        // Only reached when the node's own service is down but not dead
        // (no --include-down): its instance's up host is where it belongs.
        suggestion:
          canonicalHealth === 'down'
            ? `if ${from} is gone for good: nova-reconcile compute_node rebalance --include-down (the node follows its instance to ${moving.host ?? '-'})`
            : `nova-reconcile compute_node move --node ${canonical.uuid ?? hh} --to-host ${moving.host ?? '-'}`,
      };
  }
  // The instance moves in the re-home's own transaction (which checks
  // instances.node against the node's hypervisor_hostname exactly): a crash
  // never leaves the node on its new host while its instance stays behind.
  const together = rehomeTo !== undefined && moving !== undefined && moving.node === hh;
  if (rehomeTo !== undefined) {
    np.changes.push({
      change: {
        kind: 'rehome-compute-node',
        target,
        id: canonical.id,
        uuid: canonical.uuid,
        hypervisorHostname: hh,
        fromHost: from,
        toHost: finalHost,
        toServiceId: rehomeTo.id,
        forcedDownSourceServiceId: null,
        instance: together ? { id: moving.id, uuid: moving.uuid, fromHost: moving.host as string } : null,
      },
      reason: !together ? why : `${why}; its instance ${moving.uuid} moves with it, in the same transaction (instances.node is unchanged)`,
    });
    np.notes.push(`re-home compute node ${canonical.uuid ?? canonical.id} from ${from} to ${finalHost}${together ? ` with instance ${moving.uuid}` : ''}`);
  }
  if (moving !== undefined && !together) {
    const health = healthOf(ctx, cellUuid, moving.host);
    np.changes.push({
      change: { kind: 'move-instance', target, id: moving.id, uuid: moving.uuid, node: moving.node as string, fromHost: moving.host as string, toHost: finalHost },
      reason: `its host ${moving.host ?? '-'} is ${describeHealth(health)}; the instance follows its node's compute node`,
    });
    np.notes.push(`move instance ${moving.uuid} from ${moving.host ?? '-'} to ${finalHost}`);
  }
  return OK;
}

function cloneState(s: PlanState): PlanState {
  return { providerGeneration: new Map(s.providerGeneration), consumerGeneration: new Map(s.consumerGeneration), removedAllocations: new Set(s.removedAllocations) };
}

function mergeState(into: PlanState, from: PlanState): void {
  for (const [k, v] of from.providerGeneration) into.providerGeneration.set(k, v);
  into.consumerGeneration.clear();
  for (const [k, v] of from.consumerGeneration) into.consumerGeneration.set(k, v);
  for (const id of from.removedAllocations) into.removedAllocations.add(id);
}
