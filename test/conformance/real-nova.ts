// Conformance-tier harness around the real Nova 26.2.2 / Placement 8.0.0
// (Debian 12 python3-nova, python3-placement).
//
// A deployment is five MariaDB databases (api, cell0, cell1, cell2,
// placement) plus a nova.conf. The schema is built with the real tools
// (nova-manage api_db sync / cell_v2 map_cell0 / cell_v2 create_cell / db
// sync, placement-manage db sync) exactly once into a *template* deployment,
// which is cached across processes under a name derived from the installed
// versions (nrc_tmpl_<hash>_*). Every createRealDeployment() then clones the
// template: SHOW CREATE TABLE of each template table is replayed verbatim in
// the new database (CREATE TABLE ... LIKE would drop the foreign keys), and the
// rows the tools wrote (alembic_version, cell_mappings) are copied, with
// cell_mappings rewritten to point at the new cell databases.
//
// Interpreter: the Debian packages live in /usr/bin/python3's dist-packages;
// a pyenv/venv python3 earlier on PATH cannot import them. NRC_NOVA_PYTHON
// overrides the interpreter. NRC_REAL_NOVA_REBUILD=1 forces a fresh template.

import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import type { Connection, RowDataPacket } from 'mysql2/promise';

// ---------------------------------------------------------------------------
// Availability

export const realNovaSkipNotice =
  'Real Nova (python3-nova 26.2.2 / python3-placement 8.0.0) is not installed: ' +
  'the conformance tier against the real nova-manage was SKIPPED. ' +
  'Install it with `sudo scripts/install-real-nova.sh` (Debian 12; apt-get install ' +
  'python3-nova python3-placement python3-tooz). Set NRC_NOVA_PYTHON if the ' +
  'packages live in an interpreter other than /usr/bin/python3.';

interface Probe {
  python: string;
  nova: string;
  placement: string;
}

const PROBE_SCRIPT = [
  'import nova.cmd.manage, placement',
  'import importlib.metadata as m',
  'print(m.version("nova"))',
  'print(m.version("openstack-placement"))',
].join('\n');

let probeCache: Probe | null | undefined;

function pythonCandidates(): string[] {
  const env = process.env['NRC_NOVA_PYTHON'];
  if (env !== undefined && env !== '') return [env];
  const list: string[] = [];
  if (existsSync('/usr/bin/python3')) list.push('/usr/bin/python3');
  list.push('python3');
  return list;
}

function probe(): Probe | null {
  if (probeCache !== undefined) return probeCache;
  probeCache = null;
  for (const python of pythonCandidates()) {
    try {
      const out = execFileSync(python, ['-c', PROBE_SCRIPT], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 60_000,
      });
      const [nova, placement] = out.trim().split('\n');
      if (nova !== undefined && placement !== undefined) {
        probeCache = { python, nova: nova.trim(), placement: placement.trim() };
        break;
      }
    } catch {
      // try the next interpreter
    }
  }
  return probeCache;
}

/** True when the real nova-manage and placement-manage can be run (cached). */
export function realNovaAvailable(): boolean {
  return probe() !== null;
}

/** Installed versions, e.g. { nova: '26.2.2', placement: '8.0.0' }, or null. */
export function realNovaVersions(): { python: string; nova: string; placement: string } | null {
  const p = probe();
  return p === null ? null : { ...p };
}

function requireProbe(): Probe {
  const p = probe();
  if (p === null) throw new Error(realNovaSkipNotice);
  return p;
}

// ---------------------------------------------------------------------------
// Running the real tools

export interface ToolResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface ToolOptions {
  env?: Record<string, string>;
}

// sys.argv[0] is what argparse/oslo.config print as the program name ("usage: nova-manage
// ..."); under `python3 -c` it would be "-c". The packaged console scripts have
// /usr/bin/nova-manage there, whose basename is what we set.
const NOVA_MAIN = 'import sys; sys.argv[0] = "nova-manage"; from nova.cmd.manage import main; sys.exit(main())';
const PLACEMENT_MAIN =
  'import sys; sys.argv[0] = "placement-manage"; from placement.cmd.manage import main; sys.exit(main())';
const TOOL_TIMEOUT_MS = 120_000;

/**
 * The one line nova/monkey_patch.py logs (through oslo.log's last-resort
 * handler, before logging is configured) on every nova-manage run:
 * "Modules with known eventlet monkey patching issues were imported prior to
 * eventlet monkey patching: urllib3. This warning can usually be ignored if
 * the caller is only importing and not executing nova code."
 */
const EVENTLET_WARNING =
  /^Modules with known eventlet monkey patching issues were imported prior to eventlet monkey patching: [A-Za-z0-9_., ]+\. This warning can usually be ignored if the caller is only importing and not executing nova code\.$/;

/** Removes only the known eventlet/urllib3 warning line(s); everything else is kept byte for byte. */
export function filterNovaStderr(stderr: string): string {
  if (!stderr.includes('eventlet monkey patching')) return stderr;
  // Chunks keep their trailing "\n", so a dropped line takes its newline with it.
  return stderr
    .split(/(?<=\n)/)
    .filter((chunk) => !EVENTLET_WARNING.test(chunk.replace(/\r?\n$/, '')))
    .join('');
}

function runPython(
  code: string,
  confPath: string,
  args: readonly string[],
  opts: ToolOptions | undefined,
): Promise<ToolResult> {
  const { python } = requireProbe();
  const argv = ['-c', code, '--config-file', confPath, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(python, argv, {
      // argparse wraps usage text at $COLUMNS (else the tty width, else 80): pin it so
      // usage errors do not depend on the terminal the tests run in.
      env: { ...process.env, COLUMNS: '80', ...(opts?.env ?? {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, TOOL_TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = filterNovaStderr(Buffer.concat(err).toString('utf8'));
      if (timedOut) {
        reject(
          new Error(
            `timed out after ${TOOL_TIMEOUT_MS / 1000}s: ${python} ${argv.slice(2).join(' ')}\n` +
              `stdout:\n${stdout}\nstderr:\n${stderr}`,
          ),
        );
        return;
      }
      resolve({ stdout, stderr, code: code ?? (signal !== null ? 128 : 255) });
    });
  });
}

/** Runs the real `nova-manage --config-file <confPath> <args...>` (timeout 120 s). */
export function runNovaManage(
  confPath: string,
  args: readonly string[],
  opts?: ToolOptions,
): Promise<ToolResult> {
  return runPython(NOVA_MAIN, confPath, args, opts);
}

/** Runs the real `placement-manage --config-file <confPath> <args...>` (timeout 120 s). */
export function runPlacementManage(
  confPath: string,
  args: readonly string[],
  opts?: ToolOptions,
): Promise<ToolResult> {
  return runPython(PLACEMENT_MAIN, confPath, args, opts);
}

// ---------------------------------------------------------------------------
// MariaDB access

interface Server {
  host: string;
  port: number;
  user: string;
  password: string;
}

function server(): Server {
  const raw = process.env['TEST_MYSQL_URL'];
  if (raw === undefined || raw === '') {
    return { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
  }
  const u = new URL(raw);
  return {
    host: u.hostname === '' ? '127.0.0.1' : u.hostname,
    port: u.port === '' ? 3306 : Number(u.port),
    user: u.username === '' ? 'root' : decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

function sqlalchemyUrl(db: string): string {
  const s = server();
  const auth =
    encodeURIComponent(s.user) + (s.password === '' ? '' : ':' + encodeURIComponent(s.password));
  return `mysql+pymysql://${auth}@${s.host}:${s.port}/${db}?charset=utf8`;
}

async function connect(database?: string): Promise<Connection> {
  const s = server();
  return createConnection({
    host: s.host,
    port: s.port,
    user: s.user,
    password: s.password,
    multipleStatements: true,
    dateStrings: true,
    ...(database === undefined ? {} : { database }),
  });
}

async function withConnection<T>(fn: (c: Connection) => Promise<T>, database?: string): Promise<T> {
  const c = await connect(database);
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function qi(name: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unexpected identifier ${name}`);
  return '`' + name + '`';
}

async function rows<T extends RowDataPacket>(
  c: Connection,
  sql: string,
  params: ReadonlyArray<string | number | null> = [],
): Promise<T[]> {
  const [r] = await c.query<T[]>(sql, [...params]);
  return r;
}

async function baseTables(c: Connection, db: string): Promise<string[]> {
  const r = await rows<RowDataPacket & { t: string }>(
    c,
    "SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
    [db],
  );
  return r.map((x) => x.t);
}

async function databaseExists(c: Connection, db: string): Promise<boolean> {
  const r = await rows(c, 'SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [db]);
  return r.length === 1;
}

// ---------------------------------------------------------------------------
// Deployments

export type DbKind = 'api' | 'cell0' | 'cell1' | 'cell2' | 'placement';
const KINDS: readonly DbKind[] = ['api', 'cell0', 'cell1', 'cell2', 'placement'];
const CELL0_UUID = '00000000-0000-0000-0000-000000000000';

export interface RealDeployment {
  prefix: string;
  confPath: string;
  dir: string;
  /** Database names. */
  db: { api: string; cell0: string; cell1: string; cell2: string; placement: string };
  /** mysql+pymysql://root@127.0.0.1:3306/<db>?charset=utf8 */
  url(name: keyof RealDeployment['db']): string;
  /** Cell UUIDs (cell0 is always 00000000-0000-0000-0000-000000000000). */
  cells: { cell0: string; cell1: string; cell2: string };
  /** Empties every data table (host_mappings, services, compute_nodes, instances, migrations,
   * instance_mappings, placement tables, ...); keeps the schema, alembic_version, and
   * restores cell_mappings to the three original rows. */
  reset(): Promise<void>;
  /** Drops the five databases and the temp dir. */
  drop(): Promise<void>;
}

/** Rabbit vhost per cell: create_cell rejects a transport_url already used by another cell. */
function transportUrl(vhost: string): string {
  return `rabbit://guest:guest@127.0.0.1:5672/${vhost}`;
}

function novaConf(dir: string, db: Record<DbKind, string>, cellForDatabase: DbKind): string {
  return [
    '[DEFAULT]',
    `log_file = ${join(dir, 'nova.log')}`,
    `transport_url = ${transportUrl(db.cell1)}`,
    '',
    '[api_database]',
    `connection = ${sqlalchemyUrl(db.api)}`,
    '',
    '[database]',
    `connection = ${sqlalchemyUrl(db[cellForDatabase])}`,
    '',
    '[placement_database]',
    `connection = ${sqlalchemyUrl(db.placement)}`,
    '',
    // nova-reconcile's journals go with the deployment's folder, not to the
    // machine's /var/lib/nova-reconcile/journal (Nova ignores the group).
    '[nova_reconcile]',
    `journal_dir = ${join(dir, 'journal')}`,
    '',
  ].join('\n');
}

// Bump when the template recipe changes so caches built by an older recipe are ignored.
const RECIPE_VERSION = 1;

interface TableDdl {
  table: string;
  sql: string;
}

interface CellRow {
  id: number;
  name: string;
  uuid: string;
}

interface Template {
  key: string;
  db: Record<DbKind, string>;
  ddl: Record<DbKind, TableDdl[]>;
  /** Tables holding rows in the template (copied into clones). */
  dataTables: Record<DbKind, string[]>;
  cellRows: CellRow[];
  /** Wall time of the build with the real tools, or null when a cached template was reused. */
  buildMs: number | null;
  /** Wall time to make the template usable in this process (lock + validate/build + read DDL). */
  readyMs: number;
}

export interface RealNovaStats {
  templateKey: string | null;
  templateReused: boolean | null;
  templateBuildMs: number | null;
  templateReadyMs: number | null;
  /** Per-step timings of the last fresh build. */
  buildSteps: Record<string, number>;
  lastCloneMs: number | null;
}

/** Timings, for reporting. */
export const realNovaStats: RealNovaStats = {
  templateKey: null,
  templateReused: null,
  templateBuildMs: null,
  templateReadyMs: null,
  buildSteps: {},
  lastCloneMs: null,
};

let templatePromise: Promise<Template> | undefined;

function templateKey(p: Probe): string {
  const s = server();
  const h = createHash('sha256')
    .update(`nova=${p.nova}|placement=${p.placement}|recipe=${RECIPE_VERSION}|server=${s.host}:${s.port}`)
    .digest('hex')
    .slice(0, 12);
  return `nrc_tmpl_${h}`;
}

function templateNames(key: string): Record<DbKind, string> & { meta: string } {
  return {
    api: `${key}_api`,
    cell0: `${key}_cell0`,
    cell1: `${key}_cell1`,
    cell2: `${key}_cell2`,
    placement: `${key}_placement`,
    meta: `${key}_meta`,
  };
}

async function check(step: string, r: Promise<ToolResult>, steps: Record<string, number>): Promise<void> {
  const t0 = performance.now();
  const res = await r;
  steps[step] = Math.round(performance.now() - t0);
  if (res.code !== 0) {
    throw new Error(`${step} failed with exit ${res.code}\nstdout:\n${res.stdout}\nstderr:\n${res.stderr}`);
  }
}

async function buildTemplate(c: Connection, names: ReturnType<typeof templateNames>): Promise<number> {
  const t0 = performance.now();
  const steps: Record<string, number> = {};
  for (const n of [...KINDS.map((k) => names[k]), names.meta]) {
    await c.query(`DROP DATABASE IF EXISTS ${qi(n)}`);
  }
  for (const k of KINDS) await c.query(`CREATE DATABASE ${qi(names[k])}`);

  const dir = await mkdtemp(join(tmpdir(), 'nrc-tmpl-'));
  try {
    const main = join(dir, 'nova.conf');
    await writeFile(main, novaConf(dir, names, 'cell1'));
    const cellConf: Partial<Record<DbKind, string>> = { cell1: main };
    for (const k of ['cell0', 'cell2'] as const) {
      const p = join(dir, `nova-${k}.conf`);
      await writeFile(p, novaConf(dir, names, k));
      cellConf[k] = p;
    }
    const confFor = (k: 'cell0' | 'cell1' | 'cell2'): string => {
      const p = cellConf[k];
      if (p === undefined) throw new Error(`no conf for ${k}`);
      return p;
    };

    // The API database and the cell mappings; cell databases and placement are
    // independent of it and of each other, so they are synced concurrently.
    const apiChain = (async () => {
      await check('nova-manage api_db sync', runNovaManage(main, ['api_db', 'sync']), steps);
      await check(
        'nova-manage cell_v2 map_cell0',
        runNovaManage(main, ['cell_v2', 'map_cell0', '--database_connection', sqlalchemyUrl(names.cell0)]),
        steps,
      );
      for (const k of ['cell1', 'cell2'] as const) {
        await check(
          `nova-manage cell_v2 create_cell --name ${k}`,
          runNovaManage(main, [
            'cell_v2',
            'create_cell',
            '--name',
            k,
            '--database_connection',
            sqlalchemyUrl(names[k]),
            '--transport-url',
            transportUrl(names[k]),
          ]),
          steps,
        );
      }
    })();
    const cellSyncs = (['cell0', 'cell1', 'cell2'] as const).map((k) =>
      check(`nova-manage db sync --local_cell (${k})`, runNovaManage(confFor(k), ['db', 'sync', '--local_cell']), steps),
    );
    const placementSync = check('placement-manage db sync', runPlacementManage(main, ['db', 'sync']), steps);
    const results = await Promise.allSettled([apiChain, ...cellSyncs, placementSync]);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) {
      throw new Error(
        'building the real-nova template failed:\n' + failed.map((f) => String(f.reason)).join('\n---\n'),
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const counts: Record<string, number> = {};
  for (const k of KINDS) counts[k] = (await baseTables(c, names[k])).length;
  const buildMs = Math.round(performance.now() - t0);
  await c.query(`CREATE DATABASE ${qi(names.meta)}`);
  await c.query(
    `CREATE TABLE ${qi(names.meta)}.ready (id INT PRIMARY KEY, built_at DATETIME NOT NULL, build_ms INT NOT NULL, table_counts TEXT NOT NULL, steps TEXT NOT NULL)`,
  );
  await c.query(`INSERT INTO ${qi(names.meta)}.ready VALUES (1, UTC_TIMESTAMP(), ?, ?, ?)`, [
    buildMs,
    JSON.stringify(counts),
    JSON.stringify(steps),
  ]);
  realNovaStats.buildSteps = steps;
  return buildMs;
}

async function templateIsValid(c: Connection, names: ReturnType<typeof templateNames>): Promise<boolean> {
  if (!(await databaseExists(c, names.meta))) return false;
  let counts: Record<string, number>;
  try {
    const r = await rows<RowDataPacket & { table_counts: string }>(
      c,
      `SELECT table_counts FROM ${qi(names.meta)}.ready WHERE id = 1`,
    );
    const first = r[0];
    if (first === undefined) return false;
    counts = JSON.parse(first.table_counts) as Record<string, number>;
  } catch {
    return false;
  }
  for (const k of KINDS) {
    if (!(await databaseExists(c, names[k]))) return false;
    const n = (await baseTables(c, names[k])).length;
    if (n === 0 || n !== counts[k]) return false;
    const v = await rows(c, `SELECT version_num FROM ${qi(names[k])}.alembic_version`);
    if (v.length !== 1) return false;
  }
  const cells = await rows<RowDataPacket & { name: string }>(
    c,
    `SELECT name FROM ${qi(names.api)}.cell_mappings ORDER BY id`,
  );
  return cells.map((x) => x.name).join(',') === 'cell0,cell1,cell2';
}

async function loadTemplate(): Promise<Template> {
  const p = requireProbe();
  const t0 = performance.now();
  const key = templateKey(p);
  const names = templateNames(key);
  return withConnection(async (c) => {
    // Serialise concurrent test processes on the same server.
    const [lock] = await rows<RowDataPacket & { l: number | null }>(c, 'SELECT GET_LOCK(?, 900) AS l', [key]);
    if (lock?.l !== 1) throw new Error(`could not take the MariaDB lock ${key}`);
    try {
      let buildMs: number | null = null;
      const rebuild = process.env['NRC_REAL_NOVA_REBUILD'] === '1';
      if (rebuild || !(await templateIsValid(c, names))) {
        buildMs = await buildTemplate(c, names);
      }
      const ddl = {} as Record<DbKind, TableDdl[]>;
      const dataTables = {} as Record<DbKind, string[]>;
      for (const k of KINDS) {
        const tables = await baseTables(c, names[k]);
        const list: TableDdl[] = [];
        for (const t of tables) {
          const [r] = await rows<RowDataPacket & { 'Create Table': string }>(
            c,
            `SHOW CREATE TABLE ${qi(names[k])}.${qi(t)}`,
          );
          if (r === undefined) throw new Error(`SHOW CREATE TABLE ${names[k]}.${t} returned nothing`);
          list.push({ table: t, sql: r['Create Table'] });
        }
        ddl[k] = list;
        const probeSql = tables
          .map((t) => `SELECT ${c.escape(t)} AS t FROM (SELECT 1 FROM ${qi(names[k])}.${qi(t)} LIMIT 1) x`)
          .join(' UNION ALL ');
        const nonEmpty = await rows<RowDataPacket & { t: string }>(c, probeSql);
        dataTables[k] = nonEmpty.map((x) => x.t);
      }
      const cellRows = await rows<RowDataPacket & CellRow>(
        c,
        `SELECT id, name, uuid FROM ${qi(names.api)}.cell_mappings ORDER BY id`,
      );
      const readyMs = Math.round(performance.now() - t0);
      realNovaStats.templateKey = key;
      realNovaStats.templateReused = buildMs === null;
      realNovaStats.templateBuildMs = buildMs;
      realNovaStats.templateReadyMs = readyMs;
      return {
        key,
        db: { api: names.api, cell0: names.cell0, cell1: names.cell1, cell2: names.cell2, placement: names.placement },
        ddl,
        dataTables,
        cellRows: cellRows.map((r) => ({ id: r.id, name: r.name, uuid: r.uuid })),
        buildMs,
        readyMs,
      };
    } finally {
      await c.query('SELECT RELEASE_LOCK(?)', [key]);
    }
  });
}

function getTemplate(): Promise<Template> {
  if (templatePromise === undefined) {
    templatePromise = loadTemplate();
    templatePromise.catch(() => {
      templatePromise = undefined;
    });
  }
  return templatePromise;
}

/** The template databases the clones are made from (built or validated on first use). */
export async function realNovaTemplate(): Promise<{
  db: Record<DbKind, string>;
  buildMs: number | null;
  readyMs: number;
}> {
  const t = await getTemplate();
  return { db: { ...t.db }, buildMs: t.buildMs, readyMs: t.readyMs };
}

function sanitizePrefix(prefix: string): string {
  const s = prefix.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  return (s === '' ? 'x' : s).slice(0, 32);
}

interface OriginalCell {
  id: number;
  uuid: string;
  transport_url: string;
  database_connection: string;
}

async function cloneDatabase(t: Template, k: DbKind, target: string): Promise<void> {
  await withConnection(async (c) => {
    await c.query(`CREATE DATABASE ${qi(target)}`);
    await c.query(`USE ${qi(target)}`);
    const stmts = ['SET SESSION foreign_key_checks = 0', ...t.ddl[k].map((d) => d.sql)];
    await c.query(stmts.join(';\n'));
    for (const table of t.dataTables[k]) {
      await c.query(`INSERT INTO ${qi(target)}.${qi(table)} SELECT * FROM ${qi(t.db[k])}.${qi(table)}`);
    }
  });
}

async function restoreCellMappings(c: Connection, apiDb: string, cells: OriginalCell[], templateApi: string): Promise<void> {
  await c.query(`TRUNCATE TABLE ${qi(apiDb)}.cell_mappings`);
  await c.query(`INSERT INTO ${qi(apiDb)}.cell_mappings SELECT * FROM ${qi(templateApi)}.cell_mappings`);
  for (const cell of cells) {
    await c.query(
      `UPDATE ${qi(apiDb)}.cell_mappings SET uuid = ?, transport_url = ?, database_connection = ? WHERE id = ?`,
      [cell.uuid, cell.transport_url, cell.database_connection, cell.id],
    );
  }
}

/**
 * Creates a deployment: five fresh databases cloned from the real-tools
 * template (built on first use), and a nova.conf in a temp dir.
 */
export async function createRealDeployment(prefix: string): Promise<RealDeployment> {
  const t = await getTemplate();
  const t0 = performance.now();
  const p = sanitizePrefix(prefix);
  const rand = randomBytes(4).toString('hex');
  const db = {
    api: `nrc_${p}_api_${rand}`,
    cell0: `nrc_${p}_cell0_${rand}`,
    cell1: `nrc_${p}_cell1_${rand}`,
    cell2: `nrc_${p}_cell2_${rand}`,
    placement: `nrc_${p}_placement_${rand}`,
  };
  const url = (name: DbKind): string => sqlalchemyUrl(db[name]);

  const cells = { cell0: CELL0_UUID, cell1: randomUUID(), cell2: randomUUID() };
  const original: OriginalCell[] = [];
  for (const row of t.cellRows) {
    if (row.name !== 'cell0' && row.name !== 'cell1' && row.name !== 'cell2') {
      throw new Error(`unexpected template cell ${row.name}`);
    }
    const name = row.name;
    original.push({
      id: row.id,
      uuid: cells[name],
      transport_url: name === 'cell0' ? 'none:///' : transportUrl(db[name]),
      database_connection: url(name),
    });
  }

  const dir = await mkdtemp(join(tmpdir(), `nrc-${p}-`));
  const confPath = join(dir, 'nova.conf');
  try {
    await writeFile(confPath, novaConf(dir, db, 'cell1'));
    await Promise.all(KINDS.map((k) => cloneDatabase(t, k, db[k])));
    await withConnection(async (c) => {
      for (const cell of original) {
        await c.query(
          `UPDATE ${qi(db.api)}.cell_mappings SET uuid = ?, transport_url = ?, database_connection = ? WHERE id = ?`,
          [cell.uuid, cell.transport_url, cell.database_connection, cell.id],
        );
      }
    });
  } catch (e) {
    await withConnection(async (c) => {
      for (const k of KINDS) await c.query(`DROP DATABASE IF EXISTS ${qi(db[k])}`);
    }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  realNovaStats.lastCloneMs = Math.round(performance.now() - t0);

  const reset = async (): Promise<void> => {
    await Promise.all(
      KINDS.map((k) =>
        withConnection(async (c) => {
          await c.query('SET SESSION foreign_key_checks = 0');
          const info = await rows<RowDataPacket & { t: string; ai: number | null }>(
            c,
            "SELECT TABLE_NAME AS t, AUTO_INCREMENT AS ai FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE'",
            [db[k]],
          );
          for (const { t: table, ai } of info) {
            if (table === 'alembic_version') continue;
            if (k === 'api' && table === 'cell_mappings') continue;
            if (ai === null) {
              // No AUTO_INCREMENT column: DELETE is cheap when the table is empty.
              await c.query(`DELETE FROM ${qi(db[k])}.${qi(table)}`);
            } else if (Number(ai) > 1) {
              // Rows were inserted at some point; TRUNCATE also resets the counter.
              await c.query(`TRUNCATE TABLE ${qi(db[k])}.${qi(table)}`);
            }
          }
          if (k === 'api') {
            const now = await rows<RowDataPacket & OriginalCell>(
              c,
              `SELECT id, uuid, transport_url, database_connection FROM ${qi(db.api)}.cell_mappings ORDER BY id`,
            );
            const same =
              now.length === original.length &&
              now.every((r, i) => {
                const o = original[i];
                return (
                  o !== undefined &&
                  r.id === o.id &&
                  r.uuid === o.uuid &&
                  r.transport_url === o.transport_url &&
                  r.database_connection === o.database_connection
                );
              });
            if (!same) await restoreCellMappings(c, db.api, original, t.db.api);
            else {
              // Names/disabled flags may have been changed by update_cell.
              const [diff] = await rows<RowDataPacket & { n: number }>(
                c,
                `SELECT COUNT(*) AS n FROM ${qi(db.api)}.cell_mappings a JOIN ${qi(t.db.api)}.cell_mappings b USING (id)
                 WHERE NOT (a.name <=> b.name AND a.disabled <=> b.disabled AND a.created_at <=> b.created_at AND a.updated_at <=> b.updated_at)`,
              );
              if (Number(diff?.n ?? 0) > 0) await restoreCellMappings(c, db.api, original, t.db.api);
            }
          }
        }),
      ),
    );
  };

  const drop = async (): Promise<void> => {
    await withConnection(async (c) => {
      for (const k of KINDS) await c.query(`DROP DATABASE IF EXISTS ${qi(db[k])}`);
    });
    await rm(dir, { recursive: true, force: true });
  };

  return { prefix: p, confPath, dir, db, url, cells, reset, drop };
}
