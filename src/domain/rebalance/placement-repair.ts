// Placement repair: the canonical provider ends up named after the node and
// holding its instance's allocations; stale providers go.
import type { AllocationRec, ProviderRec } from '../model.js';
import { COMPUTE_NODE_TRAIT, SHARING_TRAIT } from '../model.js';
import { checkCapacity } from '../capacity.js';
import type { AllocationPart } from '../plan.js';
import { bumpConsumersOn, planProviderTreeRemoval } from '../provider-removal.js';
import { keptForReturningNode, restoreCommand, returningNodeOf } from '../returning-node.js';
import type { SnapshotIndex } from '../snapshot-index.js';
import { OK, groupKey, type NodePlan, type Step } from './context.js';

export function planPlacement(np: NodePlan): Step {
  const { ctx, canonical, hh } = np;
  const ix = ctx.ix;
  const group = new Set(np.rows.map((r) => r.uuid));
  let canonicalRp = canonical.uuid === null ? undefined : ix.providerByUuid.get(canonical.uuid);
  const nameHolder = ix.providerByName.get(hh.toLowerCase());
  const staleName = nameHolder !== undefined && nameHolder !== canonicalRp ? nameHolder : undefined;

  const { stale, holdersOfInstance } = providersToRepair(np, canonicalRp, staleName);
  for (const rp of stale.values()) {
    // Never re-keyed or deleted: the provider of a soft-deleted node that comes back (the audit's judgement, returning-node.ts).
    const returning = returningNodeOf(ix, rp);
    if (returning !== undefined) return { ok: false, reason: keptForReturningNode(ix, rp, returning), suggestion: restoreCommand(returning) };
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

/**
 * Providers that are ours to repair: the duplicates' providers, the stale
 * provider holding the name, and stale compute-node providers holding the
 * instance's allocations (allocations on other providers — sharing, network
 * bandwidth, another live node — are left alone).
 */
function providersToRepair(
  np: NodePlan,
  canonicalRp: ProviderRec | undefined,
  staleName: ProviderRec | undefined,
): { readonly stale: Map<number, ProviderRec>; readonly holdersOfInstance: ProviderRec[] } {
  const { ctx, canonical, instance, hh } = np;
  const ix = ctx.ix;
  const stale = new Map<number, ProviderRec>();
  if (staleName !== undefined) stale.set(staleName.id, staleName);
  for (const r of np.rows) {
    if (r === canonical || r.uuid === null) continue;
    const rp = ix.providerByUuid.get(r.uuid);
    if (rp !== undefined) stale.set(rp.id, rp);
  }
  // A soft-deleted row of this node whose provider stayed behind (Nova ignores the 409, nova-facts §5.2; or a
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
  return { stale, holdersOfInstance };
}

/** A compute-node provider of this node: COMPUTE_NODE trait, a deleted compute node's uuid, or the node's name. */
export function isComputeNodeProvider(ix: SnapshotIndex, rp: ProviderRec, hh: string): boolean {
  return rp.traits.includes(COMPUTE_NODE_TRAIT) || ix.deletedNodeByUuid.has(rp.uuid) || (rp.name ?? '').toLowerCase() === hh.toLowerCase();
}

export function untouchable(ix: SnapshotIndex, rp: ProviderRec, group: ReadonlySet<string | null>): string | undefined {
  if (rp.traits.includes(SHARING_TRAIT)) return `provider ${rp.uuid} (${rp.name ?? '-'}) is a sharing provider and is never touched`;
  if (rp.parentId !== null) return `provider ${rp.uuid} (${rp.name ?? '-'}) is a child provider; ironic node providers are roots`;
  if ((ix.childrenOf.get(rp.id) ?? []).length > 0) return `provider ${rp.uuid} (${rp.name ?? '-'}) has child providers`;
  const owner = ix.liveNodeByUuid.get(rp.uuid);
  if (owner !== undefined && !group.has(rp.uuid))
    return `provider ${rp.uuid} (${rp.name ?? '-'}) belongs to live compute node ${owner.uuid ?? owner.id} (${owner.hypervisorHostname ?? '-'}) on ${owner.host ?? '-'}`;
  return undefined;
}

export function removeStale(np: NodePlan, rp: ProviderRec, why: string): Step {
  const removal = planProviderTreeRemoval(np.ctx.ix, rp, undefined, np.state);
  if (!removal.ok) return { ok: false, reason: removal.reason, suggestion: removal.suggestion };
  const changes = removal.changes.map((pc) => (pc.change.kind === 'delete-provider' && pc.change.providerId === rp.id ? { ...pc, reason: `${why}; it is empty now` } : pc));
  np.changes.push(...changes);
  np.notes.push(`delete stale provider ${rp.uuid}`);
  return OK;
}

/** Every allocation row of the node's instance on `from` goes to `to`, under Placement's capacity rules. */
export function moveInstanceAllocations(np: NodePlan, from: ProviderRec, to: ProviderRec): Step {
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

export function generationOf(np: NodePlan, rp: ProviderRec): number {
  return np.state.providerGeneration.get(rp.id) ?? rp.generation;
}
