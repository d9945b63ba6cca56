// Issue 40 item 6: discover_hosts proves that a cell database shares the API
// database's server (db/host-mapping-join.ts) with one user lock for the
// whole run, taken and released once, and one statement per cell: the
// lock's GET_LOCK and RELEASE_LOCK are not paid again for every cell. Round
// trips counted with --stats on deployments of one and of four cells on one
// server, each run a no-op (every host mapped already): a cell more costs
// its own reads and one probe statement, not three.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateScale } from '../../src/sandbox/scale-generator.js';
import { createScratchDeployment, parseServer, type ScratchDeployment } from '../../bench/scratch-deployment.js';
import { runBin } from '../helpers/cli.js';
import { describeMysql, MYSQL_URL } from '../helpers/mysql.js';

function roundTrips(stderr: string): number {
  const n = /round_trips=(\d+)/.exec(stderr)?.[1];
  if (n === undefined) throw new Error(`no stats line in ${stderr}`);
  return Number(n);
}

describeMysql('discover_hosts: one same-server probe per run, not per cell [mariadb]', () => {
  const main = parseServer(MYSQL_URL);
  const deployments = new Map<number, ScratchDeployment>();

  beforeAll(async () => {
    for (const cells of [1, 4]) {
      const d = await createScratchDeployment(main, cells);
      await generateScale(d.scaleDatabases, { hostsPerCell: 3, nodesPerHost: 1 });
      deployments.set(cells, d);
    }
  }, 120_000);
  afterAll(async () => {
    for (const d of deployments.values()) await d.drop();
  });

  async function noOpRoundTrips(cells: number, args: readonly string[]): Promise<number> {
    const d = deployments.get(cells) as ScratchDeployment;
    const first = await runBin(['--config-file', d.confPath, 'cell_v2', 'discover_hosts', ...args]);
    expect(first.code, first.stderr).toBe(0);
    const r = await runBin(['--config-file', d.confPath, '--stats', 'cell_v2', 'discover_hosts', ...args]);
    expect(r.code, r.stderr).toBe(0);
    return roundTrips(r.stderr);
  }

  for (const args of [[], ['--by-service']] as ReadonlyArray<readonly string[]>) {
    it(`discover_hosts ${args.join(' ')}: each cell more costs its own statements and one probe`, async () => {
      const one = await noOpRoundTrips(1, args);
      const four = await noOpRoundTrips(4, args);
      console.log(`[same-server probe] ${args.join(' ')}: 1 cell ${one}, 4 cells ${four} round trips`);
      // 7 round trips a cell when each cell took and released the lock itself; 5 now (its 4 statements and the probe's one).
      expect((four - one) / 3).toBeLessThanOrEqual(5);
      expect(four).toBeGreaterThan(one);
    });
  }
});
