// Planning `placement cleanup_providers`. A stale provider is a root
// compute-node provider (COMPUTE_NODE trait, or the uuid of a soft-deleted
// compute node) with no live compute node of its uuid. Sharing providers and
// providers that are not compute-node providers (neutron agents, ...) are
// never touched. A stale provider that holds a live node's name blocks that
// node from ever registering (the 409 "Conflicting resource provider name"):
// when no provider has the live node's uuid, it is re-keyed to that uuid
// (keeping inventories, traits, aggregates and allocations): nova-compute
// then finds its provider at once. Deleted, an empty one would leave the node
// without a provider until nova-compute's next periodic, which logs an error
// first (it looks for the provider's allocations before it creates it).
import type { ComputeNodeRec, ProviderRec, Snapshot } from './model.js';
import { COMPUTE_NODE_TRAIT, SHARING_TRAIT } from './model.js';
import type { Plan, Unit } from './plan.js';
import { selectInScope, type PlanScope, type ScopedRefusal, type ScopedUnit, type ScopeSubject } from './plan-scope.js';
import { bumpConsumersOn, newPlanState, planProviderTreeRemoval } from './provider-removal.js';
import { keptForReturningNode, restoreCommand, returningNodeOf } from './returning-node.js';
import { indexSnapshot, providerTree, type SnapshotIndex, unitFootprint } from './snapshot-index.js';

export const CLEANUP_PROVIDERS = 'placement cleanup_providers';

/** A root compute-node provider with no live compute node (shared with the audit). */
export function isStaleComputeProvider(ix: SnapshotIndex, rp: ProviderRec): boolean {
  if (rp.parentId !== null) return false;
  if (rp.traits.includes(SHARING_TRAIT)) return false;
  if (ix.liveNodeByUuid.has(rp.uuid)) return false;
  return rp.traits.includes(COMPUTE_NODE_TRAIT) || ix.deletedNodeByUuid.has(rp.uuid) || isTraitlessComputeProvider(ix, rp);
}

/** What only Nova's compute nodes report as a root provider's inventory. */
const COMPUTE_NODE_CLASSES: ReadonlySet<string> = new Set(['VCPU', 'MEMORY_MB', 'DISK_GB', 'PCPU']);

/**
 * A compute-node provider made before Train, which has no COMPUTE_NODE trait
 * (bug 1661258), recognised by a conservative rule:
 *  - a root provider (never a child: nested providers of neutron agents,
 *    vGPUs or cyborg hang under a live root) without MISC_SHARES_VIA_AGGREGATE;
 *  - an inventory made only of what compute nodes report: VCPU, MEMORY_MB,
 *    DISK_GB, PCPU (libvirt and friends), or exactly one custom class with
 *    total 1 (an ironic node's one unit) — never another standard class;
 *  - no compute node, live or soft-deleted, in any cell, has its uuid or has
 *    its name as hypervisor_hostname (so a node being recreated, or one a
 *    restore could bring back, is never taken for stale);
 *  - no trait other than standard or custom ones a compute node reports
 *    (COMPUTE_*, HW_*, CUSTOM_*, STORAGE_*).
 */
export function isTraitlessComputeProvider(ix: SnapshotIndex, rp: ProviderRec): boolean {
  if (rp.parentId !== null || (rp.rootId !== null && rp.rootId !== rp.id)) return false;
  if (rp.traits.includes(SHARING_TRAIT) || rp.traits.includes(COMPUTE_NODE_TRAIT)) return false;
  if (ix.liveNodeByUuid.has(rp.uuid) || ix.deletedNodeByUuid.has(rp.uuid)) return false;
  if (rp.name !== null && ix.anyNodeName.has(rp.name.toLowerCase())) return false;
  if (!rp.traits.every((t) => /^(COMPUTE_|HW_|CUSTOM_|STORAGE_)/.test(t))) return false;
  const inventory = ix.inventoriesOf.get(rp.id) ?? [];
  if (inventory.length === 0) return false;
  const custom = inventory.filter((inv) => inv.resourceClass.startsWith('CUSTOM_'));
  if (custom.length > 0) return custom.length === 1 && inventory.length === 1 && custom[0]?.total === 1;
  return inventory.every((inv) => COMPUTE_NODE_CLASSES.has(inv.resourceClass));
}

/** The live node whose name this provider holds while another uuid, if any. */
export function blockedNode(ix: SnapshotIndex, rp: ProviderRec): ComputeNodeRec | undefined {
  if (rp.name === null) return undefined;
  return (ix.liveNodesByHypervisorHostname.get(rp.name.toLowerCase()) ?? []).find((n) => n.uuid !== null && n.uuid !== rp.uuid);
}

/**
 * The providers whose placement rows planProviderCleanup looks at (a
 * PlanReadRecipe's scopeOf): the trees of the stale compute-node providers,
 * in the index of a snapshot read without allocations
 * (isStaleComputeProvider needs only the inventories that read holds).
 */
export function providerCleanupPlacementScope(ix: SnapshotIndex): number[] {
  return (ix.snapshot.placement?.providers ?? []).filter((rp) => isStaleComputeProvider(ix, rp)).flatMap((rp) => providerTree(ix, rp).map((p) => p.id));
}

/**
 * The whole deployment is planned; a scope then keeps the units of its
 * providers (plan-scope.ts). A provider belongs to the cell and host of the
 * soft-deleted compute node of its uuid and of the live node whose name it
 * blocks; one whose node is unknown (archived) belongs to no cell. `ix`: the
 * snapshot's index when the read has built it already (readForPlan).
 */
export function planProviderCleanup(snapshot: Snapshot, scope?: PlanScope, ix: SnapshotIndex = indexSnapshot(snapshot)): Plan {
  const state = newPlanState();
  const units: ScopedUnit[] = [];
  const refused: ScopedRefusal[] = [];
  for (const rp of snapshot.placement?.providers ?? []) {
    if (!isStaleComputeProvider(ix, rp)) continue;
    const subject = `resource provider ${rp.uuid} (${rp.name ?? '-'})`;
    const live = blockedNode(ix, rp);
    const deleted = ix.deletedNodeByUuid.get(rp.uuid);
    const nodes = [deleted, live].filter((n): n is ComputeNodeRec => n !== undefined);
    const about: ScopeSubject = { cells: nodes.map((n) => n.cellUuid), hosts: nodes.map((n) => n.host), nodes, providers: treeUuids(ix, rp) };
    // The audit's judgement (returning-node.ts): the provider of a node that comes back is kept, and the plan says why.
    const returning = returningNodeOf(ix, rp);
    if (returning !== undefined) {
      refused.push({ refusal: { subject, reason: keptForReturningNode(ix, rp, returning), suggestion: restoreCommand(returning) }, subject: about });
      continue;
    }
    const owner = deleted === undefined ? undefined : { cellUuid: deleted.cellUuid, host: deleted.host, hypervisorHostname: deleted.hypervisorHostname };
    if (live !== undefined && live.uuid !== null && !ix.providerByUuid.has(live.uuid)) {
      const rekey: Unit = {
        id: `rekey-provider:${rp.id}`,
        title: `${subject} holds the name of live compute node ${live.uuid} (${live.host ?? '-'}): re-key it to that uuid`,
        changes: [
          {
            change: { kind: 'rekey-provider', target: { db: 'placement' }, providerId: rp.id, fromUuid: rp.uuid, toUuid: live.uuid, generation: state.providerGeneration.get(rp.id) ?? rp.generation },
            reason: `its name blocks compute node ${live.uuid} from registering (409); it keeps its inventories, traits, aggregates and allocations`,
          },
        ],
      };
      // Applied alone (no footprint); for the scope it writes the provider and every consumer on it.
      units.push({ unit: rekey, subject: about, keys: unitFootprint(ix, rekey.changes) });
      state.providerGeneration.set(rp.id, (state.providerGeneration.get(rp.id) ?? rp.generation) + 1);
      bumpConsumersOn(ix, rp.id, state);
      continue;
    }
    const removal = planProviderTreeRemoval(ix, rp, owner, state);
    if (!removal.ok) {
      refused.push({ refusal: { subject, reason: removal.reason, suggestion: removal.suggestion }, subject: about });
      continue;
    }
    const why = live !== undefined ? `it is empty and blocks compute node ${live.uuid ?? '-'} (${live.host ?? '-'}) from registering, and a provider already has that node's uuid` : 'it has no live compute node';
    const footprint = unitFootprint(ix, removal.changes);
    units.push({ unit: { id: `stale-provider:${rp.id}`, title: `stale ${subject}: ${why}`, changes: removal.changes, footprint }, subject: about, keys: footprint });
  }
  return selectInScope(CLEANUP_PROVIDERS, units, refused, scope);
}

/** The uuids of a provider and its descendants: --resource_provider may name any of them. */
function treeUuids(ix: SnapshotIndex, root: ProviderRec): string[] {
  return providerTree(ix, root).map((rp) => rp.uuid);
}


