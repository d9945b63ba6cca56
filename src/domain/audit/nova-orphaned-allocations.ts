// nova-manage placement audit's definition of an orphaned allocation
// (nova/cmd/manage.py:PlacementCommands.audit and
// _check_orphaned_allocations_for_provider), as a pure function of a
// Snapshot. For every provider, in the order GET /resource_providers lists
// them, a consumer is orphaned when its allocations ON THIS PROVIDER use at
// least one of NOVA_RESOURCE_CLASSES (any class with --all-resource-classes)
// and it is neither a live instance nor an active migration of the compute
// node that is the provider's root. A root that is no live compute node has
// no instances and no migrations, so all its Nova-class allocations are
// orphaned. The plan of deletes comes with it: one
// 'remove-provider-allocations' change per orphan, its consumer generation
// chained when the same consumer loses shares on several providers.
//
// Deliberate difference: nova's definition would delete
// allocations that are not Nova's to delete, and data with them. Two kinds
// of what nova calls orphaned are KEPT and reported with the reason:
//  - allocations on a provider that is not a compute-node provider (a
//    sharing provider with MISC_SHARES_VIA_AGGREGATE, a neutron agent, a
//    cyborg device...): nova takes its root as a compute node, finds none,
//    and calls every allocation on it orphaned, a live instance's DISK_GB on
//    shared storage included;
//  - the last allocations on compute-node providers of an instance that is
//    live in some cell (a stale provider holding a live instance's only
//    allocations): deleting them loses the instance's claim for good.
import { cellNamer, type CellNamer } from '../cell-names.js';
import { nodeKey } from '../snapshot-index.js';
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InstanceRec, MigrationRec, ProviderRec, Snapshot } from '../model.js';
import { COMPUTE_NODE_TRAIT, FINAL_MIGRATION_STATES, SHARING_TRAIT } from '../model.js';
import type { AllocationPart, Change } from '../plan.js';
import { groupBy, pushTo } from '../text-and-maps.js';

/** The classes nova's audit looks at (NOVA_RCS). Custom classes, PCI_DEVICE, SRIOV_NET_VF, FPGA, PGPU, NET_PACKET_RATE_* are not among them. */
export const NOVA_RESOURCE_CLASSES: readonly string[] = Object.freeze([
  'VCPU',
  'MEMORY_MB',
  'DISK_GB',
  'VGPU',
  'NET_BW_EGR_KILOBIT_PER_SEC',
  'NET_BW_IGR_KILOBIT_PER_SEC',
  'PCPU',
  'MEM_ENCRYPTION_CONTEXT',
]);

export interface PlacementAuditOptions {
  /** --resource_provider; an empty string means "all", as nova's `if provider_uuid:` does. */
  readonly providerUuid?: string | undefined;
  /** --all-resource-classes: every class counts, so ironic CUSTOM_* orphans are seen. */
  readonly allResourceClasses: boolean;
}

export type RemoveAllocationsChange = Extract<Change, { kind: 'remove-provider-allocations' }>;

export interface OrphanedConsumer {
  readonly consumerUuid: string;
  /** This provider's share, in the order placement lists it (the printed dict). */
  readonly resources: readonly AllocationPart[];
  /**
   * 'provider-share' when the consumer also holds allocations on other
   * providers, so only this share goes (nova PUTs the rest back); 'all' when
   * this is its last provider (nova's DELETE /allocations/{consumer}).
   */
  readonly scope: 'provider-share' | 'all';
  /** The compare-and-swap that --delete applies. */
  readonly change: RemoveAllocationsChange;
}

/** What nova-manage would delete and nova-reconcile keeps (see the header). */
export interface KeptAllocation {
  readonly consumerUuid: string;
  readonly resources: readonly AllocationPart[];
  readonly reason: string;
}

export interface AuditedProvider {
  readonly id: number;
  readonly uuid: string;
  /** root_provider_uuid: nova takes it as the compute node's uuid. */
  readonly rootUuid: string;
  /** Whether a live compute node has the root's uuid (else nova prints "The compute node ... can not be found"). */
  readonly computeNodeFound: boolean;
  readonly orphans: readonly OrphanedConsumer[];
  /** nova's orphans that are kept, with the reason (a deliberate difference). */
  readonly kept: readonly KeptAllocation[];
}

export type PlacementAuditReport =
  | { readonly kind: 'unknown-provider'; readonly providerUuid: string }
  | { readonly kind: 'audited'; readonly allResourceClasses: boolean; readonly providers: readonly AuditedProvider[] };

/** The audit of a snapshot held whole: its allocations go through the same per-consumer checks (openPlacementAudit). */
export function auditPlacementAllocations(snapshot: Snapshot, options: PlacementAuditOptions): PlacementAuditReport {
  const audit = openPlacementAudit(snapshot, options);
  if (audit.kind === 'unknown-provider') return audit;
  for (const [consumerUuid, rows] of groupBy(snapshot.placement?.allocations ?? [], (a) => a.consumerUuid)) audit.consumer(consumerUuid, rows);
  return audit.finish();
}

/**
 * A placement audit whose allocations arrive one consumer at a time (the
 * command streams them, so memory does not grow with the allocations
 * table). `snapshot` is everything else: its providers and
 * consumer rows are needed, its allocations are not looked at. Call
 * `consumer` once per consumer with all of its allocations, in any order of
 * consumers, then `finish`: the report is the one nova's walk makes,
 * provider by provider in GET /resource_providers order, each provider's
 * consumers in the order its allocations list them. A consumer's share on
 * one provider is judged by what it holds on the others, and its generation
 * is chained through its providers in audit order, as nova's walk would
 * meet them; both are the consumer's own, so it is judged whole in one call.
 */
export interface StreamedPlacementAudit {
  readonly kind: 'streamed';
  /** Every allocation of one consumer. A consumer that comes a second time throws ConsumerSplit. */
  consumer(consumerUuid: string, allocations: readonly AllocationRec[]): void;
  finish(): PlacementAuditReport;
}

/** A consumer's allocations came in two calls (an id the database's collation takes for another's): the caller audits the whole snapshot instead. */
export class ConsumerSplit extends Error {}

export function openPlacementAudit(snapshot: Snapshot, options: PlacementAuditOptions): StreamedPlacementAudit | Extract<PlacementAuditReport, { kind: 'unknown-provider' }> {
  const placement = snapshot.placement;
  if (placement === undefined) throw new Error('auditPlacementAllocations needs a snapshot with placement');
  const listed = listProviders(placement.providers);
  let providers = listed.map((l) => l.provider);
  const wanted = options.providerUuid ?? '';
  if (wanted !== '') {
    // ?uuid=<U> is compared by the uuid column's case-insensitive collation;
    // anything that is not a uuid gets a 400, which nova reports the same way.
    const match = providers.filter((p) => p.uuid.toLowerCase() === wanted.toLowerCase());
    if (match.length === 0) return { kind: 'unknown-provider', providerUuid: wanted };
    providers = match;
  }
  const rootUuid = new Map(listed.map((l) => [l.provider.id, l.rootUuid]));
  const lookup = indexForAudit(snapshot);
  const counts = (rc: string): boolean => options.allResourceClasses || NOVA_RESOURCE_CLASSES.includes(rc);
  const nodeOf = (rp: ProviderRec): ComputeNodeRec | undefined => lookup.liveNodeByUuid.get(rootUuid.get(rp.id) ?? rp.uuid);
  const found = new Map<number, FoundEntry[]>();
  const walk: AuditWalk = { lookup, rank: new Map(providers.map((rp, i) => [rp.id, i])), counts, nodeOf, found, cellName: cellNamer(snapshot.cells) };
  const seen = new Set<string>();

  return {
    kind: 'streamed',
    consumer(consumerUuid, allocations) {
      if (seen.has(consumerUuid)) throw new ConsumerSplit(`the allocations of consumer ${JSON.stringify(consumerUuid)} came in two parts`);
      seen.add(consumerUuid);
      judgeConsumer(walk, consumerUuid, allocations);
    },
    finish() {
      const audited = providers.map((rp): AuditedProvider => {
        const entries = [...(found.get(rp.id) ?? [])].sort((x, y) => placementOrder(x.order, y.order));
        return {
          id: rp.id,
          uuid: rp.uuid,
          rootUuid: rootUuid.get(rp.id) ?? rp.uuid,
          computeNodeFound: nodeOf(rp) !== undefined,
          orphans: entries.flatMap((e) => (e.orphan === undefined ? [] : [e.orphan])),
          kept: entries.flatMap((e) => (e.kept === undefined ? [] : [e.kept])),
        };
      });
      return { kind: 'audited', allResourceClasses: options.allResourceClasses, providers: audited };
    },
  };
}

/** What a provider's walk finds, with the row its consumer is listed at there (its first in placement's order). */
interface FoundEntry {
  readonly order: AllocationRec;
  readonly orphan?: OrphanedConsumer;
  readonly kept?: KeptAllocation;
}

interface AuditWalk {
  readonly lookup: AuditLookup;
  /** The audited providers' positions in audit order. */
  readonly rank: ReadonlyMap<number, number>;
  /** Whether a resource class is audited. */
  readonly counts: (rc: string) => boolean;
  readonly nodeOf: (rp: ProviderRec) => ComputeNodeRec | undefined;
  readonly found: Map<number, FoundEntry[]>;
  /** How a kept allocation's reason names a cell (cell-names.ts). */
  readonly cellName: CellNamer;
}

/** Judge every share of one consumer, provider by provider in audit order, chaining its generation through them. */
function judgeConsumer(walk: AuditWalk, consumerUuid: string, allocations: readonly AllocationRec[]): void {
  const { lookup, rank, counts, nodeOf, found, cellName } = walk;
  // An allocation without a consumer row is invisible to placement's API, and to nova's audit.
  const consumer = lookup.consumerByUuid.get(consumerUuid);
  if (consumer === undefined) return;
  // The audited providers it is on, in audit order (almost always one).
  const providerIds: number[] = [];
  for (const a of allocations) if (rank.has(a.providerId) && !providerIds.includes(a.providerId)) providerIds.push(a.providerId);
  if (providerIds.length > 1) providerIds.sort((x, y) => (rank.get(x) ?? 0) - (rank.get(y) ?? 0));
  let state: { generation: number; readonly providers: Set<number> } | undefined;
  for (const providerId of providerIds) {
    const rp = lookup.providerById.get(providerId) as ProviderRec;
    const rows = allocations.filter((a) => a.providerId === providerId).sort(placementOrder);
    if (!rows.some((a) => counts(a.resourceClass))) continue;
    const node = nodeOf(rp);
    if (node !== undefined && isRelatedConsumer(lookup, node, consumerUuid)) continue;
    state ??= { generation: consumer.generation, providers: new Set(allocations.map((a) => a.providerId)) };
    const resources = rows.map((a) => ({ resourceClassId: a.resourceClassId, resourceClass: a.resourceClass, used: a.used }));
    const order = rows[0] as AllocationRec;
    const instance = lookup.liveInstanceByUuid.get(consumerUuid);
    const notNova = notComputeNodeProvider(lookup, rp);
    if (notNova !== undefined) {
      pushTo(found, providerId, { order, kept: { consumerUuid, resources, reason: `${notNova}${instance === undefined ? '' : `; consumer ${consumerUuid} is live instance on ${instance.host ?? '-'}/${instance.node ?? '-'}`}` } });
      continue;
    }
    if (instance !== undefined && ![...state.providers].some((id) => id !== rp.id && notComputeNodeProvider(lookup, lookup.providerById.get(id)) === undefined)) {
      pushTo(found, providerId, {
        order,
        kept: {
          consumerUuid,
          resources,
          reason: `they are the last allocations on a compute-node provider of instance ${consumerUuid}, which is live in cell ${cellName(instance.cellUuid)} on ${instance.host ?? '-'}/${instance.node ?? '-'}; deleting them would lose them (see: nova-reconcile compute_node rebalance, placement cleanup_providers)`,
        },
      });
      continue;
    }
    const scope = state.providers.size > 1 ? 'provider-share' : 'all';
    pushTo(found, providerId, {
      order,
      orphan: {
        consumerUuid,
        resources,
        scope,
        change: {
          kind: 'remove-provider-allocations',
          target: { db: 'placement' },
          consumerUuid,
          consumerGeneration: state.generation,
          providerId: rp.id,
          providerUuid: rp.uuid,
          allocations: resources,
        },
      },
    });
    // What the write leaves behind, for a later provider's share of the same consumer.
    state.providers.delete(rp.id);
    if (scope === 'provider-share') state.generation += 1;
  }
}

/**
 * GET /resource_providers/{uuid}/allocations lists a provider's rows in
 * (resource_class_id, used, id) order (allocationsByConsumer in the whole
 * walk had it so): a consumer is listed at its first row, its classes in
 * that order.
 */
function placementOrder(a: AllocationRec, b: AllocationRec): number {
  return a.resourceClassId - b.resourceClassId || a.used - b.used || a.id - b.id;
}

/** nova's nested providers of a compute node are named `<root name>_<PCI address>` (vGPU, PCI in placement); neutron's use a colon. */
const OWNER_NOVA_TRAIT = 'OWNER_NOVA';

/**
 * Why a provider is not a compute-node provider, or undefined when it is:
 * a root with the COMPUTE_NODE trait or the uuid of a compute node (live or
 * soft-deleted), or a child of one that Nova made (OWNER_NOVA on master, or
 * Nova's `<root name>_...` naming), and neither it nor its root a sharing
 * provider. A provider that is not listed (no root) is not one either.
 */
function notComputeNodeProvider(lookup: AuditLookup, rp: ProviderRec | undefined): string | undefined {
  if (rp === undefined) return 'the provider is not listed by placement';
  const root = rp.rootId === null ? undefined : lookup.providerById.get(rp.rootId);
  const label = `provider ${rp.uuid} (${rp.name ?? '-'})`;
  if (root === undefined) return `${label} has no root provider`;
  if (rp.traits.includes(SHARING_TRAIT) || root.traits.includes(SHARING_TRAIT)) return `${label} is a sharing provider (${SHARING_TRAIT}), not a compute node's`;
  const rootIsNode = root.traits.includes(COMPUTE_NODE_TRAIT) || lookup.anyNodeUuids.has(root.uuid);
  if (!rootIsNode) return `${label} is not a compute-node provider (no ${COMPUTE_NODE_TRAIT} trait, no compute node has its uuid)`;
  if (rp.id === root.id) return undefined;
  if (rp.traits.includes(OWNER_NOVA_TRAIT) || (root.name !== null && rp.name !== null && rp.name.toLowerCase().startsWith(`${root.name.toLowerCase()}_`))) return undefined;
  return `${label} is a child of compute-node provider ${root.uuid} that Nova did not create (a neutron agent, a cyborg device...)`;
}

/** Orphans across every provider, in audit order. */
export function orphansOf(report: PlacementAuditReport): Array<{ readonly provider: AuditedProvider; readonly orphan: OrphanedConsumer }> {
  if (report.kind !== 'audited') return [];
  return report.providers.flatMap((provider) => provider.orphans.map((orphan) => ({ provider, orphan })));
}

/**
 * GET /resource_providers: the providers joined to their root (a provider
 * whose root_provider_id is NULL or dangling is not listed), in id order, as
 * MariaDB returns the unordered query (a full scan of the primary key).
 */
function listProviders(all: readonly ProviderRec[]): Array<{ provider: ProviderRec; rootUuid: string }> {
  const byId = new Map(all.map((p) => [p.id, p]));
  const out: Array<{ provider: ProviderRec; rootUuid: string }> = [];
  for (const p of [...all].sort((a, b) => a.id - b.id)) {
    const root = p.rootId === null ? undefined : byId.get(p.rootId);
    if (root !== undefined) out.push({ provider: p, rootUuid: root.uuid });
  }
  return out;
}


interface AuditLookup {
  readonly providerById: ReadonlyMap<number, ProviderRec>;
  /** uuids of every compute node, live or soft-deleted. */
  readonly anyNodeUuids: ReadonlySet<string>;
  /** Live instances of every cell, by uuid. */
  readonly liveInstanceByUuid: ReadonlyMap<string, InstanceRec>;
  readonly liveNodeByUuid: ReadonlyMap<string, ComputeNodeRec>;
  readonly instancesOnNode: ReadonlyMap<string, readonly InstanceRec[]>;
  readonly migrationsOnNode: ReadonlyMap<string, readonly MigrationRec[]>;
  readonly consumerByUuid: ReadonlyMap<string, ConsumerRec>;
}

/**
 * Nova matches host AND node in SQL (InstanceList.get_by_host_and_node,
 * MigrationList.get_in_progress_by_host_and_node): the cell columns compare
 * case- and trailing-space-insensitively, and a NULL host matches only NULL
 * (SQLAlchemy turns `== None` into IS NULL).
 */
function indexForAudit(s: Snapshot): AuditLookup {
  // The first live node of a uuid wins, in cell order, as nova's scatter-gather takes one.
  const liveNodeByUuid = new Map<string, ComputeNodeRec>();
  for (const n of s.computeNodes) if (!n.deleted && n.uuid !== null && !liveNodeByUuid.has(n.uuid)) liveNodeByUuid.set(n.uuid, n);
  const instancesOnNode = new Map<string, InstanceRec[]>();
  for (const i of s.instances) pushTo(instancesOnNode, nodeKey(i.cellUuid, i.host, i.node), i);
  const migrationsOnNode = new Map<string, MigrationRec[]>();
  for (const m of s.migrations) {
    // NOT IN drops a NULL status in nova's query too.
    if (m.status === null || FINAL_MIGRATION_STATES.includes(m.status)) continue;
    const source = nodeKey(m.cellUuid, m.sourceCompute, m.sourceNode);
    const dest = nodeKey(m.cellUuid, m.destCompute, m.destNode);
    pushTo(migrationsOnNode, source, m);
    if (dest !== source) pushTo(migrationsOnNode, dest, m);
  }
  const p = s.placement;
  const consumerByUuid = new Map((p?.consumers ?? []).map((c) => [c.uuid, c]));
  const providerById = new Map((p?.providers ?? []).map((rp) => [rp.id, rp]));
  const anyNodeUuids = new Set(s.computeNodes.flatMap((n) => (n.uuid === null ? [] : [n.uuid])));
  const liveInstanceByUuid = new Map(s.instances.map((i) => [i.uuid, i]));
  return { providerById, anyNodeUuids, liveInstanceByUuid, liveNodeByUuid, instancesOnNode, migrationsOnNode, consumerByUuid };
}

/** Whether nova keeps this consumer on the node: one of its live instances or in-progress migrations (final states are already filtered out). */
function isRelatedConsumer(lookup: AuditLookup, node: ComputeNodeRec, consumerUuid: string): boolean {
  const key = nodeKey(node.cellUuid, node.host, node.hypervisorHostname);
  return (lookup.instancesOnNode.get(key) ?? []).some((i) => i.uuid === consumerUuid) || (lookup.migrationsOnNode.get(key) ?? []).some((m) => m.uuid === consumerUuid);
}
