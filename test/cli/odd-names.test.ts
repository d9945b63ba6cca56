// Odd names are data, never SQL (issue 6 item 6): hosts and cells whose names
// hold quotes, backslashes, % and _ (LIKE wildcards) and unicode, through the
// built binary on SQLite and MariaDB.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, hostMappings, type TestDeployment } from '../helpers/test-deployment.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { insertCellMapping, insertComputeNodes, insertServices } from '../../src/sandbox/rows.js';

// a%b and a_b each have a look-alike (axb, a-b; not aXb, which equals axb under the ci collation) that a LIKE would also match.
// The emoji (4 bytes in UTF-8) only on SQLite: nova's MariaDB columns are
// utf8mb3, which cannot hold it (MariaDB refuses the row), as in a real deployment.
const ODD = ["a'b", 'a"b', 'a\\b', 'a%b', 'a_b', 'höst-ü'] as const;
const DECOYS = ['axb', 'a-b'] as const;
const uuid = (i: number, k: number): string => `0dd0${k}000-0000-4000-8000-${String(i).padStart(12, '0')}`;

describeEachDialect('odd host and cell names', (dialect) => {
  const EMOJI = dialect === 'sqlite' ? ['h🚀st'] : [];
  const HOSTS = [...ODD, ...EMOJI, ...DECOYS];
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'empty', 'odd');
    const cell = d.knex('cell1');
    await insertServices(cell, HOSTS.map((host, i) => ({ uuid: uuid(i, 1), host })));
    await insertComputeNodes(cell, HOSTS.map((host, i) => ({ uuid: uuid(i, 2), host, hypervisorHostname: `${host}.node`, hypervisorType: 'QEMU' as const })));
  });
  afterEach(async () => {
    await d.cleanup();
  });

  const expectedMappings = (hosts: readonly string[]): string[] => [...hosts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  for (const by of [[], ['--by-service']] as const) {
    it(`discover_hosts ${by.join(' ')} maps exactly those hosts, byte-equal; list_hosts and compute_node list show them`, async () => {
      const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', ...by]);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      const got = await hostMappings(d);
      expect(got.map(([h]) => h).sort()).toEqual(expectedMappings(HOSTS));
      expect(new Set(got.map(([, c]) => c))).toEqual(new Set([CELL.cell1]));
      const again = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--strict', ...by]);
      expect(again.code).toBe(1);

      const list = await runBin([...d.args, 'cell_v2', 'list_hosts']);
      expect(list.code).toBe(0);
      for (const h of HOSTS) expect(list.stdout).toContain(` ${h} `);

      const nodes = await runBin([...d.args, 'compute_node', 'list', '--format', 'json']);
      expect(nodes.code).toBe(0);
      const text = nodes.stdout;
      for (const h of HOSTS) expect(text).toContain(JSON.stringify(h));
    });
  }

  it('delete_host --host a%b / a_b deletes only that host; axb and a-b survive (no LIKE wildcards)', async () => {
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    for (const h of ['a%b', 'a_b', "a'b", 'a\\b', 'höst-ü']) {
      const r = await runBin([...d.args, 'cell_v2', 'delete_host', '--cell_uuid', CELL.cell1, '--host', h]);
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
    expect((await hostMappings(d)).map(([h]) => h).sort()).toEqual(expectedMappings(['a"b', ...EMOJI, 'axb', 'a-b']));
    const flags = (await d.knex('cell1')('compute_nodes').select('host', 'mapped').orderBy('id')) as Array<{ host: string; mapped: number }>;
    expect(flags.filter((f) => Number(f.mapped) === 1).map((f) => f.host).sort()).toEqual(expectedMappings(['a"b', ...EMOJI, 'axb', 'a-b']));
    // A host that only a wildcard would match is not found.
    const none = await runBin([...d.args, 'cell_v2', 'delete_host', '--cell_uuid', CELL.cell1, '--host', 'a%']);
    expect(none).toMatchObject({ code: 2, stdout: 'The host a% was not found.\n' });
  });

  it('a cell named with quotes and unicode shows in list_cells', async () => {
    const name = `c'e"l\\l%_ü${dialect === 'sqlite' ? '🚀' : ''}`;
    await insertCellMapping(d.knex('api'), { uuid: '0dd0c000-0000-4000-8000-000000000001', name, transportUrl: 'none:///', databaseConnection: d.url('cell2') });
    const r = await runBin([...d.args, 'cell_v2', 'list_cells']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(` ${name} `);
  });
});

describe('static: no LIKE in src', () => {
  it('src/**/*.ts has no like( / whereLike / LIKE', () => {
    const root = fileURLToPath(new URL('../../src', import.meta.url));
    const hits: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir)) {
        const p = join(dir, e);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts'))
          readFileSync(p, 'utf8').split('\n').forEach((line, i) => {
            if (/\blike\(|[wW]here(I)?Like|\bI?LIKE\b/.test(line) && !/^\s*(\/\/|\*)/.test(line)) hits.push(`${p}:${i + 1}: ${line.trim()}`);
          });
      }
    };
    walk(root);
    expect(hits).toEqual([]);
  });
});
