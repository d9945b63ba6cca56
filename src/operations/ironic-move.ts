// Moving ironic compute nodes between nova-compute services.
//
// `db ironic_compute_node_move` is nova-manage master's command (nova-facts §4), with
// its preconditions checked in its order and its messages, but everything in
// ONE transaction of the cell database that [database] connection names (the
// un-targeted context Nova uses), with row locks, so nothing can change
// between the checks and the writes. It also checks that the node is ironic.
// The change is journaled like every applied change, so `undo` can revert it.
//
// `compute_node move` is the bulk form on the plan/apply engine: the planner
// (domain/node-move.ts planNodeMoves) checks every node, and each node moves
// in its own transaction.
import type { Knex } from 'knex';
import { parseDbUrl } from '../config/db-url.js';
import type { CellMapping, Deployment } from '../db/deployment-databases.js';
import { rehomeComputeNode } from '../db/cell/rebalance-writes.js';
import { liveComputeNodeByUuid, liveComputeServiceByHost, liveInstancesOnNode, liveServiceById } from '../db/cell/node-move-reads.js';
import { CasConflict, type Row } from '../db/row-images.js';
import { WriteFailed, writeJournaled } from './journaled-write.js';
import { utcNowString } from '../db/time.js';
import type { Change } from '../domain/plan.js';
import { planNodeMoves, type NodeMoveOptions, type NodeMovePlan } from '../domain/node-move.js';
import { failedAfterChanges, ReconcileError } from '../errors.js';
import { describeDriverError } from '../db/driver-errors.js';
import { deploymentIdentity, withApplyLock, type ApplyResult } from './apply-plan.js';
import { journalHeader, defaultJournalPath, openJournal, type JournalSettings, type JournalWriter } from './journal.js';
import { CELLS_READ } from './read/recipes.js';
import { readSnapshot } from './read/snapshot.js';

export const IRONIC_MOVE = 'db ironic_compute_node_move';

export type IronicMoveOptions = JournalSettings;

export interface IronicMoveResult {
  readonly nodeUuid: string;
  readonly fromHost: string;
  readonly toHost: string;
  readonly instanceUuid: string | null;
  readonly journalPath: string;
}

/** nova-manage's messages (nova/exception.py and DbCommands.ironic_compute_node_move). */
const fail = (message: string): ReconcileError => new ReconcileError('not-found', message);

export async function ironicComputeNodeMove(d: Deployment, nodeUuid: string, destinationHost: string, options: IronicMoveOptions): Promise<IronicMoveResult> {
  const cell = await localCell(d);
  const db = await d.cell(cell);
  const forUpdate = db.dialect === 'mysql';
  // The preconditions are checked once before the apply lock, so that a typo
  // fails without touching anything (on SQLite the lock is a file beside the
  // API database), and again inside the transaction, with row locks.
  await checkPreconditions(db.knex, false, nodeUuid, destinationHost);
  return withApplyLock(d, options.lockTimeout, async () => {
    const header = journalHeader(IRONIC_MOVE, await deploymentIdentity(d));
    let journal: JournalWriter | undefined;
    const journalOnce = (): JournalWriter => {
      if (journal === undefined) {
        journal = openJournal(options.journalPath ?? defaultJournalPath(options.journalDir, IRONIC_MOVE, new Date()), header);
        options.onJournal?.(journal.path);
      }
      return journal;
    };
    try {
      // One transaction: the checks (with row locks) and the move, journaled
      // before COMMIT; a deadlock victim is re-run from the checks.
      return await writeJournaled(db, journalOnce, async (trx) => {
        const { dest, cn, source, instances } = await checkPreconditions(trx, forUpdate, nodeUuid, destinationHost);
        const instance = instances[0];
        const change: Change & { kind: 'rehome-compute-node' } = {
          kind: 'rehome-compute-node',
          target: { db: 'cell', cellUuid: cell.uuid },
          id: Number(cn['id']),
          uuid: String(cn['uuid']),
          hypervisorHostname: String(cn['hypervisor_hostname']),
          fromHost: String(cn['host']),
          toHost: String(dest['host']),
          toServiceId: Number(dest['id']),
          forcedDownSourceServiceId: Number(source['id']),
          instance: instance === undefined ? null : { id: Number(instance['id']), uuid: String(instance['uuid']), fromHost: String(instance['host']) },
        };
        const rows = await rehomeComputeNode(trx, db.dialect, change, utcNowString());
        return {
          value: { nodeUuid: change.uuid ?? nodeUuid, fromHost: change.fromHost, toHost: change.toHost, instanceUuid: change.instance?.uuid ?? null, journalPath: journalOnce().path },
          entry: { unit: `ironic-node-move:${cell.uuid}:${change.id}`, target: change.target, change, rows },
        };
      });
    } catch (err) {
      // nova-manage's one line: a changed row (or writers that kept winning it) changed nothing.
      if (err instanceof CasConflict) throw fail(`${err.message}; nothing was changed.`);
      if (err instanceof WriteFailed) {
        // A failed precondition or driver error before COMMIT, as it was thrown: nothing was written.
        if (!err.committing) throw err.cause;
        // COMMIT went out and its answer was lost: the server may have moved the node.
        throw failedAfterChanges(
          new ReconcileError(
            'connection',
            `the ${db.label} was lost while committing the move of compute node ${nodeUuid} to ${destinationHost} (${describeDriverError(err.cause)}); whether the move committed is unknown`,
            {
              hint: `the journal ${journal?.path ?? '(none)'} holds the change: \`nova-reconcile undo\` of it, without --apply, says whether it committed (exit 3: it did; exit 0: it did not), and with --apply moves the node back`,
              cause: err.cause,
            },
          ),
          true,
        );
      }
      throw err;
    } finally {
      journal?.close();
    }
  });
}

/** nova-manage's preconditions, in its order, with its messages (read with row locks when forUpdate). */
async function checkPreconditions(
  db: Knex | Knex.Transaction,
  forUpdate: boolean,
  nodeUuid: string,
  destinationHost: string,
): Promise<{ dest: Row; cn: Row; source: Row; instances: Row[] }> {
  const dest = await liveComputeServiceByHost(db, destinationHost, forUpdate);
  if (dest === undefined) throw fail(`Compute host ${destinationHost} could not be found.`);
  if (Number(dest['forced_down']) !== 0) throw fail('Destination compute is forced down!');
  const cn = await liveComputeNodeByUuid(db, nodeUuid, forUpdate);
  if (cn === undefined) throw fail(`Compute host ${nodeUuid} could not be found.`);
  if (cn['hypervisor_type'] !== 'ironic')
    throw fail(`Compute node ${nodeUuid} is not an ironic node (hypervisor_type ${String(cn['hypervisor_type'])}); only ironic nodes can be moved this way.`);
  const serviceId = cn['service_id'];
  const source = serviceId === null ? undefined : await liveServiceById(db, Number(serviceId), forUpdate);
  // Nova reads the service by compute_nodes.service_id, which Zed never sets: "Service None ...".
  if (source === undefined) throw fail(`Service ${serviceId === null ? 'None' : String(serviceId)} could not be found.`);
  if (Number(source['forced_down']) === 0) throw fail('Source service is not yet forced down!');
  const instances = await liveInstancesOnNode(db, String(cn['host'] ?? ''), String(cn['hypervisor_hostname'] ?? ''), forUpdate);
  if (instances.length > 1)
    throw fail('Found an ironic host with more than one instance! Please delete all Nova instances that do not match the instance uuid recorded on the Ironic node.');
  return { dest, cn, source, instances };
}

/** The cell whose database is [database] connection (compared by host, port and database name). */
async function localCell(d: Deployment): Promise<CellMapping> {
  const url = d.config.databaseConnection;
  if (url === undefined || url === '')
    throw new ReconcileError('config', 'no [database] connection is set: ironic_compute_node_move works on the cell database it names', {
      hint: 'run it with the nova.conf of the cell that holds the node',
    });
  const local = parseDbUrl(url).display;
  const cell = (await d.cellMappings()).find((m) => !m.isCell0 && m.databaseConnection !== null && displayOf(m.databaseConnection) === local);
  if (cell === undefined)
    throw new ReconcileError('config', `[database] connection (${local}) is not the database of any cell in cell_mappings`, {
      hint: 'run it with the nova.conf of the cell that holds the node',
    });
  return cell;
}

function displayOf(url: string): string | undefined {
  try {
    return parseDbUrl(url).display;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// compute_node move

export async function planComputeNodeMoves(d: Deployment, options: NodeMoveOptions): Promise<NodeMovePlan> {
  return planNodeMoves(await readSnapshot(d, CELLS_READ), options);
}

export interface MoveReport {
  readonly nodes_moved: ReadonlyArray<{ readonly node_uuid: string; readonly from_host: string; readonly to_host: string }>;
  readonly instances_moved: ReadonlyArray<{ readonly instance_uuid: string; readonly node_uuid: string; readonly from_host: string; readonly to_host: string }>;
  readonly nodes_skipped: ReadonlyArray<{ readonly node_uuid: string; readonly host: string | null; readonly reason: string }>;
}

/** What moved and what did not (refused at planning, or skipped because the rows changed since). */
export function moveReport(mp: NodeMovePlan, result: ApplyResult | undefined): MoveReport {
  const applied = new Set(result?.outcomes.filter((o) => o.status === 'applied').map((o) => o.unit.id) ?? []);
  const skippedAtApply = new Map((result?.outcomes ?? []).flatMap((o) => (o.status === 'skipped' ? [[o.unit.id, o.reason] as const] : [])));
  const moved = mp.moves.filter((m) => applied.has(m.unitId));
  return {
    nodes_moved: moved.map((m) => ({ node_uuid: m.nodeUuid, from_host: m.fromHost, to_host: m.toHost })),
    instances_moved: moved.flatMap((m) => (m.instanceUuid === null ? [] : [{ instance_uuid: m.instanceUuid, node_uuid: m.nodeUuid, from_host: m.fromHost, to_host: m.toHost }])),
    nodes_skipped: [
      ...mp.skipped.map((s) => ({ node_uuid: s.nodeUuid, host: s.host, reason: s.reason })),
      ...mp.moves.flatMap((m) => {
        const reason = skippedAtApply.get(m.unitId);
        return reason === undefined ? [] : [{ node_uuid: m.nodeUuid, host: m.fromHost, reason: `changed since planning: ${reason}` }];
      }),
    ],
  };
}
