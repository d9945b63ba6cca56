// A deployment is the set of databases one nova.conf points at: the API
// database, every cell database (found through cell_mappings, as Nova does)
// and placement. Databases are opened lazily, schema-checked on first use,
// cached, and all closed by withDeployment's finally.
import type { NovaConfig } from '../config/types.js';
import { parseDbUrl } from '../config/db-url.js';
import { formatCellDbUrl, formatCellMqUrl } from '../config/cell-url-template.js';
import { ReconcileError } from '../errors.js';
import { closeDatabase, openDatabase, type Database } from './connect.js';
import { checkSchema } from './schema-check.js';
import type { SchemaKind } from './migrate.js';
import { findCellMappingByUuid, listCellMappings, type CellMappingRow } from './api/cell-mappings.js';

export const CELL0_UUID = '00000000-0000-0000-0000-000000000000';

/** A cell_mappings row with its URLs rendered as Nova renders them on load (§9). */
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
  cellMapping(uuid: string): Promise<CellMapping | undefined>;
  cell(mapping: CellMapping): Promise<Database>;
  placement(): Promise<Database>;
}

export interface DeploymentOptions {
  /** Pool size of the API database; at least the cell concurrency. */
  readonly apiPoolMax?: number;
}

export async function withDeployment<T>(config: NovaConfig, options: DeploymentOptions, fn: (d: Deployment) => Promise<T>): Promise<T> {
  const opened: Array<Promise<Database>> = [];
  const cells = new Map<string, Promise<Database>>();
  let api: Promise<Database> | undefined;
  let placement: Promise<Database> | undefined;
  const timeout = config.reconcile.connectTimeout;
  // Units applied side by side each hold a connection of the database they write.
  const writePool = Math.max(2, config.reconcile.applyConcurrency);

  const open = (url: string, role: string, kind: SchemaKind, poolMax?: number): Promise<Database> => {
    const p = (async () => {
      const target = parseDbUrl(url);
      const db = await openDatabase(target, { connectTimeout: timeout, role, ...(poolMax === undefined ? {} : { poolMax }) });
      try {
        await checkSchema(db.knex, kind, db.label);
      } catch (err) {
        await closeDatabase(db).catch(() => undefined);
        throw err;
      }
      return db;
    })();
    opened.push(p);
    return p;
  };

  const deployment: Deployment = {
    config,
    api() {
      if (api === undefined) {
        const url = config.apiDatabaseConnection;
        if (url === undefined || url === '') {
          api = Promise.reject(
            new ReconcileError('config', 'no [api_database] connection is set' + sourcesNote(config), {
              hint: 'pass --config-file /etc/nova/nova.conf, or set OS_API_DATABASE__CONNECTION',
            }),
          );
          api.catch(() => undefined);
        } else {
          api = open(url, 'API database', 'api', options.apiPoolMax);
        }
      }
      return api;
    },
    async cellMappings() {
      const db = await deployment.api();
      return (await listCellMappings(db.knex)).map((row) => renderCellMapping(row, config));
    },
    async cellMapping(uuid: string) {
      const db = await deployment.api();
      const row = await findCellMappingByUuid(db.knex, uuid);
      return row === undefined ? undefined : renderCellMapping(row, config);
    },
    cell(mapping: CellMapping) {
      let p = cells.get(mapping.uuid);
      if (p === undefined) {
        const url = mapping.databaseConnection;
        const role = mapping.name ? `cell '${mapping.name}' database` : `cell ${mapping.uuid} database`;
        if (url === null || url === '') {
          p = Promise.reject(new ReconcileError('config', `cell ${mapping.uuid} has no database_connection in cell_mappings`));
          p.catch(() => undefined);
        } else {
          p = open(url, role, 'cell', writePool);
        }
        cells.set(mapping.uuid, p);
      }
      return p;
    },
    placement() {
      if (placement === undefined) {
        const url = config.placementDatabaseConnection;
        if (url === undefined || url === '') {
          placement = Promise.reject(
            new ReconcileError('config', 'no [placement_database] connection is set' + sourcesNote(config), {
              hint: 'add --config-file /etc/placement/placement.conf, or set OS_PLACEMENT_DATABASE__CONNECTION',
            }),
          );
          placement.catch(() => undefined);
        } else {
          placement = open(url, 'placement database', 'placement', writePool);
        }
      }
      return placement;
    },
  };

  try {
    return await fn(deployment);
  } finally {
    const settled = await Promise.allSettled(opened);
    await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? closeDatabase(s.value).catch(() => undefined) : undefined)));
  }
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
