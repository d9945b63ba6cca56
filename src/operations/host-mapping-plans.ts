// Read what the host-mapping planners need (every cell: a host held in a cell
// that was not read would look stale) and plan.
import type { Deployment } from '../db/deployment.js';
import { planPruneHostMappings, planRemapHostMappings } from '../domain/host-mapping-plans.js';
import type { Snapshot } from '../domain/model.js';
import type { Plan } from '../domain/plan.js';
import { readSnapshot, unknownCell } from './read-snapshot.js';

export interface HostMappingScope {
  readonly cellUuid: string | undefined;
  readonly host: string | undefined;
}

/** The snapshot and the cell's uuid as cell_mappings spells it; an unknown cell is refused before anything is read. */
async function readFor(deployment: Deployment, cellUuid: string | undefined): Promise<{ snapshot: Snapshot; cell: string | undefined }> {
  let cell: string | undefined;
  if (cellUuid !== undefined) {
    const mapping = await deployment.cellMapping(cellUuid);
    if (mapping === undefined) throw unknownCell(cellUuid);
    cell = mapping.uuid;
  }
  return { snapshot: await readSnapshot(deployment, { placement: false }), cell };
}

export async function planHostMappingPrune(deployment: Deployment, scope: HostMappingScope): Promise<Plan> {
  const { snapshot, cell } = await readFor(deployment, scope.cellUuid);
  return planPruneHostMappings(snapshot, { ...(cell === undefined ? {} : { cellUuid: cell }), ...(scope.host === undefined ? {} : { host: scope.host }) });
}

export async function planHostMappingRemap(deployment: Deployment, cellUuid: string | undefined): Promise<Plan> {
  const { snapshot, cell } = await readFor(deployment, cellUuid);
  return planRemapHostMappings(snapshot, cell === undefined ? {} : { cellUuid: cell });
}
