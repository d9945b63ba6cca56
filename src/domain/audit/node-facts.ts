// What an operator must know before acting on two of the audit's findings,
// in the summary and in the objects of the JSON:
//  - duplicate-compute-node: which of the rows holds the provider, which the
//    allocations and which the instance (legacy duplicates of one ironic
//    node with both services up: the row to keep is the one that holds
//    them, and they need not be the same row);
//  - node-of-dead-service: a live instance on the node (in any vm_state, an
//    errored one included) keeps it: nothing is offered to delete it.
import type { FindingValue } from '../finding.js';
import type { ComputeNodeRec, InstanceRec } from '../model.js';
import { instancesOn, providerTree, type SnapshotIndex } from '../snapshot-index.js';
import { groupBy } from '../text-and-maps.js';

export interface FindingFacts {
  /** Appended to the finding's summary. */
  readonly summary: string;
  readonly objects: Readonly<Record<string, FindingValue>>;
}

/** Live rows of a cell that claim one hypervisor_hostname, two or more (the duplicate-compute-node finding's groups). */
function duplicateGroups(ix: SnapshotIndex): ComputeNodeRec[][] {
  const out: ComputeNodeRec[][] = [];
  for (const named of ix.liveNodesByHypervisorHostname.values()) {
    if (named.length < 2) continue;
    for (const nodes of groupBy(named, (n) => n.cellUuid).values()) if (nodes.length >= 2) out.push([...nodes]);
  }
  return out;
}

/**
 * The provider ids whose allocations the duplicate rows' facts need: each
 * row's provider tree. The streamed audit keeps the allocations of the
 * consumers on them (consumer-allocations.ts); duplicates are few.
 */
export function duplicateRowProviderIds(ix: SnapshotIndex): Set<number> {
  const ids = new Set<number>();
  for (const rows of duplicateGroups(ix)) {
    for (const row of rows) {
      const rp = row.uuid === null ? undefined : ix.providerByUuid.get(row.uuid);
      if (rp !== undefined) for (const p of providerTree(ix, rp)) ids.add(p.id);
    }
  }
  return ids;
}

/** Which of the rows (sorted as the finding lists them) holds the provider, the allocations and the instance. */
export function duplicateRowFacts(ix: SnapshotIndex, rows: readonly ComputeNodeRec[]): FindingFacts {
  const label = (n: ComputeNodeRec): string => n.uuid ?? `id ${n.id}`;
  const withProvider: ComputeNodeRec[] = [];
  const withAllocations: ComputeNodeRec[] = [];
  const consumers = new Set<string>();
  const withInstance: ComputeNodeRec[] = [];
  const instances: InstanceRec[] = [];
  for (const row of rows) {
    const rp = row.uuid === null ? undefined : ix.providerByUuid.get(row.uuid);
    if (rp !== undefined) {
      withProvider.push(row);
      const held = providerTree(ix, rp).flatMap((p) => ix.allocationsOnProvider.get(p.id) ?? []);
      if (held.length > 0) withAllocations.push(row);
      for (const a of held) consumers.add(a.consumerUuid);
    }
    const on = instancesOn(ix, row.cellUuid, row.host, row.hypervisorHostname);
    if (on.length > 0) withInstance.push(row);
    instances.push(...on);
  }
  const rowsText = (held: readonly ComputeNodeRec[]): string => held.map((n) => `row ${label(n)} (host ${n.host ?? '-'})`).join(' and ');
  const provider = withProvider.length === 0 ? 'no row has a provider' : `provider on ${rowsText(withProvider)}`;
  const allocations = withAllocations.length === 0 ? 'no allocations' : `allocations of ${consumers.size} consumer(s) on ${rowsText(withAllocations)}`;
  const instance = instances.length === 0 ? 'no instance' : `instance ${instances.map((i) => i.uuid).join(', ')} on ${rowsText(withInstance)}`;
  return {
    summary: `: ${provider}, ${allocations}, ${instance}`,
    objects: {
      provider_node_uuids: withProvider.map(label),
      allocation_node_uuids: withAllocations.map(label),
      allocation_consumers: [...consumers].sort(),
      instance_node_uuids: withInstance.map(label),
      instance_uuids: instances.map((i) => i.uuid),
    },
  };
}

/** A node of a dead service that live instances keep: "keep: live instance on it", naming them (nothing when none is). */
export function liveInstanceFacts(instances: readonly InstanceRec[]): FindingFacts {
  if (instances.length === 0) return { summary: '', objects: {} };
  const named = instances.map((i) => `${i.uuid} (vm_state ${i.vmState ?? '-'})`).join(', ');
  return {
    summary: `; keep: live instance ${named} is on it`,
    objects: { keep: 'live instance on it', instance_uuids: instances.map((i) => i.uuid) },
  };
}
