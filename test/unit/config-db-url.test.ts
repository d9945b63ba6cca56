import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDbUrl } from '../../src/config/db-url.js';
import { isReconcileError } from '../../src/errors.js';

const MARKER = 'S3cr3tMarker';

function errorOf(fn: () => unknown): { kind: string; message: string; hint: string | undefined } {
  try {
    fn();
  } catch (err) {
    if (isReconcileError(err)) return { kind: err.kind, message: err.message, hint: err.hint };
    throw err;
  }
  throw new Error('expected a ReconcileError');
}

const MYSQL: readonly { readonly url: string; readonly expected: Record<string, unknown> }[] = [
  {
    url: `mysql+pymysql://nova:${MARKER}@db.example.com:3307/nova_api?charset=utf8`,
    expected: { kind: 'mysql', user: 'nova', password: MARKER, host: 'db.example.com', port: 3307, database: 'nova_api', charset: 'utf8', socketPath: undefined, display: 'mysql://db.example.com:3307/nova_api' },
  },
  {
    url: 'mysql://nova:pw@db/nova',
    expected: { kind: 'mysql', host: 'db', port: undefined, charset: 'utf8', display: 'mysql://db:3306/nova' },
  },
  {
    url: 'mysql+mysqldb://nova:pw@db/nova?charset=utf8mb4',
    expected: { kind: 'mysql', charset: 'utf8mb4' },
  },
  {
    // SQLAlchemy percent-decodes user and password only; the database name is kept as written.
    url: 'mysql+pymysql://n%6Fva:S%40c%2Fr%3Aet@db/nova%5Fapi',
    expected: { user: 'nova', password: 'S@c/r:et', database: 'nova%5Fapi' },
  },
  {
    // An unencoded '@' ends the password at the first '@' (SQLAlchemy's regex).
    url: 'mysql+pymysql://nova:p@ss@db/nova',
    expected: { password: 'p', host: 'ss@db' },
  },
  {
    url: 'mysql+pymysql://nova:a/b@db/nova',
    expected: { password: 'a/b', host: 'db', database: 'nova' },
  },
  {
    url: 'mysql+pymysql://nova:pw@[fd00::5]:3306/nova',
    expected: { host: 'fd00::5', port: 3306, display: 'mysql://[fd00::5]:3306/nova' },
  },
  {
    url: 'mysql+pymysql://nova:pw@/nova?unix_socket=/run/mysqld/mysqld.sock',
    expected: { host: undefined, socketPath: '/run/mysqld/mysqld.sock', display: 'mysql://localhost via /run/mysqld/mysqld.sock/nova' },
  },
  {
    url: 'mysql+pymysql://:@/nova',
    expected: { user: undefined, password: undefined, host: undefined, database: 'nova', display: 'mysql://localhost:3306/nova' },
  },
  {
    // devstack's plugin=dbcounter is consumed by SQLAlchemy; timeouts are ours.
    url: 'mysql+pymysql://root:pw@127.0.0.1/nova_cell1?charset=utf8&plugin=dbcounter&connect_timeout=5',
    expected: { host: '127.0.0.1', database: 'nova_cell1', charset: 'utf8' },
  },
  {
    url: 'mysql+pymysql://nova:pw@db/nova?ssl_ca=/etc/ssl/ca.pem&ssl_cert=/etc/ssl/c.pem&ssl_key=/etc/ssl/k.pem&ssl_check_hostname=false',
    expected: { ssl: { ca: '/etc/ssl/ca.pem', cert: '/etc/ssl/c.pem', key: '/etc/ssl/k.pem', checkHostname: false } },
  },
  {
    // parse_qsl: '+' is a space and %-escapes are decoded; a key without a value is dropped.
    url: 'mysql+pymysql://nova:pw@db/nova?unix_socket=/run/my%20sock&charset=',
    expected: { socketPath: '/run/my sock', charset: 'utf8' },
  },
  {
    url: 'mysql+pymysql://nova:pw@db:+3306/nova',
    expected: { port: 3306 },
  },
];

describe('parseDbUrl: mysql', () => {
  it.each(MYSQL)('$url', ({ url, expected }) => {
    expect(parseDbUrl(url)).toMatchObject(expected);
  });

  it('has no ssl field without ssl_* arguments', () => {
    expect('ssl' in parseDbUrl('mysql+pymysql://nova:pw@db/nova')).toBe(false);
  });

  it('returns a frozen value', () => {
    expect(Object.isFrozen(parseDbUrl('mysql+pymysql://nova:pw@db/nova'))).toBe(true);
  });

  it('appends [database] connection_parameters', () => {
    expect(parseDbUrl('mysql+pymysql://nova:pw@db/nova', { connectionParameters: 'charset=utf8mb4&unix_socket=/s' })).toMatchObject({
      charset: 'utf8mb4',
      socketPath: '/s',
    });
  });
});

describe('parseDbUrl: read_default_file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nr-mycnf-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cnf = join(dir, 'nova.cnf');
  writeFileSync(
    cnf,
    [
      '[client]',
      'user = fromclient',
      `password = "${MARKER}"`,
      'host = cnf-host',
      '',
      '[novagrp]',
      'user=novauser',
      `password=${MARKER}`,
      'host=10.0.0.9',
      'port=3310',
      'database = from_cnf',
      'default_character_set = latin1',
      'ssl-ca = /etc/mysql/ca.pem',
      '!includedir /etc/mysql/conf.d/',
      '',
    ].join('\n'),
  );

  it('reads the [novagrp] group and fills what the URL lacks', () => {
    const target = parseDbUrl(`mysql+pymysql:///research_api?read_default_file=${cnf}&read_default_group=novagrp`);
    expect(target).toMatchObject({
      kind: 'mysql',
      user: 'novauser',
      password: MARKER,
      host: '10.0.0.9',
      port: 3310,
      database: 'research_api',
      // oslo.db always passes charset=utf8, so default-character-set never applies.
      charset: 'utf8',
      ssl: { ca: '/etc/mysql/ca.pem' },
      display: 'mysql://10.0.0.9:3310/research_api',
    });
  });

  it('defaults to [client]; URL values win; quotes are removed', () => {
    const target = parseDbUrl(`mysql+pymysql://urluser@urlhost/db?read_default_file=${cnf}`);
    expect(target).toMatchObject({ user: 'urluser', password: MARKER, host: 'urlhost', database: 'db' });
  });

  it('expands ~ with the given home', () => {
    const target = parseDbUrl('mysql+pymysql:///db?read_default_file=~/nova.cnf', { home: dir });
    expect(target).toMatchObject({ user: 'fromclient', host: 'cnf-host' });
  });

  it('reads /etc/my.cnf when only read_default_group is given', () => {
    const read: string[] = [];
    const target = parseDbUrl('mysql+pymysql:///db?read_default_group=x', {
      readFile: (p) => {
        read.push(p);
        return '[x]\nuser = fromx\n';
      },
    });
    expect(read).toEqual(['/etc/my.cnf']);
    expect(target).toMatchObject({ user: 'fromx' });
  });

  it('treats dashes and underscores alike in keys, case-insensitively; sections are case-sensitive', () => {
    const readFile = (): string => '[client]\nUSER = a\nSSL_CA = /ca\n[Client]\nuser = b\n';
    expect(parseDbUrl('mysql:///db?read_default_file=/x', { readFile })).toMatchObject({ user: 'a', ssl: { ca: '/ca' } });
  });

  it('reports a missing file', () => {
    const e = errorOf(() => parseDbUrl(`mysql+pymysql://nova:${MARKER}@db/nova?read_default_file=${join(dir, 'absent.cnf')}`));
    expect(e.kind).toBe('config');
    expect(e.message).toContain(`cannot read MySQL option file ${join(dir, 'absent.cnf')}`);
    expect(e.message).toContain('not found');
    expect(e.message).not.toContain(MARKER);
  });

  it('reports a malformed option file by line, without its content', () => {
    const readFile = (): string => `[client]\npassword = ${MARKER}\n[client]\n`;
    const e = errorOf(() => parseDbUrl('mysql:///db?read_default_file=/etc/x.cnf', { readFile }));
    expect(e.message).toMatch(/^\/etc\/x\.cnf:3: section \[client\] appears twice/);
    expect(e.message).not.toContain(MARKER);
  });

  it('rejects a bad port in the option file', () => {
    const readFile = (): string => '[client]\nport = many\n';
    expect(errorOf(() => parseDbUrl('mysql:///db?read_default_file=/x', { readFile })).message).toMatch(/bad port "many"/);
  });
});

describe('parseDbUrl: sqlite', () => {
  it.each([
    ['sqlite://', ':memory:', 'sqlite://'],
    ['sqlite:///', ':memory:', 'sqlite://'],
    ['sqlite:///relative/path.db', 'relative/path.db', 'sqlite:///relative/path.db'],
    ['sqlite:////abs/path.db', '/abs/path.db', 'sqlite:////abs/path.db'],
    ['sqlite+pysqlite:////abs/path.db?timeout=5', '/abs/path.db', 'sqlite:////abs/path.db'],
  ])('%s → %s', (url, filename, display) => {
    expect(parseDbUrl(url)).toEqual({ kind: 'sqlite', filename, display });
  });

  it('rejects a host, user or port', () => {
    expect(errorOf(() => parseDbUrl('sqlite://host/x.db')).message).toMatch(/invalid SQLite URL/);
    expect(errorOf(() => parseDbUrl(`sqlite://u:${MARKER}@/x.db`)).message).not.toContain(MARKER);
  });
});

const ERRORS: readonly { readonly url: string; readonly message: string | RegExp }[] = [
  {
    url: `postgresql+psycopg2://nova:${MARKER}@db/nova`,
    message: 'unsupported database URL scheme "postgresql+psycopg2": nova-reconcile supports mysql (mysql+pymysql://) and sqlite',
  },
  { url: `oracle://nova:${MARKER}@db/nova`, message: /^unsupported database URL scheme "oracle"/ },
  { url: `mysql+mysqlconnector://nova:${MARKER}@db/nova`, message: /^unsupported database URL scheme "mysql\+mysqlconnector"/ },
  { url: `nova:${MARKER}@db/nova`, message: /^malformed database URL/ },
  { url: MARKER, message: /^malformed database URL/ },
  { url: '', message: /^malformed database URL/ },
  { url: `mysql+pymysql://nova:${MARKER}@db:abc/nova`, message: /^bad port "abc" in mysql\+pymysql:\/\/nova:\*\*\*\*@db:abc\/nova/ },
  { url: `mysql+pymysql://nova:${MARKER}@db:0/nova`, message: /^bad port "0"/ },
  { url: `mysql+pymysql://nova:${MARKER}@db:65536/nova`, message: /^bad port "65536"/ },
  { url: `mysql+pymysql://nova:${MARKER}@db:/nova`, message: /^bad port ""/ },
  { url: `mysql+pymysql://nova:${MARKER}@db/nova?sslmode=require`, message: /^unsupported database URL option "sslmode" in mysql\+pymysql:\/\/nova:\*\*\*\*@db\/nova/ },
  { url: `mysql+pymysql://nova:${MARKER}@db/nova?charset=utf8&charset=latin1`, message: /option "charset" is given more than once/ },
  { url: `mysql+pymysql://nova:${MARKER}@db/nova?ssl_check_hostname=maybe`, message: /must be true or false/ },
  { url: `sqlite:////x.db?password=${MARKER}`, message: /unsupported database URL option "password"/ },
];

describe('parseDbUrl: errors', () => {
  it.each(ERRORS)('$url', ({ url, message }) => {
    const e = errorOf(() => parseDbUrl(url, {}));
    expect(e.kind).toBe('config');
    if (typeof message === 'string') expect(e.message).toBe(message);
    else expect(e.message).toMatch(message);
  });

  it.each(ERRORS)('never shows the password: $url', ({ url }) => {
    const e = errorOf(() => parseDbUrl(url, { source: '[api_database] connection' }));
    expect(e.message).not.toContain(MARKER);
    expect(e.hint ?? '').not.toContain(MARKER);
    expect(e.hint).toContain('[api_database] connection');
  });
});

describe('a bracketed host, as urlsplit (3.11.4+) checks it', () => {
  it('takes an IPv6 address; refuses an IPv4 address or a name in brackets, as Python does', async () => {
    const { splitUrl } = await import('../../src/config/python-url.js');
    expect(splitUrl('mysql+pymysql://nova@[::1]:3306/nova').netloc).toBe('nova@[::1]:3306');
    expect(splitUrl('mysql+pymysql://nova@[fe80::1%25eth0]:3306/nova').netloc).toBe('nova@[fe80::1%25eth0]:3306');
    expect(() => splitUrl('mysql+pymysql://nova@[192.0.2.1]:3306/nova')).toThrow('An IPv4 address cannot be in brackets');
    expect(() => splitUrl('mysql+pymysql://nova@[db.example]:3306/nova')).toThrow("'db.example' does not appear to be an IPv4 or IPv6 address");
  });
});
