// The audit's checks of allocations, one consumer at a time. The
// allocations are the largest placement table and are only ever judged per
// consumer, so the audit never holds them whole: the database streams them
// in consumer order (db/placement/snapshot-reads.ts) and each consumer's
// rows are checked here against the held nodes, instances and providers,
// then dropped — unless they touch a stale provider tree, whose findings
// (provider-without-node, stale-allocation) need every consumer on it and
// each such consumer's other allocations. An in-memory snapshot is audited
// through the same checks (auditSnapshot groups its allocations by consumer).
//  - allocation-on-other-node: a live instance, not migrating, whose
//    allocations sit on another live node's (non-sharing) provider tree.
//  - orphaned-allocation: a consumer that is no live instance in any cell and
//    no in-progress migration holds allocations on a provider that is not
//    stale (stale providers are reported as stale-allocation): any provider,
//    any resource class, so CUSTOM_* ironic allocations count too.
//  - instance-without-allocation: a live instance on a live node holds no
//    allocation at all (bug 1841481: a cascade delete removed it), and is
//    not migrating. Known once every consumer was seen. Fixed by
//    heal_allocations.
import { ReconcileError } from '../../errors.js';
import type { Finding } from '../finding.js';
import type { AllocationRec, ComputeNodeRec, InstanceRec } from '../model.js';
import { FINAL_MIGRATION_STATES, SHARING_TRAIT } from '../model.js';
import { NOVA_RESOURCE_CLASSES } from './nova-orphaned-allocations.js';
import { duplicateRowProviderIds } from './node-facts.js';
import { isStaleComputeProvider } from '../stale-providers.js';
import { CellHostMap, hostKey, type SnapshotIndex } from '../snapshot-index.js';
import { compareText, pushTo } from '../text-and-maps.js';

export interface AllocationChecks {
  /**
   * Check one consumer's allocations (every one of them, in one call). True
   * when the provider checks need them afterwards: they touch a stale
   * provider tree, or a duplicate compute node's. A consumer that comes a second time is refused
   * ('implausible'): its findings would be judged on part of its allocations.
   */
  consumer(consumerUuid: string, allocations: readonly AllocationRec[]): boolean;
  /** The live instances that held no allocation: once every consumer was checked. */
  instancesWithoutAllocation(): Finding[];
}

/** The live node of a cell on (host, node), as nodeKey matches them. */
type NodeAt = (cellUuid: string, host: string | null, node: string | null) => ComputeNodeRec | undefined;

/** Checks over `ix`, a snapshot index whose allocations are not needed (they come through `consumer`); findings go to `report`. */
export function allocationChecks(ix: SnapshotIndex, report: (finding: Finding) => void): AllocationChecks {
  const s = ix.snapshot;
  const nodeAt = liveNodeAt(ix);
  const migrating = new Set<string>();
  for (const m of s.migrations) if (m.instanceUuid !== null && !FINAL_MIGRATION_STATES.includes(m.status ?? '')) migrating.add(m.instanceUuid);
  // The rare uuid live in two cells (a cross-cell resize's hidden copy): instanceByUuid keeps one.
  const otherCopies = new Map<string, InstanceRec[]>();
  for (const i of s.instances) if (ix.instanceByUuid.get(i.uuid) !== i) pushTo(otherCopies, i.uuid, i);
  const staleRoots = new Set<number>();
  for (const rp of s.placement?.providers ?? []) if (isStaleComputeProvider(ix, rp)) staleRoots.add(rp.id);
  // The duplicate rows' provider trees: their findings name the row whose provider holds allocations (node-facts.ts).
  const duplicateProviders = duplicateRowProviderIds(ix);
  // The root a provider's tree is judged by (itself when its root row is missing).
  const rootOf = (providerId: number): number | undefined => {
    const rp = ix.providerById.get(providerId);
    if (rp === undefined) return undefined;
    return rp.rootId !== null && ix.providerById.has(rp.rootId) ? rp.rootId : rp.id;
  };
  // The live compute node whose (non-sharing) provider tree a provider belongs to.
  const nodeHolding = (providerId: number): ComputeNodeRec | undefined => {
    const rp = ix.providerById.get(providerId);
    const root = rp === undefined ? undefined : ((rp.rootId === null ? undefined : ix.providerById.get(rp.rootId)) ?? rp);
    if (rp === undefined || root === undefined || rp.traits.includes(SHARING_TRAIT) || root.traits.includes(SHARING_TRAIT)) return undefined;
    return ix.liveNodeByUuid.get(root.uuid);
  };
  // Every consumer checked (an instance's by the instance's own string, which is held
  // anyway): the instances that hold an allocation, and the guard against a consumer
  // that comes twice.
  const seen = new Set<string>();

  return {
    consumer(consumerUuid, allocations) {
      const instance = ix.instanceByUuid.get(consumerUuid);
      if (seen.has(consumerUuid))
        throw new ReconcileError('implausible', `the allocations of consumer ${JSON.stringify(consumerUuid)} came in two parts; refusing to judge them in part`, {
          hint: "placement's consumer_id collation takes another consumer id for equal to it (one that differs only in accents or trailing spaces: a hand-written row); correct that id and re-run",
        });
      seen.add(instance?.uuid ?? consumerUuid);
      if (instance !== undefined) {
        for (const i of [...(otherCopies.get(consumerUuid) ?? []), instance]) checkMisplaced(ix, i, allocations, nodeAt, migrating, nodeHolding, report);
      } else if (!ix.activeMigrationUuids.has(consumerUuid)) {
        checkOrphaned(ix, consumerUuid, allocations, staleRoots, rootOf, report);
      }
      return allocations.some((x) => {
        const root = rootOf(x.providerId);
        return (root !== undefined && staleRoots.has(root)) || duplicateProviders.has(x.providerId);
      });
    },
    instancesWithoutAllocation: () => instancesWithoutAllocation(ix, nodeAt, migrating, seen),
  };
}

/**
 * The live node an instance's (cell, host, node) names (nodeKey's match; the
 * last one wins, as a map by nodeKey would keep it). By cell and name, the host
 * matched on lookup: no key string per node, held for the whole stream.
 */
function liveNodeAt(ix: SnapshotIndex): NodeAt {
  const nodesByName = new CellHostMap<ComputeNodeRec | ComputeNodeRec[]>();
  for (const n of ix.liveNodes) {
    const held = nodesByName.get(n.cellUuid, n.hypervisorHostname);
    if (held === undefined) nodesByName.set(n.cellUuid, n.hypervisorHostname, n);
    else if (Array.isArray(held)) held.push(n);
    else nodesByName.set(n.cellUuid, n.hypervisorHostname, [held, n]);
  }
  return (cellUuid, host, node) => {
    const held = nodesByName.get(cellUuid, node);
    const key = hostKey(host);
    if (held === undefined || !Array.isArray(held)) return held !== undefined && hostKey(held.host) === key ? held : undefined;
    for (let j = held.length - 1; j >= 0; j--) if (hostKey((held[j] as ComputeNodeRec).host) === key) return held[j];
    return undefined;
  };
}

/** The live instances that held no allocation: known once every consumer was `seen`. */
function instancesWithoutAllocation(ix: SnapshotIndex, nodeAt: NodeAt, migrating: ReadonlySet<string>, seen: ReadonlySet<string>): Finding[] {
  const out: Finding[] = [];
  for (const i of ix.snapshot.instances) {
    if (i.host === null || i.node === null || migrating.has(i.uuid) || seen.has(i.uuid)) continue;
    const node = nodeAt(i.cellUuid, i.host, i.node);
    if (node === undefined || node.uuid === null) continue;
    const rp = ix.providerByUuid.get(node.uuid);
    // No provider at all is node-without-provider's finding; allocations elsewhere are allocation-on-other-node's.
    if (rp === undefined) continue;
    out.push({
      kind: 'instance-without-allocation',
      cellUuid: i.cellUuid,
      summary: `live instance ${i.uuid} on ${i.host}/${i.node} has no allocation in placement (its node's provider ${rp.uuid} holds none of it)`,
      objects: { instance_uuid: i.uuid, host: i.host, node: i.node, node_uuid: node.uuid, provider_uuid: rp.uuid, task_state: i.taskState, hypervisor_type: node.hypervisorType },
      suggestion: `nova-reconcile placement heal_allocations --instance ${i.uuid}${i.taskState === null ? '' : ' (once its task state is cleared)'}`,
    });
  }
  return out;
}

/**
 * A live instance whose allocations sit on another live node's provider tree
 * (an evacuation whose source never cleaned up, a resize gone wrong). Sharing
 * providers and providers that are not compute nodes are where allocations
 * legitimately live too; stale providers are reported as stale allocations;
 * an instance with an active migration is between two nodes by design.
 */
function checkMisplaced(
  ix: SnapshotIndex,
  i: InstanceRec,
  allocations: readonly AllocationRec[],
  nodeAt: NodeAt,
  migrating: ReadonlySet<string>,
  nodeHolding: (providerId: number) => ComputeNodeRec | undefined,
  report: (finding: Finding) => void,
): void {
  if (i.host === null || i.node === null || migrating.has(i.uuid)) return;
  const own = nodeAt(i.cellUuid, i.host, i.node);
  if (own === undefined) return;
  const others = new Map<string, ComputeNodeRec>();
  const mine: AllocationRec[] = [];
  const elsewhere: AllocationRec[] = [];
  for (const x of allocations) {
    const holder = nodeHolding(x.providerId);
    if (holder === undefined) continue;
    if (holder.uuid === own.uuid) mine.push(x);
    else {
      others.set(holder.uuid ?? '', holder);
      elsewhere.push(x);
    }
  }
  if (others.size === 0) return;
  const nodes = [...others.values()].sort((x, y) => compareText(x.uuid ?? '', y.uuid ?? ''));
  report({
    kind: 'allocation-on-other-node',
    cellUuid: i.cellUuid,
    summary: `instance ${i.uuid} runs on ${i.host}/${i.node} but has allocations on the provider of ${nodes.map((n) => `${n.host ?? '-'}/${n.hypervisorHostname ?? '-'}`).join(', ')}`,
    objects: { instance_uuid: i.uuid, host: i.host, node: i.node, node_uuid: own.uuid, provider_uuids: nodes.map((n) => n.uuid ?? '') },
    suggestion: misplacedFix(i.uuid, own.hypervisorType === 'ironic', mine.length > 0, elsewhere, ix),
  });
}

/**
 * The instance is not on those providers' nodes and no migration is active,
 * which is exactly nova's orphaned allocation: `placement audit --delete`
 * removes that provider's share and keeps the rest (nova-facts §3.1). Nova's audit only
 * looks at its standard classes, so custom (ironic) ones need
 * --all-resource-classes. When the instance has nothing on its own node,
 * removing the share would not help: its allocations must be rewritten onto
 * its node, which nova does through the Placement API (heal_allocations
 * --force); an in-use ironic node has capacity 0 there (reserved = total), so
 * only a direct write can (nova-reconcile placement heal_allocations).
 */
function misplacedFix(instanceUuid: string, ironic: boolean, hasOwn: boolean, elsewhere: readonly AllocationRec[], ix: SnapshotIndex): string {
  if (!hasOwn)
    return ironic
      ? `nova-reconcile placement heal_allocations --instance ${instanceUuid} --force`
      : `nova-manage placement heal_allocations --instance ${instanceUuid} --force`;
  const byProvider = new Map<string, AllocationRec[]>();
  for (const x of elsewhere) {
    const uuid = ix.providerById.get(x.providerId)?.uuid;
    if (uuid !== undefined) pushTo(byProvider, uuid, x);
  }
  return [...byProvider]
    .sort(([x], [y]) => compareText(x, y))
    .map(([uuid, xs]) => {
      const allClasses = xs.some((x) => NOVA_RESOURCE_CLASSES.includes(x.resourceClass)) ? '' : ' --all-resource-classes';
      return `nova-reconcile placement audit${allClasses} --resource_provider ${uuid} --delete`;
    })
    .join(' && ');
}

function checkOrphaned(
  ix: SnapshotIndex,
  consumerUuid: string,
  allocations: readonly AllocationRec[],
  staleRoots: ReadonlySet<number>,
  rootOf: (providerId: number) => number | undefined,
  report: (finding: Finding) => void,
): void {
  const byProvider = new Map<number, AllocationRec[]>();
  for (const a of allocations) {
    const root = rootOf(a.providerId);
    if (root !== undefined && staleRoots.has(root)) continue;
    pushTo(byProvider, a.providerId, a);
  }
  for (const [providerId, rows] of byProvider) {
    const rp = ix.providerById.get(providerId);
    const resources = rows.map((a) => `${a.resourceClass}=${a.used}`).join(', ');
    report({
      kind: 'orphaned-allocation',
      summary: `consumer ${consumerUuid} (no live instance in any cell, no migration in progress) holds ${resources} on resource provider ${rp?.uuid ?? providerId} (${rp?.name ?? '-'})`,
      objects: { consumer_uuid: consumerUuid, provider_id: providerId, provider_uuid: rp?.uuid ?? null, provider_name: rp?.name ?? null, resources },
      suggestion: `nova-reconcile placement audit --all-resource-classes --resource_provider ${rp?.uuid ?? providerId} --delete`,
    });
  }
}
