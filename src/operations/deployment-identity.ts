// The identity a journal is bound to (journal.ts sameDeployment): the API
// database's name and the cell mappings with their creation times, read from
// the API database itself, so that the same deployment reached through
// another Galera node, a VIP or another host name is recognised, and the
// address the writer used is kept only for messages.
import { releaseJson } from '../domain/nova-release.js';
import { resolve } from 'node:path';
import { listCellAnchors } from '../db/api/cell-mappings.js';
import type { Deployment } from '../db/deployment-databases.js';
import type { DeploymentIdentity } from './journal.js';

export async function readDeploymentIdentity(deployment: Deployment): Promise<DeploymentIdentity> {
  const api = await deployment.api();
  const anchors = await listCellAnchors(api.knex);
  const apiDatabase = api.target.kind === 'sqlite' ? resolve(api.target.filename) : (api.target.database ?? '');
  return {
    api: api.target.display,
    cells: anchors.map((a) => a.uuid),
    apiDatabase,
    cellsCreatedAt: Object.fromEntries(anchors.map((a) => [a.uuid, a.createdAt])),
    // The databases read so far (a write has checked them all first: assertWritable).
    release: releaseJson(deployment.openedRelease()),
  };
}
