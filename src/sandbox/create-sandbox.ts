// `sandbox create`: a complete deployment in SQLite files (the API database,
// cell0, two cells and placement), built by our migrations, mapped as
// `nova-manage cell_v2 map_cell0` / `create_cell` would map it, populated
// with a scenario, and described by a nova.conf that the tool (and anyone's
// nova-manage) can be pointed at.
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import { describeFileError, makeDirectories } from '../files.js';
import { isAbsolute, join, resolve } from 'node:path';
import type { Knex } from 'knex';
import { parseDbUrl } from '../config/db-url.js';
import { closeDatabase, openDatabase, type Database } from '../db/connect.js';
import { sqliteDriver } from '../db/sqlite-driver.js';
import { CELL0_UUID } from '../db/deployment-databases.js';
import { migrateSchema, type SchemaKind } from '../db/migrate.js';
import { ReconcileError } from '../errors.js';
import { insertCellMapping } from './rows.js';
import { SCENARIOS, findScenario, scenarioNames, type Scenario, type ScenarioDatabases } from './scenarios.js';
import { utcNowString } from '../db/time.js';

export type SandboxDatabaseName = 'api' | 'cell0' | 'cell1' | 'cell2' | 'placement';

interface DatabaseLayout {
  readonly file: string;
  readonly kind: SchemaKind;
  readonly role: string;
}

/** File names inside DIR; cell0 has the cell schema, like every cell. */
export const SANDBOX_DATABASES: Readonly<Record<SandboxDatabaseName, DatabaseLayout>> = Object.freeze({
  api: { file: 'nova_api.sqlite', kind: 'api', role: 'sandbox API database' },
  cell0: { file: 'nova_cell0.sqlite', kind: 'cell', role: "sandbox cell 'cell0' database" },
  cell1: { file: 'nova_cell1.sqlite', kind: 'cell', role: "sandbox cell 'cell1' database" },
  cell2: { file: 'nova_cell2.sqlite', kind: 'cell', role: "sandbox cell 'cell2' database" },
  placement: { file: 'placement.sqlite', kind: 'placement', role: 'sandbox placement database' },
});

const DATABASE_NAMES: readonly SandboxDatabaseName[] = ['api', 'cell0', 'cell1', 'cell2', 'placement'];

export const SANDBOX_CONFIG_FILE = 'nova.conf';
export const SANDBOX_JOURNAL_DIR = 'journal';

/** The sandbox's fixed cell uuids (cell0's is Nova's own). */
export const SANDBOX_CELL_UUIDS = Object.freeze({
  cell0: CELL0_UUID,
  cell1: '4dde17f6-6b53-4318-915d-00c67a4771f4',
  cell2: '39d68972-336c-428f-8ff5-77ff98269691',
});

/** The local message queue a devstack-like deployment would use; nothing ever connects to it. */
export const SANDBOX_TRANSPORT_URL = 'rabbit://guest:guest@127.0.0.1:5672/';

export interface SandboxDatabase {
  readonly path: string;
  /** The SQLAlchemy URL written into nova.conf and cell_mappings: sqlite:////abs/path. */
  readonly url: string;
}

export interface SandboxCell {
  readonly name: 'cell0' | 'cell1' | 'cell2';
  readonly uuid: string;
  readonly id: number;
  readonly database: SandboxDatabase;
}

export interface SandboxInfo {
  readonly dir: string;
  readonly configFile: string;
  readonly journalDir: string;
  readonly scenario: Scenario;
  readonly databases: Readonly<Record<SandboxDatabaseName, SandboxDatabase>>;
  readonly cells: readonly SandboxCell[];
  /** True when --force replaced an earlier sandbox in DIR. */
  readonly replaced: boolean;
}

export interface CreateSandboxOptions {
  /** Replace a previous sandbox in DIR (nothing else is ever removed). */
  readonly force?: boolean;
  /** Progress lines (for stderr). */
  readonly progress?: (line: string) => void;
}

/** `sqlite:////abs/path`: three slashes for the scheme, one for the absolute path. */
export function sqliteUrl(path: string): string {
  return `sqlite:///${path}`;
}

/**
 * Build the sandbox in `dir` (resolved against the process's cwd if
 * relative; the CLI passes an absolute path). Refuses a DIR that is not empty
 * unless it holds only a previous sandbox and `force` is set.
 */
export async function createSandbox(dir: string, scenarioName: string, opts: CreateSandboxOptions = {}): Promise<SandboxInfo> {
  const scenario = requireScenario(scenarioName);
  const root = isAbsolute(dir) ? dir : resolve(dir);
  checkPathIsUsable(root);
  // Before DIR is touched: a run without an SQLite driver leaves nothing behind.
  sqliteDriver('sandbox create');
  const progress = opts.progress ?? (() => undefined);
  const replaced = await prepareDirectory(root, opts.force ?? false);

  const databases = Object.fromEntries(
    DATABASE_NAMES.map((name) => {
      const path = join(root, SANDBOX_DATABASES[name].file);
      return [name, { path, url: sqliteUrl(path) }];
    }),
  ) as Record<SandboxDatabaseName, SandboxDatabase>;
  const configFile = join(root, SANDBOX_CONFIG_FILE);
  const journalDir = join(root, SANDBOX_JOURNAL_DIR);

  const opened: Database[] = [];
  try {
    const handles = {} as Record<SandboxDatabaseName, Knex>;
    for (const name of DATABASE_NAMES) handles[name] = await createDatabase(name, databases[name], opened, progress);

    progress(`Mapping cell0, cell1 and cell2 in the sandbox API database`);
    const cells = await mapSandboxCells(handles.api, {
      cell0: databases.cell0.url,
      cell1: databases.cell1.url,
      cell2: databases.cell2.url,
    });

    progress(`Populating scenario ${scenario.name}`);
    await scenario.populate({
      api: handles.api,
      cells: { cell1: handles.cell1, cell2: handles.cell2 },
      placement: handles.placement,
      ...cells,
    });

    // After populating: every heartbeat the scenario wrote is at or before this moment.
    const createdAt = utcNowString();
    for (const [name, text] of Object.entries(scenario.files ?? {})) {
      const path = join(root, name);
      await fsStep(`write ${path}`, () => writeFile(path, text, { flag: 'wx' }));
    }
    await fsStep(`create ${journalDir}`, async () => makeDirectories(journalDir));
    await fsStep(`write ${configFile}`, () => writeFile(configFile, renderNovaConf(scenario, databases, journalDir, createdAt), { flag: 'wx' }));

    return {
      dir: root,
      configFile,
      journalDir,
      scenario,
      databases,
      cells: (['cell0', 'cell1', 'cell2'] as const).map((name) => ({
        name,
        uuid: cells.cellUuids[name],
        id: cells.cellIds[name],
        database: databases[name],
      })),
      replaced,
    };
  } catch (err) {
    // Leave DIR as we found it (minus a replaced sandbox), so a retry needs no --force.
    await Promise.all(opened.map((db) => closeDatabase(db).catch(() => undefined)));
    opened.length = 0;
    await removeSandboxEntries(root).catch(() => undefined);
    throw err;
  } finally {
    await Promise.all(opened.map((db) => closeDatabase(db).catch(() => undefined)));
  }
}

/** Create one sandbox database file with its schema; the handle joins `opened`, to be closed by the caller. */
async function createDatabase(name: SandboxDatabaseName, { path, url }: SandboxDatabase, opened: Database[], progress: (line: string) => void): Promise<Knex> {
  const layout = SANDBOX_DATABASES[name];
  // An empty file is an empty SQLite database; openDatabase wants it to exist.
  await fsStep(`create ${path}`, () => writeFile(path, '', { flag: 'wx' }));
  const target = parseDbUrl(url);
  if (target.kind !== 'sqlite' || target.filename !== path) {
    throw new ReconcileError('internal', `the sandbox URL ${url} does not name ${path}`);
  }
  const db = await openDatabase(target, { connectTimeout: 10, role: layout.role });
  opened.push(db);
  progress(`Creating the ${layout.kind} schema in ${db.label}`);
  await migrateSchema(db.knex, layout.kind);
  return db.knex;
}

export function requireScenario(name: string): Scenario {
  const scenario = findScenario(name);
  if (scenario === undefined) {
    throw new ReconcileError('usage', `unknown scenario "${name}"; choose one of: ${scenarioNames().join(', ')}`, {
      hint: 'run `nova-reconcile sandbox create --help` for what each scenario contains',
    });
  }
  return scenario;
}

/**
 * The cell_mappings rows of a sandbox, in the order nova-manage would create
 * them (map_cell0 first, so ids are 1, 2, 3 on a fresh database). Shared with
 * the tests, which map scenario databases on MariaDB the same way.
 */
export async function mapSandboxCells(
  api: Knex,
  urls: { readonly cell0: string; readonly cell1: string; readonly cell2: string },
): Promise<Pick<ScenarioDatabases, 'cellIds' | 'cellUuids'>> {
  const cell0 = await insertCellMapping(api, {
    uuid: SANDBOX_CELL_UUIDS.cell0,
    name: 'cell0',
    // map_cell0's transport: cell0 never has a message queue.
    transportUrl: 'none:///',
    databaseConnection: urls.cell0,
  });
  const cell1 = await insertCellMapping(api, {
    uuid: SANDBOX_CELL_UUIDS.cell1,
    name: 'cell1',
    transportUrl: `${SANDBOX_TRANSPORT_URL}cell1`,
    databaseConnection: urls.cell1,
  });
  const cell2 = await insertCellMapping(api, {
    uuid: SANDBOX_CELL_UUIDS.cell2,
    name: 'cell2',
    transportUrl: `${SANDBOX_TRANSPORT_URL}cell2`,
    databaseConnection: urls.cell2,
  });
  return { cellIds: { cell0, cell1, cell2 }, cellUuids: { ...SANDBOX_CELL_UUIDS } };
}

export function renderNovaConf(scenario: Scenario, databases: Readonly<Record<SandboxDatabaseName, SandboxDatabase>>, journalDir: string, createdAt: string): string {
  return [
    `# Written by \`nova-reconcile sandbox create\` (scenario ${scenario.name}).`,
    '# A throw-away deployment in SQLite files: nothing here points at a real cloud,',
    '# and no message queue is ever contacted.',
    '',
    '[DEFAULT]',
    `transport_url = ${SANDBOX_TRANSPORT_URL}`,
    '',
    '[api_database]',
    `connection = ${databases.api.url}`,
    '',
    '# The "local" cell, as on a cell1 conductor.',
    '[database]',
    `connection = ${databases.cell1.url}`,
    '',
    '# Nova ignores this group (it lives in placement.conf); nova-reconcile reads it.',
    '[placement_database]',
    `connection = ${databases.placement.url}`,
    '',
    '[nova_reconcile]',
    `journal_dir = ${journalDir}`,
    '# The sandbox is a picture of a deployment taken when it was created: its',
    '# services heartbeated then and never again. nova-reconcile judges service',
    '# liveness as of this moment (naive UTC) instead of the clock, so live',
    '# services stay live and dead ones stay dead however long the sandbox is',
    '# kept. Never set this on a real deployment.',
    `sandbox_created_at = ${createdAt}`,
    '',
  ].join('\n');
}

/**
 * Characters that would not survive nova.conf or a SQLAlchemy URL: `?` starts
 * the URL's query, `$` is oslo.config's interpolation, and a line break ends
 * the value.
 */
function checkPathIsUsable(root: string): void {
  const bad = /[?$\r\n]/.exec(root);
  if (bad !== null) {
    throw new ReconcileError('input', `the sandbox directory ${JSON.stringify(root)} contains ${JSON.stringify(bad[0])}, which cannot be written into nova.conf`, {
      hint: 'choose a directory whose path has no ?, $ or line break',
    });
  }
}

/** Names a previous sandbox leaves in DIR (SQLite's -journal/-wal/-shm files included). */
function isSandboxEntry(name: string): boolean {
  if (name === SANDBOX_CONFIG_FILE || name === SANDBOX_JOURNAL_DIR) return true;
  if (SCENARIOS.some((s) => Object.keys(s.files ?? {}).includes(name))) return true;
  return DATABASE_NAMES.some((db) => {
    const file = SANDBOX_DATABASES[db].file;
    return name === file || name === `${file}-journal` || name === `${file}-wal` || name === `${file}-shm`;
  });
}

/** Creates DIR, or empties a previous sandbox from it under --force. Returns whether one was replaced. */
async function prepareDirectory(root: string, force: boolean): Promise<boolean> {
  let entries: string[];
  try {
    const info = await stat(root);
    if (!info.isDirectory()) {
      throw new ReconcileError('input', `${root} exists and is not a directory`, { hint: 'choose a new or empty directory for the sandbox' });
    }
    entries = await readdir(root);
  } catch (err) {
    if (err instanceof ReconcileError) throw err;
    if (isErrno(err, 'ENOENT')) {
      await fsStep(`create ${root}`, async () => makeDirectories(root));
      return false;
    }
    throw fsError(`read ${root}`, err);
  }
  if (entries.length === 0) return false;
  const foreign = entries.filter((e) => !isSandboxEntry(e)).sort();
  if (foreign.length > 0) {
    const shown = foreign.slice(0, 5).join(', ') + (foreign.length > 5 ? `, ... (${foreign.length} in all)` : '');
    throw new ReconcileError('input', `${root} is not empty: it holds ${shown}`, {
      hint: force
        ? '--force only replaces a previous sandbox, and these files are not part of one; choose a new or empty directory'
        : 'choose a new or empty directory for the sandbox',
    });
  }
  if (!force) {
    throw new ReconcileError('input', `${root} already holds a sandbox`, {
      hint: 'pass --force to replace it, deleting its databases and journal, or choose another directory',
    });
  }
  await removeSandboxEntries(root);
  return true;
}

async function removeSandboxEntries(root: string): Promise<void> {
  const entries = await readdir(root);
  for (const name of entries.filter(isSandboxEntry)) {
    await fsStep(`remove ${join(root, name)}`, () => rm(join(root, name), { recursive: true, force: true }));
  }
}

async function fsStep<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw fsError(what, err);
  }
}

function fsError(what: string, err: unknown): ReconcileError {
  const reason = describeFileError(err);
  return new ReconcileError('input', `cannot ${what}: ${reason}`, { hint: 'choose a directory you can write to', cause: err });
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && (err as { code: unknown }).code === code;
}
