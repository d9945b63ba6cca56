// A deployment is the set of databases one nova.conf points at: the API
// database, every cell database (found through cell_mappings, as Nova does)
// and placement. Databases are opened lazily, schema-checked on first use,
// cached, and all closed by withDeployment's finally.
import type { NovaConfig } from '../config/types.js';
import { parseDbUrl } from '../config/db-url.js';
import { formatCellDbUrl, formatCellMqUrl } from '../config/cell-url-template.js';
import { ReconcileError } from '../errors.js';
import { closeDatabase, openDatabase, type Database } from './connect.js';
import { checkSchema, type SchemaFacts } from './schema-check.js';
import { deploymentRelease, describeDatabaseRelease, classifyHead, KNOWN_NOVA_RANGE, type DeploymentRelease, type SchemaHead } from '../domain/nova-release.js';
import type { SchemaKind } from './migrate.js';
import { findCellMappingByUuid, listCellMappings, type CellMappingRow } from './api/cell-mappings.js';

export const CELL0_UUID = '00000000-0000-0000-0000-000000000000';

/** A cell_mappings row with its URLs rendered as Nova renders them on load (nova-facts §9). */
export interface CellMapping {
  readonly id: number;
  readonly uuid: string;
  readonly name: string | null;
  readonly transportUrl: string | null;
  readonly databaseConnection: string | null;
  readonly disabled: boolean;
  readonly isCell0: boolean;
}

export interface Deployment {
  readonly config: NovaConfig;
  api(): Promise<Database>;
  /** Every cell mapping, ordered by id. */
  cellMappings(): Promise<readonly CellMapping[]>;
  /**
   * The cell mappings, read once for the deployment's whole run (a failed
   * read is not kept): a write path resolves a change's cell through it
   * rather than making a round trip to the API database per change.
   */
  cellMappingsOnce(): Promise<readonly CellMapping[]>;
  cellMapping(uuid: string): Promise<CellMapping | undefined>;
  cell(mapping: CellMapping): Promise<Database>;
  placement(): Promise<Database>;
  /** What the schema check found of a database this deployment opened (its columns, its alembic head). */
  schemaOf(db: Database): SchemaFacts | undefined;
  /**
   * The release every database says (docs/NEWER-NOVA.md): opens the API
   * database, every cell's but cell0's, and placement's when it is
   * configured (and `placement` is not false).
   */
  release(options?: { readonly placement?: boolean }): Promise<DeploymentRelease>;
  /** The release of the databases opened so far (no database is opened). */
  openedRelease(): DeploymentRelease;
  /**
   * Before a write: refuses (exit 2) when a database is at an alembic head
   * this build does not know, unless --allow-unknown-schema was given.
   * `placement: false` for a command that never writes placement.
   */
  assertWritable(options?: { readonly placement?: boolean }): Promise<void>;
}

export interface DeploymentOptions {
  /** Pool size of the API database; at least the cell concurrency. */
  readonly apiPoolMax?: number;
  /** One line of warning on stderr (a database at an unknown alembic head). */
  readonly warn?: (line: string) => void;
  /** --debug: one line per database opened, with the release its alembic head says. */
  readonly debug?: (line: string) => void;
}

/** The global option that lets a write run on a schema this build does not know. */
export const ALLOW_UNKNOWN_SCHEMA = '--allow-unknown-schema';

/** `read`'s promise, kept once it is made; a failed read is forgotten, so the next call reads again. */
function onceUnlessFailed<T>(read: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | undefined;
  return () => {
    if (kept === undefined) {
      const p = read();
      kept = p;
      p.catch(() => {
        if (kept === p) kept = undefined;
      });
    }
    return kept;
  };
}

export async function withDeployment<T>(config: NovaConfig, options: DeploymentOptions, fn: (d: Deployment) => Promise<T>): Promise<T> {
  const opened: Opened = { all: [], facts: new Map(), heads: [] };
  const cells = new Map<string, Promise<Database>>();
  let api: Promise<Database> | undefined;
  let placement: Promise<Database> | undefined;
  const heads = opened.heads;
  /** The database a configured URL names, or its error when none is set. */
  const configured = (url: string | undefined, role: string, kind: SchemaKind, poolMax: number | undefined, missing: () => ReconcileError): Promise<Database> =>
    url === undefined || url === '' ? rejected(missing()) : openChecked(opened, options, config.reconcile.connectTimeout, url, role, kind, poolMax);
  // Units applied side by side each hold a connection of the database they write.
  const writePool = Math.max(2, config.reconcile.applyConcurrency);

  const deployment: Deployment = {
    config,
    api() {
      api ??= configured(config.apiDatabaseConnection, 'API database', 'api', options.apiPoolMax, () =>
        new ReconcileError('config', 'no [api_database] connection is set' + sourcesNote(config), {
          hint: 'pass --config-file /etc/nova/nova.conf, or set OS_API_DATABASE__CONNECTION',
        }),
      );
      return api;
    },
    async cellMappings() {
      const db = await deployment.api();
      return (await listCellMappings(db.knex)).map((row) => renderCellMapping(row, config));
    },
    cellMappingsOnce: onceUnlessFailed(() => deployment.cellMappings()),
    async cellMapping(uuid: string) {
      const db = await deployment.api();
      const row = await findCellMappingByUuid(db.knex, uuid);
      return row === undefined ? undefined : renderCellMapping(row, config);
    },
    cell(mapping: CellMapping) {
      let p = cells.get(mapping.uuid);
      if (p === undefined) {
        const role = mapping.name ? `cell '${mapping.name}' database` : `cell ${mapping.uuid} database`;
        p = configured(mapping.databaseConnection ?? undefined, role, 'cell', writePool, () => new ReconcileError('config', `cell ${mapping.uuid} has no database_connection in cell_mappings`));
        cells.set(mapping.uuid, p);
      }
      return p;
    },
    placement() {
      placement ??= configured(config.placementDatabaseConnection, 'placement database', 'placement', writePool, () =>
        new ReconcileError('config', 'no [placement_database] connection is set' + sourcesNote(config), {
          hint: 'add --config-file /etc/placement/placement.conf, or set OS_PLACEMENT_DATABASE__CONNECTION',
        }),
      );
      return placement;
    },
    schemaOf(db: Database) {
      return opened.facts.get(db);
    },
    async release(which) {
      // A database that cannot be opened says nothing: its own error comes when a command needs it.
      const cells = (await deployment.cellMappings()).filter((m) => !m.isCell0).map((m) => deployment.cell(m));
      const wanted = which?.placement !== false && config.placementDatabaseConnection !== undefined && config.placementDatabaseConnection !== '';
      const placementDb = wanted ? [deployment.placement()] : [];
      await Promise.allSettled([...cells, ...placementDb]);
      return deploymentRelease(heads);
    },
    openedRelease() {
      return deploymentRelease(heads);
    },
    async assertWritable(which) {
      refuseUnknownSchema(await deployment.release(which), config);
    },
  };

  try {
    return await fn(deployment);
  } finally {
    // Cells open side by side: the release of each database is told at the end, in a stable order.
    if (options.debug !== undefined) for (const d of deploymentRelease(heads).databases) options.debug(`debug: ${describeDatabaseRelease(d)}`);
    const settled = await Promise.allSettled(opened.all);
    await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? closeDatabase(s.value).catch(() => undefined) : undefined)));
  }
}

/** The databases a deployment has opened: their promises (closed at the end), schema facts and heads. */
interface Opened {
  readonly all: Array<Promise<Database>>;
  readonly facts: Map<Database, SchemaFacts>;
  readonly heads: SchemaHead[];
}

/** Open a database and check its schema; a schema this build does not know is warned about, not refused (writes are, later). */
function openChecked(opened: Opened, options: DeploymentOptions, timeout: number, url: string, role: string, kind: SchemaKind, poolMax?: number): Promise<Database> {
  const p = (async () => {
    const target = parseDbUrl(url);
    const db = await openDatabase(target, { connectTimeout: timeout, role, ...(poolMax === undefined ? {} : { poolMax }) });
    try {
      const found = await checkSchema(db.knex, kind, db.label);
      opened.facts.set(db, found);
      const head: SchemaHead = { db: kind, label: db.label, head: found.head };
      opened.heads.push(head);
      const known = classifyHead(head);
      if (!known.known)
        options.warn?.(
          `warning: ${describeDatabaseRelease(known)}; read-only commands run, writes are refused unless ${ALLOW_UNKNOWN_SCHEMA} is given`,
        );
    } catch (err) {
      await closeDatabase(db).catch(() => undefined);
      throw err;
    }
    return db;
  })();
  opened.all.push(p);
  return p;
}

/** A database that cannot be opened: its error comes when a command awaits it, and never as an unhandled rejection. */
function rejected(err: ReconcileError): Promise<Database> {
  const p = Promise.reject(err);
  p.catch(() => undefined);
  return p;
}

/** Writes are refused on a database whose schema this build does not know, unless the operator allowed it. */
function refuseUnknownSchema(release: DeploymentRelease, config: NovaConfig): void {
  const [first] = release.unknown;
  if (first === undefined || config.reconcile.allowUnknownSchema) return;
  const more = release.unknown.length > 1 ? ` (and ${release.unknown.length - 1} more database(s))` : '';
  throw new ReconcileError('schema', `refusing to write: ${describeDatabaseRelease(first)}${more}`, {
    hint: `a newer Nova may have changed what a repair must write; upgrade nova-reconcile, or, having checked the release notes, re-run with ${ALLOW_UNKNOWN_SCHEMA} (${KNOWN_NOVA_RANGE} are known)`,
  });
}

export function renderCellMapping(row: CellMappingRow, config: NovaConfig): CellMapping {
  return {
    id: Number(row.id),
    uuid: row.uuid,
    name: row.name,
    transportUrl: formatCellMqUrl(row.transport_url, config.transportUrl),
    databaseConnection: formatCellDbUrl(row.database_connection, config.databaseConnection),
    disabled: Boolean(Number(row.disabled ?? 0)),
    isCell0: row.uuid === CELL0_UUID,
  };
}

function sourcesNote(config: NovaConfig): string {
  return config.files.length === 0 ? ' (no configuration file was found)' : ` in ${config.files.join(', ')}`;
}
