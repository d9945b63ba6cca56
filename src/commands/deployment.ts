// Open the deployment named by the configuration for one command run.
import type { CommandContext } from '../cli/spec.js';
import { withDeployment, type Deployment } from '../db/deployment.js';

export async function useDeployment<T>(ctx: CommandContext, fn: (d: Deployment) => Promise<T>): Promise<T> {
  const config = ctx.loadConfig();
  return withDeployment(config, { apiPoolMax: config.reconcile.cellConcurrency + 1 }, fn);
}

export function printJson(ctx: CommandContext, doc: unknown): void {
  ctx.stdout.write(JSON.stringify(doc, null, 2) + '\n');
}
