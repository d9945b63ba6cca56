// The cells' part of a read: each cell's databases read on their own
// connections ([nova_reconcile] cell_concurrency), each table in keyset pages.
// A cell that cannot be read fails the whole snapshot: a reconciliation that
// missed a cell would call that cell's nodes "missing" and act on it.
import type { Database } from '../../db/connect.js';
import type { CellMapping, Deployment } from '../../db/deployment-databases.js';
import { countCellRows, readActiveMigrations, readComputeNodes, readLiveInstances, readServices, type ScopedHosts } from '../../db/cell/snapshot-reads.js';
import { describeDriverError } from '../../db/driver-errors.js';
import { OPTIONAL_COLUMNS } from '../../db/schema-manifest.js';
import type { StringPool } from '../../db/string-pool.js';
import { implausibleList, ironicListCoverage } from '../../domain/ironic-nodes.js';
import type { CellRec, ComputeNodeRec, InstanceRec, IronicNodeRec, MigrationRec, ServiceRec, Snapshot } from '../../domain/model.js';
import { hostKey } from '../../domain/snapshot-index.js';
import { ReconcileError, isReconcileError } from '../../errors.js';
import { fanOutInOrder } from '../fan-out.js';

/** What every step of one read shares. */
export interface ReadContext {
  readonly deployment: Deployment;
  /** The cells read, in order (never cell0). */
  readonly cells: readonly CellMapping[];
  /** The read's string pool (db/string-pool.ts). */
  readonly pool: StringPool;
  /** checkGroundTruth on the cells' parts, as the recipe and the ironic list ask. */
  readonly groundTruth: (parts: readonly CellPart[]) => void;
  readonly progress: (line: string) => void;
}

/** One cell's part of a snapshot. */
export interface CellPart {
  readonly services: ServiceRec[];
  readonly computeNodes: ComputeNodeRec[];
  readonly instances: InstanceRec[];
  readonly migrations: MigrationRec[];
  /** When the tables were read in part (the candidate reads): what checkGroundTruth counts. */
  readonly counts?: { readonly services: number; readonly liveComputeNodes: number; readonly liveComputeServices: number };
  /** When the nodes were read as keys only (audit-keys.ts): the names of the live ironic ones, for the ironic list's coverage. */
  readonly ironicNames?: readonly string[];
}

/** A partial read's snapshot (orphan-candidates.ts, stale-provider-candidates.ts), before the fields every read shares. */
export type PartialSnapshot = Omit<Snapshot, 'takenAt' | 'serviceDownTime' | 'cells' | 'ironicNodes'>;

/** Each cell's part, read on cell_concurrency connections; a cell that cannot be read fails the whole snapshot. */
export async function readEveryCell<T>(deployment: Deployment, cells: readonly CellMapping[], read: (db: Database, cell: CellMapping) => Promise<T>): Promise<T[]> {
  const settled = await fanOutInOrder(cells, deployment.config.reconcile.cellConcurrency, async (cell) => read(await deployment.cell(cell), cell));
  const out: T[] = [];
  settled.forEach((s, i) => {
    if (s === undefined) return;
    if (!s.ok) throw cellFailure(cells[i] as CellMapping, s.error);
    out.push(s.value);
  });
  // fanOutInOrder starts no new cell after a failure; a cell left unread is a failure too.
  if (out.length !== cells.length) throw new ReconcileError('internal', 'not every cell was read');
  return out;
}

/**
 * A cell's tables; its instances only with `read.instances` (else read for
 * the planner's scope, later), its services only with `read.services` (else
 * counted, for checkGroundTruth).
 */
export async function readCell(
  db: Database,
  cell: CellMapping,
  pool: StringPool,
  progress: (line: string) => void,
  read: { readonly instances: boolean; readonly services: boolean; readonly computeId: boolean },
): Promise<CellPart> {
  progress(`reading cell ${cellLabel(cell)} (${db.target.display})…`);
  const [services, computeNodes, instances, migrations, counts] = await Promise.all([
    read.services ? readServices(db.knex, cell.uuid, pool) : [],
    readComputeNodes(db.knex, cell.uuid, pool),
    read.instances ? readLiveInstances(db.knex, cell.uuid, pool, read.computeId) : [],
    readActiveMigrations(db.knex, cell.uuid),
    read.services ? undefined : countCellRows(db.knex),
  ]);
  return { services, computeNodes, instances, migrations, ...(counts === undefined ? {} : { counts }) };
}

/** Whether the cell's instances have compute_id (Nova 28.0.0+). */
export function hasComputeId(deployment: Deployment, db: Database): boolean {
  return OPTIONAL_COLUMNS.instances.some((column) => deployment.schemaOf(db)?.present.get('instances')?.has(column) === true);
}

/** A host name whose case folding hostKey and the database agree on (ASCII, no control characters). */
export const PLAIN_HOST = /^[\x20-\x7e]+$/;

/** Hosts to ask by name: folded and as spelt (db/cell/snapshot-reads.ts ScopedHosts). */
export function scopedHosts(hosts: readonly string[]): ScopedHosts {
  return { keys: [...new Set(hosts.map(hostKey))], raw: [...new Set(hosts)] };
}

/**
 * Empty or implausible ground truth is an error, not a verdict:
 * with it every compute node would look orphaned.
 *  - A cell whose services table has no row at all (deleted ones included:
 *    Nova soft-deletes services, so a cell that ever ran nova-compute keeps
 *    them) while it has live compute nodes: a truncated table, a restore from
 *    the wrong backup, or the wrong database.
 *  - An --ironic-nodes list that holds fewer than min_ironic_fraction of the
 *    live ironic compute nodes the cells know (an empty list, another
 *    region's, a project-scoped listing).
 */
export function checkGroundTruth(
  cells: readonly CellMapping[],
  parts: readonly CellPart[],
  requireServices: boolean,
  ironicNodes: readonly IronicNodeRec[] | undefined,
  ironicLabel: string | undefined,
  minIronicFraction: number,
): void {
  if (requireServices) parts.forEach((p, i) => {
    const live = p.counts?.liveComputeNodes ?? p.computeNodes.filter((n) => !n.deleted).length;
    const cell = cells[i] as CellMapping;
    if ((p.counts?.services ?? p.services.length) === 0 && live > 0)
      throw new ReconcileError('implausible', `cell ${cellLabel(cell)} (${cell.uuid}) has ${live} live compute node(s) but its services table is empty; refusing to judge its nodes`, {
        hint: 'check that the cell database is the live one (not a restored backup or another deployment\'s) and re-run',
      });
  });
  if (ironicNodes === undefined || ironicLabel === undefined) return;
  const knownIronic = parts.flatMap((p) => p.ironicNames ?? p.computeNodes.filter((n) => !n.deleted && n.hypervisorType === 'ironic' && n.hypervisorHostname !== null).map((n) => n.hypervisorHostname as string));
  const { known, held } = ironicListCoverage(ironicNodes, knownIronic);
  if (known === 0) return;
  if (ironicNodes.length === 0) throw implausibleList(ironicLabel, `the list is empty, but the cells know ${known} live ironic compute node(s)`);
  if (held < minIronicFraction * known)
    throw implausibleList(
      ironicLabel,
      `the list holds ${held} of the ${known} live ironic compute node(s) the cells know (${percent(held / known)}, below min_ironic_fraction ${minIronicFraction})`,
    );
}

/** The cells (of those read, in order) whose counts hold a live nova-compute service (Snapshot.computeServiceCells). */
export function computeServiceCells(cells: readonly CellMapping[], parts: readonly CellPart[]): string[] {
  return parts.flatMap((p, i) => ((p.counts?.liveComputeServices ?? 0) > 0 ? [(cells[i] as CellMapping).uuid] : []));
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

export function unknownCell(uuid: string): ReconcileError {
  return new ReconcileError('not-found', `cell ${uuid} has no mapping`, { hint: 'run `nova-reconcile cell_v2 list_cells` to see the cells' });
}

export function cellFailure(cell: CellMapping, err: unknown): ReconcileError {
  const reason = isReconcileError(err) ? err.message : describeDriverError(err);
  const kind = isReconcileError(err) && (err.kind === 'config' || err.kind === 'schema') ? err.kind : 'connection';
  return new ReconcileError(kind, `cannot read cell ${cellLabel(cell)} (${cell.uuid}): ${reason}`, {
    hint: 'every cell must be readable: nova-reconcile never reconciles on partial knowledge; fix the cell database or its database_connection and re-run',
    cause: err,
  });
}

export function cellLabel(cell: CellMapping): string {
  return cell.name === null || cell.name === '' ? cell.uuid : `'${cell.name}'`;
}

export function toCellRec(m: CellMapping): CellRec {
  return { id: m.id, uuid: m.uuid, name: m.name, isCell0: m.isCell0 };
}
