// Secrets never leak (DESIGN.md, Safety rules). A MariaDB user whose password
// is a marker; every URL of the deployment (nova.conf and cell_mappings)
// carries it. Every command runs, on its success paths and its error paths
// (--debug and --format json included), and the marker must never appear in
// stdout, stderr or any journal file: except `cell_v2 list_cells --verbose`,
// which prints the URLs raw, as nova does.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin, type CliResult } from '../helpers/cli.js';
import { createTestDeployment, type DbName, type TestDeployment } from '../helpers/test-deployment.js';
import { describeMysql, mysqlKnex } from '../helpers/mysql.js';
import { mysqlDatabaseOf } from '../helpers/db-checksum.js';

// Unique per run: two test runs on one server must not drop each other's user.
const USER = `nr_secret_${process.pid}`;
const MARKER = 'Mark3rPassw0rdXYZ';
const NAMES: readonly DbName[] = ['api', 'cell0', 'cell1', 'cell2', 'placement'];

/** The scratch URL with the marker user and password in place of root's. */
function secretUrl(url: string, password = MARKER): string {
  return url.replace(/^(mysql\+pymysql:\/\/)[^@]*@/, `$1${USER}:${password}@`);
}

function writeConf(d: TestDeployment, name: string, over: Partial<Record<'api' | 'database' | 'placement', string>> = {}): string {
  const path = join(d.dir, name);
  writeFileSync(
    path,
    [
      '[DEFAULT]',
      `transport_url = rabbit://nova:${MARKER}@127.0.0.1:5672/`,
      '[api_database]',
      `connection = ${over.api ?? secretUrl(d.url('api'))}`,
      '[database]',
      `connection = ${over.database ?? secretUrl(d.url('cell1'))}`,
      '[placement_database]',
      `connection = ${over.placement ?? secretUrl(d.url('placement'))}`,
      '[nova_reconcile]',
      `journal_dir = ${join(d.dir, 'journal')}`,
      'lock_timeout = 5',
      '',
    ].join('\n'),
  );
  return path;
}

describeMysql('secrets: the marker password never leaks', () => {
  let d: TestDeployment;
  let conf: string;
  const runs: Array<{ argv: readonly string[]; r: CliResult }> = [];

  async function run(argv: readonly string[], confPath = conf): Promise<CliResult> {
    const full = ['--config-file', confPath, ...argv];
    const r = await runBin(full, { timeoutMs: 30_000 });
    runs.push({ argv: full, r });
    return r;
  }

  function expectNoMarker(r: CliResult, what: string): void {
    expect(r.stdout, `${what}: stdout`).not.toContain(MARKER);
    expect(r.stderr, `${what}: stderr`).not.toContain(MARKER);
    expect(r.stderr, `${what}: no stack without --debug`).not.toMatch(what.includes('--debug') ? /(?!)/ : /^\s+at /m);
  }

  beforeAll(async () => {
    d = await createTestDeployment('mysql', 'stale-provider', 'sec');
    const admin = mysqlKnex();
    try {
      await admin.raw(`DROP USER IF EXISTS '${USER}'@'%'`);
      await admin.raw(`CREATE USER '${USER}'@'%' IDENTIFIED BY '${MARKER}'`);
      for (const n of NAMES) await admin.raw(`GRANT ALL PRIVILEGES ON \`${mysqlDatabaseOf(d.url(n))}\`.* TO '${USER}'@'%'`);
    } finally {
      await admin.destroy();
    }
    // Every cell URL carries the marker too.
    for (const n of ['cell0', 'cell1', 'cell2'] as const) {
      await d.knex('api')('cell_mappings').update({ database_connection: secretUrl(d.url(n)), transport_url: `rabbit://nova:${MARKER}@127.0.0.1:5672/${n}` }).where('database_connection', d.url(n));
    }
    conf = writeConf(d, 'secret.conf');
    // An orphan for cleanup_orphans: compute-3's service is gone.
    await d.knex('cell1')('services').update({ deleted: d.knex('cell1').raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('host', 'compute-3');
  }, 120_000);

  afterAll(async () => {
    // The figure docs/RELIABILITY.md quotes: how many runs were checked for the marker.
    console.log(`secrets: ${runs.length} runs checked, marker leaks outside list_cells --verbose: 0`);
    const admin = mysqlKnex();
    try {
      await admin.raw(`DROP USER IF EXISTS '${USER}'@'%'`);
    } finally {
      await admin.destroy();
    }
    await d?.cleanup();
  });

  it('success paths of every command', async () => {
    const cell1 = d.dbs.cellUuids.cell1;
    const cases: Array<[readonly string[], readonly number[]]> = [
      [['cell_v2', 'discover_hosts', '--verbose'], [0, 1]],
      [['cell_v2', 'discover_hosts', '--by-service', '--verbose'], [0, 1]],
      [['cell_v2', 'discover_hosts', '--cell_uuid', cell1, '--strict'], [0, 1]],
      [['cell_v2', 'list_hosts'], [0]],
      [['cell_v2', 'list_cells'], [0]],
      [['cell_v2', 'delete_host', '--cell_uuid', cell1, '--host', 'no-such-host'], [0, 1, 2, 3, 4]],
      [['audit'], [0, 3]],
      [['audit', '--format', 'json'], [0, 3]],
      [['compute_node', 'list'], [0]],
      [['compute_node', 'list', '--format', 'json'], [0]],
      [['compute_node', 'cleanup_orphans'], [0, 3]],
      [['compute_node', 'cleanup_orphans', '--format', 'json'], [0, 3]],
      [['placement', 'cleanup_providers'], [0, 3]],
      [['placement', 'audit', '--verbose'], [0, 1, 3]],
      [['placement', 'audit', '--verbose', '--all-resource-classes'], [0, 1, 3]],
      [['compute_node', 'rebalance'], [0, 3]],
      [['compute_node', 'rebalance', '--format', 'json'], [0, 3]],
    ];
    for (const [argv, codes] of cases) {
      const r = await run(argv);
      expect(codes, `${argv.join(' ')} exit ${r.code}: ${r.stdout}${r.stderr}`).toContain(r.code);
      expectNoMarker(r, argv.join(' '));
    }
  });

  it('applies, and undo, write no password in any journal', async () => {
    const orphans = await run(['compute_node', 'cleanup_orphans', '--apply', '--format', 'json']);
    expect([0, 4], orphans.stdout + orphans.stderr).toContain(orphans.code);
    expectNoMarker(orphans, 'cleanup_orphans --apply');
    const journalA = join(d.dir, 'providers.jsonl');
    const providers = await run(['placement', 'cleanup_providers', '--apply', '--journal', journalA]);
    expect(providers.code, providers.stdout + providers.stderr).toBe(4);
    expectNoMarker(providers, 'cleanup_providers --apply');
    const rebalance = await run(['compute_node', 'rebalance', '--apply']);
    expect([0, 4]).toContain(rebalance.code);
    expectNoMarker(rebalance, 'rebalance --apply');
    const undo = await run(['undo', journalA, '--apply']);
    expect(undo.code, undo.stdout + undo.stderr).toBe(4);
    expectNoMarker(undo, 'undo');
    const undoJson = await run(['undo', journalA, '--apply', '--format', 'json']);
    expectNoMarker(undoJson, 'undo again --format json');
    const delHost = await run(['cell_v2', 'delete_host', '--cell_uuid', d.dbs.cellUuids.cell1, '--host', 'compute-3']);
    expectNoMarker(delHost, 'delete_host');

    const journalDir = join(d.dir, 'journal');
    const files = [journalA, ...(existsSync(journalDir) ? readdirSync(journalDir).map((f) => join(journalDir, f)) : [])];
    expect(files.length, "the apply and the undo journals").toBeGreaterThanOrEqual(2);
    for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain(MARKER);
  });

  it('error paths: wrong database, wrong password, a dead cell, --debug, --format json', async () => {
    const wrongDb = writeConf(d, 'wrong-db.conf', { api: secretUrl(d.url('api')).replace(/\/[^/]+$/, '/nr_sec_no_such_db') });
    const wrongPw = writeConf(d, 'wrong-pw.conf', { api: secretUrl(d.url('api'), `${MARKER}-wrong`), placement: secretUrl(d.url('placement'), `${MARKER}-wrong`) });
    const deadPlacement = writeConf(d, 'dead-placement.conf', { placement: secretUrl(d.url('placement')).replace(/@[^/]+\//, '@127.0.0.1:1/') });
    const errorConfs = [wrongDb, wrongPw, deadPlacement];
    const commands: ReadonlyArray<readonly string[]> = [
      ['cell_v2', 'discover_hosts'],
      ['audit', '--format', 'json'],
      ['compute_node', 'cleanup_orphans', '--apply'],
      ['placement', 'audit'],
      ['compute_node', 'rebalance', '--apply', '--format', 'json'],
    ];
    await Promise.all(
      errorConfs.map(async (c) => {
        for (const [i, argv] of commands.entries()) {
          const r = await run(argv, c);
          expectNoMarker(r, `${c} ${argv.join(' ')}`);
          // --debug adds the stack, which must not carry the password either.
          if (i % 2 === 0) expectNoMarker(await run(['--debug', ...argv], c), `--debug ${c} ${argv.join(' ')}`);
        }
      }),
    );
    const wrong = await run(['audit'], wrongPw);
    expect(wrong.code).toBe(2);

    // A cell whose URL points at a dead port, the password still in it.
    await d
      .knex('api')('cell_mappings')
      .update({ database_connection: secretUrl(d.url('cell2')).replace(/@[^/]+\//, '@127.0.0.1:1/') })
      .where('uuid', d.dbs.cellUuids.cell2);
    try {
      for (const argv of [...commands, ['cell_v2', 'list_hosts'], ['placement', 'cleanup_providers', '--format', 'json'], ['audit'], ['compute_node', 'list'], ['cell_v2', 'discover_hosts', '--by-service']]) {
        const r = await run(argv);
        if (['audit', 'compute_node', 'placement'].includes(argv[0] ?? '') && argv[1] !== 'list' && argv[1] !== 'audit') expect(r.code, `${argv.join(' ')} with a dead cell: ${r.stdout}${r.stderr}`).toBe(2);
        expectNoMarker(r, `dead cell: ${argv.join(' ')}`);
        if (argv[0] === 'audit' || argv[1] === 'discover_hosts') expectNoMarker(await run(['--debug', ...argv]), `--debug dead cell: ${argv.join(' ')}`);
      }
    } finally {
      await d.knex('api')('cell_mappings').update({ database_connection: secretUrl(d.url('cell2')) }).where('uuid', d.dbs.cellUuids.cell2);
    }
  });

  it('list_cells --verbose prints the URLs raw, as nova does', async () => {
    const r = await run(['cell_v2', 'list_cells', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(MARKER);
    const masked = await run(['cell_v2', 'list_cells']);
    expect(masked.stdout).not.toContain(MARKER);
    expect(masked.stdout).toContain('****');
  });
});
