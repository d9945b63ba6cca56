// Which nova-compute hosts serve which Ironic conductor group. Nova's ironic
// driver (nova/virt/ironic/driver.py) lists only the nodes of its [ironic]
// partition_key and hashes them over that partition's peer_list; a
// nova-compute without partition_key lists every node and hashes over every
// up ironic service. Each compute's nova.conf holds its own partition, so
// the operator describes them all in [nova_reconcile] ironic_partitions.
import type { ComputeNodeRec, IronicNodeRec, IronicPartition } from './model.js';

/** `group` is a conductor group name, or ANY_GROUP for computes without partition_key. */
export type { IronicPartition } from './model.js';

/** Stands for nova-computes without [ironic] partition_key: they serve every group. */
export const ANY_GROUP = '*';

/**
 * The conductor group a listed ironic node is in when no nova-compute serves
 * it, else undefined. Undefined as well when nothing can be told: no
 * partitions described, a "*" partition (it serves every group), or a
 * source that does not say the node's group (a uuid-per-line file).
 */
export function unservedGroup(partitions: readonly IronicPartition[] | undefined, node: IronicNodeRec | undefined): string | undefined {
  if (partitions === undefined || partitions.length === 0 || node === undefined || node.conductorGroup === null) return undefined;
  if (partitions.some((p) => p.group === ANY_GROUP)) return undefined;
  const group = node.conductorGroup.toLowerCase();
  return partitions.some((p) => p.group === group) ? undefined : node.conductorGroup;
}

/**
 * The partition whose ring owns a node: by the node's conductor group when
 * the ironic truth says it, else by the partition its current host serves.
 * Undefined when neither tells (the caller refuses rather than guessing).
 */
export function partitionOfNode(
  partitions: readonly IronicPartition[],
  node: ComputeNodeRec,
  ironic: IronicNodeRec | undefined,
): IronicPartition | undefined {
  if (ironic !== undefined && ironic.conductorGroup !== null) {
    const group = ironic.conductorGroup.toLowerCase();
    return partitions.find((p) => p.group === group) ?? partitions.find((p) => p.group === ANY_GROUP);
  }
  const host = (node.host ?? '').toLowerCase();
  const serving = partitions.filter((p) => p.hosts.includes(host));
  return serving.length === 1 ? serving[0] : undefined;
}
