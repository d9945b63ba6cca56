// The plain-data picture of a deployment that every planner and the audit
// work from. src/operations/read/snapshot.ts fills it from the databases (in
// batches, one query per table and cell); the domain only reads it. All
// timestamps are naive-UTC strings as Nova stores them; ids are numbers.
import type { DeploymentRelease } from './nova-release.js';

export interface CellRec {
  readonly id: number;
  readonly uuid: string;
  readonly name: string | null;
  readonly isCell0: boolean;
}

export interface HostMappingRec {
  readonly id: number;
  readonly host: string;
  readonly cellUuid: string;
}

export interface ServiceRec {
  readonly cellUuid: string;
  readonly id: number;
  readonly uuid: string | null;
  readonly host: string | null;
  readonly binary: string;
  readonly disabled: boolean;
  readonly forcedDown: boolean;
  readonly lastSeenUp: string | null;
  readonly createdAt: string | null;
  readonly updatedAt: string | null;
  /** Soft-deleted services are read too (deleted != 0), so "service deleted" can be told from "never existed". */
  readonly deleted: boolean;
}

export interface ComputeNodeRec {
  readonly cellUuid: string;
  readonly id: number;
  readonly uuid: string | null;
  readonly host: string | null;
  readonly hypervisorHostname: string | null;
  readonly hypervisorType: string;
  readonly serviceId: number | null;
  readonly mapped: number | null;
  readonly createdAt: string | null;
  readonly updatedAt: string | null;
  readonly deleted: boolean;
}

export interface InstanceRec {
  readonly cellUuid: string;
  readonly id: number;
  readonly uuid: string;
  readonly host: string | null;
  readonly node: string | null;
  readonly vmState: string | null;
  readonly taskState: string | null;
  /** instances.compute_id (Nova 28.0.0+): the compute_nodes row Nova links it to; absent on older schemas. */
  readonly computeId?: number | null;
}

/** Migrations whose status is not final (nova's placement audit list). */
export interface MigrationRec {
  readonly cellUuid: string;
  readonly id: number;
  readonly uuid: string | null;
  readonly instanceUuid: string | null;
  readonly sourceCompute: string | null;
  readonly destCompute: string | null;
  readonly sourceNode: string | null;
  readonly destNode: string | null;
  readonly status: string | null;
  readonly migrationType: string | null;
}

export interface ProviderRec {
  readonly id: number;
  readonly uuid: string;
  readonly name: string | null;
  readonly generation: number;
  readonly rootId: number | null;
  readonly parentId: number | null;
  readonly traits: readonly string[];
  readonly aggregateCount: number;
}

export interface InventoryRec {
  readonly id: number;
  readonly providerId: number;
  readonly resourceClassId: number;
  readonly resourceClass: string;
  readonly total: number;
  readonly reserved: number;
  readonly minUnit: number;
  readonly maxUnit: number;
  readonly stepSize: number;
  readonly allocationRatio: number;
}

export interface AllocationRec {
  readonly id: number;
  readonly providerId: number;
  readonly consumerUuid: string;
  readonly resourceClassId: number;
  readonly resourceClass: string;
  readonly used: number;
}

export interface ConsumerRec {
  readonly id: number;
  readonly uuid: string;
  readonly generation: number;
  readonly projectId: number;
  readonly userId: number;
}

/** From the Ironic API ([ironic] in nova.conf) or --ironic-nodes FILE; absent when no ironic truth was given. */
export interface IronicNodeRec {
  readonly uuid: string;
  readonly instanceUuid: string | null;
  readonly maintenance: boolean | null;
  readonly provisionState: string | null;
  readonly conductorGroup: string | null;
  /** Ironic's shard (API 1.82+); absent when the source does not say. */
  readonly shard?: string | null;
}

export interface Snapshot {
  /** Epoch ms at which the snapshot was read (liveness is judged against it). */
  readonly takenAt: number;
  readonly serviceDownTime: number;
  readonly cells: readonly CellRec[];
  readonly hostMappings: readonly HostMappingRec[];
  readonly services: readonly ServiceRec[];
  /** Live compute nodes, plus soft-deleted ones (deleted = true) for provider ownership. */
  readonly computeNodes: readonly ComputeNodeRec[];
  /** Live instances only; with instanceScope, only those it names. */
  readonly instances: readonly InstanceRec[];
  /**
   * Set when the instances were read only for a planner's scope
   * (readForPlan's PlanReadRecipe.instanceHostsOf): those on the hosts it
   * names, cell by cell, and those whose uuid is a consumer of the scoped
   * placement read. The index refuses to answer for any other host or uuid
   * (snapshot-index.ts), as for placement's scope.
   */
  readonly instanceScope?: InstanceScope;
  /**
   * 'orphan-candidates': the compute nodes are only the live ones that may
   * be orphans (db/cell/snapshot-reads.ts readOrphanCandidateNodes), and the
   * services only those on their hosts; the index answers for no other node
   * or host (snapshot-index.ts). compute_node cleanup_orphans' read.
   * 'no-services': every compute node, but no service and no host mapping
   * (placement cleanup_providers judges providers by their nodes only); the
   * index answers for no service.
   * 'stale-provider-candidates': no service and no host mapping either, and
   * of the compute nodes only the soft-deleted ones and the live ones named
   * in nodeKeys.namesRead; the uuids and names of every live node are in
   * nodeKeys (placement cleanup_providers' read on MySQL). The index tells
   * whether a uuid is a live node's for any uuid, but gives the record, or
   * the live nodes of a name, only for what was read. With either partial
   * read, the index's liveNodes holds only the live nodes read: a planner
   * that walks every live node reads whole (no nodeScope).
   */
  readonly nodeScope?: 'orphan-candidates' | 'no-services' | 'stale-provider-candidates';
  /**
   * With nodeScope 'orphan-candidates' and --host or --node: the names that
   * were looked up in every table checkScopeNames searches (the folded
   * host, the folded node values), each with whether a row has it
   * (operations/read/orphan-candidates.ts probeScopeNames). The partial read holds too few rows
   * to tell a name from a typo by itself.
   */
  readonly scopeNames?: ScopeNames;
  /** With nodeScope 'stale-provider-candidates': what was read of every compute node. */
  readonly nodeKeys?: NodeKeys;
  /**
   * With nodeScope 'no-services' or 'stale-provider-candidates' (no service
   * read): the cells that have a live nova-compute service (counted), which
   * the judgement of a soft-deleted node that comes back needs
   * (returning-node.ts).
   */
  readonly computeServiceCells?: readonly string[];
  /** Active migrations only. */
  readonly migrations: readonly MigrationRec[];
  /** Undefined when placement was not read (commands that do not need it). */
  readonly placement: PlacementSnapshot | undefined;
  readonly ironicNodes: readonly IronicNodeRec[] | undefined;
  /** Where ironicNodes came from, for the plan and the audit to name; absent without ironic truth. */
  readonly ironicOrigin?: IronicOrigin;
  /** What the databases' alembic heads say of the release (operations/read/snapshot.ts); absent in snapshots built by hand (tests). */
  readonly release?: DeploymentRelease;
  /** Which nova-compute hosts serve which conductor group ([nova_reconcile] ironic_partitions, [ironic] partition_key); absent when not described. */
  readonly ironicPartitions?: readonly IronicPartition[];
  /** The given nova.conf's [ironic] shard and [DEFAULT] host (lower-cased); absent when it sets no shard. */
  readonly ironicShard?: { readonly shard: string; readonly host: string | undefined };
}

export interface IronicOrigin {
  readonly kind: 'api' | 'file';
  /** "--ironic-nodes FILE" or "the Ironic API at URL" (no credentials). */
  readonly label: string;
  /** The file or the endpoint. */
  readonly location: string;
  /** How many nodes the complete list held. */
  readonly nodes: number;
}

export interface PlacementSnapshot {
  readonly providers: readonly ProviderRec[];
  readonly inventories: readonly InventoryRec[];
  readonly allocations: readonly AllocationRec[];
  readonly consumers: readonly ConsumerRec[];
  /**
   * True when the allocations and consumers were not read (left empty) and
   * the inventories are only those of root providers without the
   * COMPUTE_NODE trait: the audit's read, which streams the allocations
   * (db/placement/snapshot-reads.ts). Planners never get such a snapshot.
   */
  readonly streamed?: true;
  /**
   * Set when the allocations, consumers and inventories were read only for a
   * planner's scope (readPlacementScope): every provider is there, but the
   * allocations and inventories only of `scope.providerIds` (and the
   * inventories of root providers without COMPUTE_NODE, the audit's), and the
   * consumer rows and all allocations only of `scope.consumerUuids`, the
   * consumers with an allocation on one of those providers. The index refuses
   * to answer for any other (snapshot-index.ts), so a planner that looked
   * beyond its scope fails instead of planning on rows it never saw.
   */
  readonly scope?: PlacementScope;
  /**
   * Set when the providers were read only by these uuids, with their trees
   * (readProvidersByUuid: compute_node cleanup_orphans names its providers
   * by its candidate nodes' uuids), and by these ids (the providers their
   * consumers are allocated on elsewhere: readProvidersById): the index
   * answers for no other provider by uuid, id or name.
   */
  readonly named?: {
    readonly uuids: ReadonlySet<string>;
    readonly ids: ReadonlySet<number>;
    /** The inventories of the root providers read that do not carry COMPUTE_NODE were read too (withRootInventories), as the 'audit' read holds them. */
    readonly rootInventories?: true;
  };
}

/** What a scoped placement read holds in full (PlacementSnapshot.scope). */
export interface PlacementScope {
  readonly providerIds: ReadonlySet<number>;
  readonly consumerUuids: ReadonlySet<string>;
}

/** Which scope names exist anywhere in the deployment (Snapshot.scopeNames), keyed by hostKey. */
export interface ScopeNames {
  /** The --host asked about, folded, and whether a service, compute node, host mapping or live instance has it. */
  readonly host?: { readonly key: string; readonly known: boolean };
  /** Each --node asked about, folded, and whether a compute node (live or soft-deleted) has it as uuid or hypervisor_hostname. */
  readonly nodes?: ReadonlyMap<string, boolean>;
}

/** What a read of the stale-provider candidates holds of every compute node (Snapshot.nodeKeys). */
export interface NodeKeys {
  /** The uuid of every live compute node, in every cell. */
  readonly liveUuids: ReadonlySet<string>;
  /** The lower-cased hypervisor_hostname of every compute node, live or soft-deleted. */
  readonly names: ReadonlySet<string>;
  /** The lower-cased names whose live compute nodes were all read (Snapshot.computeNodes). */
  readonly namesRead: ReadonlySet<string>;
}

/** What a scoped instance read holds in full (Snapshot.instanceScope). */
export interface InstanceScope {
  /** cell uuid -> the hosts (hostKey) whose live instances were all read. */
  readonly hostsByCell: ReadonlyMap<string, ReadonlySet<string>>;
  /** Uuids whose live instance, in any cell, was read if it exists. */
  readonly uuids: ReadonlySet<string>;
}

/** Nova's final migration states; every other status is "in progress" (nova-facts §3.1). */
export const FINAL_MIGRATION_STATES: readonly string[] = ['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled', 'done'];

/** Trait of sharing providers: never touched by cleanups. */
export const SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE';
/** Trait Nova sets on every compute-node provider it reports. */
export const COMPUTE_NODE_TRAIT = 'COMPUTE_NODE';

/** One conductor group and the nova-compute hosts that serve it ([nova_reconcile] ironic_partitions; domain/partitions.ts). */
export interface IronicPartition {
  readonly group: string;
  /** Lower-cased host names, as Nova lower-cases them for the ring. */
  readonly hosts: readonly string[];
}
