// Cell repair: retire the duplicates, re-home the canonical row, move the instance.
import type { ComputeNodeRec, InstanceRec, ServiceRec } from '../model.js';
import { ringOwner } from '../hash-ring.js';
import { ANY_GROUP, partitionOfNode, unservedGroup } from '../partitions.js';
import { hostKey } from '../snapshot-index.js';
import { OK, byAge, type NodePlan, type Step } from './context.js';
import { describeHealth, healthOf, isDead, ringOf } from './ring.js';

/** The cell's part of one ironic node's repair; a refusal when no owner can be named. */
export function planCell(np: NodePlan): Step {
  const duplicates = retireDuplicates(np);
  const owner = chooseOwner(np, duplicates);
  return 'ok' in owner ? owner : rehome(np, owner);
}

/** Where the canonical row goes, and why; no destination keeps it on its host. */
interface Owner {
  readonly dest: ServiceRec | undefined;
  readonly why: string;
}

type Refusal = Extract<Step, { ok: false }>;

/** The duplicates are soft-deleted; a soft-deleted canonical row (Nova 27.0.0+) is restored. */
function retireDuplicates(np: NodePlan): ComputeNodeRec[] {
  const { cellUuid, canonical, hh } = np;
  const target = { db: 'cell' as const, cellUuid };
  const duplicates = np.rows.filter((r) => r !== canonical);
  for (const d of duplicates) {
    np.changes.push({
      change: { kind: 'soft-delete-compute-node', target, id: d.id, uuid: d.uuid, host: d.host as string, hypervisorHostname: d.hypervisorHostname },
      reason: `duplicate of canonical compute node ${canonical.uuid ?? canonical.id} for ironic node ${hh}`,
    });
  }
  if (duplicates.length > 0) np.notes.push(`retire ${duplicates.length} duplicate compute node(s) (${duplicates.map((d) => `${d.uuid ?? d.id} on ${d.host ?? '-'}`).join(', ')})`);
  if (canonical.deleted && canonical.uuid !== null) {
    // Nova 27.0.0+ would un-delete it itself beside the live rows; restored once they are retired, as Nova's compute_node_create restores by uuid.
    np.changes.push({
      change: { kind: 'restore-compute-node', target, id: canonical.id, uuid: canonical.uuid, host: canonical.host, hypervisorHostname: canonical.hypervisorHostname, deleted: canonical.id },
      reason: `Nova 27.0.0+ knows ironic node ${hh} only by this row (its uuid is the node's): it is restored, and the rows with other uuids are retired`,
    });
    np.notes.push(`restore compute node ${canonical.uuid} (id ${canonical.id})`);
  }
  return duplicates;
}

/** Which service owns the node now: its instance's host, the newest duplicate's, or the ring's when its own service is dead. */
function chooseOwner(np: NodePlan, duplicates: readonly ComputeNodeRec[]): Owner | Refusal {
  const { ctx, cellUuid, canonical, instance } = np;
  const from = canonical.host as string;
  const canonicalHealth = healthOf(ctx, cellUuid, from);
  const newest = [...duplicates].sort(byAge).pop();
  // Nova's ironic driver gives a node that carries an instance to the
  // instance's host, whatever the ring says (nova-facts §6): an up service there owns it.
  const instanceService = instance === undefined ? undefined : ctx.ix.liveComputeService.get(cellUuid, instance.host);
  const instanceOwner =
    instanceService !== undefined && hostKey(instanceService.host) !== hostKey(from) && healthOf(ctx, cellUuid, instanceService.host) === 'up' ? instanceService : undefined;
  if (canonicalHealth === 'up') {
    // Legacy duplicates while both services are up (pre-Rocky random uuids,
    // bug 1714248): nothing moved, so the canonical row stays where it is and
    // only the duplicates go, host-guarded; placement is left as it is. The
    // one exception is the ownership rule above.
    if (instanceOwner !== undefined) return { dest: instanceOwner, why: `its instance ${instance?.uuid ?? '-'} is on ${instanceOwner.host ?? '-'}, which is up and owns the node` };
    return { dest: undefined, why: '' };
  }
  if (instanceOwner !== undefined && (isDead(ctx, canonicalHealth) || (newest !== undefined && healthOf(ctx, cellUuid, newest.host) === 'up'))) {
    return { dest: instanceOwner, why: `its service on ${from} is ${describeHealth(canonicalHealth)}; its instance is on ${instanceOwner.host ?? '-'}, which is up and owns the node` };
  }
  if (newest !== undefined && hostKey(newest.host) !== hostKey(from) && healthOf(ctx, cellUuid, newest.host) === 'up') {
    return { dest: ctx.ix.liveComputeService.get(cellUuid, newest.host), why: `the newest duplicate was created by ${newest.host ?? '-'}, which is up: that service has taken the node over` };
  }
  return isDead(ctx, canonicalHealth) ? ringOwnerOf(np, canonicalHealth) : { dest: undefined, why: '' };
}

/** The owner of a node whose service is dead: its shard's nova-compute, else the hash ring of its partition. */
function ringOwnerOf(np: NodePlan, canonicalHealth: ReturnType<typeof healthOf>): Owner | Refusal {
  const { ctx, cellUuid, canonical, hh } = np;
  const from = canonical.host as string;
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
    const svc = ctx.ix.liveComputeService.get(cellUuid, shard.host);
    if (svc === undefined || hostKey(svc.host) === hostKey(from) || healthOf(ctx, cellUuid, svc.host) !== 'up')
      return {
        ok: false,
        reason: `its service on ${from} is ${describeHealth(canonicalHealth)}; Ironic puts it in shard "${shard.shard}", whose nova-compute (${shard.host}: [ironic] shard and [DEFAULT] host of the given nova.conf) is not an up service of cell ${ctx.cellName(cellUuid)}, and no other nova-compute takes a node of that shard`,
        suggestion: `start nova-compute on ${shard.host}, or name the ring with --ring-members`,
      };
    return { dest: svc, why: `its service on ${from} is ${describeHealth(canonicalHealth)}; Ironic puts it in shard "${shard.shard}", which ${svc.host ?? '-'} serves alone ([ironic] shard): it owns every node of the shard` };
  }
  const partition = ctx.ringMembers === undefined && partitions !== undefined ? partitionOfNode(partitions, canonical, listed) : undefined;
  // Ironic's conductor group decides the ring; one that no nova-compute serves leaves the node unmanaged (audit's ironic-node-unmanaged), not for a ring to take.
  const unserved = ctx.ringMembers === undefined ? unservedGroup(partitions, listed) : undefined;
  if (unserved !== undefined)
    return {
      ok: false,
      reason: `its service on ${from} is ${describeHealth(canonicalHealth)}, and Ironic puts it in conductor group "${unserved}", which no nova-compute of [nova_reconcile] ironic_partitions serves: no ring owns it`,
      suggestion: `serve conductor group "${unserved}" (a nova-compute with [ironic] conductor_group = ${unserved}, named in ironic_partitions), or move the node back in Ironic; without an instance, compute_node cleanup_orphans removes it`,
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
      reason: `its service on ${from} is ${describeHealth(canonicalHealth)}, and no live ironic nova-compute service in cell ${ctx.cellName(cellUuid)}${partition === undefined || partition.group === ANY_GROUP ? '' : ` serving conductor group "${partition.group}"`} can take it over`,
      suggestion: 'start a nova-compute service for ironic, or name the ring with --ring-members; if Ironic no longer lists the node: nova-reconcile compute_node cleanup_orphans --ironic-nodes FILE',
    };
  return {
    dest: ring.services.get(owner),
    why: `its service on ${from} is ${describeHealth(canonicalHealth)}; Nova's hash ring of the live members${partition === undefined || partition.group === ANY_GROUP ? '' : ` of conductor group "${partition.group}"`} (${ring.ring.members.join(', ')}) gives the node to ${owner}`,
  };
}

/** The re-home, the instance's move (with the re-home, or alone) and its compute_id link. */
function rehome(np: NodePlan, { dest, why }: Owner): Step {
  const { ctx, cellUuid, canonical, instance, hh } = np;
  const target = { db: 'cell' as const, cellUuid };
  const from = canonical.host as string;
  const canonicalHealth = healthOf(ctx, cellUuid, from);
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
        instance: together ? { id: moving.id, uuid: moving.uuid, fromHost: moving.host as string, ...linkTo(moving, canonical.id) } : null,
      },
      reason: !together ? why : `${why}; its instance ${moving.uuid} moves with it, in the same transaction (instances.node is unchanged)`,
    });
    np.notes.push(`re-home compute node ${canonical.uuid ?? canonical.id} from ${from} to ${finalHost}${together ? ` with instance ${moving.uuid}` : ''}`);
  }
  if (moving !== undefined && !together) {
    const health = healthOf(ctx, cellUuid, moving.host);
    np.changes.push({
      change: { kind: 'move-instance', target, id: moving.id, uuid: moving.uuid, node: moving.node as string, fromHost: moving.host as string, toHost: finalHost, ...linkTo(moving, canonical.id) },
      reason: `its host ${moving.host ?? '-'} is ${describeHealth(health)}; the instance follows its node's compute node`,
    });
    np.notes.push(`move instance ${moving.uuid} from ${moving.host ?? '-'} to ${finalHost}`);
  } else if (moving === undefined && instance !== undefined && instance.host !== null && instance.node !== null && linksElsewhere(instance, canonical.id)) {
    // Nova 28.0.0+: the instance stays, but its compute_id names a row this unit retires.
    np.changes.push({
      change: { kind: 'move-instance', target, id: instance.id, uuid: instance.uuid, node: instance.node, fromHost: instance.host, toHost: instance.host, computeNodeId: canonical.id },
      reason: `its compute_id names compute node ${instance.computeId ?? '-'}, not its node's row ${canonical.id}; Nova 28.0.0+ links an instance to the row of its node`,
    });
    np.notes.push(`link instance ${instance.uuid} to compute node ${canonical.id}`);
  }
  return OK;
}

/** Where the schema has instances.compute_id (Nova 28.0.0+): set it to the row the instance ends up on. */
function linkTo(instance: InstanceRec, computeNodeId: number): { computeNodeId?: number } {
  return instance.computeId === undefined ? {} : { computeNodeId };
}

/**
 * The instance's compute_id (Nova 28.0.0+) names another row than the
 * canonical one: a duplicate this unit retires, a soft-deleted row, or
 * another node's. NULL is left to Nova (its online data migration and its
 * tracker fill it).
 */
function linksElsewhere(instance: InstanceRec, canonicalId: number): boolean {
  const id = instance.computeId;
  return id !== undefined && id !== null && id !== canonicalId;
}
