// Liveness of a node's services and Nova's hash ring of the live members (nova-facts §6).
import type { ServiceRec } from '../model.js';
import { buildHashRing } from '../hash-ring.js';
import { ANY_GROUP, type IronicPartition } from '../partitions.js';
import { isServiceUp, serviceHealth, type ServiceHealth } from '../liveness.js';
import { hostKey } from '../snapshot-index.js';
import type { CellRing, Ctx } from './context.js';

export function healthOf(ctx: Ctx, cellUuid: string, host: string | null): ServiceHealth {
  return serviceHealth(ctx.s, ctx.ix.liveComputeService.get(cellUuid, host));
}

export function isDead(ctx: Ctx, health: ServiceHealth): boolean {
  return health === 'forced-down' || health === 'gone' || (ctx.includeDown && health === 'down');
}

export function describeHealth(health: ServiceHealth): string {
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
 * Nova's ring membership (nova-facts §6): the up, enabled nova-compute services of the
 * cell that have ironic compute nodes (soft-deleted rows count, as in Nova's
 * join); or the operator's list, which stands for [ironic] peer_list.
 */
export function ringOf(ctx: Ctx, cellUuid: string, partition?: IronicPartition, exclude?: string): CellRing {
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
