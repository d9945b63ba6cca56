// Cells on separate MariaDB servers are worked on in parallel: cell1 lives on
// the main server, cell2 on a throw-away server of its own (bench/servers.ts).
// While cell1's compute_nodes table is write-locked, discover_hosts with
// cell_concurrency 2 still maps cell2's hosts; with cell_concurrency 1 it
// waits for cell1 first. No timing involved, so it holds on a busy machine.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateScale, resetDiscovery } from '../../src/sandbox/scale-generator.js';
import { createScratchDeployment, parseServer, serverKnex, type ScratchDeployment } from '../../bench/scratch-deployment.js';
import { findBinaries, startServers, stopAllServers } from '../../bench/servers.js';
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
  const main = parseServer(MYSQL_URL);

  beforeAll(async () => {
    if (!haveMariadbd()) return;
    const [extra] = await startServers(1);
    if (extra === undefined) throw new Error('no server started');
    deployment = await createScratchDeployment(main, 2, { cellServers: [main, extra.server] });
    await generateScale(deployment.scaleDatabases, { hostsPerCell: HOSTS_PER_CELL, nodesPerHost: 1 });
  });

  afterAll(async () => {
    await deployment?.drop();
    await stopAllServers();
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
});
