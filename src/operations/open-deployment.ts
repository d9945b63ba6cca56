// Opening the deployment (the API database, then each cell's and the
// placement database on first use) for one command run: commands reach the
// databases only through operations/.
import type { NovaConfig } from '../config/types.js';
import { withDeployment, type Deployment, type DeploymentOptions } from '../db/deployment-databases.js';

export type { Deployment } from '../db/deployment-databases.js';

/** One API connection per cell worker, plus one for the apply lock. */
export async function openDeployment<T>(config: NovaConfig, fn: (d: Deployment) => Promise<T>, report: Pick<DeploymentOptions, 'warn' | 'debug'> = {}): Promise<T> {
  return withDeployment(config, { apiPoolMax: config.reconcile.cellConcurrency + 1, ...report }, fn);
}
