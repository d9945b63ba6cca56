// One benchmark deployment: uniquely named scratch databases (api, cell0,
// cell1..cellC) built with our migrations, cell_mappings as nova-manage
// create_cell writes them, and a nova.conf that both nova-manage and
// nova-reconcile read. Every database created on the main server is
// registered in `live` so that a failure or a Ctrl-C still drops it. The cells
// can be spread over several servers (cell i on server i mod S); databases on
// the extra servers (bench/servers.ts) go with those servers when they stop.
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { migrateSchema } from '../src/db/migrate.js';
import type { ScaleDatabases } from '../src/sandbox/scale-generator.js';

import { CELL0_UUID } from '../src/db/deployment-databases.js';

export { CELL0_UUID };

export interface Server {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string | undefined;
}

export function parseServer(mysqlUrl: string): Server {
  const url = new URL(mysqlUrl);
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port === '' ? 3306 : Number(url.port),
    user: decodeURIComponent(url.username || 'root'),
    password: url.password === '' ? undefined : decodeURIComponent(url.password),
  };
}

export interface ScratchCell {
  readonly id: number;
  readonly uuid: string;
  readonly name: string;
  readonly database: string;
  readonly knex: Knex;
  /** The server that holds this cell's database. */
  readonly server: Server;
}

export interface ScratchDeployment {
  readonly apiDatabase: string;
  readonly api: Knex;
  readonly cell0Database: string;
  /** The cells that hold hosts, in cell_mappings id order. */
  readonly cells: readonly ScratchCell[];
  readonly confPath: string;
  readonly scaleDatabases: ScaleDatabases;
  /** Only with withPlacement. */
  readonly placementDatabase: string | undefined;
  readonly placement: Knex | undefined;
  /** What a SQLAlchemy URL for a database on the main server (API, cell0) looks like. */
  sqlalchemyUrl(database: string): string;
  drop(): Promise<void>;
}

/** Databases created and not yet dropped, across deployments, for the signal handler. */
export const live = new Set<string>();
/** Folders of the deployments' nova.conf files not yet removed. */
const liveDirs = new Set<string>();

/** For process.on('exit'): removes the nova.conf folders a signal left behind. */
export function removeScratchDirsSync(): void {
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  liveDirs.clear();
}

export function serverKnex(server: Server, database?: string): Knex {
  const connection: Knex.MySql2ConnectionConfig = {
    host: server.host,
    port: server.port,
    user: server.user,
    connectTimeout: 5000,
    timezone: 'Z',
    dateStrings: true,
    supportBigNumbers: true,
  };
  if (server.password !== undefined) connection.password = server.password;
  if (database !== undefined) connection.database = database;
  return knexFactory({
    client: 'mysql2',
    connection,
    pool: {
      min: 0,
      max: 2,
      // oslo.db's session, as src/db/connect.ts sets it.
      afterCreate: (conn: SessionConn, done: (err: Error | null, conn: SessionConn) => void) => {
        conn.query("SET SESSION sql_mode = 'TRADITIONAL', time_zone = '+00:00'", (err) => done(err, conn));
      },
    },
  });
}

interface SessionConn {
  query(sql: string, cb: (err: Error | null) => void): void;
}

export interface ScratchOptions {
  /**
   * The servers the cells are spread over: cell i (0-based, cell0 not
   * counted) lives on cellServers[i mod S], and its cell_mappings row carries
   * that server's URL. Default: the main server alone. The API and cell0
   * databases always live on the main server.
   */
  readonly cellServers?: readonly Server[];
  /** Add a placement database (`<tag>_placement`, in `[placement_database] connection`), for the commands that read it. */
  readonly withPlacement?: boolean;
}

export async function createScratchDeployment(server: Server, cellCount: number, options: ScratchOptions = {}): Promise<ScratchDeployment> {
  const tag = `nrbench_${randomBytes(3).toString('hex')}`;
  const apiDatabase = `${tag}_api`;
  const cell0Database = `${tag}_cell0`;
  const cellDatabases = Array.from({ length: cellCount }, (_, i) => `${tag}_cell${i + 1}`);
  const pool = options.cellServers !== undefined && options.cellServers.length > 0 ? options.cellServers : [server];
  const cellServers = cellDatabases.map((_, i) => pool[i % pool.length] as Server);
  /** Every database with its server, the main server's first. */
  const placementDatabase = options.withPlacement === true ? `${tag}_placement` : undefined;
  const all: { readonly name: string; readonly on: Server }[] = [
    { name: apiDatabase, on: server },
    { name: cell0Database, on: server },
    ...cellDatabases.map((name, i) => ({ name, on: cellServers[i] as Server })),
    ...(placementDatabase === undefined ? [] : [{ name: placementDatabase, on: server }]),
  ];
  const servers = [...new Set(all.map((d) => d.on))];
  const namesOn = (on: Server): string[] => all.filter((d) => d.on === on).map((d) => d.name);

  const handles: Knex[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'nova-reconcile-bench-'));
  liveDirs.add(dir);
  const drop = async (): Promise<void> => {
    await Promise.all(handles.map((h) => h.destroy().catch(() => undefined)));
    for (const on of servers) await dropDatabases(on, namesOn(on));
    await rm(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  };
  try {
    for (const on of servers) {
      const admin = serverKnex(on);
      try {
        for (const name of namesOn(on)) {
          if (on === server) live.add(name);
          // Nova's databases are utf8mb3 (see reference/nova-zed-schema).
          await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci`);
        }
      } finally {
        await admin.destroy();
      }
    }
    const api = serverKnex(server, apiDatabase);
    handles.push(api);
    const cell0 = serverKnex(server, cell0Database);
    handles.push(cell0);
    const cellKnexes = cellDatabases.map((db, i) => serverKnex(cellServers[i] as Server, db));
    handles.push(...cellKnexes);
    await migrateSchema(api, 'api');
    const placement = placementDatabase === undefined ? undefined : serverKnex(server, placementDatabase);
    if (placement !== undefined) {
      handles.push(placement);
      await migrateSchema(placement, 'placement');
    }
    // The cells' DDL is independent: build them side by side.
    await Promise.all([cell0, ...cellKnexes].map((k) => migrateSchema(k, 'cell')));

    const urlOn = (on: Server, database: string): string => {
      const credentials =
        on.password === undefined ? encodeURIComponent(on.user) : `${encodeURIComponent(on.user)}:${encodeURIComponent(on.password)}`;
      return `mysql+pymysql://${credentials}@${on.host}:${on.port}/${database}?charset=utf8`;
    };
    const sqlalchemyUrl = (database: string): string => urlOn(server, database);
    const now = new Date().toISOString().slice(0, 19).replace('T', ' ');
    // As `nova-manage cell_v2 map_cell0` and `create_cell` write them.
    await api('cell_mappings').insert({
      created_at: now,
      updated_at: null,
      uuid: CELL0_UUID,
      name: 'cell0',
      transport_url: 'none:///',
      database_connection: sqlalchemyUrl(cell0Database),
      disabled: 0,
    });
    const cells: ScratchCell[] = [];
    for (const [i, database] of cellDatabases.entries()) {
      const uuid = randomUUID();
      const name = `cell${i + 1}`;
      await api('cell_mappings').insert({
        created_at: now,
        updated_at: null,
        uuid,
        name,
        transport_url: 'rabbit://guest:guest@127.0.0.1:5672/',
        database_connection: urlOn(cellServers[i] as Server, database),
        disabled: 0,
      });
      const row = (await api('cell_mappings').first('id').where({ uuid })) as { id: number | string } | undefined;
      if (row === undefined) throw new Error(`cell_mappings row of ${name} vanished`);
      const knex = cellKnexes[i];
      if (knex === undefined) throw new Error('internal: cell handle missing');
      cells.push({ id: Number(row.id), uuid, name, database, knex, server: cellServers[i] as Server });
    }

    const confPath = join(dir, 'nova.conf');
    const firstCell = cellDatabases[0];
    await writeFile(
      confPath,
      [
        '[DEFAULT]',
        // nova-manage logs here instead of on stderr.
        `log_file = ${join(dir, 'nova-manage.log')}`,
        // The generator writes every heartbeat once, at generation time; at
        // 100,000 hosts generating takes about a minute, and with Nova's 60 s
        // the first hosts would die mid-benchmark and the audits would time
        // 100,000 extra findings. The hosts the generator kills are forced down.
        'service_down_time = 3600',
        '',
        '[api_database]',
        `connection = ${sqlalchemyUrl(apiDatabase)}`,
        '',
        '[database]',
        `connection = ${firstCell === undefined ? sqlalchemyUrl(cell0Database) : urlOn(cellServers[0] as Server, firstCell)}`,
        '',
        ...(placementDatabase === undefined ? [] : ['[placement_database]', `connection = ${sqlalchemyUrl(placementDatabase)}`, '']),
        '[nova_reconcile]',
        `journal_dir = ${join(dir, 'journal')}`,
        '',
      ].join('\n'),
    );
    return {
      apiDatabase,
      api,
      cell0Database,
      cells,
      confPath,
      scaleDatabases: { api, cells: cells.map((c) => c.knex), cellIds: cells.map((c) => c.id) },
      placementDatabase,
      placement,
      sqlalchemyUrl,
      drop,
    };
  } catch (err) {
    await drop().catch(() => undefined);
    throw err;
  }
}

/** Drops the given databases (if they exist) on that server and forgets them. */
export async function dropDatabases(server: Server, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const admin = serverKnex(server);
  try {
    for (const name of names) {
      await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      live.delete(name);
    }
  } finally {
    await admin.destroy();
  }
}
