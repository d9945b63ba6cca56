// cell_v2 delete_host with nova-manage's checks, in its order (nova-facts §2.2). Only
// live instances block; the host's live nodes get mapped = 0 in the cell
// first and the mapping is deleted last, so a crash in between leaves a state
// a re-run finishes.
import type { Deployment } from '../db/deployment-databases.js';
import { deleteHostMapping, findHostMapping } from '../db/api/host-mappings.js';
import { resetMappedForHost } from '../db/cell/compute-nodes.js';
import { countLiveInstancesOnHost } from '../db/cell/instances.js';
import { utcNowString } from '../db/time.js';

export type DeleteHostResult =
  | { readonly kind: 'deleted'; readonly host: string; readonly nodesUnmapped: number }
  | { readonly kind: 'cell-not-found'; readonly cellUuid: string }
  | { readonly kind: 'host-not-found'; readonly host: string }
  | { readonly kind: 'wrong-cell'; readonly host: string; readonly cellUuid: string; readonly mappedCellUuid: string }
  | { readonly kind: 'has-instances'; readonly host: string; readonly instances: number };

export async function deleteHost(deployment: Deployment, cellUuid: string, host: string): Promise<DeleteHostResult> {
  const cell = await deployment.cellMapping(cellUuid);
  if (cell === undefined) return { kind: 'cell-not-found', cellUuid };
  const api = await deployment.api();
  const mapping = await findHostMapping(api.knex, api.dialect, host);
  if (mapping === undefined) return { kind: 'host-not-found', host };
  if (mapping.cell_uuid !== cell.uuid) return { kind: 'wrong-cell', host, cellUuid, mappedCellUuid: mapping.cell_uuid };
  const cellDb = await deployment.cell(cell);
  // The cell rows are looked up by the host as the mapping stores it. On
  // MariaDB this is the same as nova's lookup by the given string (the cell
  // columns share host_mappings' utf8mb3_general_ci collation); on SQLite,
  // where only host_mappings emulates that collation, `--host COMPUTE-1`
  // would otherwise find compute-1's mapping but none of its instances, and
  // delete the mapping of a host that runs servers.
  const instances = await countLiveInstancesOnHost(cellDb.knex, mapping.host);
  if (instances > 0) return { kind: 'has-instances', host, instances };
  await deployment.assertWritable({ placement: false });
  const nodesUnmapped = await resetMappedForHost(cellDb.knex, mapping.host, utcNowString());
  await deleteHostMapping(api.knex, api.dialect, mapping.host);
  return { kind: 'deleted', host, nodesUnmapped };
}
