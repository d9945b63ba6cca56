// Open the deployment named by the configuration for one command run.
import type { JsonDocument } from '../cli/json-contract.js';
import { jsonDocument } from '../cli/json-contract.js';
import type { CommandContext } from '../cli/spec.js';
import { openDeployment, type Deployment } from '../operations/deployment.js';

export async function useDeployment<T>(ctx: CommandContext, fn: (d: Deployment) => Promise<T>): Promise<T> {
  return openDeployment(ctx.loadConfig(), fn);
}

/**
 * Every JSON document: schema_version first (schemas/<command>.schema.json
 * describe them; see jsonDocument), and `changed`, so Ansible's changed_when
 * has one key to read whatever the command.
 */
export function printJson(ctx: CommandContext, doc: JsonDocument): void {
  ctx.stdout.write(JSON.stringify(jsonDocument(doc), null, 2) + '\n');
}
