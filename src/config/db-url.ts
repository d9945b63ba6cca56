// SQLAlchemy database URLs, read the way Nova's stack reads them (nova-facts §9):
// SQLAlchemy 1.4.46 make_url, oslo.db 12.1's defaults, then PyMySQL 1.0's
// connect() keyword handling, including read_default_file. The result is a
// DbTarget for our drivers (mysql2, better-sqlite3).
//
// Every error message shows the URL only through redactUrl.

import { homedir } from 'node:os';
import { ReconcileError } from '../errors.js';
import { describeFileError, readTextFile } from '../files.js';
import type { DbTarget, MysqlSsl } from './types.js';
import { redactUrl } from './mask-url.js';
import { parseMyCnf, type MyCnf } from './my-cnf.js';
import { parsePythonInt } from './python-url.js';
import { parseQueryPairs, unquotePython } from './python-unquote.js';

export interface ParseDbUrlOptions {
  /** Reads a read_default_file; defaults to a bounded UTF-8 read (files.ts). */
  readonly readFile?: (path: string) => string;
  /** For `~` in read_default_file (os.path.expanduser); defaults to os.homedir(). */
  readonly home?: string;
  /** Where the URL came from, for messages, e.g. "[api_database] connection". */
  readonly source?: string;
  /**
   * oslo.db's [database]/connection_parameters: extra query arguments
   * ("k=v&k2=v2") appended to the URL's own.
   */
  readonly connectionParameters?: string;
}

// sqlalchemy/engine/url.py:_parse_url (1.4.46). Not anchored at the end, like re.match.
const SQLALCHEMY_URL =
  /^(?<name>[\w+]+):\/\/(?:(?<username>[^:/]*)(?::(?<password>[^@]*))?@)?(?:(?:\[(?<ipv6host>[^/?]+)\]|(?<ipv4host>[^/:?]+))?(?::(?<port>[^/?]*))?)?(?:\/(?<database>[^?]*))?(?:\?(?<query>.*))?/;

const MYSQL_SCHEMES = new Set(['mysql', 'mysql+pymysql', 'mysql+mysqldb']);
const SQLITE_SCHEMES = new Set(['sqlite', 'sqlite+pysqlite']);

// PyMySQL connect() arguments that do not change which server, database or
// credentials are used; accepted (they work in nova.conf) and not applied.
const MYSQL_IGNORED_ARGS = new Set([
  'plugin', 'plugins', // consumed by SQLAlchemy itself (devstack's plugin=dbcounter)
  'connect_timeout', 'read_timeout', 'write_timeout', // ours: [nova_reconcile] connect_timeout
  'program_name', 'local_infile', 'autocommit', 'compress', 'max_allowed_packet', 'binary_prefix',
  'client_flag', 'use_unicode', 'bind_address', 'defer_connect', 'init_command', 'sql_mode', 'server_public_key',
]);

// sqlite3.connect() arguments SQLAlchemy's pysqlite dialect coerces from the query.
const SQLITE_IGNORED_ARGS = new Set(['timeout', 'isolation_level', 'detect_types', 'check_same_thread', 'cached_statements']);

const DEFAULT_MYSQL_PORT = 3306;

/** Parses a SQLAlchemy URL into a driver target; ReconcileError('config') for anything we cannot honour. */
export function parseDbUrl(url: string, opts: ParseDbUrlOptions = {}): DbTarget {
  const where = opts.source === undefined ? '' : ` (${opts.source})`;
  const hint = opts.source === undefined ? 'fix the database URL in the configuration' : `fix ${opts.source} in the configuration`;
  const fail = (message: string): never => {
    throw new ReconcileError('config', message, { hint });
  };

  const match = SQLALCHEMY_URL.exec(url);
  const groups = match?.groups;
  // No URL text: a string that does not even have a scheme may be a bare password.
  if (groups === undefined) fail(`malformed database URL${where}: expected dialect+driver://user:password@host:port/database`);
  const g = groups ?? {};
  const scheme = g['name'] ?? '';

  if (SQLITE_SCHEMES.has(scheme)) return sqliteTarget(url, g, opts, where, fail);
  if (!MYSQL_SCHEMES.has(scheme)) {
    fail(`unsupported database URL scheme "${scheme}"${where}: nova-reconcile supports mysql (mysql+pymysql://) and sqlite`);
  }
  return mysqlTarget(url, g, opts, where, fail);
}

type Groups = Record<string, string | undefined>;
type Fail = (message: string) => never;

/** A MySQL URL's parts, filled from the URL, then its query, then an option file. */
interface MysqlParts {
  user: string | undefined;
  password: string | undefined;
  host: string | undefined;
  database: string | undefined;
  port: number | undefined;
  charset: string | undefined;
  socketPath: string | undefined;
  defaultFile: string | undefined;
  defaultGroup: string | undefined;
  readonly ssl: { -readonly [K in keyof MysqlSsl]: MysqlSsl[K] };
  sslDisabled: boolean;
}

function mysqlTarget(url: string, g: Groups, opts: ParseDbUrlOptions, where: string, fail: Fail): DbTarget {
  const shown = `${redactUrl(url)}${where}`;
  const parts: MysqlParts = {
    // SQLAlchemy's translate_connect_args drops empty values: "mysql://:@/db" has no user, password or host.
    user: nonEmpty(g['username'] === undefined ? undefined : unquotePython(g['username'])),
    password: nonEmpty(g['password'] === undefined ? undefined : unquotePython(g['password'])),
    host: nonEmpty(g['ipv4host'] ?? g['ipv6host']),
    // SQLAlchemy 1.4 does not percent-decode the database name (only user and password).
    database: nonEmpty(g['database']),
    port: g['port'] === undefined ? undefined : parsePort(g['port'], shown, fail),
    charset: undefined,
    socketPath: undefined,
    defaultFile: undefined,
    defaultGroup: undefined,
    ssl: {},
    sslDisabled: false,
  };
  for (const [key, value] of readQuery(g['query'], opts.connectionParameters, shown, fail)) applyQueryArg(parts, key, value, shown, fail);
  // PyMySQL: read_default_group alone means /etc/my.cnf, group [client] by default.
  if (parts.defaultGroup !== undefined && parts.defaultFile === undefined) parts.defaultFile = '/etc/my.cnf';
  if (parts.defaultFile !== undefined) applyOptionFile(parts, parts.defaultFile, opts, shown, fail);

  const { host, port, user, password, database, socketPath, ssl } = parts;
  const finalCharset = parts.charset ?? 'utf8'; // oslo.db engines._init_connection_args
  const display = socketPath !== undefined
    ? `mysql://localhost via ${socketPath}/${database ?? ''}`
    : `mysql://${displayHost(host ?? 'localhost')}:${port ?? DEFAULT_MYSQL_PORT}/${database ?? ''}`;
  const hasSsl = !parts.sslDisabled && Object.keys(ssl).length > 0;
  return Object.freeze({
    kind: 'mysql' as const,
    host,
    port,
    user,
    password,
    database,
    socketPath,
    charset: finalCharset,
    display,
    ...(hasSsl ? { ssl: Object.freeze(ssl) } : {}),
  });
}

function applyQueryArg(parts: MysqlParts, key: string, value: string, shown: string, fail: Fail): void {
  const ssl = parts.ssl;
  switch (key) {
    case 'charset':
      parts.charset = value;
      break;
    case 'unix_socket':
      parts.socketPath = value;
      break;
    case 'read_default_file':
      parts.defaultFile = value;
      break;
    case 'read_default_group':
      parts.defaultGroup = value;
      break;
    case 'ssl_ca':
      ssl.ca = value;
      break;
    case 'ssl_cert':
      ssl.cert = value;
      break;
    case 'ssl_key':
      ssl.key = value;
      break;
    case 'ssl_capath':
      ssl.capath = value;
      break;
    case 'ssl_cipher':
      ssl.cipher = value;
      break;
    case 'ssl_check_hostname':
      ssl.checkHostname = parseBool(key, value, shown, fail);
      break;
    case 'ssl_verify_cert':
      ssl.verifyCert = parseBool(key, value, shown, fail);
      break;
    case 'ssl_verify_identity':
      ssl.verifyIdentity = parseBool(key, value, shown, fail);
      break;
    case 'ssl_disabled':
      parts.sslDisabled = parseBool(key, value, shown, fail);
      break;
    default:
      if (!MYSQL_IGNORED_ARGS.has(key)) {
        // PyMySQL's connect() raises TypeError on an unexpected keyword: nova-manage exits 255.
        fail(`unsupported database URL option "${key}" in ${shown}`);
      }
  }
}

/** PyMySQL's _config(): a value in the URL wins; the option file fills the gaps. */
function applyOptionFile(parts: MysqlParts, defaultFile: string, opts: ParseDbUrlOptions, shown: string, fail: Fail): void {
  const cnf = readOptionFile(expandHome(defaultFile, opts.home ?? homedir()), opts, shown);
  const group = parts.defaultGroup ?? 'client';
  parts.user ??= nonEmpty(cnf.get(group, 'user'));
  parts.password ??= nonEmpty(cnf.get(group, 'password'));
  parts.host ??= nonEmpty(cnf.get(group, 'host'));
  parts.database ??= nonEmpty(cnf.get(group, 'database'));
  parts.socketPath ??= nonEmpty(cnf.get(group, 'socket'));
  const cnfPort = cnf.get(group, 'port');
  if (parts.port === undefined && cnfPort !== undefined && cnfPort !== '') parts.port = parsePort(cnfPort, `${defaultFile} [${group}] port`, fail);
  // default-character-set is never used: oslo.db always passes charset (utf8 unless the URL says).
  for (const key of ['ca', 'capath', 'cert', 'key', 'cipher'] as const) {
    const value = nonEmpty(cnf.get(group, `ssl-${key}`));
    if (parts.ssl[key] === undefined && value !== undefined) parts.ssl[key] = value;
  }
}

function sqliteTarget(url: string, g: Groups, opts: ParseDbUrlOptions, where: string, fail: Fail): DbTarget {
  const shown = `${redactUrl(url)}${where}`;
  // pysqlite dialect: anything in the authority is an error.
  if (nonEmpty(g['username']) !== undefined || nonEmpty(g['password']) !== undefined || nonEmpty(g['ipv4host'] ?? g['ipv6host']) !== undefined || nonEmpty(g['port']) !== undefined) {
    fail(`invalid SQLite URL ${shown}: use sqlite:///relative/path, sqlite:////absolute/path or sqlite:// (in memory)`);
  }
  for (const [key] of readQuery(g['query'], opts.connectionParameters, shown, fail)) {
    if (!SQLITE_IGNORED_ARGS.has(key)) fail(`unsupported database URL option "${key}" in ${shown}`);
  }
  const filename = nonEmpty(g['database']) ?? ':memory:';
  return Object.freeze({
    kind: 'sqlite' as const,
    filename,
    display: filename === ':memory:' ? 'sqlite://' : `sqlite:///${filename}`,
  });
}

function readQuery(query: string | undefined, extra: string | undefined, shown: string, fail: Fail): ReadonlyMap<string, string> {
  const pairs = [...(query === undefined ? [] : parseQueryPairs(query)), ...(extra === undefined ? [] : parseQueryPairs(extra))];
  const result = new Map<string, string>();
  for (const [key, value] of pairs) {
    // SQLAlchemy turns a repeated key into a list, which no driver argument accepts.
    if (result.has(key)) fail(`database URL option "${key}" is given more than once in ${shown}`);
    result.set(key, value);
  }
  return result;
}

function parsePort(text: string, shown: string, fail: Fail): number {
  const port = parsePythonInt(text);
  if (port === undefined || port < 1 || port > 65535) {
    // The port text is not secret, but keep it short.
    fail(`bad port "${text.slice(0, 20)}" in ${shown}: expected an integer from 1 to 65535`);
  }
  return port ?? DEFAULT_MYSQL_PORT;
}

// sqlalchemy.util.asbool, as coerce_kw_type(..., bool) applies it.
function parseBool(key: string, value: string, shown: string, fail: Fail): boolean {
  const v = value.trim().toLowerCase();
  if (['true', 'yes', 'on', 'y', 't', '1'].includes(v)) return true;
  if (['false', 'no', 'off', 'n', 'f', '0'].includes(v)) return false;
  return fail(`database URL option "${key}" must be true or false in ${shown}`);
}

function readOptionFile(path: string, opts: ParseDbUrlOptions, shown: string): MyCnf {
  const read = opts.readFile ?? ((p: string) => readTextFile(p, 1024 * 1024));
  let text: string;
  try {
    text = read(path);
  } catch (err) {
    // PyMySQL (configparser.read) silently skips a missing file and then
    // connects without its credentials; a clear error is kinder.
    const reason = (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' ? 'not found' : describeFileError(err);
    throw new ReconcileError('config', `cannot read MySQL option file ${path} (read_default_file in ${shown}): ${reason}`, {
      hint: `create ${path} or remove read_default_file from the database URL`,
      cause: err,
    });
  }
  return parseMyCnf(text, path);
}

// os.path.expanduser for "~" and "~/..." (not "~user").
function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return home.replace(/\/+$/, '') + path.slice(1);
  return path;
}

function displayHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
