// discover_hosts beyond one batch on MariaDB (more than 1,000 candidates in a
// cell), where the host mappings are read once for the run and only confirm
// what they hold (db/api/host-mappings.ts readExactHostMappings). The
// database's collation still decides every host that table does not spell
// exactly: a mapping re-cased by hand is not mapped again, a lost mapping
// (bug 2085135: nodes still flagged mapped) is made again, and an unmapped
// node's host mapped in the other cell is left there with a warning.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateScale } from '../../src/sandbox/scale-generator.js';
import { createScratchDeployment, parseServer, type ScratchDeployment } from '../../bench/scratch-deployment.js';
import { runBin } from '../helpers/cli.js';
import { describeMysql, MYSQL_URL } from '../helpers/mysql.js';

const HOSTS_PER_CELL = 1200;

describeMysql('discover_hosts with more than one batch of hosts per cell [mariadb]', () => {
  let d: ScratchDeployment;

  beforeAll(async () => {
    d = await createScratchDeployment(parseServer(MYSQL_URL), 2);
    await generateScale(d.scaleDatabases, { hostsPerCell: HOSTS_PER_CELL, nodesPerHost: 1 });
  });

  afterAll(async () => {
    await d.drop();
  });

  const discover = (...extra: string[]): ReturnType<typeof runBin> => runBin(['--config-file', d.confPath, 'cell_v2', 'discover_hosts', ...extra], { timeoutMs: 120_000 });

  async function mappings(): Promise<Map<string, number>> {
    const rows = (await d.api('host_mappings').select('host', 'cell_id')) as Array<{ host: string; cell_id: number }>;
    return new Map(rows.map((r) => [r.host, Number(r.cell_id)]));
  }

  it('maps every host once; then a lost mapping is made again, a re-cased or foreign one is not, and a third run is a no-op', async () => {
    const first = await discover();
    expect(first.code).toBe(0);
    const mapped = await mappings();
    expect(mapped.size).toBe(2 * HOSTS_PER_CELL);
    const [cell1, cell2] = d.cells;
    if (cell1 === undefined || cell2 === undefined) throw new Error('two cells expected');
    const hostsOf = (cellId: number): string[] => [...mapped].filter(([, c]) => c === cellId).map(([h]) => h).sort();
    const [lostA, lostB, recased, foreign] = hostsOf(cell1.id);
    if (lostA === undefined || lostB === undefined || recased === undefined || foreign === undefined) throw new Error('hosts expected');

    // Two mappings lost (their nodes keep mapped = 1), one re-cased with a
    // trailing space, one moved to cell2 by hand
    // while its node is unmapped (a candidate again).
    await d.api('host_mappings').whereIn('host', [lostA, lostB]).del();
    await d.api('host_mappings').where({ host: recased }).update({ host: `${recased.toUpperCase()} ` });
    await d.api('host_mappings').where({ host: foreign }).update({ cell_id: cell2.id });
    await cell1.knex('compute_nodes').where({ host: foreign }).update({ mapped: 0 });

    const second = await discover('--verbose');
    expect(second.code).toBe(0);
    // nova's line names the host and its compute node's uuid.
    const created = second.stdout.split('\n').flatMap((l) => /^Creating host mapping for compute host '([^']+)': [0-9a-f-]{36}$/.exec(l)?.[1] ?? []);
    expect(created.sort()).toEqual([lostA, lostB].sort());
    expect(second.stderr).toContain(foreign);
    const after = await mappings();
    expect(after.size).toBe(2 * HOSTS_PER_CELL);
    expect(after.get(`${recased.toUpperCase()} `)).toBe(cell1.id);
    expect(after.get(foreign)).toBe(cell2.id);

    const third = await discover('--strict');
    expect(third.code).toBe(1);
    expect(await mappings()).toEqual(after);
  });
});
