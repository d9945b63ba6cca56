// Read what the host-mapping planners need (every cell: a host held in a cell
// that was not read would look stale) and plan.
import type { Deployment } from '../db/deployment-databases.js';
import { planPruneHostMappings, planRemapHostMappings } from '../domain/host-mapping-plans.js';
import type { Snapshot } from '../domain/model.js';
import type { Plan } from '../domain/plan.js';
import { checkScopeNames } from '../domain/plan-scope.js';
import { HOST_MAPPINGS_READ } from './read/recipes.js';
import { readSnapshot } from './read/snapshot.js';
import { resolveCellArgument } from './scope.js';

export interface HostMappingScope {
  /** A cell uuid or name (--cell; --cell_uuid gives a uuid). */
  readonly cell: string | undefined;
  readonly host: string | undefined;
}

/** The snapshot and the cell's uuid as cell_mappings spells it (from a uuid or a name); an unknown cell is refused before anything is read. */
async function readFor(deployment: Deployment, cellUuid: string | undefined): Promise<{ snapshot: Snapshot; cell: string | undefined }> {
  const cell = cellUuid === undefined ? undefined : await resolveCellArgument(deployment, cellUuid);
  return { snapshot: await readSnapshot(deployment, HOST_MAPPINGS_READ), cell };
}

export async function planHostMappingPrune(deployment: Deployment, scope: HostMappingScope): Promise<Plan> {
  const { snapshot, cell } = await readFor(deployment, scope.cell);
  if (scope.host !== undefined) checkScopeNames(snapshot, { host: scope.host });
  return planPruneHostMappings(snapshot, { ...(cell === undefined ? {} : { cellUuid: cell }), ...(scope.host === undefined ? {} : { host: scope.host }) });
}

export async function planHostMappingRemap(deployment: Deployment, cellUuid: string | undefined): Promise<Plan> {
  const { snapshot, cell } = await readFor(deployment, cellUuid);
  return planRemapHostMappings(snapshot, cell === undefined ? {} : { cellUuid: cell });
}
