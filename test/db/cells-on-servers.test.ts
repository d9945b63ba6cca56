// Cells on separate MariaDB servers are worked on in parallel: cell1 lives on
// the main server, cell2 on a throw-away server of its own (bench/servers.ts).
// While cell1's compute_nodes table is write-locked, discover_hosts with
// cell_concurrency 2 still maps cell2's hosts; with cell_concurrency 1 it
// waits for cell1 first. No timing involved, so it holds on a busy machine.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateScale, resetDiscovery } from '../../src/sandbox/scale-generator.js';
import { createScratchDeployment, parseServer, serverKnex, type ScratchDeployment, type Server } from '../../bench/scratch-deployment.js';
import { findBinaries, startServers, stopAllServers } from '../../bench/servers.js';
import { rowsOf } from '../../src/db/mysql-results.js';
import { runBin, type CliResult } from '../helpers/cli.js';
import { describeMysql, MYSQL_URL } from '../helpers/mysql.js';

const HOSTS_PER_CELL = 20;

function haveMariadbd(): boolean {
  try {
    findBinaries();
    return true;
  } catch {
    return false;
  }
}

describeMysql('discover_hosts with cells on two servers', () => {
  let deployment: ScratchDeployment | undefined;
  let extraServer: Server | undefined;
  const main = parseServer(MYSQL_URL);

  // A file named as a server's internal temporary table, in the temp folder
  // every server shares by default: a throw-away server (and its bootstrap)
  // that used that folder would delete it as it started.
  const decoy = join(tmpdir(), `#sql-temptable-nova-reconcile-${process.pid}.MAI`);
  let extraTmpdir: string | undefined;
  let extraDir: string | undefined;

  beforeAll(async () => {
    if (!haveMariadbd()) return;
    writeFileSync(decoy, 'not the extra server\'s\n');
    const [extra] = await startServers(1);
    if (extra === undefined) throw new Error('no server started');
    extraServer = extra.server;
    extraDir = extra.dir;
    const knex = serverKnex(extra.server);
    try {
      extraTmpdir = String((rowsOf(await knex.raw('SELECT @@tmpdir AS t'))[0] as { t: unknown }).t);
    } finally {
      await knex.destroy();
    }
    deployment = await createScratchDeployment(main, 2, { cellServers: [main, extra.server] });
    await generateScale(deployment.scaleDatabases, { hostsPerCell: HOSTS_PER_CELL, nodesPerHost: 1 });
  });

  afterAll(async () => {
    rmSync(decoy, { force: true });
    await deployment?.drop();
    await stopAllServers();
  });

  it.skipIf(!haveMariadbd())("a throw-away server keeps to its own tmpdir and leaves the other servers' temporary files alone", () => {
    expect(existsSync(decoy)).toBe(true);
    expect(extraDir).toBeDefined();
    expect(extraTmpdir).toBe(join(extraDir ?? '', 'tmp'));
  });

  function conf(d: ScratchDeployment, concurrency: number): string {
    const path = join(dirname(d.confPath), `c${concurrency}.conf`);
    writeFileSync(path, `${readFileSync(d.confPath, 'utf8')}\n[nova_reconcile]\ncell_concurrency = ${concurrency}\n`);
    return path;
  }

  async function mappedTo(d: ScratchDeployment, cellId: number): Promise<number> {
    const rows = (await d.api('host_mappings').count({ n: '*' }).where({ cell_id: cellId })) as { n: number | string }[];
    return Number(rows[0]?.n);
  }

  /** Run discover_hosts while cell1's compute_nodes is write-locked; report what cell2 got meanwhile. */
  async function runWithCell1Locked(d: ScratchDeployment, concurrency: number, waitMs: number): Promise<{ cell2WhileLocked: number; result: CliResult }> {
    const [cell1, cell2] = d.cells;
    if (cell1 === undefined || cell2 === undefined) throw new Error('two cells expected');
    expect(cell1.server).toBe(main);
    expect(cell2.server).not.toBe(main);
    await resetDiscovery(d.scaleDatabases);
    const locker: Knex = serverKnex(main);
    const conn = (await locker.client.acquireConnection()) as unknown;
    const query = (sql: string): Promise<unknown> => locker.raw(sql).connection(conn);
    try {
      await query(`LOCK TABLES \`${cell1.database}\`.compute_nodes WRITE`);
      const run = runBin(['--config-file', conf(d, concurrency), 'cell_v2', 'discover_hosts'], { timeoutMs: 60_000 });
      let cell2WhileLocked = 0;
      const deadline = Date.now() + waitMs;
      while (Date.now() < deadline) {
        cell2WhileLocked = await mappedTo(d, cell2.id);
        if (cell2WhileLocked === HOSTS_PER_CELL) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      // cell1 cannot have been read: its mappings must still be missing.
      expect(await mappedTo(d, cell1.id)).toBe(0);
      await query('UNLOCK TABLES');
      const result = await run;
      return { cell2WhileLocked, result };
    } finally {
      await query('UNLOCK TABLES').catch(() => undefined);
      await locker.client.releaseConnection(conn);
      await locker.destroy();
    }
  }

  it.skipIf(!haveMariadbd())('cell_concurrency 2: cell2 (other server) is mapped while cell1 is blocked', async () => {
    const d = deployment as ScratchDeployment;
    const { cell2WhileLocked, result } = await runWithCell1Locked(d, 2, 20_000);
    expect(cell2WhileLocked).toBe(HOSTS_PER_CELL);
    expect(result.code, result.stderr).toBe(0);
    expect(await mappedTo(d, (d.cells[0] as { id: number }).id)).toBe(HOSTS_PER_CELL);
  });

  it.skipIf(!haveMariadbd())('cell_concurrency 1: cell2 waits for cell1', async () => {
    const d = deployment as ScratchDeployment;
    const { cell2WhileLocked, result } = await runWithCell1Locked(d, 1, 1500);
    expect(cell2WhileLocked).toBe(0);
    expect(result.code, result.stderr).toBe(0);
    expect(await mappedTo(d, (d.cells[1] as { id: number }).id)).toBe(HOSTS_PER_CELL);
  });

  // discover_hosts joins a cell's nodes with host_mappings on the cell's
  // server only when it has proved that server is the API database's
  // (db/host-mapping-join.ts). A database of the API's name on cell2's
  // server, holding a mapping the real one lost, must not be read in its
  // place: the lost host is mapped again.
  it.skipIf(!haveMariadbd())('a copy of the API database on the cell\'s server is never joined with', async () => {
    const d = deployment as ScratchDeployment;
    const [cell1, cell2] = d.cells;
    if (cell1 === undefined || cell2 === undefined || extraServer === undefined) throw new Error('two cells and a server expected');
    await resetDiscovery(d.scaleDatabases);
    expect((await runBin(['--config-file', d.confPath, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    const copied = (await d.api('host_mappings').select('cell_id', 'host').where({ cell_id: cell2.id })) as Array<{ cell_id: number; host: string }>;
    const lost = copied[0]?.host;
    if (lost === undefined) throw new Error('a mapping of cell2 expected');
    const decoy = serverKnex(extraServer);
    const log = join(dirname(d.confPath), 'decoy.log');
    try {
      await decoy.raw(`CREATE DATABASE \`${d.apiDatabase}\` CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci`);
      await decoy.raw(`CREATE TABLE \`${d.apiDatabase}\`.host_mappings (id int NOT NULL AUTO_INCREMENT PRIMARY KEY, cell_id int NOT NULL, host varchar(255) NOT NULL, UNIQUE KEY (host))`);
      await decoy.withSchema(d.apiDatabase).table('host_mappings').insert(copied);
      await d.api('host_mappings').where({ host: lost }).del();

      const r = await runBin(['--config-file', d.confPath, '--debug', '--log-file', log, 'cell_v2', 'discover_hosts', '--verbose']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Creating host mapping for compute host '${lost}': `, 'm'));
      expect(await d.api('host_mappings').where({ host: lost }).select('cell_id')).toEqual([{ cell_id: cell2.id }]);
      const how = readFileSync(log, 'utf8');
      expect(how).toContain(`cell ${cell1.uuid}: hosts without a host mapping: joined on the cell's server`);
      expect(how).toContain(`cell ${cell2.uuid}: hosts without a host mapping: both tables read (the cell database is not on the API database's server`);
    } finally {
      await decoy.raw(`DROP DATABASE IF EXISTS \`${d.apiDatabase}\``).catch(() => undefined);
      await decoy.destroy();
      rmSync(log, { force: true });
    }
  });
});
