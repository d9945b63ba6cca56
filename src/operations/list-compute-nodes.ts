// `compute_node list`: every live compute node with its own health. Placement
// is optional here: without a [placement_database] connection the provider
// columns say "unknown" instead of failing the listing.
import type { Deployment } from '../db/deployment-databases.js';
import { describeComputeNodes, type ComputeNodeHealth } from '../domain/node-health.js';
import type { IronicOrigin } from '../domain/model.js';
import type { IronicSource } from './read/ironic.js';
import { computeNodeListRead } from './read/recipes.js';
import { readSnapshot } from './read/snapshot.js';

export interface ListComputeNodesOptions {
  readonly host?: string;
  readonly cellUuid?: string;
  readonly ironic?: IronicSource;
  readonly progress?: (line: string) => void;
}

export async function listComputeNodes(deployment: Deployment, options: ListComputeNodesOptions): Promise<{ nodes: ComputeNodeHealth[]; ironicOrigin: IronicOrigin | undefined }> {
  const placementUrl = deployment.config.placementDatabaseConnection;
  const snapshot = await readSnapshot(deployment, computeNodeListRead(options.cellUuid, placementUrl !== undefined && placementUrl !== ''), {
    ...(options.ironic === undefined ? {} : { ironic: options.ironic }),
    ...(options.progress === undefined ? {} : { progress: options.progress }),
  });
  const nodes = describeComputeNodes(snapshot, {
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.cellUuid === undefined ? {} : { cellUuid: options.cellUuid }),
  });
  return { nodes, ironicOrigin: snapshot.ironicOrigin };
}
