// The ownership guard of an apply unit (issue 13 item 2): before a unit
// writes anything in placement, the cell rows its cell changes depend on are
// locked and checked against the plan, in a cell transaction that stays open
// until the unit's cell changes are written in it. A compute node that
// nova-compute on another host took over meanwhile (the ironic hash ring
// moving a node, bug 1853009's race) is then seen BEFORE its provider is
// touched, and the unit changes nothing. On MySQL the rows are held with
// SELECT ... FOR UPDATE; on SQLite the transaction takes the cell file's
// write lock (RESERVED) at once, so no other writer can commit to the cell
// until the unit is done.
import type { Knex } from 'knex';
import type { Change } from '../../domain/plan.js';
import type { Dialect } from '../connect.js';
import { CasConflict, selectForUpdate } from '../row-images.js';

type CellChange = Extract<Change, { target: { db: 'cell' } }>;

/** Take the cell file's write lock now (SQLite); a no-op statement that matches no row. */
export async function takeCellWriteLock(trx: Knex.Transaction, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') await trx.raw('UPDATE compute_nodes SET id = id WHERE 1 = 0');
}

/**
 * Lock and check the row a cell change owns: the compute node (its host,
 * uuid and that it is live) or the instance. Throws CasConflict with
 * "ownership changed: ..." when it is no longer what the plan saw.
 * `seen` holds the rows already guarded for an earlier change of the same
 * unit, whose expectations may depend on that earlier change; they are not
 * checked twice.
 */
export async function guardCellChange(trx: Knex.Transaction, dialect: Dialect, change: CellChange, seen: Set<string>): Promise<void> {
  const once = (key: string): boolean => {
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  switch (change.kind) {
    case 'soft-delete-compute-node':
      if (once(`compute_nodes:${change.id}`)) await guardNode(trx, dialect, change.id, change.uuid, change.host);
      return;
    case 'rehome-compute-node':
      if (once(`compute_nodes:${change.id}`)) await guardNode(trx, dialect, change.id, change.uuid, change.fromHost);
      if (change.instance !== null && once(`instances:${change.instance.id}`)) await guardInstance(trx, dialect, change.instance.id, change.instance.uuid, change.instance.fromHost);
      return;
    case 'move-instance':
      if (once(`instances:${change.id}`)) await guardInstance(trx, dialect, change.id, change.uuid, change.fromHost);
      return;
  }
}

async function guardNode(trx: Knex.Transaction, dialect: Dialect, id: number, uuid: string | null, host: string): Promise<void> {
  const [row] = await selectForUpdate(trx, dialect, 'compute_nodes', { id });
  const name = uuid ?? String(id);
  if (row === undefined) throw new CasConflict(`ownership changed: compute node ${name} no longer exists`);
  if (Number(row['deleted']) !== 0) throw new CasConflict(`ownership changed: compute node ${name} was deleted by someone else`);
  if (uuid !== null && row['uuid'] !== uuid) throw new CasConflict(`ownership changed: compute node ${id} now has uuid ${String(row['uuid'])}`);
  if (row['host'] !== host) throw new CasConflict(`ownership changed: compute node ${name} is now on host ${String(row['host'])}, not ${host}`);
}

async function guardInstance(trx: Knex.Transaction, dialect: Dialect, id: number, uuid: string, host: string): Promise<void> {
  const [row] = await selectForUpdate(trx, dialect, 'instances', { id });
  if (row === undefined || row['uuid'] !== uuid) throw new CasConflict(`ownership changed: instance ${uuid} no longer exists`);
  if (Number(row['deleted']) !== 0) throw new CasConflict(`ownership changed: instance ${uuid} was deleted`);
  if (row['host'] !== host) throw new CasConflict(`ownership changed: instance ${uuid} is now on host ${String(row['host'])}, not ${host}`);
}
