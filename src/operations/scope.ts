// Resolving the scope options (src/cli/scope.ts) against the deployment:
// --cell's name to the cell's uuid, and --host/--node/--resource_provider
// checked to name something that exists.
import type { Deployment } from '../db/deployment-databases.js';
import type { Snapshot } from '../domain/model.js';
import { checkScopeNames, resolveCell, type PlanScope } from '../domain/plan-scope.js';

/** The scope options as given (syntax already checked). */
export interface ScopeArguments {
  readonly cell?: string;
  readonly host?: string;
  readonly nodes?: readonly string[];
  readonly providers?: readonly string[];
}

/** The scope against a snapshot of every cell. */
export function resolveScope(snapshot: Snapshot, args: ScopeArguments): PlanScope {
  const scope: PlanScope = {
    ...(args.cell === undefined ? {} : { cellUuid: resolveCell(snapshot.cells, args.cell) }),
    ...(args.host === undefined ? {} : { host: args.host }),
    ...(args.nodes === undefined ? {} : { nodes: args.nodes }),
    ...(args.providers === undefined ? {} : { providers: args.providers }),
  };
  checkScopeNames(snapshot, scope);
  return scope;
}

/** --cell (uuid or name) to the cell's uuid, from cell_mappings, before any cell is read. */
export async function resolveCellArgument(deployment: Deployment, value: string, option = '--cell'): Promise<string> {
  return resolveCell(await deployment.cellMappings(), value, option);
}
