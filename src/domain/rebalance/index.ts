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
//     instance belongs there, nova-facts §6), else onto the newest duplicate's host when
//     that service is up, or, when its own service is dead, onto the owner
//     that Nova's hash ring picks among the live members; its instance moves
//     in the same transaction (instances.host; node unchanged); an instance
//     left on a dead host by an earlier run follows its node on its own.
// Each change is its own compare-and-swap transaction, in this order, so a
// crash after any of them leaves a state from which the next run finishes:
// the canonical choice is stable under every step (the provider that ends up
//
// The steps live beside this file: scope.ts (input and grouping), ring.ts
// (liveness and Nova's hash ring), placement-repair.ts and cell-repair.ts.
import { cellNamer } from '../cell-names.js';
import type { ComputeNodeRec, InstanceRec, Snapshot } from '../model.js';
import { isUuid, keyedByIronicNode } from '../ironic-nodes.js';
import { novaKnowsIronicByUuid } from '../nova-release.js';
import { ironicTruthArgs } from '../orphan-nodes.js';
import type { Plan, Refusal, Unit } from '../plan.js';
import { newPlanState, type PlanState } from '../provider-removal.js';
import { restoredNodeServiceGone } from '../restore-node.js';
import { hostKey, indexSnapshot, unitFootprint } from '../snapshot-index.js';
import { selectInScope, type PlanScope, type ScopedRefusal, type ScopedUnit, type ScopeSubject } from '../plan-scope.js';
import { OK, byAge, groupKey, type Ctx, type NodePlan, type RingMembers, type Step } from './context.js';
import { healthOf } from './ring.js';
import { checkRingMembers, indexDeletedNodes, indexInstancesByNode, ironicNodeGroups, scopeCells, selectGroups } from './scope.js';
import { planPlacement } from './placement-repair.js';
import { planCell } from './cell-repair.js';

export type { RingMembers } from './context.js';

export const REBALANCE = 'compute_node rebalance';

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
    cellName: cellNamer(snapshot.cells),
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

type NodeResult = { readonly kind: 'unit'; readonly unit: Unit } | { readonly kind: 'refused'; readonly refusal: Refusal } | { readonly kind: 'clean' };

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
      subject: `ironic node ${hh} in cell ${ctx.cellName((group[0] as ComputeNodeRec).cellUuid)}`,
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
  const subject = `ironic node ${first.hypervisorHostname as string} in cell ${ctx.cellName(cellUuid)}`;
  const refuse = (reason: string, suggestion?: string): NodeResult => ({ kind: 'refused', refusal: { subject, reason, ...(suggestion === undefined ? {} : { suggestion }) } });

  if (instances.length > 1)
    return refuse(
      `${instances.length} live instances are on it (${instances.map((i) => `${i.uuid} on ${i.host ?? '-'}`).join(', ')}); an ironic node has at most one`,
      "delete the Nova instances that do not match the instance_uuid Ironic records for the node, then re-run",
    );
  const instance = instances[0];
  if (instance !== undefined && instance.host === null) return refuse(`its instance ${instance.uuid} has no host`);
  if (rows.some((r) => r.host === null)) return refuse('one of its compute nodes has no host, so it cannot be changed with the host guard');

  const retired = retiredNodeUuidRow(ctx, rows, cellUuid);
  if (retired !== undefined && retired.kind === 'refused') return refuse(retired.reason, retired.suggestion);
  const canonical = retired?.row ?? chooseCanonical(ctx, rows, instance);
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

/**
 * On Nova 27.0.0+ the row whose uuid is the ironic node's (Nova's tracker
 * finds an ironic compute node by that uuid alone, and un-deletes it if it
 * was soft-deleted). Otherwise, and on Zed: the row whose provider holds the
 * node's allocations; then the row with the node's instance; then the oldest.
 */
function chooseCanonical(ctx: Ctx, rows: readonly ComputeNodeRec[], instance: InstanceRec | undefined): ComputeNodeRec {
  const byNodeUuid = nodeUuidRow(ctx, rows);
  if (byNodeUuid !== undefined) return byNodeUuid;
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
 * soft-delete host-guarded on the service that does not own the node (nova-facts §5.1).
 * Without a provider behind either row there is no evidence which row Nova
 * uses, so nothing is guessed.
 */
function checkLegacyDuplicates(ctx: Ctx, rows: readonly ComputeNodeRec[], canonical: ComputeNodeRec): Step {
  if (rows.length < 2 || healthOf(ctx, canonical.cellUuid, canonical.host) !== 'up') return OK;
  // Nova 27.0.0+ uses the row whose uuid is the node's: that is evidence enough.
  if (canonical.deleted || canonical === nodeUuidRow(ctx, rows)) return OK;
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

/** On Nova 27.0.0+, the live ironic row whose uuid is its hypervisor_hostname (the ironic node uuid). */
export function nodeUuidRow(ctx: Ctx, rows: readonly ComputeNodeRec[]): ComputeNodeRec | undefined {
  if (!novaKnowsIronicByUuid(ctx.s.release)) return undefined;
  return rows.find(keyedByIronicNode);
}

/**
 * Nova 27.0.0+: no live row has the node's uuid, but a soft-deleted one does
 * (an earlier repair, or an operator, retired the row Nova uses). Nova's
 * tracker un-deletes that row on its next periodic, beside the live ones; so
 * the repair restores it and retires the live rows instead. Its nova-compute
 * service must be alive, as for compute_node restore.
 */
function retiredNodeUuidRow(
  ctx: Ctx,
  rows: readonly ComputeNodeRec[],
  cellUuid: string,
): { readonly kind: 'restore'; readonly row: ComputeNodeRec } | { readonly kind: 'refused'; readonly reason: string; readonly suggestion?: string } | undefined {
  if (!novaKnowsIronicByUuid(ctx.s.release) || nodeUuidRow(ctx, rows) !== undefined) return undefined;
  const hh = (rows[0] as ComputeNodeRec).hypervisorHostname as string;
  const row = (ctx.deletedByNode.get(groupKey(cellUuid, hh)) ?? []).filter(keyedByIronicNode).sort((a, b) => b.id - a.id)[0];
  if (row === undefined) return undefined;
  if (restoredNodeServiceGone(ctx.s, ctx.ix, row))
    return {
      kind: 'refused',
      reason: `the row Nova 27.0.0+ uses for it (uuid ${row.uuid ?? '-'}, id ${row.id}) is soft-deleted and its nova-compute service on ${row.host ?? '-'} is gone, so it cannot be restored in place`,
      suggestion: `start nova-compute on ${row.host ?? '-'}, or move the node there in Ironic's ring, then re-run`,
    };
  return { kind: 'restore', row };
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
