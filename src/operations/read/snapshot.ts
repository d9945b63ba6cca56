// Read a Snapshot as a recipe says (recipe.ts): the API's mappings, every
// cell's services, compute nodes, instances and active migrations (cells.ts),
// placement (placement.ts), and the ironic truth the operator gave
// (ironic.ts). A plan that looks at a few provider trees only reads in two
// steps (readForPlan): the first read, the planner's pure scope functions on
// its index, then the rows they name (scope-rows.ts).
import { setFlagsFromString } from 'node:v8';
import type { Database } from '../../db/connect.js';
import type { CellMapping, Deployment } from '../../db/deployment-databases.js';
import { readHostMappings } from '../../db/api/snapshot-reads.js';
import { StringPool } from '../../db/string-pool.js';
import type { Snapshot } from '../../domain/model.js';
import { indexSnapshot, indexWithPlacementRows, type SnapshotIndex } from '../../domain/snapshot-index.js';
import { ReconcileError } from '../../errors.js';
import { checkGroundTruth, computeServiceCells, hasComputeId, readCell, readEveryCell, toCellRec, unknownCell, type PartialSnapshot, type ReadContext } from './cells.js';
import { ironicSettingsOf, readIronicTruth, type IronicSource } from './ironic.js';
import { readOrphanCandidates } from './orphan-candidates.js';
import { readPlacementOf } from './placement.js';
import type { PlanReadRecipe, ReadRecipe } from './recipe.js';
import { readInstancesOfScope, readScopedPlacement } from './scope-rows.js';
import { readStaleProviderCandidates } from './stale-provider-candidates.js';

/** What a read takes besides its recipe. */
export interface ReadInput {
  readonly ironic?: IronicSource;
  /** Progress lines ("reading cell 'cell1' (mysql://host:3306/nova_cell1)…"), for stderr. */
  readonly progress?: (line: string) => void;
}

/** A plan's snapshot with its index, which the read has built already: the planner takes it rather than indexing again. */
export interface PlanInput {
  readonly snapshot: Snapshot;
  readonly index: SnapshotIndex;
}

export async function readSnapshot(deployment: Deployment, recipe: ReadRecipe, input: ReadInput = {}): Promise<Snapshot> {
  const read = await openRead(deployment, recipe, input);
  // The release of the databases read: where releases differ, the planners decide by it.
  return { ...(await readBase(read)), release: deployment.openedRelease() };
}

/** The first read, the planner's scope named on it (pure), then the rows of that scope. */
export async function readForPlan(deployment: Deployment, recipe: PlanReadRecipe, input: ReadInput = {}): Promise<PlanInput> {
  const read = await openRead(deployment, recipe.base, input);
  const base = await readBase(read);
  const { placementDb } = read;
  if (placementDb === undefined || base.placement === undefined) throw new ReconcileError('internal', 'a plan read in two steps without placement');
  const ix = indexSnapshot(base);
  const placement = await readScopedPlacement(read, placementDb, base.placement, recipe.scopeOf(ix));
  const instances = recipe.instanceHostsOf === undefined ? {} : await readInstancesOfScope(read, recipe.instanceHostsOf(ix), placement.scope?.consumerUuids ?? new Set());
  const snapshot: Snapshot = { ...base, placement, ...instances, release: deployment.openedRelease() };
  // Only placement's rows and the instances are new: the rest of the index is the first read's.
  return { snapshot, index: indexWithPlacementRows(ix, snapshot) };
}

/** One read in progress. */
interface Read extends ReadContext {
  readonly recipe: ReadRecipe;
  readonly api: Database;
  readonly placementDb: Database | undefined;
  /** The fields every snapshot of this read has, whichever way its cells are read. */
  readonly common: Omit<Snapshot, keyof PartialSnapshot> & Pick<Snapshot, 'ironicOrigin' | 'ironicPartitions' | 'ironicShard'>;
}

/** Bad input is reported, and every database the recipe needs opened, before any cell is read. */
async function openRead(deployment: Deployment, recipe: ReadRecipe, input: ReadInput): Promise<Read> {
  boundHeapGrowth();
  const progress = input.progress ?? (() => undefined);
  const ironic = input.ironic === undefined ? undefined : await readIronicTruth(input.ironic, progress);
  // A sandbox is judged as of its creation (its heartbeats stopped then): see [nova_reconcile] sandbox_created_at.
  const takenAt = deployment.config.reconcile.sandboxCreatedAt ?? Date.now();
  const mappings = await deployment.cellMappings();
  const cells = await cellsToRead(deployment, mappings, recipe.cells);
  const api = await deployment.api();
  // Opened before any cell is read, so a missing [placement_database] or an unreachable server fails at once.
  const placementDb = recipe.placement === 'none' ? undefined : await deployment.placement();
  const common = {
    takenAt,
    serviceDownTime: deployment.config.serviceDownTime,
    cells: mappings.map(toCellRec),
    ironicNodes: ironic?.nodes,
    ...(ironic === undefined ? {} : { ironicOrigin: ironic.origin }),
    ...(recipe.ironicSettings ? ironicSettingsOf(deployment.config.reconcile) : {}),
  };
  return {
    deployment,
    recipe,
    cells,
    api,
    placementDb,
    common,
    // Shared by every database read, so that a uuid or host held by several tables is one string (db/string-pool.ts).
    pool: new StringPool(),
    progress,
    groundTruth: (parts) => checkGroundTruth(cells, parts, recipe.requireServices, ironic?.nodes, ironic?.origin.label, deployment.config.reconcile.minIronicFraction),
  };
}

async function cellsToRead(deployment: Deployment, mappings: readonly CellMapping[], cells: ReadRecipe['cells']): Promise<CellMapping[]> {
  const live = mappings.filter((m) => !m.isCell0);
  if (cells === 'all') return live;
  const wanted = await deployment.cellMapping(cells.uuid);
  if (wanted === undefined) throw unknownCell(cells.uuid);
  return live.filter((m) => m.uuid === wanted.uuid);
}

/** The recipe's read before its release is named: the candidates only where the recipe asks and they can be read so, else every cell's tables. */
async function readBase(read: Read): Promise<Snapshot> {
  const candidates = await readCandidates(read);
  return candidates === undefined ? readWhole(read) : { ...read.common, ...candidates };
}

/** A candidate read (CellRecipe.nodes), or undefined to read whole: on SQLite, with a name that is not plain ASCII, or when none was asked. */
async function readCandidates(read: Read): Promise<PartialSnapshot | undefined> {
  const { placementDb, recipe } = read;
  if (placementDb === undefined) return undefined;
  if (recipe.cell.nodes === 'orphan-candidates') return readOrphanCandidates(read, placementDb, recipe.cell.names);
  if (recipe.cell.nodes === 'stale-provider-candidates') return readStaleProviderCandidates(read, placementDb);
  return undefined;
}

/** Each cell's tables (readCell) as the recipe says, the host mappings and placement beside them. */
async function readWhole({ deployment, recipe, cells, api, placementDb, pool, progress, common, groundTruth }: Read): Promise<Snapshot> {
  const placementRead = recipe.placement === 'none' || placementDb === undefined ? Promise.resolve(undefined) : readPlacementOf(placementDb, pool, recipe.placement, progress);
  // Handled right away so that a failure here cannot go unhandled while the cells are read.
  placementRead.catch(() => undefined);
  // A candidate read of the stale providers that could not be made falls back to this, not to every service.
  const noServices = recipe.cell.nodes === 'no-services' || recipe.cell.nodes === 'stale-provider-candidates';
  if (!noServices) progress(`reading host mappings from the API database (${api.target.display})…`);
  const [hostMappings, parts] = await Promise.all([
    noServices ? [] : readHostMappings(api.knex, pool),
    readEveryCell(deployment, cells, (db, cell) => readCell(db, cell, pool, progress, { instances: recipe.cell.instances, services: !noServices, computeId: hasComputeId(deployment, db) })),
  ]);
  const placement = await placementRead;
  groundTruth(parts);
  return {
    ...common,
    ...(noServices ? { nodeScope: 'no-services' as const, computeServiceCells: computeServiceCells(cells, parts) } : {}),
    hostMappings,
    services: parts.flatMap((p) => p.services),
    computeNodes: parts.flatMap((p) => p.computeNodes),
    instances: parts.flatMap((p) => p.instances),
    migrations: parts.flatMap((p) => p.migrations),
    placement,
  };
}

/**
 * A snapshot is read once and held to the end of the command, so V8's
 * default heap growth (up to four times what survived the last full
 * collection) lets garbage pile up to twice the live data; growing by 30% at
 * a time bounds it (bench/README.md, "Memory"). Set here rather than at
 * process start: a changed flag makes V8 refuse the code cache of Node's
 * built-in modules loaded after it, and commands that read no snapshot
 * (discover_hosts) keep the default. An engine that does not know the flag
 * ignores it.
 */
export function boundHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=30');
}
