// Whether a change's target state already holds: another
// run, nova, or an operator got there first. A change whose compare-and-swap
// missed is then "already done", not "skipped, re-run to finish" (a re-run
// would find nothing to do). Plain reads, after the change's own
// transaction rolled back.
import type { Knex } from 'knex';
import type { Change } from '../domain/plan.js';
import { assertNever } from '../errors.js';

export async function changeAlreadyDone(knex: Knex, change: Change): Promise<boolean> {
  const count = async (q: Knex.QueryBuilder): Promise<number> => Number(((await q.count({ n: '*' }).first()) as { n?: unknown } | undefined)?.n ?? 0);
  switch (change.kind) {
    case 'soft-delete-compute-node': {
      const row = (await knex('compute_nodes').select('deleted').where({ id: change.id }).first()) as { deleted: unknown } | undefined;
      return row === undefined || Number(row.deleted) !== 0;
    }
    case 'delete-provider':
      return (await count(knex('resource_providers').where({ uuid: change.uuid }))) === 0 && (await count(knex('resource_providers').where({ id: change.providerId }))) === 0;
    case 'remove-provider-allocations':
      return (await count(knex('allocations').where({ consumer_id: change.consumerUuid, resource_provider_id: change.providerId }))) === 0;
    case 'rekey-provider': {
      const row = (await knex('resource_providers').select('uuid').where({ id: change.providerId }).first()) as { uuid: unknown } | undefined;
      return row?.uuid === change.toUuid;
    }
    case 'move-allocations':
      return (
        (await count(knex('allocations').where({ consumer_id: change.consumerUuid, resource_provider_id: change.fromProviderId }))) === 0 &&
        (await count(knex('allocations').where({ consumer_id: change.consumerUuid, resource_provider_id: change.toProviderId }))) > 0
      );
    case 'rename-provider': {
      const row = (await knex('resource_providers').select('name').where({ id: change.providerId }).first()) as { name: unknown } | undefined;
      return row?.name === change.toName;
    }
    case 'rehome-compute-node': {
      const row = (await knex('compute_nodes').select('host', 'deleted').where({ id: change.id }).first()) as { host: unknown; deleted: unknown } | undefined;
      if (row === undefined || Number(row.deleted) !== 0 || row.host !== change.toHost) return false;
      if (change.instance === null) return true;
      // The instance moves in the same transaction: the node alone on the new host is not the target state.
      const inst = (await knex('instances').select('host').where({ id: change.instance.id }).first()) as { host: unknown } | undefined;
      return inst?.host === change.toHost;
    }
    case 'move-instance': {
      const row = (await knex('instances').select('*').where({ id: change.id }).first()) as Record<string, unknown> | undefined;
      if (row === undefined || Number(row['deleted']) !== 0 || row['host'] !== change.toHost) return false;
      return change.computeNodeId === undefined || !('compute_id' in row) || Number(row['compute_id']) === change.computeNodeId;
    }
    case 'delete-host-mapping':
      return (await count(knex('host_mappings').where({ host: change.host }))) === 0;
    case 'remap-host-mapping':
      return (await count(knex('host_mappings').where({ host: change.host, cell_id: change.toCellId }))) > 0;
    case 'mark-host-nodes-mapped':
      return change.nodeIds.length > 0 && (await count(knex('compute_nodes').whereIn('id', [...change.nodeIds]).whereNot('mapped', 1))) === 0;
    case 'restore-compute-node': {
      const row = (await knex('compute_nodes').select('deleted').where({ id: change.id }).first()) as { deleted: unknown } | undefined;
      return row !== undefined && Number(row.deleted) === 0;
    }
    case 'put-allocations':
      // Whether another writer's allocations equal ours cannot be told from the rows alone: re-plan instead.
      return false;
    case 'release-host-in-cell':
      // Its compare-and-swap also guards against a live service or instance coming back: never "done" by someone else.
      return false;
    default:
      return assertNever(change, 'change kind');
  }
}
