// Compare-and-swap writes of the ironic re-homing in a cell database:
// moving a compute node onto another nova-compute service (with its instance
// when asked, in the same transaction) and moving an instance's host. They
// are the writes of nova-manage's ironic_compute_node_move (nova-facts §4): host,
// service_id and updated_at of the compute node; host and updated_at of the
// instance; instances.node and the node's uuid stay, so placement is
// untouched. Each re-reads its rows under lock and refuses with CasConflict
// when they are not what the plan saw. The services are only read-locked:
// they must not change until the commit, but several nodes can be re-homed
// onto one service at the same time.
import type { Knex } from 'knex';
import type { Change } from '../../domain/plan.js';
import type { Dialect } from '../connect.js';
import { sameHost } from './host-release-writes.js';
import { CasConflict, selectForShare, selectForUpdate, updatedImage, type Row, type RowImage } from '../row-images.js';

/** What the plan expects, exactly the change's own fields. */
export type RehomeNodeExpect = Omit<Extract<Change, { kind: 'rehome-compute-node' }>, 'kind' | 'target'>;

export async function rehomeComputeNode(trx: Knex.Transaction, dialect: Dialect, expect: RehomeNodeExpect, now: string): Promise<RowImage[]> {
  const [before] = await selectForUpdate(trx, dialect, 'compute_nodes', { id: expect.id });
  if (before === undefined) throw new CasConflict(`compute node ${expect.id} no longer exists`);
  if (Number(before['deleted']) !== 0) throw new CasConflict(`compute node ${expect.id} was deleted`);
  if (expect.uuid !== null && before['uuid'] !== expect.uuid) throw new CasConflict(`compute node ${expect.id} changed uuid`);
  if (before['host'] !== expect.fromHost)
    throw new CasConflict(`compute node ${expect.uuid ?? expect.id} moved from host ${expect.fromHost} to ${String(before['host'])} (re-homed by nova-compute?)`);
  if (before['hypervisor_hostname'] !== expect.hypervisorHostname) throw new CasConflict(`compute node ${expect.uuid ?? expect.id} changed hypervisor_hostname`);

  const [dest] = await selectForShare(trx, dialect, 'services', { id: expect.toServiceId });
  if (dest === undefined || Number(dest['deleted']) !== 0 || dest['binary'] !== 'nova-compute' || dest['host'] !== expect.toHost)
    throw new CasConflict(`nova-compute service ${expect.toHost} (id ${expect.toServiceId}) is gone or changed`);
  if (Number(dest['forced_down']) !== 0) throw new CasConflict(`destination nova-compute service ${expect.toHost} is now forced down`);
  if (expect.forcedDownSourceServiceId !== null) {
    const [source] = await selectForShare(trx, dialect, 'services', { id: expect.forcedDownSourceServiceId });
    if (source !== undefined && Number(source['deleted']) === 0 && Number(source['forced_down']) === 0)
      throw new CasConflict(`source nova-compute service ${String(source['host'])} is no longer forced down`);
  }
  // uniq_compute_nodes0host0hypervisor_hostname0deleted: a live row of the node on the destination must be retired first.
  const clash = await trx('compute_nodes').select('id').where({ host: expect.toHost, hypervisor_hostname: expect.hypervisorHostname, deleted: 0 }).andWhereNot('id', expect.id).first();
  if (clash !== undefined) throw new CasConflict(`host ${expect.toHost} already has a live compute node for ${expect.hypervisorHostname}`);

  let instanceBefore: Row | undefined;
  if (expect.instance !== null) instanceBefore = await lockInstance(trx, dialect, { ...expect.instance, node: expect.hypervisorHostname });

  const values: Record<string, string | number> = { host: expect.toHost, updated_at: now };
  // service_id exists since Liberty; Zed never fills it, master (28.0.0+) does on a move (nova-facts §5.4).
  if ('service_id' in before) values['service_id'] = expect.toServiceId;
  const n = await trx('compute_nodes').update(values).where({ id: expect.id, host: expect.fromHost, deleted: 0 });
  if (n !== 1) throw new CasConflict(`compute node ${expect.uuid ?? expect.id} changed while being re-homed`);
  const images: RowImage[] = [{ table: 'compute_nodes', key: { id: expect.id }, before, after: updatedImage(before, values) }];
  if (expect.instance !== null && instanceBefore !== undefined)
    images.push(await writeInstanceHost(trx, dialect, instanceBefore, expect.instance.fromHost, expect.toHost, expect.instance.computeNodeId, now));
  return images;
}

export interface MoveInstanceExpect {
  readonly id: number;
  readonly uuid: string;
  readonly node: string;
  readonly fromHost: string;
  readonly toHost: string;
  readonly computeNodeId?: number;
}

export async function moveInstance(trx: Knex.Transaction, dialect: Dialect, expect: MoveInstanceExpect, now: string): Promise<RowImage[]> {
  const before = await lockInstance(trx, dialect, expect);
  return [await writeInstanceHost(trx, dialect, before, expect.fromHost, expect.toHost, expect.computeNodeId, now)];
}

async function lockInstance(trx: Knex.Transaction, dialect: Dialect, expect: { id: number; uuid: string; node: string; fromHost: string }): Promise<Row> {
  const [row] = await selectForUpdate(trx, dialect, 'instances', { id: expect.id });
  if (row === undefined || row['uuid'] !== expect.uuid) throw new CasConflict(`instance ${expect.uuid} no longer exists`);
  if (Number(row['deleted']) !== 0) throw new CasConflict(`instance ${expect.uuid} was deleted`);
  if (row['host'] !== expect.fromHost) throw new CasConflict(`instance ${expect.uuid} moved from host ${expect.fromHost} to ${String(row['host'])}`);
  if (row['node'] !== expect.node) throw new CasConflict(`instance ${expect.uuid} moved from node ${expect.node} to ${String(row['node'])}`);
  return row;
}

async function writeInstanceHost(
  trx: Knex.Transaction,
  dialect: Dialect,
  before: Row,
  fromHost: string,
  toHost: string,
  computeNodeId: number | undefined,
  now: string,
): Promise<RowImage> {
  const id = Number(before['id']);
  const values: Record<string, string | number> = { host: toHost, updated_at: now };
  // Nova 28.0.0+ links an instance to its compute node row; a save that changes the node must set it too.
  if (computeNodeId !== undefined && 'compute_id' in before) {
    const [node] = await selectForShare(trx, dialect, 'compute_nodes', { id: computeNodeId });
    if (node === undefined || Number(node['deleted']) !== 0 || !sameHost(node['host'], toHost))
      throw new CasConflict(`compute node ${computeNodeId}, which instance ${String(before['uuid'])} is to be linked to, is gone or not on ${toHost}`);
    values['compute_id'] = computeNodeId;
  }
  const n = await trx('instances').update(values).where({ id, host: fromHost, deleted: 0 });
  if (n !== 1) throw new CasConflict(`instance ${String(before['uuid'])} changed while being moved`);
  return { table: 'instances', key: { id }, before, after: updatedImage(before, values) };
}
