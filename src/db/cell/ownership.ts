// The ownership guard of an apply unit: before a unit
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
import { CasConflict, lockedSelect, type Row } from '../row-images.js';
import { runStatements } from '../statement-batch.js';

type CellChange = Extract<Change, { target: { db: 'cell' } }>;

/** Take the cell file's write lock now (SQLite); a no-op statement that matches no row. */
export async function takeCellWriteLock(trx: Knex.Transaction, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') await trx.raw('UPDATE compute_nodes SET id = id WHERE 1 = 0');
}

/**
 * Lock and check the rows cell changes own: each compute node (its host,
 * uuid and that it is live) or instance, all in one round trip
 * (statement-batch.ts). Throws CasConflict with "ownership changed: ..." for
 * the first that is no longer what the plan saw. `seen` holds the rows
 * already guarded for an earlier change of the same unit, whose
 * expectations may depend on that earlier change; they are not checked
 * twice. Each list in `units` is one unit's changes, with a `seen` of its
 * own (an apply batch guards several units at once).
 */
export async function guardCellChanges(trx: Knex.Transaction, dialect: Dialect, units: ReadonlyArray<readonly CellChange[]>): Promise<void> {
  const guards: Guard[] = [];
  for (const changes of units) {
    const seen = new Set<string>();
    for (const change of changes) guards.push(...guardsOf(change, seen));
  }
  if (guards.length === 0) return;
  const read = await runStatements(
    trx,
    guards.map((g) => lockedSelect(trx, dialect, g.table, { id: g.id })),
  );
  guards.forEach((g, i) => g.check(read.rows(i)[0]));
}

/** One row a change owns: which, and how to check what the lock read. */
interface Guard {
  readonly table: 'compute_nodes' | 'instances';
  readonly id: number;
  readonly check: (row: Row | undefined) => void;
}

function guardsOf(change: CellChange, seen: Set<string>): Guard[] {
  const once = (key: string): boolean => {
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  const out: Guard[] = [];
  switch (change.kind) {
    case 'soft-delete-compute-node':
      if (once(`compute_nodes:${change.id}`)) out.push(nodeGuard(change.id, change.uuid, change.host));
      break;
    case 'rehome-compute-node':
      if (once(`compute_nodes:${change.id}`)) out.push(nodeGuard(change.id, change.uuid, change.fromHost));
      if (change.instance !== null && once(`instances:${change.instance.id}`)) out.push(instanceGuard(change.instance.id, change.instance.uuid, change.instance.fromHost));
      break;
    case 'move-instance':
      if (once(`instances:${change.id}`)) out.push(instanceGuard(change.id, change.uuid, change.fromHost));
      break;
  }
  return out;
}

function nodeGuard(id: number, uuid: string | null, host: string): Guard {
  const name = uuid ?? String(id);
  return {
    table: 'compute_nodes',
    id,
    check: (row) => {
      if (row === undefined) throw new CasConflict(`ownership changed: compute node ${name} no longer exists`);
      if (Number(row['deleted']) !== 0) throw new CasConflict(`ownership changed: compute node ${name} was deleted by someone else`);
      if (uuid !== null && row['uuid'] !== uuid) throw new CasConflict(`ownership changed: compute node ${id} now has uuid ${String(row['uuid'])}`);
      if (row['host'] !== host) throw new CasConflict(`ownership changed: compute node ${name} is now on host ${String(row['host'])}, not ${host}`);
    },
  };
}

function instanceGuard(id: number, uuid: string, host: string): Guard {
  return {
    table: 'instances',
    id,
    check: (row) => {
      if (row === undefined || row['uuid'] !== uuid) throw new CasConflict(`ownership changed: instance ${uuid} no longer exists`);
      if (Number(row['deleted']) !== 0) throw new CasConflict(`ownership changed: instance ${uuid} was deleted`);
      if (row['host'] !== host) throw new CasConflict(`ownership changed: instance ${uuid} is now on host ${String(row['host'])}, not ${host}`);
    },
  };
}

/**
 * What the ownership guard would say of these changes now, read without a
 * lock: the "ownership changed: ..." of the first row that is no longer what
 * the plan saw, or undefined. For a reviewed unit that planning no longer
 * has (plan-review.ts), so that it names the new owner as a unit that lost
 * the race during the apply does.
 */
export async function describeOwnershipChange(knex: Knex, cellUuid: string, changes: readonly Change[]): Promise<string | undefined> {
  const seen = new Set<string>();
  const mine = changes.filter((c): c is CellChange => c.target.db === 'cell' && c.target.cellUuid === cellUuid);
  for (const guard of mine.flatMap((change) => guardsOf(change, seen))) {
    const row = (await knex(guard.table).select('*').where({ id: guard.id }).first()) as Row | undefined;
    try {
      guard.check(row);
    } catch (err) {
      if (err instanceof CasConflict) return err.message;
      throw err;
    }
  }
  return undefined;
}
