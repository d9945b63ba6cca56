// Which Nova and Placement a deployment's databases belong to, from the
// alembic head of each (docs/NEWER-NOVA.md has the table and its sources).
// Where releases behave differently the planners ask this, never the
// columns: Nova 27.0.0 (2023.1) and later know an ironic compute node only
// by the ironic node's uuid, so a repair keeps that row.
export type SchemaDb = 'api' | 'cell' | 'placement';

/** What one database's head says. `head` null: no alembic_version (older than Zed, or not made by Nova: the sandbox). */
export interface SchemaHead {
  readonly db: SchemaDb;
  /** The database as messages name it (no password). */
  readonly label: string;
  readonly head: string | null;
}

interface KnownHead {
  /** Lowest and highest Nova major release (Placement major for the placement database) at this head. */
  readonly from: number;
  readonly to: number;
}

// Each database's alembic revisions, from Zed's first to 2026.2's head, with
// the releases whose `db sync` stops there. A revision in the middle of a
// release's chain is that release's, partly upgraded.
const HEADS: Readonly<Record<SchemaDb, Readonly<Record<string, KnownHead>>>> = {
  cell: {
    '8f2f1571d55b': { from: 26, to: 26 },
    '16f1fbcab42b': { from: 26, to: 26 },
    ccb0fa1a2252: { from: 26, to: 26 },
    '960aac0e09ea': { from: 27, to: 27 },
    '1b91788ec3a6': { from: 28, to: 28 },
    '1acf2c98e646': { from: 28, to: 28 },
    '13863f4e1612': { from: 29, to: 30 },
    d60bddf7a903: { from: 31, to: 31 },
    '2903cd72dc14': { from: 31, to: 33 },
    ab450ba04102: { from: 34, to: 34 },
  },
  api: {
    d67eeaabee36: { from: 26, to: 26 },
    b30f573d3377: { from: 26, to: 27 },
    cdeec0c85668: { from: 28, to: 34 },
  },
  placement: {
    b4ed3a175331: { from: 6, to: 6 },
    '611cd6dffd7b': { from: 6, to: 6 },
    b5c396305c25: { from: 6, to: 6 },
    '422ece571366': { from: 6, to: 9 },
    a082b8bb98d0: { from: 10, to: 16 },
  },
};

/** Nova's major release numbers and their names. */
const NOVA_NAMES: Readonly<Record<number, string>> = {
  26: 'Zed',
  27: '2023.1',
  28: '2023.2',
  29: '2024.1',
  30: '2024.2',
  31: '2025.1',
  32: '2025.2',
  33: '2026.1',
  34: '2026.2',
};

/** The releases this build knows, for messages and --help. */
export const KNOWN_NOVA_RANGE = 'Nova 26 (Zed) to 34 (2026.2), Placement 8.0.0 to 16.0.0';

/** Nova 27.0.0 (2023.1) and later find an ironic compute node by uuid = the ironic node's uuid (resource tracker). */
export const NOVA_IRONIC_BY_UUID = 27;

/** Placement 14.0.0 (2025.2) and later accept a write that does not worsen an overage (bug 2104040). */
export const PLACEMENT_RELAXED_CAPACITY = 14;

export interface DbRelease extends SchemaHead {
  /** False when the head is one this build does not know (newer, most likely). */
  readonly known: boolean;
  readonly from: number | null;
  readonly to: number | null;
}

export interface DeploymentRelease {
  readonly databases: readonly DbRelease[];
  /**
   * The Nova major release the cell databases say, the lowest of them (a
   * cell not yet upgraded decides); null when no cell database has an
   * alembic head (the sandbox, or older than Zed): then Zed's rules apply.
   */
  readonly nova: { readonly from: number; readonly to: number } | null;
  readonly placement: { readonly from: number; readonly to: number } | null;
  /** The databases whose head is unknown. */
  readonly unknown: readonly DbRelease[];
}

export function classifyHead(h: SchemaHead): DbRelease {
  if (h.head === null) return { ...h, known: true, from: null, to: null };
  const k = HEADS[h.db][h.head];
  return k === undefined ? { ...h, known: false, from: null, to: null } : { ...h, known: true, from: k.from, to: k.to };
}

const DB_ORDER: Readonly<Record<SchemaDb, number>> = { api: 0, cell: 1, placement: 2 };

/** The databases in a stable order (API, the cells by label, placement), whatever order they were opened in. */
export function deploymentRelease(heads: readonly SchemaHead[]): DeploymentRelease {
  const databases = [...heads].sort((a, b) => DB_ORDER[a.db] - DB_ORDER[b.db] || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)).map(classifyHead);
  const range = (db: SchemaDb): { from: number; to: number } | null => {
    const ranged = databases.filter((d) => d.db === db && d.from !== null && d.to !== null);
    if (ranged.length === 0) return null;
    return { from: Math.min(...ranged.map((d) => d.from as number)), to: Math.min(...ranged.map((d) => d.to as number)) };
  };
  return { databases, nova: range('cell'), placement: range('placement'), unknown: databases.filter((d) => !d.known) };
}

/** Whether every cell is at a release that knows ironic compute nodes by the node uuid. */
export function novaKnowsIronicByUuid(r: DeploymentRelease | undefined): boolean {
  return r?.nova !== null && r?.nova !== undefined && r.nova.from >= NOVA_IRONIC_BY_UUID;
}

/** Whether the Placement in use accepts a write that does not worsen an overage. Unknown: no (the stricter rule is safe). */
export function placementRelaxesCapacity(r: DeploymentRelease | undefined): boolean {
  return r?.placement !== null && r?.placement !== undefined && r.placement.from >= PLACEMENT_RELAXED_CAPACITY;
}

function novaName(major: number): string {
  const name = NOVA_NAMES[major];
  return name === undefined ? `${major}` : `${major} (${name})`;
}

/** "Nova 31 (2025.1) to 33 (2026.1)", "Nova 26 (Zed)". */
export function describeNova(range: { from: number; to: number } | null): string {
  if (range === null) return 'Nova release not recorded (no alembic_version: the sandbox, or older than Zed); Zed rules apply';
  return range.from === range.to ? `Nova ${novaName(range.from)}` : `Nova ${novaName(range.from)} to ${novaName(range.to)}`;
}

export function describePlacement(range: { from: number; to: number } | null): string {
  if (range === null) return 'Placement release not recorded';
  return range.from === range.to ? `Placement ${range.from}.x` : `Placement ${range.from}.x to ${range.to}.x`;
}

/** One line per database, for --debug. */
export function describeDatabaseRelease(d: DbRelease): string {
  const at = d.head === null ? 'no alembic_version' : `alembic head ${d.head}`;
  if (!d.known) return `${d.label}: ${at}, which this nova-reconcile does not know (it knows ${KNOWN_NOVA_RANGE})`;
  if (d.from === null || d.to === null) return `${d.label}: ${at}`;
  const what = d.db === 'placement' ? describePlacement({ from: d.from, to: d.to }) : describeNova({ from: d.from, to: d.to });
  return `${d.label}: ${at} (${what})`;
}

/** The JSON form, for audit's document and the journal header. */
export interface ReleaseJson {
  readonly nova: string;
  readonly placement: string;
  readonly databases: ReadonlyArray<{ readonly db: SchemaDb; readonly database: string; readonly alembic_head: string | null; readonly known: boolean }>;
}

export function releaseJson(r: DeploymentRelease): ReleaseJson {
  return {
    nova: describeNova(r.nova),
    placement: describePlacement(r.placement),
    databases: r.databases.map((d) => ({ db: d.db, database: d.label, alembic_head: d.head, known: d.known })),
  };
}
