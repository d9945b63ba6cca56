import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { effectiveServiceDownTime, loadConfig, type LoadConfigArgs } from '../../src/config/load-config.js';
import type { ConfigSource } from '../../src/config/types.js';
import { isReconcileError } from '../../src/errors.js';

const MARKER = 'S3cr3tMarker';
const root = mkdtempSync(join(tmpdir(), 'nr-config-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
/** A fresh directory under the test root. */
function freshDir(): string {
  const dir = join(root, `d${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function write(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const file = (path: string): ConfigSource => ({ kind: 'file', path });
const dir = (path: string): ConfigSource => ({ kind: 'dir', path });

/** loadConfig isolated from the machine: no default search path, empty env. */
function load(sources: readonly ConfigSource[], extra: Partial<LoadConfigArgs> = {}): ReturnType<typeof loadConfig> {
  return loadConfig({ sources, env: {}, home: join(root, 'home-none'), searchRoots: [], isWritableDir: () => false, ...extra });
}

function configError(fn: () => unknown): { kind: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (isReconcileError(err)) return { kind: err.kind, message: err.message };
    throw err;
  }
  throw new Error('expected a ReconcileError');
}

describe('loadConfig: sources', () => {
  it('applies repeated --config-file in order: the last one wins', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', '[api_database]\nconnection = mysql://a/api\n[database]\nconnection = mysql://a/cell\n');
    const b = write(d, 'b.conf', '[api_database]\nconnection = mysql://b/api\n');
    const config = load([file(a), file(b)]);
    expect(config.files).toEqual([a, b]);
    expect(config.apiDatabaseConnection).toBe('mysql://b/api');
    expect(config.databaseConnection).toBe('mysql://a/cell');
    expect(load([file(b), file(a)]).apiDatabaseConnection).toBe('mysql://a/api');
  });

  it('lets the last occurrence of a key win inside one file, across repeated sections', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', '[database]\nconnection = one\n[DEFAULT]\nx = 1\n[Database]\nconnection = two\n');
    expect(load([file(a)]).databaseConnection).toBe('two');
  });

  it('reads --config-dir *.conf sorted by name, at its position on the command line', () => {
    const d = freshDir();
    const confd = join(d, 'nova.conf.d');
    mkdirSync(confd);
    write(confd, '20-b.conf', '[DEFAULT]\nreport_interval = 20\ntransport_url = rabbit://b/\n');
    write(confd, '10-a.conf', '[DEFAULT]\nreport_interval = 10\nservice_down_time = 100\ntransport_url = rabbit://a/\n');
    write(confd, 'ignored.txt', '[DEFAULT]\nreport_interval = 99\n');
    write(confd, '.hidden.conf', '[DEFAULT]\nreport_interval = 98\n');
    const before = write(d, 'before.conf', '[DEFAULT]\nservice_down_time = 200\ntransport_url = rabbit://before/\n');
    const after = write(d, 'after.conf', '[DEFAULT]\ntransport_url = rabbit://after/\n');

    const config = load([file(before), dir(confd), file(after)]);
    expect(config.files).toEqual([before, join(confd, '10-a.conf'), join(confd, '20-b.conf'), after]);
    expect(config.reportInterval).toBe(20);
    expect(config.serviceDownTime).toBe(100);
    expect(config.transportUrl).toBe('rabbit://after/');

    // A directory given after a file overrides the file.
    expect(load([dir(confd), file(before)]).serviceDownTime).toBe(200);
    expect(load([file(before), dir(confd)]).serviceDownTime).toBe(100);
  });

  it('accepts an empty file and an empty directory', () => {
    const d = freshDir();
    const empty = write(d, 'empty.conf', '');
    const emptyDir = join(d, 'empty.d');
    mkdirSync(emptyDir);
    const config = load([file(empty), dir(emptyDir)]);
    expect(config.files).toEqual([empty]);
    expect(config.apiDatabaseConnection).toBeUndefined();
    expect(config.serviceDownTime).toBe(60);
    expect(config.reportInterval).toBe(10);
  });

  it('expands ~ in sources with the given home', () => {
    const home = freshDir();
    write(home, 'x.conf', '[api_database]\nconnection = mysql://home/api\n');
    expect(load([file('~/x.conf')], { home }).apiDatabaseConnection).toBe('mysql://home/api');
  });

  it('returns a frozen configuration', () => {
    const config = load([]);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.reconcile)).toBe(true);
    expect(Object.isFrozen(config.files)).toBe(true);
  });
});

describe('loadConfig: default search path', () => {
  function searchTree(): { roots: string[]; first: string; second: string } {
    const d = freshDir();
    const first = join(d, 'dot-nova');
    const second = join(d, 'etc-nova');
    mkdirSync(first);
    mkdirSync(second);
    return { roots: [first, second], first, second };
  }

  it('takes at most one nova.conf and one nova-manage.conf, each from the first root that has it', () => {
    const { roots, first, second } = searchTree();
    write(first, 'nova-manage.conf', '[DEFAULT]\nreport_interval = 5\n');
    write(second, 'nova.conf', '[api_database]\nconnection = mysql://second/api\n[DEFAULT]\nreport_interval = 7\n');
    write(second, 'nova-manage.conf', '[DEFAULT]\nreport_interval = 99\n');
    const config = load([], { searchRoots: roots });
    expect(config.files).toEqual([join(second, 'nova.conf'), join(first, 'nova-manage.conf')]);
    expect(config.apiDatabaseConnection).toBe('mysql://second/api');
    expect(config.reportInterval).toBe(5);
  });

  it('reads nova.conf.d and nova-manage.conf.d after the default files', () => {
    const { roots, first, second } = searchTree();
    write(first, 'nova.conf', '[DEFAULT]\nreport_interval = 1\n');
    mkdirSync(join(second, 'nova.conf.d'));
    write(join(second, 'nova.conf.d'), '50.conf', '[DEFAULT]\nreport_interval = 2\n');
    mkdirSync(join(first, 'nova-manage.conf.d'));
    write(join(first, 'nova-manage.conf.d'), '50.conf', '[DEFAULT]\nreport_interval = 3\n');
    const config = load([], { searchRoots: roots });
    expect(config.files).toEqual([join(first, 'nova.conf'), join(second, 'nova.conf.d', '50.conf'), join(first, 'nova-manage.conf.d', '50.conf')]);
    expect(config.reportInterval).toBe(3);
  });

  it('skips default files when --config-file is given, but still reads default dirs unless --config-dir is given (oslo.config)', () => {
    const { roots, first } = searchTree();
    write(first, 'nova.conf', '[DEFAULT]\nreport_interval = 1\n');
    mkdirSync(join(first, 'nova.conf.d'));
    write(join(first, 'nova.conf.d'), 'x.conf', '[DEFAULT]\nservice_down_time = 300\n');
    const d = freshDir();
    const cli = write(d, 'cli.conf', '[DEFAULT]\nreport_interval = 4\n');
    const cliDir = join(d, 'cli.d');
    mkdirSync(cliDir);

    const onlyFile = load([file(cli)], { searchRoots: roots });
    expect(onlyFile.files).toEqual([join(first, 'nova.conf.d', 'x.conf'), cli]);
    expect(onlyFile.serviceDownTime).toBe(300);

    const onlyDir = load([dir(cliDir)], { searchRoots: roots });
    expect(onlyDir.files).toEqual([join(first, 'nova.conf')]);

    expect(load([file(cli), dir(cliDir)], { searchRoots: roots }).files).toEqual([cli]);
  });

  it('finding nothing is not an error', () => {
    const { roots } = searchTree();
    const config = load([], { searchRoots: roots });
    expect(config.files).toEqual([]);
    expect(config.apiDatabaseConnection).toBeUndefined();
  });

  it('searches ~/.nova, ~, /etc/nova, /etc by default', () => {
    const home = freshDir();
    mkdirSync(join(home, '.nova'));
    write(join(home, '.nova'), 'nova.conf', '[api_database]\nconnection = mysql://dot-nova/api\n');
    write(home, 'nova.conf', '[api_database]\nconnection = mysql://home/api\n');
    const config = loadConfig({ sources: [], env: {}, home, isWritableDir: () => false });
    expect(config.files[0]).toBe(join(home, '.nova', 'nova.conf'));
    expect(config.files).not.toContain(join(home, 'nova.conf'));
  });
});

describe('loadConfig: names and precedence', () => {
  it('treats section names case-insensitively, except DEFAULT', () => {
    const d = freshDir();
    const a = write(
      d,
      'a.conf',
      ['[API_DATABASE]', 'connection = mysql://upper/api', '[Placement_Database]', 'connection = mysql://p/placement', '[default]', 'report_interval = 3', '[Default]', 'service_down_time = 5', '[DEFAULT]', 'transport_url = rabbit://x/', ''].join('\n'),
    );
    const config = load([file(a)]);
    expect(config.apiDatabaseConnection).toBe('mysql://upper/api');
    expect(config.placementDatabaseConnection).toBe('mysql://p/placement');
    expect(config.get('Api_Database', 'connection')).toBe('mysql://upper/api');
    // [default] and [Default] are a group named "default", not DEFAULT.
    expect(config.reportInterval).toBe(10);
    expect(config.serviceDownTime).toBe(60);
    expect(config.get('default', 'report_interval')).toBe('3');
    expect(config.get('DEFAULT', 'transport_url')).toBe('rabbit://x/');
  });

  it('treats keys case-sensitively', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', '[DEFAULT]\nService_Down_Time = 5\n[api_database]\nConnection = mysql://x/api\n');
    const config = load([file(a)]);
    expect(config.serviceDownTime).toBe(60);
    expect(config.apiDatabaseConnection).toBeUndefined();
    expect(config.get('DEFAULT', 'Service_Down_Time')).toBe('5');
  });

  it('lets OS_<GROUP>__<OPTION> override every file', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', '[api_database]\nconnection = mysql://file/api\n[DEFAULT]\nservice_down_time = 90\n[nova_reconcile]\nlock_timeout = 30\n');
    const config = load([file(a)], {
      env: {
        OS_API_DATABASE__CONNECTION: 'mysql://env/api',
        OS_DEFAULT__SERVICE_DOWN_TIME: '120',
        OS_NOVA_RECONCILE__LOCK_TIMEOUT: '7',
        OS_IRONIC_DATABASE__CONNECTION: 'mysql://env/ironic',
        OS_NOVA_RECONCILE__UNSET: undefined,
      },
    });
    expect(config.apiDatabaseConnection).toBe('mysql://env/api');
    expect(config.serviceDownTime).toBe(120);
    expect(config.reconcile.lockTimeout).toBe(7);
    expect(config.ironicDatabaseConnection).toBe('mysql://env/ironic');
  });

  it('maps the deprecated sql_connection names onto [database] and [api_database] connection (Zed)', () => {
    const d = freshDir();
    const legacy = write(d, 'legacy.conf', '[DEFAULT]\nsql_connection = mysql://legacy/nova\n');
    expect(load([file(legacy)])).toMatchObject({ databaseConnection: 'mysql://legacy/nova', apiDatabaseConnection: 'mysql://legacy/nova' });

    const upper = write(d, 'upper.conf', '[DATABASE]\nsql_connection = mysql://upper/nova\n');
    expect(load([file(upper)]).databaseConnection).toBe('mysql://upper/nova');
    const sql = write(d, 'sql.conf', '[sql]\nconnection = mysql://sql/nova\n');
    expect(load([file(sql)]).databaseConnection).toBe('mysql://sql/nova');

    // Within a file the current name wins over a deprecated one...
    const both = write(d, 'both.conf', '[DEFAULT]\nsql_connection = mysql://legacy/nova\n[api_database]\nconnection = mysql://new/api\n');
    expect(load([file(both)])).toMatchObject({ apiDatabaseConnection: 'mysql://new/api', databaseConnection: 'mysql://legacy/nova' });
    // ...but a later file with only the deprecated name wins over an earlier file.
    const modern = write(d, 'modern.conf', '[database]\nconnection = mysql://modern/nova\n');
    expect(load([file(modern), file(legacy)]).databaseConnection).toBe('mysql://legacy/nova');
    expect(load([file(legacy), file(modern)]).databaseConnection).toBe('mysql://modern/nova');
  });

  it('substitutes $option references and $$ like oslo.config', () => {
    const d = freshDir();
    const a = write(
      d,
      'a.conf',
      [
        '[DEFAULT]',
        'state_path = /var/lib/nova',
        'transport_url = rabbit://u:pa$$word@h/',
        '[database]',
        'connection = sqlite:///$state_path/nova.sqlite',
        '[api_database]',
        'connection = sqlite:///${state_path}/api.sqlite?x=\\$y',
        '[nova_reconcile]',
        'journal_dir = $DEFAULT.state_path/journal',
        '',
      ].join('\n'),
    );
    const config = load([file(a)]);
    expect(config.databaseConnection).toBe('sqlite:////var/lib/nova/nova.sqlite');
    expect(config.apiDatabaseConnection).toBe('sqlite:////var/lib/nova/api.sqlite?x=$y');
    expect(config.transportUrl).toBe('rabbit://u:pa$word@h/');
    expect(config.reconcile.journalDir).toBe('/var/lib/nova/journal');
  });

  it('reports an unresolvable $reference without printing the value', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', `[api_database]\nconnection = mysql://nova:${MARKER}$oops@db/nova_api\n`);
    const e = configError(() => load([file(a)]));
    expect(e.message).toContain('[api_database] connection');
    expect(e.message).toContain('$oops');
    expect(e.message).not.toContain(MARKER);
  });
});

describe('loadConfig: typed values', () => {
  it('applies the servicegroup override when service_down_time <= report_interval', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', '[DEFAULT]\nservice_down_time = 10\nreport_interval = 10\n');
    expect(load([file(a)])).toMatchObject({ serviceDownTime: 25, reportInterval: 10 });
    const b = write(d, 'b.conf', '[DEFAULT]\nservice_down_time = 12\nreport_interval = 15\n');
    expect(load([file(b)]).serviceDownTime).toBe(37);
  });

  it.each([
    [60, 10, 60],
    [11, 10, 11],
    [10, 10, 25],
    [3, 3, 7],
    [5, 3, 5],
    [0, 0, 0],
  ])('effectiveServiceDownTime(%i, %i) = %i', (down, report, expected) => {
    expect(effectiveServiceDownTime(down, report)).toBe(expected);
  });

  it('has defaults for [nova_reconcile]', () => {
    const home = freshDir();
    expect(load([], { home }).reconcile).toEqual({
      journalDir: join(home, '.nova-reconcile', 'journal'),
      lockTimeout: 10,
      cellConcurrency: 4,
      applyConcurrency: 4,
      applyBatchUnits: 64,
      connectTimeout: 10,
      ironicRingMembers: undefined,
      maxApplyUnits: 1000,
      maxApplyFraction: 0.5,
      minIronicFraction: 0.5,
      allowUnknownSchema: false,
    });
  });

  it('uses /var/lib/nova-reconcile/journal when that directory is writable', () => {
    const seen: string[] = [];
    const config = load([], {
      isWritableDir: (p) => {
        seen.push(p);
        return true;
      },
    });
    expect(seen).toEqual(['/var/lib/nova-reconcile']);
    expect(config.reconcile.journalDir).toBe('/var/lib/nova-reconcile/journal');
  });

  it('reads [nova_reconcile] settings', () => {
    const home = freshDir();
    const a = write(
      home,
      'a.conf',
      '[nova_reconcile]\njournal_dir = ~/j\nlock_timeout = 0\ncell_concurrency = 64\napply_concurrency = 1\napply_batch_units = 7\nconnect_timeout = 3\nironic_ring_members = c1, c2 ,,c3\nmax_apply_units = 0\nmax_apply_fraction = .25\nmin_ironic_fraction = 1\n',
    );
    expect(load([file(a)], { home }).reconcile).toEqual({
      journalDir: join(home, 'j'),
      lockTimeout: 0,
      cellConcurrency: 64,
      applyConcurrency: 1,
      applyBatchUnits: 7,
      connectTimeout: 3,
      ironicRingMembers: ['c1', 'c2', 'c3'],
      maxApplyUnits: 0,
      maxApplyFraction: 0.25,
      minIronicFraction: 1,
      allowUnknownSchema: false,
    });
  });

  it('reports a non-integer value with its group, key and file', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', '[DEFAULT]\nservice_down_time = soon\n');
    const e = configError(() => load([file(a)]));
    expect(e.kind).toBe('config');
    expect(e.message).toBe(`invalid value for [DEFAULT] service_down_time in ${a}: "soon" is not an integer`);
  });

  it('names the environment variable when the bad value came from there', () => {
    const e = configError(() => load([], { env: { OS_NOVA_RECONCILE__CELL_CONCURRENCY: '4.5' } }));
    expect(e.message).toBe('invalid value for [nova_reconcile] cell_concurrency in environment variable OS_NOVA_RECONCILE__CELL_CONCURRENCY: "4.5" is not an integer');
  });

  it('reports every invalid value at once, with ranges', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', `[api_database]\nconnection = mysql://nova:${MARKER}@db/api\n[DEFAULT]\nreport_interval =\n[nova_reconcile]\ncell_concurrency = 0\nconnect_timeout = 0\nlock_timeout = -1\n`);
    const e = configError(() => load([file(a)]));
    expect(e.message).toMatch(/^4 invalid configuration values: /);
    expect(e.message).toContain(`invalid value for [DEFAULT] report_interval in ${a}: "" is not an integer`);
    expect(e.message).toContain(`invalid value for [nova_reconcile] cell_concurrency in ${a}: 0 is out of range (1..64)`);
    expect(e.message).toContain('[nova_reconcile] connect_timeout');
    expect(e.message).toContain('[nova_reconcile] lock_timeout');
    expect(e.message).not.toContain(MARKER);
  });

  it.each(['65', '1.0', '0x10', 'four'])('rejects cell_concurrency = %s', (value) => {
    const d = freshDir();
    const a = write(d, 'a.conf', `[nova_reconcile]\ncell_concurrency = ${value}\n`);
    expect(configError(() => load([file(a)])).message).toContain('[nova_reconcile] cell_concurrency');
  });

  it('accepts what Python int() accepts', () => {
    const d = freshDir();
    const a = write(d, 'a.conf', '[DEFAULT]\nservice_down_time = +1_20\n');
    expect(load([file(a)]).serviceDownTime).toBe(120);
  });
});

describe('loadConfig: errors', () => {
  it('reports a missing --config-file', () => {
    const missing = join(root, 'no-such.conf');
    const e = configError(() => load([file(missing)]));
    expect(e).toEqual({ kind: 'config', message: `config file ${missing} not found` });
  });

  it('reports all missing files together', () => {
    const d = freshDir();
    const ok = write(d, 'ok.conf', '');
    const e = configError(() => load([file(join(d, 'a.conf')), file(ok), file(join(d, 'b.conf'))]));
    expect(e.message).toBe(`config files ${join(d, 'a.conf')}, ${join(d, 'b.conf')} not found`);
  });

  it('reports a directory given as a config file', () => {
    const d = freshDir();
    expect(configError(() => load([file(d)])).message).toBe(`config file ${d} is a directory`);
  });

  it('reports a missing --config-dir', () => {
    const missing = join(root, 'no-such.d');
    expect(configError(() => load([dir(missing)])).message).toBe(`config directory ${missing} not found`);
  });

  it('reports a file given as --config-dir', () => {
    const d = freshDir();
    const f = write(d, 'x.conf', '');
    expect(configError(() => load([dir(f)])).message).toBe(`config directory ${f} is not a directory`);
  });

  it.skipIf(process.getuid?.() === 0)('reports an unreadable file', () => {
    const d = freshDir();
    const f = write(d, 'secret.conf', '[DEFAULT]\n');
    chmodSync(f, 0o000);
    expect(configError(() => load([file(f)])).message).toBe(`cannot read config file ${f}: permission denied`);
    chmodSync(f, 0o600);
  });

  it('reports a syntax error with the file and line', () => {
    const d = freshDir();
    const f = write(d, 'bad.conf', `[DEFAULT]\nreport_interval = 5\n${MARKER}\n`);
    const e = configError(() => load([file(f)]));
    expect(e.message.startsWith(`${f}:3: `)).toBe(true);
    expect(e.message).not.toContain(MARKER);
  });
});
