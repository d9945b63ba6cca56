// Bad input gets a clear error, not a stack trace (DESIGN.md, Safety rules).
// A catalogue of broken configurations, URLs, databases and argv, each run
// through the built binary. Every case asserts:
// - the documented exit code;
// - one line saying what is wrong: on stderr (stdout empty), or nova's
//   "An error has occurred:" and one line on stdout (a "hint:" line may
//   follow on stderr);
// - no stack trace ("    at ..." lines) and no password anywhere;
// - an answer within 15 s;
// - every database and every file around them exactly as before;
// - where --format applies, stdout is one JSON document with an `error` object.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin, type CliResult } from '../helpers/cli.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { createScratchDatabases, describeMysql, mysqlKnex, type ScratchDatabases } from '../helpers/mysql.js';
import { snapshotDeployment, sqliteFileOf, type SnapshotExtras } from '../helpers/db-checksum.js';
import { sqliteKnex } from '../helpers/sqlite.js';
import { migrateSchema } from '../../src/db/migrate.js';
import { mapSandboxCells } from '../../src/sandbox/create-sandbox.js';

const MARKER = 'S3cr3tMarker42';
/** The real password of the MariaDB user of the wrong-password case; it must not appear either. */
const RIGHT_PASSWORD = 'R1ghtPassw0rdNr';
const ANSWER_MS = 15_000;

type Channel = 'stderr' | 'nova-stdout';

interface Case {
  readonly name: string;
  /** argv, without --format. */
  readonly argv: () => readonly string[];
  readonly code: number;
  readonly channel: Channel;
  /** Matched against the one line. */
  readonly message: RegExp;
  /** Whether `--format json` applies (false for argv errors, which come before any command runs). */
  readonly json?: boolean;
  readonly maxMs?: number;
}

/** A nova.conf whose other settings carry the marker password, so a leak of any of them shows. */
function writeConf(dir: string, name: string, api: string | undefined, extra: { database?: string; placement?: string } = {}): string {
  const path = join(dir, name);
  const lines = ['[DEFAULT]', `transport_url = rabbit://nova:${MARKER}@mq.example.org:5672/`];
  if (api !== undefined) lines.push('[api_database]', `connection = ${api}`);
  lines.push('[database]', `connection = ${extra.database ?? `mysql+pymysql://nova:${MARKER}@127.0.0.1:1/nova`}`);
  if (extra.placement !== undefined) lines.push('[placement_database]', `connection = ${extra.placement}`);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

function expectCleanFailure(r: CliResult, c: Case): void {
  const all = r.stdout + r.stderr;
  expect(all, 'no password in any output').not.toContain(MARKER);
  expect(all, 'no password in any output').not.toContain(RIGHT_PASSWORD);
  expect(all, 'no stack trace').not.toMatch(/^\s+at /m);
  expect(r.ms, `answered in ${r.ms} ms`).toBeLessThan(c.maxMs ?? ANSWER_MS);
  expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toMatchObject({ code: c.code });
  if (c.channel === 'stderr') {
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^[^\n]+\n$/);
    expect(r.stderr.trimEnd()).toMatch(c.message);
  } else {
    expect(r.stdout).toMatch(/^An error has occurred:\n[^\n]+\n$/);
    expect(r.stdout.split('\n')[1]).toMatch(c.message);
    // At most one more line, the hint, on stderr.
    expect(r.stderr).toMatch(/^(hint: [^\n]+\n)?$/);
  }
}

function expectJsonError(r: CliResult, c: Case): void {
  const all = r.stdout + r.stderr;
  expect(all).not.toContain(MARKER);
  expect(all).not.toContain(RIGHT_PASSWORD);
  expect(all).not.toMatch(/^\s+at /m);
  expect(r.code).toBe(c.code);
  expect(r.stderr).toBe('');
  // One document: JSON.parse refuses anything after it.
  const doc = JSON.parse(r.stdout) as { error?: { kind?: unknown; message?: unknown; exit_code?: unknown } };
  expect(doc.error).toBeTypeOf('object');
  expect(String(doc.error?.message)).toMatch(c.message);
  expect(doc.error?.exit_code).toBe(c.code);
  expect(doc.error?.kind).toBeTypeOf('string');
  // The contract (issue 18): schemas/error.schema.json, with schema_version and changed: false; a
  // discover_hosts whose cell failed reports it in its own document (the cells up to the failure).
  const schema = (doc as { command?: unknown }).command === 'cell_v2 discover_hosts' ? 'cell_v2-discover_hosts' : 'error';
  const validate = schemaValidator(schema);
  if (!validate(doc)) throw new Error(`not a document of schemas/${schema}.schema.json: ${JSON.stringify(validate.errors)}\n${r.stdout}`);
  expect((doc as { changed?: unknown }).changed).toBe(false);
}

const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
function schemaValidator(name: string): ValidateFunction {
  const known = ajv.getSchema(name);
  if (known !== undefined) return known;
  ajv.addSchema(JSON.parse(readFileSync(fileURLToPath(new URL(`../../schemas/${name}.schema.json`, import.meta.url)), 'utf8')) as object, name);
  return ajv.getSchema(name) as ValidateFunction;
}

/**
 * Registers one `it` per case (and its --format json variant), each checking
 * that nothing changed: the snapshot comes from `snapshot()` before and after.
 */
function catalogue(cases: readonly Case[], snapshot: () => Promise<unknown>): void {
  for (const c of cases) {
    it(`${c.name} → exit ${c.code}`, async () => {
      const before = await snapshot();
      const r = await runBin(c.argv(), { timeoutMs: ANSWER_MS + 5_000 });
      expectCleanFailure(r, c);
      if (c.json !== false) expectJsonError(await runBin([...c.argv(), '--format', 'json'], { timeoutMs: ANSWER_MS + 5_000 }), c);
      expect(await snapshot()).toEqual(before);
    });
  }
}

describe('bad input [sqlite deployment]', () => {
  let d: TestDeployment;
  let work: string;
  let extras: SnapshotExtras;
  const file = (name: string): string => join(work, name);

  beforeAll(async () => {
    d = await createTestDeployment('sqlite', 'libvirt', 'bad');
    work = mkdtempSync(join(tmpdir(), 'nova-reconcile-bad-'));
    mkdirSync(file('a-directory'));
    writeFileSync(file('not-ini.conf'), 'this is not an ini file\n\u0000\u0001 [[[\n');
    writeFileSync(file('empty.conf'), '');
    writeFileSync(file('empty.sqlite'), '');
    const api = d.url('api');
    const cell1 = d.url('cell1');
    const placement = d.url('placement');
    const real = { database: cell1, placement };
    writeConf(work, 'malformed.conf', `mysql+pymysql//nova:${MARKER}@127.0.0.1/nova_api`, real);
    writeConf(work, 'postgres.conf', `postgresql://nova:${MARKER}@127.0.0.1/nova_api`, real);
    writeConf(work, 'bad-port.conf', `mysql+pymysql://root:${MARKER}@127.0.0.1:99999/x`, real);
    writeConf(work, 'unknown-arg.conf', `mysql+pymysql://root:${MARKER}@127.0.0.1/x?bogus_arg=1`, real);
    writeConf(work, 'read-default-file.conf', `mysql+pymysql:///nova_api?read_default_file=${file('no-such.cnf')}`, real);
    writeConf(work, 'refused.conf', `mysql+pymysql://root:${MARKER}@127.0.0.1:1/nova_api`, real);
    writeConf(work, 'no-api.conf', undefined, real);
    writeConf(work, 'missing-sqlite.conf', `sqlite:///${file('typo_api.sqlite')}`, real);
    writeConf(work, 'empty-sqlite.conf', `sqlite:///${file('empty.sqlite')}`, real);
    writeConf(work, 'cell-as-api.conf', cell1, real);
    writeFileSync(file('huge-timeout.conf'), `[api_database]\nconnection = ${api}\n[nova_reconcile]\nconnect_timeout = 99999999999999999999\n`);
    // A Nova API schema missing a column: a copy of the API database without cell_mappings.disabled.
    copyFileSync(sqliteFileOf(api), file('api-no-disabled.sqlite'));
    const copy = sqliteKnex(file('api-no-disabled.sqlite'));
    try {
      await copy.raw('ALTER TABLE cell_mappings DROP COLUMN disabled');
    } finally {
      await copy.destroy();
    }
    writeConf(work, 'missing-column.conf', `sqlite:///${file('api-no-disabled.sqlite')}`, real);
    extras = { dirs: [work], sqliteFiles: [file('api-no-disabled.sqlite'), file('empty.sqlite')] };
  });
  afterAll(async () => {
    await d?.cleanup();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  const conf = (name: string, ...command: string[]) => (): string[] => ['--config-file', file(name), ...command];
  const discover = ['cell_v2', 'discover_hosts', '--by-service', '--verbose'];

  catalogue(
    [
      { name: 'a missing --config-file', argv: conf('no-such.conf', ...discover), code: 1, channel: 'stderr', message: /config file \S*no-such\.conf not found/ },
      { name: 'a directory given as --config-file', argv: conf('a-directory', ...discover), code: 1, channel: 'stderr', message: /a-directory is a directory/ },
      { name: 'a config that is not INI', argv: conf('not-ini.conf', ...discover), code: 1, channel: 'stderr', message: /not-ini\.conf:1: .*(expected key = value)/ },
      // readFileSync would read /dev/zero until memory runs out.
      { name: '--config-file /dev/zero (endless)', argv: () => ['--config-file', '/dev/zero', ...discover], code: 1, channel: 'stderr', message: /cannot read config file \/dev\/zero: larger than 64 MiB/ },
      { name: '--config-file /dev/zero (endless), reconciliation command', argv: () => ['--config-file', '/dev/zero', 'audit'], code: 2, channel: 'stderr', message: /cannot read config file \/dev\/zero: larger than 64 MiB/ },
      // Node turns a timer above 2^31-1 ms into 1 ms, with a multi-line TimeoutOverflowWarning.
      { name: 'an overflowing connect_timeout', argv: conf('huge-timeout.conf', 'cell_v2', 'list_cells'), code: 1, channel: 'stderr', message: /connect_timeout .* is out of range \(1\.\.3600\)/, json: false },
      { name: 'an overflowing connect_timeout, reconciliation command', argv: conf('huge-timeout.conf', 'audit'), code: 2, channel: 'stderr', message: /connect_timeout .* is out of range \(1\.\.3600\)/ },
      { name: 'an empty config: no [api_database] connection', argv: conf('empty.conf', ...discover), code: 255, channel: 'nova-stdout', message: /no \[api_database\] connection is set/ },
      { name: 'a config without [api_database]', argv: conf('no-api.conf', 'cell_v2', 'list_hosts'), code: 255, channel: 'nova-stdout', message: /no \[api_database\] connection is set/ },
      { name: 'a malformed URL', argv: conf('malformed.conf', ...discover), code: 255, channel: 'nova-stdout', message: /malformed database URL/ },
      { name: 'an unsupported scheme (postgresql://)', argv: conf('postgres.conf', ...discover), code: 255, channel: 'nova-stdout', message: /unsupported database URL scheme "postgresql"/ },
      { name: 'a bad port (99999)', argv: conf('bad-port.conf', ...discover), code: 255, channel: 'nova-stdout', message: /bad port "99999".*1 to 65535/ },
      { name: 'an unknown URL query argument', argv: conf('unknown-arg.conf', ...discover), code: 255, channel: 'nova-stdout', message: /unsupported database URL option "bogus_arg"/ },
      { name: 'a read_default_file that does not exist', argv: conf('read-default-file.conf', ...discover), code: 255, channel: 'nova-stdout', message: /cannot read MySQL option file \S*no-such\.cnf/ },
      {
        name: 'an unreachable server (127.0.0.1:1, refused) fails fast',
        argv: conf('refused.conf', ...discover),
        code: 255,
        channel: 'nova-stdout',
        message: /cannot connect to the API database .*127\.0\.0\.1:1.*connection refused/,
        maxMs: 5_000,
      },
      // A black-hole address (packets dropped) would take the whole 10 s connect timeout: not run here.
      { name: 'a SQLite file that does not exist (and is not created)', argv: conf('missing-sqlite.conf', ...discover), code: 255, channel: 'nova-stdout', message: /typo_api\.sqlite does not exist/ },
      { name: 'an empty database', argv: conf('empty-sqlite.conf', ...discover), code: 255, channel: 'nova-stdout', message: /API database .* is empty/ },
      { name: 'a cell database given as the API database', argv: conf('cell-as-api.conf', ...discover), code: 255, channel: 'nova-stdout', message: /is not a Nova API database: missing: cell_mappings, host_mappings/ },
      {
        name: 'a Nova API schema missing cell_mappings.disabled',
        argv: conf('missing-column.conf', 'cell_v2', 'list_cells'),
        code: 255,
        channel: 'nova-stdout',
        message: /is not a Nova API database: column "cell_mappings\.disabled" is missing/,
      },
      {
        name: 'a malformed --cell_uuid',
        argv: () => [...d.args, 'cell_v2', 'discover_hosts', '--cell_uuid', 'not-a-uuid'],
        code: 255,
        channel: 'nova-stdout',
        message: /^Cell not-a-uuid has no mapping\.$/,
      },
      { name: 'an unknown option of a compatible command', argv: () => [...d.args, 'cell_v2', 'discover_hosts', '--bogus'], code: 2, channel: 'stderr', message: /unknown option '--bogus'/, json: false },
      { name: '--by_service (nova spells it --by-service)', argv: () => [...d.args, 'cell_v2', 'discover_hosts', '--by_service'], code: 2, channel: 'stderr', message: /--by_service/, json: false },
      { name: 'an unknown cell_v2 action (argparse: invalid choice)', argv: () => [...d.args, 'cell_v2', 'map_everything'], code: 2, channel: 'stderr', message: /unknown command "cell_v2 map_everything"/, json: false },
      { name: 'an unknown command', argv: () => [...d.args, 'frobnicate', 'everything'], code: 127, channel: 'stderr', message: /unknown command "frobnicate everything"/, json: false },
      // No command, or a category without its action: one line, not the whole usage.
      { name: 'no arguments at all', argv: () => [], code: 127, channel: 'stderr', message: /no command given/, json: false },
      { name: 'only --config-file', argv: () => [...d.args], code: 127, channel: 'stderr', message: /no command given/, json: false },
      { name: 'a compatible category without its action (argparse: exit 2)', argv: () => [...d.args, 'cell_v2'], code: 2, channel: 'stderr', message: /"cell_v2" needs an action: one of discover_hosts, list_hosts/, json: false },
      { name: 'a reconciliation category without its action', argv: () => [...d.args, 'compute_node', '--apply'], code: 127, channel: 'stderr', message: /"compute_node" needs an action: one of list, cleanup_orphans/, json: false },
      { name: 'help for an unknown command', argv: () => ['help', 'frobnicate'], code: 127, channel: 'stderr', message: /unknown command "frobnicate"/, json: false },
      // Refused before the apply lock: on SQLite the lock is a file beside the API database.
      {
        name: 'ironic_compute_node_move to an unknown host (no lock file made)',
        argv: () => [...d.args, 'db', 'ironic_compute_node_move', '--ironic-node-uuid', '11111111-2222-4333-8444-555555555555', '--destination-host', 'no-such-host'],
        code: 255,
        channel: 'nova-stdout',
        message: /^Compute host no-such-host could not be found\.$/,
      },
      {
        name: 'ironic_compute_node_move with empty values',
        argv: () => [...d.args, 'db', 'ironic_compute_node_move', '--ironic-node-uuid', '', '--destination-host', ''],
        code: 255,
        channel: 'nova-stdout',
        message: /^Compute host {2}could not be found\.$/,
      },
      { name: 'an unknown option of a reconciliation command', argv: () => [...d.args, 'sandbox', 'create', file('sb'), '--bogus'], code: 127, channel: 'stderr', message: /unknown option '--bogus'/, json: false },
    ],
    () => snapshotDeployment(d, extras),
  );

  it('delete_host with a malformed --cell_uuid → exit 1, nova\'s message on stdout, nothing changed', async () => {
    const before = await snapshotDeployment(d, extras);
    const r = await runBin([...d.args, 'cell_v2', 'delete_host', '--cell_uuid', 'not-a-uuid', '--host', 'compute-2']);
    expect(r).toMatchObject({ code: 1, stdout: 'Cell with uuid not-a-uuid was not found.\n', stderr: '' });
    expect(await snapshotDeployment(d, extras)).toEqual(before);
  });

  it('placement audit --delete of an unknown provider → exit 127, nova\'s message, no lock file beside the API database', async () => {
    const before = await snapshotDeployment(d, extras);
    const r = await runBin([...d.args, 'placement', 'audit', '--delete', '--resource_provider', '11111111-2222-4333-8444-555555555555']);
    expect(r).toMatchObject({ code: 127, stdout: 'Resource provider with UUID 11111111-2222-4333-8444-555555555555 does not exist.\n', stderr: '' });
    expect(await snapshotDeployment(d, extras)).toEqual(before);
  });

  it('--debug adds the stack on stderr, still without a password', async () => {
    for (const name of ['malformed.conf', 'refused.conf', 'no-such.conf']) {
      const r = await runBin(['--debug', '--config-file', file(name), ...discover]);
      expect(r.code).toBe(name === 'no-such.conf' ? 1 : 255);
      expect(r.stderr).toMatch(/^\s+at /m);
      expect(r.stdout + r.stderr).not.toContain(MARKER);
      if (name !== 'no-such.conf') expect(r.stdout).toMatch(/^An error has occurred:\n[^\n]+\n$/);
      else expect(r.stdout).toBe('');
    }
  });

  // Last, since it changes the deployment: proves the snapshot is not vacuous.
  it('the snapshot does see a change: a real discover_hosts alters it', async () => {
    const before = await snapshotDeployment(d, extras);
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    expect(await snapshotDeployment(d, extras)).not.toEqual(before);
  });
});

describeMysql('bad input [mariadb]', () => {
  let d: TestDeployment;
  let scratch: ScratchDatabases;
  let work: string;
  const file = (name: string): string => join(work, name);
  const host = '127.0.0.1';
  const port = 3306;

  beforeAll(async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'badm');
    work = mkdtempSync(join(tmpdir(), 'nova-reconcile-badm-'));
    // `empty`: no tables at all. `api_nodisabled`: the API schema without cell_mappings.disabled.
    // `api_badcell`: an API database whose cell points at a database with a wrong password.
    scratch = await createScratchDatabases('badm', ['empty', 'api_nodisabled', 'api_badcell']);
    await migrateSchema(scratch.knex('api_nodisabled'), 'api');
    await mapSandboxCells(scratch.knex('api_nodisabled'), { cell0: d.url('cell0'), cell1: d.url('cell1'), cell2: d.url('cell2') });
    await scratch.knex('api_nodisabled').raw('ALTER TABLE cell_mappings DROP COLUMN disabled');
    await migrateSchema(scratch.knex('api_badcell'), 'api');
    const cellDb = scratch.dbNames['empty'] ?? '';
    await mapSandboxCells(scratch.knex('api_badcell'), {
      cell0: d.url('cell0'),
      cell1: `mysql+pymysql://nr_badpw:${MARKER}@${host}:${port}/${cellDb}`,
      cell2: d.url('cell2'),
    });
    const admin = mysqlKnex();
    try {
      await admin.raw(`CREATE USER IF NOT EXISTS 'nr_badpw'@'%' IDENTIFIED BY '${RIGHT_PASSWORD}'`);
      await admin.raw(`ALTER USER 'nr_badpw'@'%' IDENTIFIED BY '${RIGHT_PASSWORD}'`);
    } finally {
      await admin.destroy();
    }
    const real = { database: d.url('cell1'), placement: d.url('placement') };
    const apiDb = d.url('api').replace(/^.*\//, '');
    writeConf(work, 'wrong-password.conf', `mysql+pymysql://nr_badpw:${MARKER}@${host}:${port}/${apiDb}`, real);
    writeConf(work, 'unknown-db.conf', `mysql+pymysql://root@${host}:${port}/nr_no_such_database_x9`, real);
    writeConf(work, 'empty-db.conf', scratch.url('empty'), real);
    writeConf(work, 'missing-column.conf', scratch.url('api_nodisabled'), real);
    writeConf(work, 'bad-cell.conf', scratch.url('api_badcell'), real);
    writeConf(work, 'cell-as-api.conf', d.url('cell1'), real);
  });
  afterAll(async () => {
    await d?.cleanup();
    await scratch?.drop();
    const admin = mysqlKnex();
    try {
      await admin.raw("DROP USER IF EXISTS 'nr_badpw'@'%'");
    } finally {
      await admin.destroy();
    }
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  const conf = (name: string, ...command: string[]) => (): string[] => ['--config-file', file(name), ...command];
  const discover = ['cell_v2', 'discover_hosts', '--by-service', '--verbose'];
  const snapshot = (): Promise<unknown> =>
    snapshotDeployment(d, { dirs: [work], mysqlDatabases: Object.values(scratch.dbNames) });

  catalogue(
    [
      { name: 'a wrong password', argv: conf('wrong-password.conf', ...discover), code: 255, channel: 'nova-stdout', message: /cannot connect to the API database .*access denied for user 'nr_badpw'/i },
      { name: 'an unknown database', argv: conf('unknown-db.conf', ...discover), code: 255, channel: 'nova-stdout', message: /unknown database.*nr_no_such_database_x9/i },
      { name: 'an empty database (not Nova\'s)', argv: conf('empty-db.conf', ...discover), code: 255, channel: 'nova-stdout', message: /API database .* is empty: it has no Nova tables/ },
      { name: 'a cell database given as the API database', argv: conf('cell-as-api.conf', 'cell_v2', 'list_hosts'), code: 255, channel: 'nova-stdout', message: /is not a Nova API database/ },
      {
        name: 'a Nova API schema missing cell_mappings.disabled',
        argv: conf('missing-column.conf', ...discover),
        code: 255,
        channel: 'nova-stdout',
        message: /is not a Nova API database: column "cell_mappings\.disabled" is missing/,
      },
      {
        name: 'a cell whose database_connection has a wrong password',
        argv: conf('bad-cell.conf', 'cell_v2', 'discover_hosts', '--cell_uuid', '4dde17f6-6b53-4318-915d-00c67a4771f4'),
        code: 255,
        channel: 'nova-stdout',
        message: /cell 'cell1' database.*access denied/i,
      },
      {
        name: 'a malformed --cell_uuid',
        argv: () => [...d.args, 'cell_v2', 'discover_hosts', '--cell_uuid', 'not-a-uuid'],
        code: 255,
        channel: 'nova-stdout',
        message: /^Cell not-a-uuid has no mapping\.$/,
      },
    ],
    snapshot,
  );

  it('--debug on a wrong password adds the stack on stderr, still without either password', async () => {
    const r = await runBin(['--debug', '--config-file', file('wrong-password.conf'), ...discover]);
    expect(r.code).toBe(255);
    expect(r.stdout).toMatch(/^An error has occurred:\n[^\n]+\n$/);
    expect(r.stderr).toMatch(/^\s+at /m);
    expect(r.stdout + r.stderr).not.toContain(MARKER);
    expect(r.stdout + r.stderr).not.toContain(RIGHT_PASSWORD);
  });

  // Last, since it changes the deployment: proves the checksums are not vacuous.
  it('the snapshot does see a change: a real discover_hosts alters it', async () => {
    const before = await snapshot();
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    expect(await snapshot()).not.toEqual(before);
  });
});

// Reconciliation commands: bad argv, --ironic-nodes files and journals for undo.
describe('bad input of the reconciliation commands [sqlite deployment]', () => {
  let d: TestDeployment;
  // Made now: the cases' argv name files in it when they are registered.
  const work = mkdtempSync(join(tmpdir(), 'nova-reconcile-badr-'));
  const file = (name: string): string => join(work, name);
  const UNKNOWN = '11111111-2222-4333-8444-555555555555';

  beforeAll(async () => {
    d = await createTestDeployment('sqlite', 'libvirt', 'badr');
    writeFileSync(file('not-json.json'), 'not json');
    writeFileSync(file('empty.json'), '');
    writeFileSync(file('non-objects.json'), '[1, 2]');
    writeFileSync(file('corrupt.jsonl'), 'garbage\n');
    writeFileSync(file('foreign.jsonl'), '{"type":"header","format":"other/1"}\n');
    writeFileSync(file('truncated-header.jsonl'), '{"type":"header","format":"nova-reconc');
    // The wrong file given as --ironic-nodes: its text must never be echoed.
    writeFileSync(file('password-file'), `${MARKER}\n`);
    writeFileSync(file('json-secret.json'), `[${MARKER}]`);
    mkdirSync(file('a-directory'));
    writeFileSync(
      file('other-deployment.jsonl'),
      JSON.stringify({ type: 'header', format: 'nova-reconcile-journal/1', command: 'compute_node cleanup_orphans', startedAt: '2026-01-01 00:00:00', deployment: { api: 'mysql://db.example.org/nova_api', cells: [] } }) + '\n',
    );
  });
  afterAll(async () => {
    await d?.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  const cmd = (...argv: string[]) => (): string[] => [...d.args, ...argv];
  const usage = 127;
  catalogue(
    [
      // --cell takes a uuid or a name: a value that is neither is unknown.
      { name: 'compute_node list --cell that is no cell uuid or name', argv: cmd('compute_node', 'list', '--cell', 'not-a-uuid'), code: usage, channel: 'stderr', message: /--cell "not-a-uuid": no cell has this uuid or name/ },
      { name: 'compute_node list --cell with an unknown uuid', argv: cmd('compute_node', 'list', '--cell', UNKNOWN), code: usage, channel: 'stderr', message: /has no mapping/ },
      { name: 'compute_node move with both --node and --from-host', argv: cmd('compute_node', 'move', '--node', UNKNOWN, '--from-host', 'a', '--to-host', 'b'), code: usage, channel: 'stderr', message: /give either --node .* or --from-host/ },
      { name: 'compute_node move --node with a malformed uuid', argv: cmd('compute_node', 'move', '--node', 'not-a-uuid', '--to-host', 'b'), code: usage, channel: 'stderr', message: /--node "not-a-uuid": not a valid UUID/ },
      { name: 'audit --ironic-nodes: not JSON', argv: cmd('audit', '--ironic-nodes', file('not-json.json')), code: usage, channel: 'stderr', message: /--ironic-nodes \S+: line 1: .*not a valid UUID/ },
      // Implausible ground truth, not bad usage (issue 23): exit 2, "could not run".
      { name: 'audit --ironic-nodes: an empty file', argv: cmd('audit', '--ironic-nodes', file('empty.json')), code: 2, channel: 'stderr', message: /the file is empty/ },
      { name: 'audit --ironic-nodes: a list of non-objects', argv: cmd('audit', '--ironic-nodes', file('non-objects.json')), code: usage, channel: 'stderr', message: /entry 1 is not an object/ },
      { name: 'audit --ironic-nodes: a missing file', argv: cmd('audit', '--ironic-nodes', file('nope.json')), code: usage, channel: 'stderr', message: /cannot read the file/ },
      { name: 'undo: a corrupt journal', argv: cmd('undo', file('corrupt.jsonl')), code: usage, channel: 'stderr', message: /corrupt at line 1: not JSON/ },
      { name: 'undo: a foreign file', argv: cmd('undo', file('foreign.jsonl')), code: usage, channel: 'stderr', message: /is not a nova-reconcile journal/ },
      { name: 'undo: a journal truncated inside its header', argv: cmd('undo', file('truncated-header.jsonl')), code: usage, channel: 'stderr', message: /truncated/ },
      { name: 'undo: a journal of another deployment', argv: cmd('undo', file('other-deployment.jsonl')), code: usage, channel: 'stderr', message: /written for another deployment/ },
      { name: 'undo: a missing journal', argv: cmd('undo', file('missing.jsonl')), code: usage, channel: 'stderr', message: /cannot read the journal/ },
      { name: 'an unknown option of audit', argv: cmd('audit', '--bogus'), code: usage, channel: 'stderr', message: /unknown option '--bogus'/, json: false },
      { name: 'an unsupported --format', argv: cmd('compute_node', 'rebalance', '--format', 'yaml'), code: usage, channel: 'stderr', message: /'yaml' is invalid/, json: false },
      { name: 'audit --ironic-nodes: a password file (not echoed)', argv: cmd('audit', '--ironic-nodes', file('password-file')), code: usage, channel: 'stderr', message: /line 1: the line is not a valid UUID \(14 characters.*not shown\)/ },
      { name: 'audit --ironic-nodes: broken JSON holding a secret (not echoed)', argv: cmd('audit', '--ironic-nodes', file('json-secret.json')), code: usage, channel: 'stderr', message: /not valid JSON \(unexpected character\)/ },
      { name: 'audit --ironic-nodes: a directory', argv: cmd('audit', '--ironic-nodes', file('a-directory')), code: usage, channel: 'stderr', message: /cannot read the file \(is a directory\)/ },
      { name: 'audit --ironic-nodes /dev/zero (endless)', argv: cmd('audit', '--ironic-nodes', '/dev/zero'), code: usage, channel: 'stderr', message: /cannot read the file \(larger than 64 MiB\)/ },
      { name: 'undo: a directory', argv: cmd('undo', file('a-directory')), code: usage, channel: 'stderr', message: /cannot read the journal \S+: is a directory/ },
      { name: 'undo: /dev/null', argv: cmd('undo', '/dev/null'), code: usage, channel: 'stderr', message: /the journal \/dev\/null is empty/ },
      { name: 'undo: /dev/zero (endless)', argv: cmd('undo', '/dev/zero'), code: usage, channel: 'stderr', message: /cannot read the journal \/dev\/zero: larger than 64 MiB/ },
      // fs.mkdirSync(..., { recursive: true }) spins forever on ENOENT under /proc.
      { name: 'sandbox create under /proc', argv: () => ['sandbox', 'create', '/proc/nova-reconcile-sandbox'], code: usage, channel: 'stderr', message: /cannot create \/proc\/nova-reconcile-sandbox/ },
      { name: 'sandbox create into a non-empty directory', argv: () => ['sandbox', 'create', work], code: usage, channel: 'stderr', message: /is not empty: it holds/ },
      { name: 'sandbox create with an unknown scenario', argv: () => ['sandbox', 'create', file('sb'), '--scenario', 'nope'], code: usage, channel: 'stderr', message: /unknown scenario "nope"/ },
      // A single-valued option given twice is refused rather than "last one wins".
      { name: 'compute_node move --to-host given twice', argv: cmd('compute_node', 'move', '--from-host', 'a', '--to-host', 'b', '--to-host', 'c'), code: usage, channel: 'stderr', message: /option --to-host is given more than once/, json: false },
      { name: 'cleanup_orphans --ironic-nodes given twice', argv: cmd('compute_node', 'cleanup_orphans', '--ironic-nodes', file('empty.json'), '--ironic-nodes', file('non-objects.json')), code: usage, channel: 'stderr', message: /option --ironic-nodes is given more than once/, json: false },
    ],
    () => snapshotDeployment(d, { dirs: [work] }),
  );
});
