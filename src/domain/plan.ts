// A plan is data: units of typed changes, each with the reason it exists and
// the values it expects to find. Planners (pure) build plans from a
// Snapshot; src/operations/apply-plan.ts applies them unit by unit (units
// with disjoint footprints side by side), each change as one
// compare-and-swap transaction in its own database.
import { assertNever } from '../errors.js';
import type { CellNamer } from './cell-names.js';

/** Which database a change writes. */
export type DbRef = { readonly db: 'api' } | { readonly db: 'placement' } | { readonly db: 'cell'; readonly cellUuid: string };

export interface AllocationPart {
  readonly resourceClassId: number;
  readonly resourceClass: string;
  readonly used: number;
}

export type Change =
  | {
      /** Nova's host-constrained soft delete (bug 1853009): deleted = id, deleted_at = now, mapped = 0, updated_at kept. */
      readonly kind: 'soft-delete-compute-node';
      readonly target: DbRef & { readonly db: 'cell' };
      readonly id: number;
      readonly uuid: string | null;
      readonly host: string;
      readonly hypervisorHostname: string | null;
    }
  | {
      /** Placement's provider delete: only without allocations and children; removes inventories, trait and aggregate links. */
      readonly kind: 'delete-provider';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly providerId: number;
      readonly uuid: string;
      readonly name: string | null;
      readonly generation: number;
    }
  | {
      /**
       * Remove one consumer's allocations from one provider. The provider's
       * generation is bumped (Placement's DELETE does not).
       * When the consumer keeps allocations elsewhere its generation is
       * bumped, and so is every provider left in its allocation set (as a PUT
       * of the rest would); when nothing remains the consumer row is deleted.
       */
      readonly kind: 'remove-provider-allocations';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly consumerUuid: string;
      readonly consumerGeneration: number;
      readonly providerId: number;
      readonly providerUuid: string;
      readonly allocations: readonly AllocationPart[];
    }
  | {
      /** Give a stale provider the live compute node's uuid, keeping everything it holds; generation + 1, and + 1 for each consumer with allocations on it. */
      readonly kind: 'rekey-provider';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly providerId: number;
      readonly fromUuid: string;
      readonly toUuid: string;
      readonly generation: number;
    }
  | {
      /**
       * Move one consumer's allocation rows from a stale provider to the
       * canonical one, as a PUT of its allocations would leave them: the
       * target provider's generation + 1, the consumer's + 1, and every other
       * provider the consumer keeps allocations on + 1. The source provider,
       * which only loses allocations, is not bumped (Placement, nova-facts §8.2).
       */
      readonly kind: 'move-allocations';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly consumerUuid: string;
      readonly consumerGeneration: number;
      readonly fromProviderId: number;
      readonly fromProviderUuid: string;
      readonly toProviderId: number;
      readonly toProviderUuid: string;
      readonly toGeneration: number;
      readonly allocations: readonly AllocationPart[];
      /** Why an over-capacity move is allowed (the in-use ironic node, src/domain/capacity.ts); null when it fits. */
      readonly capacityException: string | null;
    }
  | {
      /** Give a provider Nova's name for its compute node (hypervisor_hostname). Placement does not bump the generation on a rename. */
      readonly kind: 'rename-provider';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly providerId: number;
      readonly uuid: string;
      readonly fromName: string | null;
      readonly toName: string;
      readonly generation: number;
    }
  | {
      /**
       * Re-home a compute node onto another nova-compute service, as
       * ironic_compute_node_move does: host, service_id and updated_at; the
       * uuid (and so the provider and its allocations) stays. With `instance`,
       * the node's instance moves in the same transaction.
       */
      readonly kind: 'rehome-compute-node';
      readonly target: DbRef & { readonly db: 'cell' };
      readonly id: number;
      readonly uuid: string | null;
      readonly hypervisorHostname: string;
      readonly fromHost: string;
      readonly toHost: string;
      readonly toServiceId: number;
      /** The source service that must still be forced down when the write happens; null: not re-checked. */
      readonly forcedDownSourceServiceId: number | null;
      readonly instance: InstanceMove | null;
    }
  | {
      /**
       * Replace a consumer's allocations, as PUT /allocations/{consumer}
       * does (heal_allocations): the rows it holds (`replaces`) go, the new
       * ones are inserted, the consumer is created at generation 1 or bumped
       * and gets the project and user (get-or-created), and every provider
       * of the new set is bumped once. Placement's capacity rules are
       * re-checked under lock; `capacityException` states the one exception
       * (the in-use ironic node, src/domain/capacity.ts).
       */
      readonly kind: 'put-allocations';
      readonly target: DbRef & { readonly db: 'placement' };
      readonly consumerUuid: string;
      /** The consumer row's generation; null: no consumer row may exist. */
      readonly consumerGeneration: number | null;
      readonly projectExternalId: string;
      readonly userExternalId: string;
      readonly replaces: ReadonlyArray<{ readonly providerId: number; readonly resourceClassId: number; readonly used: number }>;
      readonly allocations: ReadonlyArray<AllocationPart & { readonly providerId: number; readonly providerUuid: string; readonly providerGeneration: number }>;
      readonly capacityException: string | null;
    }
  | {
      /**
       * Bring back a soft-deleted compute node (bug 1839560): deleted = 0,
       * deleted_at = NULL, id and uuid kept, as Nova's compute_node_create
       * restores the row whose uuid it collides with.
       */
      readonly kind: 'restore-compute-node';
      readonly target: DbRef & { readonly db: 'cell' };
      readonly id: number;
      readonly uuid: string;
      readonly host: string | null;
      readonly hypervisorHostname: string | null;
      /** The row's `deleted` value as planned (its id). */
      readonly deleted: number;
    }
  | {
      /**
       * Move an instance's host to its node's new host (instances.host; node
       * is unchanged, as in ironic_compute_node_move). With `computeNodeId`
       * (Nova 28.0.0+), instances.compute_id is set to that row in the same
       * transaction, as Nova's object layer insists; fromHost = toHost then
       * only re-links an instance whose compute_id names a retired duplicate.
       */
      readonly kind: 'move-instance';
      readonly target: DbRef & { readonly db: 'cell' };
      readonly id: number;
      readonly uuid: string;
      readonly node: string;
      readonly fromHost: string;
      readonly toHost: string;
      readonly computeNodeId?: number;
    }
  | {
      /**
       * Let go of a host in a cell before its mapping is deleted or moved
       * away: re-checks under lock that no live nova-compute service, compute
       * node or instance has the host there, then sets mapped = 0 on the
       * host's soft-deleted nodes that still say mapped (Zed keeps mapped = 1
       * on them, so a re-used name is never discovered: bug 2085135).
       */
      readonly kind: 'release-host-in-cell';
      readonly target: DbRef & { readonly db: 'cell' };
      readonly host: string;
      readonly deletedNodeIds: readonly number[];
    }
  | {
      /** Hard-delete one host mapping (API tables are not soft-deleted), compare-and-swap on its id, host and cell. */
      readonly kind: 'delete-host-mapping';
      readonly target: DbRef & { readonly db: 'api' };
      readonly id: number;
      readonly host: string;
      readonly cellId: number;
      readonly cellUuid: string;
    }
  | {
      /** Point one host mapping at another cell, compare-and-swap on the old cell id; updated_at = now. */
      readonly kind: 'remap-host-mapping';
      readonly target: DbRef & { readonly db: 'api' };
      readonly id: number;
      readonly host: string;
      readonly fromCellId: number;
      readonly fromCellUuid: string;
      readonly toCellId: number;
      readonly toCellUuid: string;
    }
  | {
      /** Set mapped = 1 (and updated_at, as compute_node_update does) on a host's live compute nodes, as discover_hosts would. */
      readonly kind: 'mark-host-nodes-mapped';
      readonly target: DbRef & { readonly db: 'cell' };
      readonly host: string;
      readonly nodeIds: readonly number[];
    };

/** The instance that moves with a re-homed compute node. */
export interface InstanceMove {
  readonly id: number;
  readonly uuid: string;
  readonly fromHost: string;
  /** Where the schema has instances.compute_id (Nova 28.0.0+): the compute node row it is set to, in the same transaction. */
  readonly computeNodeId?: number;
}

export interface PlannedChange {
  readonly change: Change;
  /** Why: one line for people. */
  readonly reason: string;
}

export interface Unit {
  /** Stable id within the plan, e.g. "orphan-node:cell1:42". */
  readonly id: string;
  /** One line: what this unit fixes. */
  readonly title: string;
  /** Applied in order; a change whose rows moved stops the unit (the rest is skipped). */
  readonly changes: readonly PlannedChange[];
  /**
   * Keys of every row the unit writes or locks, and of every value a later
   * unit's plan was computed from (a generation, a name). Units with
   * disjoint footprints may be applied at the same time; a unit waits for
   * every earlier unit it shares a key with. A unit without a footprint is
   * applied alone, after every earlier unit has finished.
   */
  readonly footprint?: readonly string[];
}

export interface Refusal {
  readonly subject: string;
  readonly reason: string;
  /** The command that can deal with it, when there is one. */
  readonly suggestion?: string;
}

export interface Plan {
  readonly command: string;
  readonly units: readonly Unit[];
  readonly refused: readonly Refusal[];
}

export function isEmptyPlan(plan: Plan): boolean {
  return plan.units.length === 0 && plan.refused.length === 0;
}

/** The database a change writes, as a key (grouping, lanes, footprints): by the cell's uuid. */
export function targetKey(target: DbRef): string {
  return target.db === 'cell' ? `cell ${target.cellUuid}` : target.db;
}

/** The database a change writes, for people: "api", "placement", "cell cell1" (cell-names.ts). */
export function describeTarget(target: DbRef, cellName: CellNamer): string {
  return target.db === 'cell' ? `cell ${cellName(target.cellUuid)}` : target.db;
}

/**
 * The footprint of a unit's changes (see Unit.footprint): the compute
 * nodes of each ironic node (by hypervisor_hostname, so every row of one
 * node is one key), instances, providers by id, uuid and name, and
 * consumers together with every provider they hold allocations on (a
 * consumer's allocation write bumps those providers' generations).
 */
export function footprintOfChanges(changes: readonly PlannedChange[], providersOfConsumer: (consumerUuid: string) => Iterable<number>): string[] {
  const keys = new Set<string>();
  const cellKey = (target: DbRef, what: string): string => `${targetKey(target)}:${what}`;
  const provider = (id: number, ...names: ReadonlyArray<string | null>): void => {
    keys.add(`placement:rp:${id}`);
    // Provider names are unique case-insensitively (MySQL's collation).
    for (const name of names) if (name !== null) keys.add(`placement:rp-name:${name.toLowerCase()}`);
  };
  const consumer = (uuid: string): void => {
    keys.add(`placement:consumer:${uuid}`);
    for (const id of providersOfConsumer(uuid)) keys.add(`placement:rp:${id}`);
  };
  for (const { change } of changes) {
    switch (change.kind) {
      case 'soft-delete-compute-node':
        keys.add(cellKey(change.target, `compute-node:${change.id}`));
        if (change.hypervisorHostname !== null) keys.add(cellKey(change.target, `hypervisor:${change.hypervisorHostname.toLowerCase()}`));
        break;
      case 'rehome-compute-node':
        keys.add(cellKey(change.target, `compute-node:${change.id}`));
        keys.add(cellKey(change.target, `hypervisor:${change.hypervisorHostname.toLowerCase()}`));
        if (change.instance !== null) keys.add(cellKey(change.target, `instance:${change.instance.id}`));
        break;
      case 'move-instance':
        keys.add(cellKey(change.target, `instance:${change.id}`));
        break;
      case 'delete-provider':
        provider(change.providerId, change.name);
        keys.add(`placement:rp-uuid:${change.uuid}`);
        break;
      case 'rename-provider':
        provider(change.providerId, change.fromName, change.toName);
        break;
      case 'rekey-provider':
        provider(change.providerId);
        keys.add(`placement:rp-uuid:${change.fromUuid}`);
        keys.add(`placement:rp-uuid:${change.toUuid}`);
        break;
      case 'remove-provider-allocations':
        provider(change.providerId);
        consumer(change.consumerUuid);
        break;
      case 'move-allocations':
        provider(change.fromProviderId);
        provider(change.toProviderId);
        consumer(change.consumerUuid);
        break;
      case 'release-host-in-cell':
      case 'mark-host-nodes-mapped':
        keys.add(cellKey(change.target, `host:${hostFootprint(change.host)}`));
        break;
      case 'delete-host-mapping':
      case 'remap-host-mapping':
        keys.add(`api:host-mapping:${hostFootprint(change.host)}`);
        break;
      case 'put-allocations':
        for (const a of change.allocations) provider(a.providerId);
        for (const a of change.replaces) provider(a.providerId);
        consumer(change.consumerUuid);
        keys.add(`placement:project:${change.projectExternalId}`);
        keys.add(`placement:user:${change.userExternalId}`);
        break;
      case 'restore-compute-node':
        keys.add(cellKey(change.target, `compute-node:${change.id}`));
        if (change.hypervisorHostname !== null) keys.add(cellKey(change.target, `hypervisor:${change.hypervisorHostname.toLowerCase()}`));
        break;
      default:
        return assertNever(change, 'change kind');
    }
  }
  return [...keys].sort();
}

/** Host names compare as Nova's utf8mb3_general_ci columns do (snapshot-index.ts hostKey). */
function hostFootprint(host: string): string {
  return host.replace(/ +$/, '').toLowerCase();
}
