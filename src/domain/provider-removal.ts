// Removing a compute-node provider tree under Placement's rules, shared by
// the orphan cleanup and the provider cleanup. Allocations are handled per
// consumer before any provider goes (docs/operations/safety.md):
//  - a live instance on this very node: refuse (its allocation must stay);
//  - a live instance elsewhere (evacuation leftover): remove only this
//    provider's share — but never a live instance's last allocations;
//  - an active migration: refuse;
//  - orphaned: remove them (the consumer row goes with its last allocation).
// Children are removed before their parent. Expected generations are
// threaded through PlanState, because removing a consumer's share bumps the
// generations of the providers it keeps.
import type { AllocationRec, ProviderRec } from './model.js';
import type { AllocationPart, PlannedChange } from './plan.js';
import { hostKey, type SnapshotIndex } from './snapshot-index.js';
import { pushTo } from './text-and-maps.js';

export interface PlanState {
  readonly providerGeneration: Map<number, number>;
  readonly consumerGeneration: Map<string, number>;
  /** Allocation rows already planned away. */
  readonly removedAllocations: Set<number>;
}

export function newPlanState(): PlanState {
  return { providerGeneration: new Map(), consumerGeneration: new Map(), removedAllocations: new Set() };
}

/** The node a stale provider belonged to, when known (its soft-deleted or orphan compute node). */
export interface ProviderOwner {
  readonly cellUuid: string;
  readonly host: string | null;
  readonly hypervisorHostname: string | null;
}

export type RemovalPlan = { readonly ok: true; readonly changes: PlannedChange[] } | { readonly ok: false; readonly reason: string; readonly suggestion: string };

/** What the plan of one unit reads and writes of a PlanState: a layer over it (planProviderTreeRemoval). */
interface PlanView {
  readonly providerGeneration: Layer<number, number>;
  readonly consumerGeneration: Layer<string, number>;
  readonly removedAllocations: { has(id: number): boolean };
}

/**
 * Changes to a map, kept beside it until commit(): the unit's plan works on
 * the layer, and a refusal leaves the caller's state untouched, without
 * copying the state per unit.
 */
class Layer<K, V> {
  private readonly written = new Map<K, V>();
  private readonly deleted = new Set<K>();

  constructor(private readonly base: Map<K, V>) {}

  get(key: K): V | undefined {
    if (this.written.has(key)) return this.written.get(key);
    return this.deleted.has(key) ? undefined : this.base.get(key);
  }

  set(key: K, value: V): void {
    this.written.set(key, value);
    this.deleted.delete(key);
  }

  delete(key: K): void {
    this.written.delete(key);
    this.deleted.add(key);
  }

  commit(): void {
    for (const key of this.deleted) this.base.delete(key);
    for (const [key, value] of this.written) this.base.set(key, value);
  }
}

export function planProviderTreeRemoval(ix: SnapshotIndex, root: ProviderRec, owner: ProviderOwner | undefined, state: PlanState): RemovalPlan {
  const tree = postOrder(ix, root);
  const changes: PlannedChange[] = [];
  // Work on a layer so a refusal leaves the caller's state untouched.
  const removed = new Set<number>();
  const local = {
    providerGeneration: new Layer(state.providerGeneration),
    consumerGeneration: new Layer(state.consumerGeneration),
    removedAllocations: { has: (id: number): boolean => removed.has(id) || state.removedAllocations.has(id) },
  } satisfies PlanView;
  for (const rp of tree) {
    const byConsumer = new Map<string, AllocationRec[]>();
    for (const a of ix.allocationsOnProvider.get(rp.id) ?? []) {
      if (local.removedAllocations.has(a.id)) continue;
      pushTo(byConsumer, a.consumerUuid, a);
    }
    for (const [consumerUuid, allocs] of [...byConsumer].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const verdict = classifyConsumer(ix, consumerUuid, rp, owner, local);
      if (!verdict.ok) return verdict;
      const consumer = ix.consumerByUuid.get(consumerUuid);
      if (consumer === undefined)
        return { ok: false, reason: `allocations of ${consumerUuid} on provider ${rp.uuid} have no consumer row`, suggestion: 'inspect the placement database by hand' };
      const generation = local.consumerGeneration.get(consumerUuid) ?? consumer.generation;
      const parts: AllocationPart[] = allocs.map((a) => ({ resourceClassId: a.resourceClassId, resourceClass: a.resourceClass, used: a.used }));
      changes.push({
        change: { kind: 'remove-provider-allocations', target: { db: 'placement' }, consumerUuid, consumerGeneration: generation, providerId: rp.id, providerUuid: rp.uuid, allocations: parts },
        reason: verdict.reason,
      });
      for (const a of allocs) removed.add(a.id);
      // The write bumps the provider that lost them (cas-writes.ts).
      local.providerGeneration.set(rp.id, providerGeneration(ix, rp.id, local) + 1);
      const rest = remainingAllocations(ix, consumerUuid, local);
      if (rest.length === 0) {
        local.consumerGeneration.delete(consumerUuid);
      } else {
        local.consumerGeneration.set(consumerUuid, generation + 1);
        for (const pid of new Set(rest.map((a) => a.providerId))) local.providerGeneration.set(pid, providerGeneration(ix, pid, local) + 1);
      }
    }
    changes.push({
      change: { kind: 'delete-provider', target: { db: 'placement' }, providerId: rp.id, uuid: rp.uuid, name: rp.name, generation: providerGeneration(ix, rp.id, local) },
      reason: rp.id === root.id ? `provider ${rp.uuid} has no live compute node` : `child of provider ${root.uuid}, removed first`,
    });
  }
  local.providerGeneration.commit();
  local.consumerGeneration.commit();
  for (const id of removed) state.removedAllocations.add(id);
  return { ok: true, changes };
}

/** A re-key bumps the generation of every consumer with allocations on the provider (cas-writes.ts rekeyProvider). */
export function bumpConsumersOn(ix: SnapshotIndex, providerId: number, state: PlanState): void {
  const consumers = new Set((ix.allocationsOnProvider.get(providerId) ?? []).filter((a) => !state.removedAllocations.has(a.id)).map((a) => a.consumerUuid));
  for (const uuid of consumers) {
    const consumer = ix.consumerByUuid.get(uuid);
    if (consumer === undefined) continue;
    state.consumerGeneration.set(uuid, (state.consumerGeneration.get(uuid) ?? consumer.generation) + 1);
  }
}

type Verdict = { readonly ok: true; readonly reason: string } | { readonly ok: false; readonly reason: string; readonly suggestion: string };

function classifyConsumer(ix: SnapshotIndex, consumerUuid: string, rp: ProviderRec, owner: ProviderOwner | undefined, state: PlanView): Verdict {
  const instance = ix.instanceByUuid.get(consumerUuid);
  if (instance !== undefined) {
    // Nova names a compute node's provider after its hypervisor_hostname, so
    // an instance whose node is the provider's name is on this node even when
    // the compute node row is gone (archived) and the owner is unknown.
    const onThisNode =
      (owner !== undefined && instance.cellUuid === owner.cellUuid && hostKey(instance.host) === hostKey(owner.host) && instance.node === owner.hypervisorHostname) ||
      (instance.node !== null && rp.name !== null && instance.node.toLowerCase() === rp.name.toLowerCase());
    if (onThisNode)
      return {
        ok: false,
        reason: `live instance ${consumerUuid} is on this node (${instance.host ?? '-'}/${instance.node ?? '-'}); its allocation on ${rp.uuid} must stay`,
        suggestion: 'nova-reconcile compute_node rebalance',
      };
    const elsewhere = remainingAllocations(ix, consumerUuid, state).filter((a) => a.providerId !== rp.id);
    if (elsewhere.length === 0)
      return {
        ok: false,
        reason: `provider ${rp.uuid} holds the only allocations of live instance ${consumerUuid} (on ${instance.host ?? '-'}/${instance.node ?? '-'}); removing them would lose them`,
        suggestion: 'nova-reconcile compute_node rebalance',
      };
    return { ok: true, reason: `evacuation leftover: instance ${consumerUuid} lives on ${instance.host ?? '-'}; only this provider's share is removed` };
  }
  if (ix.activeMigrationUuids.has(consumerUuid))
    return { ok: false, reason: `allocations of active migration ${consumerUuid} are on provider ${rp.uuid}`, suggestion: 'wait for the migration to finish, then re-run' };
  return { ok: true, reason: `orphaned: consumer ${consumerUuid} is neither an instance nor an active migration` };
}

function remainingAllocations(ix: SnapshotIndex, consumerUuid: string, state: Pick<PlanView, 'removedAllocations'>): AllocationRec[] {
  return (ix.allocationsOfConsumer.get(consumerUuid) ?? []).filter((a) => !state.removedAllocations.has(a.id));
}

function providerGeneration(ix: SnapshotIndex, id: number, state: Pick<PlanView, 'providerGeneration'>): number {
  return state.providerGeneration.get(id) ?? ix.providerById.get(id)?.generation ?? 0;
}

/** The provider and all its descendants, deepest first. */
function postOrder(ix: SnapshotIndex, root: ProviderRec): ProviderRec[] {
  const out: ProviderRec[] = [];
  const seen = new Set<number>();
  const visit = (rp: ProviderRec): void => {
    if (seen.has(rp.id)) return;
    seen.add(rp.id);
    for (const child of [...(ix.childrenOf.get(rp.id) ?? [])].sort((a, b) => a.id - b.id)) visit(child);
    out.push(rp);
  };
  visit(root);
  return out;
}
