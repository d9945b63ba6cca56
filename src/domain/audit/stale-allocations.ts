// The allocations on a stale provider's tree, one finding per consumer,
// classified by what the consumer is and whether the node comes back.
import type { AllocationRec, ComputeNodeRec, InstanceRec, ProviderRec } from '../model.js';
import type { StaleAllocationClass } from '../finding.js';
import { hostKey, type SnapshotIndex } from '../snapshot-index.js';
import { pushTo } from '../text-and-maps.js';
import { add, cellOf, type Audit } from './context.js';

export function keepForReturningNode(deleted: ComputeNodeRec): string {
  const uuid = deleted.uuid ?? '-';
  return `keep this provider: compute node ${uuid} was soft-deleted but its ironic node exists, and nova-compute restores the row under the same uuid (bug 1839560); to bring it back now: nova-reconcile compute_node restore --uuid ${uuid}`;
}

export function findStaleAllocations(a: Audit, root: ProviderRec, owner: ComputeNodeRec | undefined, tree: readonly ProviderRec[], returning: boolean): void {
  const byConsumer = new Map<string, AllocationRec[]>();
  for (const p of tree) for (const x of a.ix.allocationsOnProvider.get(p.id) ?? []) pushTo(byConsumer, x.consumerUuid, x);
  const treeIds = new Set(tree.map((p) => p.id));
  // The live node re-created on the same host under the same name (a new uuid), if any.
  const successor =
    owner === undefined || owner.hypervisorHostname === null
      ? undefined
      : (a.ix.liveNodesByHypervisorHostname.get(owner.hypervisorHostname.toLowerCase()) ?? []).find(
          (n) => n.cellUuid === owner.cellUuid && hostKey(n.host) === hostKey(owner.host) && n.hypervisorHostname === owner.hypervisorHostname,
        );
  for (const [consumerUuid, allocations] of byConsumer) {
    const instance = a.ix.instanceByUuid.get(consumerUuid);
    const cls = classifyStaleConsumer(a.ix, consumerUuid, instance, root, owner);
    const elsewhere = (a.ix.allocationsOfConsumer.get(consumerUuid) ?? []).filter((x) => !treeIds.has(x.providerId));
    add(a, {
      kind: 'stale-allocation',
      ...cellOf(owner?.cellUuid ?? instance?.cellUuid),
      summary: `${describeConsumer(cls, consumerUuid, instance)} holds ${formatResources(allocations)} on stale provider ${root.uuid} (${root.name ?? '-'})`,
      objects: {
        class: cls,
        consumer_uuid: consumerUuid,
        provider_id: root.id,
        provider_uuid: root.uuid,
        resources: formatResources(allocations),
        instance_host: instance?.host ?? null,
        instance_node: instance?.node ?? null,
        allocations_elsewhere: elsewhere.length,
        live_node_uuid: cls === 'live-instance-on-node' ? (successor?.uuid ?? null) : null,
      },
      suggestion:
        returning && owner !== undefined
          ? cls === 'orphaned'
            ? // Only once the node is back: on a provider without a live node, nova's audit calls every allocation orphaned (nova-facts §3.1).
              `nova-reconcile compute_node restore --uuid ${owner.uuid ?? '-'} && nova-reconcile placement audit --all-resource-classes --resource_provider ${root.uuid} --delete`
            : keepForReturningNode(owner)
          : suggestForStaleAllocation(cls, consumerUuid, successor, a.ix),
    });
  }
}

function classifyStaleConsumer(
  ix: SnapshotIndex,
  consumerUuid: string,
  instance: InstanceRec | undefined,
  root: ProviderRec,
  owner: ComputeNodeRec | undefined,
): StaleAllocationClass {
  if (instance !== undefined) {
    // Same test as the provider cleanup (provider-removal.ts); without the
    // deleted node's row, the provider's name is the node's hypervisor_hostname.
    const onThisNode =
      owner !== undefined
        ? instance.cellUuid === owner.cellUuid && hostKey(instance.host) === hostKey(owner.host) && instance.node === owner.hypervisorHostname
        : instance.node !== null && root.name !== null && instance.node.toLowerCase() === root.name.toLowerCase();
    return onThisNode ? 'live-instance-on-node' : 'evacuation-leftover';
  }
  return ix.activeMigrationUuids.has(consumerUuid) ? 'active-migration' : 'orphaned';
}

function describeConsumer(cls: StaleAllocationClass, consumerUuid: string, instance: InstanceRec | undefined): string {
  switch (cls) {
    case 'evacuation-leftover':
      return `live instance ${consumerUuid}, now on ${instance?.host ?? '-'},`;
    case 'live-instance-on-node':
      return `live instance ${consumerUuid} on this node (${instance?.host ?? '-'})`;
    case 'active-migration':
      return `active migration ${consumerUuid}`;
    case 'orphaned':
      return `orphaned consumer ${consumerUuid} (neither an instance nor an active migration)`;
  }
}

function suggestForStaleAllocation(cls: StaleAllocationClass, consumerUuid: string, successor: ComputeNodeRec | undefined, ix: SnapshotIndex): string {
  switch (cls) {
    case 'evacuation-leftover':
    case 'orphaned':
      return 'nova-reconcile placement cleanup_providers';
    case 'live-instance-on-node':
      // A node re-created under a new uuid gets the old provider (and this allocation) re-keyed to it.
      return successor?.uuid !== undefined && successor.uuid !== null && !ix.providerByUuid.has(successor.uuid)
        ? 'nova-reconcile placement cleanup_providers'
        : 'nova-reconcile compute_node rebalance';
    case 'active-migration':
      return `let migration ${consumerUuid} finish (or confirm/revert it), then nova-reconcile placement cleanup_providers`;
  }
}

function formatResources(allocations: readonly AllocationRec[]): string {
  const sums = new Map<string, number>();
  for (const x of allocations) sums.set(x.resourceClass, (sums.get(x.resourceClass) ?? 0) + x.used);
  return [...sums].map(([rc, used]) => `${rc}=${used}`).join(', ');
}
