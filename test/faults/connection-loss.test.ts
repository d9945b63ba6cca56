// Connection loss (issue 6, part 3), on MariaDB:
// - the tool's placement connections are KILLed from another session while it
//   applies: it exits 2 with one error line, nothing is half-written (the
//   invariants of the kill campaign hold), and a re-run converges (4, then 0);
// - a cell whose cell_mappings URL points at a dead port while the others
//   work: every reconciliation command exits 2 naming the cell, and no
//   database changes;
// - placement's server refuses NEW connections mid-apply: its connection goes
//   through a TCP proxy in this process that stops listening and destroys the
//   open sockets once the journal reaches a random line; the apply exits 2
//   with one line, the invariants hold, and re-runs converge once the server
//   is back.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/cli.js';
import { describeMysql, mysqlKnex } from '../helpers/mysql.js';
import { mysqlDatabaseOf, snapshotDeployment } from '../helpers/db-checksum.js';
import { COMMANDS, checkInvariants, createFaultDeployment, type FaultDeployment } from './helpers.js';
import { normaliseRow, rowsEqual, type Row } from '../../src/db/row-images.js';
import { startProxy, type Proxy } from '../helpers/tcp-proxy.js';
import { readJournal } from '../../src/operations/journal.js';

const TIMES = Number(process.env['FAULT_CONN_KILLS'] ?? 5);
const REFUSALS = Number(process.env['FAULT_REFUSALS'] ?? 4);

/** After the cut: each cleanup command's re-run finishes the plan, a third run has nothing to do, and the invariants hold. */
async function expectConvergence(f: FaultDeployment, journals: readonly string[]): Promise<void> {
  for (const cmd of [COMMANDS.orphans, COMMANDS.providers]) {
    const dry = await runBin([...f.d.args, ...cmd]);
    const again = await runBin([...f.d.args, ...cmd, '--apply']);
    expect(again.code, again.stderr).toBe(dry.code === 3 ? 4 : 0);
    const third = await runBin([...f.d.args, ...cmd, '--apply']);
    expect(third.code, third.stderr).toBe(0);
  }
  expect(await checkInvariants(f, journals)).toEqual([]);
}

describeMysql('connection loss', () => {
  let f: FaultDeployment;
  beforeAll(async () => {
    f = await createFaultDeployment(150, 40, 'cl');
    // Batches of 8 units, not 64: the journal grows a batch at a time, and
    // since the cleanups plan without reading the whole deployment, an
    // apply of 3 batches (1 for the 40 stale providers) could finish before
    // the KILLs, started at its first batch's lines, landed on a busy
    // machine. With 19 and 5 batches the KILLs land mid-apply.
    appendFileSync(f.d.confPath, 'apply_batch_units = 8\n');
  }, 120_000);
  afterAll(async () => {
    await f?.d.cleanup();
  });

  /** Run an apply; once its journal has `atLines` lines, KILL every connection to `db` until it exits. */
  async function applyAndKillConnections(argv: readonly string[], journal: string, db: string, atLines: number): Promise<{ code: number | null; stderr: string; killedIds: number }> {
    const admin = mysqlKnex();
    let killedIds = 0;
    try {
      return await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, ...argv], { env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' }, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        let done = false;
        child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
        const loop = async (): Promise<void> => {
          while (!done) {
            const lines = existsSync(journal) ? readFileSync(journal, 'utf8').split('\n').length - 1 : 0;
            if (lines >= atLines) {
              const rows = (await admin.raw('SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()', [db]))[0] as Array<{ id: number }>;
              for (const r of rows) {
                await admin.raw(`KILL ${Number(r.id)}`).catch(() => undefined);
                killedIds++;
              }
            }
            await new Promise((r) => setTimeout(r, 3));
          }
        };
        const looping = loop().catch(reject);
        child.on('error', reject);
        child.on('close', (code) => {
          done = true;
          void looping.then(() => resolve({ code, stderr, killedIds }));
        });
      });
    } finally {
      await admin.destroy();
    }
  }

  it(`the placement connection KILLed mid-apply, ${TIMES} times: exit 2, one line, nothing half-written, re-runs converge`, async () => {
    const placementDb = mysqlDatabaseOf(f.d.url('placement'));
    const journals: string[] = [];
    let failures = 0;
    for (let i = 0; i < TIMES; i++) {
      const cmd = i % 2 === 0 ? COMMANDS.orphans : COMMANDS.providers;
      const journal = join(f.d.dir, `conn-${i}.jsonl`);
      journals.push(journal);
      const r = await applyAndKillConnections([...f.d.args, ...cmd, '--apply', '--journal', journal], journal, placementDb, 2 + Math.floor(Math.random() * 60));
      if (r.code === 0 || r.code === 4) continue; // finished before the first KILL landed
      failures++;
      expect(r.code, r.stderr).toBe(2);
      // The journal line and progress lines, then ONE error line (a hint may follow); no stack.
      const errorLines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('journal: ') && !l.startsWith('applied ') && !l.startsWith('hint: '));
      expect(errorLines, r.stderr).toHaveLength(1);
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(await checkInvariants(f, journals)).toEqual([]);
    }
    expect(failures, 'at least one apply lost its connection').toBeGreaterThan(0);
    console.log(`connection loss: ${failures} apply run(s) lost their placement connection; invariants held after each`);
    await expectConvergence(f, journals);
  }, 300_000);

  it('an unreachable cell: reconciliation commands exit 2 naming it, and change nothing', async () => {
    // Fresh work for the planners: the scenario's compute-3 loses its service.
    const cell1 = f.d.knex('cell1');
    await cell1('services').update({ deleted: cell1.raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('host', 'compute-3');
    const api = f.d.knex('api');
    await api('cell_mappings').update({ database_connection: f.d.url('cell2').replace(/@[^/]+\//, '@127.0.0.1:1/') }).where('uuid', f.d.dbs.cellUuids.cell2);
    try {
      const before = await snapshotDeployment(f.d);
      for (const argv of [['audit'], [...COMMANDS.orphans, '--apply'], [...COMMANDS.providers, '--apply'], ['compute_node', 'rebalance', '--apply'], [...COMMANDS.orphans], ['compute_node', 'list']]) {
        const r = await runBin([...f.d.args, ...argv]);
        expect(r.code, `${argv.join(' ')}: ${r.stdout}${r.stderr}`).toBe(2);
        expect(r.stdout + r.stderr).toMatch(/cell2/);
        expect(r.stderr).not.toMatch(/^\s+at /m);
      }
      expect(await snapshotDeployment(f.d)).toEqual(before);
    } finally {
      await api('cell_mappings').update({ database_connection: f.d.url('cell2') }).where('uuid', f.d.dbs.cellUuids.cell2);
    }
  }, 120_000);
});

/** Resolves true when a TCP connection to the port is refused. */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describeMysql('connection loss: the placement server refuses new connections mid-apply', () => {
  let f: FaultDeployment;
  beforeAll(async () => {
    f = await createFaultDeployment(150, 40, 'cr');
  }, 120_000);
  afterAll(async () => {
    await f?.d.cleanup();
  });

  /** A copy of nova.conf whose placement connection goes through the proxy. */
  function confThrough(proxy: Proxy, name: string): string[] {
    const direct = f.d.url('placement');
    const viaProxy = direct.replace(/@[^/]+\//, `@127.0.0.1:${proxy.port}/`);
    if (viaProxy === direct) throw new Error(`cannot re-point ${direct}`);
    const path = join(f.d.dir, name);
    writeFileSync(path, readFileSync(f.d.confPath, 'utf8').replace(`connection = ${direct}\n`, `connection = ${viaProxy}\n`));
    return ['--config-file', path];
  }

  /** Run an apply through a fresh proxy; once its journal has `atLines` lines the proxy refuses and cuts. */
  async function applyAndRefuse(cmd: readonly string[], journal: string, atLines: number): Promise<{ code: number | null; stderr: string; refusedAt: number | undefined; proxy: Proxy }> {
    const target = new URL(f.d.url('placement').replace(/^mysql\+pymysql:/, 'mysql:'));
    const proxy = await startProxy({ host: target.hostname, port: Number(target.port || 3306) });
    const args = confThrough(proxy, `proxy-${proxy.port}.conf`);
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args, ...cmd, '--apply', '--journal', journal], { env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      let refusedAt: number | undefined;
      child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
      const poll = setInterval(() => {
        const lines = existsSync(journal) ? readFileSync(journal, 'utf8').split('\n').length - 1 : 0;
        if (lines >= atLines && refusedAt === undefined) {
          refusedAt = lines;
          clearInterval(poll);
          void proxy.refuse();
        }
      }, 2);
      child.on('error', reject);
      child.on('close', (code) => {
        clearInterval(poll);
        void proxy.refuse().then(() => resolve({ code, stderr, refusedAt, proxy }));
      });
    });
  }

  it('the connection goes while COMMIT is in flight: exit 2 saying the outcome is unknown (not "rolled back"); the server did commit, the journal holds the change, and a re-run plans from the rows', async () => {
    const journal = join(f.d.dir, 'cut-at-commit.jsonl');
    const lines = (): number => (existsSync(journal) ? readFileSync(journal, 'utf8').split('\n').length - 1 : 0);
    const target = new URL(f.d.url('placement').replace(/^mysql\+pymysql:/, 'mysql:'));
    const atLines = 5 + Math.floor(Math.random() * 20);
    const proxy = await startProxy({ host: target.hostname, port: Number(target.port || 3306) }, () => lines() >= atLines);
    const r = await runBin([...confThrough(proxy, 'cut-at-commit.conf'), ...COMMANDS.providers, '--apply', '--journal', journal]);
    await proxy.refuse();
    expect(r.code, r.stderr).toBe(2);
    const errorLines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('journal: ') && !l.startsWith('applied ') && !l.startsWith('hint: '));
    expect(errorLines, r.stderr).toHaveLength(1);
    expect(errorLines[0]).toMatch(/while committing a change of .*whether that change committed is unknown/);
    expect(r.stderr).not.toMatch(/rolled back/);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    // Change lines without a commit marker: those of the transaction whose
    // COMMIT was cut have their rows at their after-images (the server
    // committed it); the others (units in flight side by side,
    // apply_concurrency) were rolled back and are at their before-images. A
    // transaction may hold several changes (an apply batch), and a row that
    // several of them touched (a provider's generation bumped, then the
    // provider deleted) is judged by the last one's after-image and the
    // first one's before-image. None is half-applied.
    const jr = readJournal(journal);
    const unmarked = jr.changes.filter((c) => !jr.committed.has(c.seq)).sort((a, b) => a.seq - b.seq);
    const rows = new Map<string, { table: string; key: Record<string, string | number>; first: Row | null; last: Row | null }>();
    for (const change of unmarked) {
      for (const img of change.rows) {
        const k = `${img.table} ${JSON.stringify(img.key)}`;
        const seen = rows.get(k);
        rows.set(k, { table: img.table, key: img.key, first: seen === undefined ? img.before : seen.first, last: img.after });
      }
    }
    const rowState = new Map<string, string>();
    for (const [k, { table, key, first, last }] of rows) {
      const raw = (await f.d.knex('placement')(table).where(key).first()) as Record<string, unknown> | undefined;
      const row = raw === undefined ? null : normaliseRow(raw);
      rowState.set(k, rowsEqual(row, last) ? 'after' : rowsEqual(row, first) ? 'before' : 'neither');
    }
    const states = unmarked.map((change) => {
      const at = new Set(change.rows.map((img) => rowState.get(`${img.table} ${JSON.stringify(img.key)}`)));
      return at.size === 1 ? ([...at][0] ?? 'none') : 'mixed';
    });
    expect(states.filter((st) => st !== 'after' && st !== 'before'), JSON.stringify(states)).toEqual([]);
    expect(states, 'the cut COMMIT went through').toContain('after');
    expect(await checkInvariants(f, [journal])).toEqual([]);
  }, 120_000);

  it(`the proxy stops accepting and cuts its sockets mid-apply, ${REFUSALS} times: exit 2, one line, nothing half-written, re-runs converge`, async () => {
    const journals: string[] = [];
    const messages = new Set<string>();
    let failures = 0;
    for (let i = 0; i < REFUSALS; i++) {
      const cmd = i % 2 === 0 ? COMMANDS.orphans : COMMANDS.providers;
      const journal = join(f.d.dir, `refused-${i}.jsonl`);
      journals.push(journal);
      const started = Date.now();
      const r = await applyAndRefuse(cmd, journal, 2 + Math.floor(Math.random() * 60));
      if (r.code === 0 || r.code === 4) continue; // finished before the proxy refused
      failures++;
      expect(r.proxy.accepted(), 'the apply connected through the proxy').toBeGreaterThan(0);
      expect(await refusesConnections(r.proxy.port), 'the port refuses connections').toBe(true);
      expect(r.code, r.stderr).toBe(2);
      // Within the connect timeout (10 s) and the pool's, not a hang.
      expect(Date.now() - started).toBeLessThan(60_000);
      const errorLines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('journal: ') && !l.startsWith('applied ') && !l.startsWith('hint: '));
      expect(errorLines, r.stderr).toHaveLength(1);
      expect(errorLines[0], r.stderr).toMatch(/placement/);
      messages.add((errorLines[0] ?? '').replace(/"[^"]*"/, '"…"'));
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(await checkInvariants(f, journals)).toEqual([]);
      // While the server still refuses, a new run cannot start either: exit 2, one line, and no change.
      if (i === 0) {
        const before = await snapshotDeployment(f.d);
        const proxyConf = join(f.d.dir, `proxy-${r.proxy.port}.conf`);
        const again = await runBin(['--config-file', proxyConf, ...cmd, '--apply']);
        expect(again.code, again.stdout + again.stderr).toBe(2);
        expect(again.stderr.trim().split('\n').filter((l) => !l.startsWith('hint: ')), again.stderr).toHaveLength(1);
        expect(again.stderr).not.toMatch(/^\s+at /m);
        messages.add(again.stderr.trim().split('\n')[0] ?? '');
        expect(await snapshotDeployment(f.d)).toEqual(before);
      }
    }
    expect(failures, 'at least one apply was cut off').toBeGreaterThan(0);
    console.log(`refused connections: ${failures} of ${REFUSALS} apply run(s) were cut off (exit 2); invariants held after each; messages: ${[...messages].join(' | ')}`);
    // The server is back: each command's re-run finishes the plan, a third run has nothing to do.
    await expectConvergence(f, journals);
  }, 300_000);
});
