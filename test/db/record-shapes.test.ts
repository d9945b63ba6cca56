// The records the cell reads make, of one table, share one hidden class in
// V8. Made as `{ ...otherRecord, more }`, every compute node record had one
// of its own (a map, its descriptors and a property array: about 430 bytes
// a node, 13 MB at 30,000 nodes), found in heap snapshots of `audit`
// (bench/README.md, "Memory per cell"). The bench would show it again only
// when someone runs it; this test shows it at once.
//
// The built readers run in a child Node.js with --allow-natives-syntax, on a
// SQLite cell whose rows differ in what is NULL (host, service_id,
// updated_at), in `mapped` and in `deleted`: %HaveSameMap compares each
// record with the first. Against the spread, 293 of 302 node records had
// another map.
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/repo-export.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';

const CHILD = `
const [dist, file] = process.argv.slice(1);
const { readComputeNodes, readLiveInstances, readServices } = await import(dist + '/src/db/cell/snapshot-reads.js');
const { readHealNodes } = await import(dist + '/src/db/cell/heal-reads.js');
const { StringPool } = await import(dist + '/src/db/string-pool.js');
const { createRequire } = await import('node:module');
const knex = createRequire(dist + '/../package.json')('knex')({ client: 'better-sqlite3', connection: { filename: file }, useNullAsDefault: true });
const out = {};
for (const [name, read] of Object.entries({ readComputeNodes, readHealNodes, readLiveInstances, readServices })) {
  const records = await read(knex, 'cell', new StringPool());
  let others = 0;
  for (const r of records) if (!%HaveSameMap(r, records[0])) others++;
  out[name] = { records: records.length, others };
}
await knex.destroy();
process.stdout.write(JSON.stringify(out));
`;

describe('the records of a cell read share one hidden class', () => {
  let d: TestDeployment;
  beforeAll(async () => {
    d = await createTestDeployment('sqlite', 'ironic-failover', 'shapes');
    const cell = d.knex('cell1');
    const base = (await cell('compute_nodes').orderBy('id').first()) as Record<string, unknown>;
    const rows = Array.from({ length: 300 }, (_, i) => {
      const { id: _id, ...row } = base;
      return {
        ...row,
        uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        hypervisor_hostname: `node-${i}`,
        host: i % 3 === 0 ? null : `host-${i}`,
        service_id: i % 5 === 0 ? i : null,
        mapped: i % 2,
        updated_at: i % 7 === 0 ? null : base['updated_at'],
        deleted: i % 11 === 0 ? 1000 + i : 0,
      };
    });
    for (let i = 0; i < rows.length; i += 50) await cell('compute_nodes').insert(rows.slice(i, i + 50));
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('compute nodes (both readers), instances and services', () => {
    const file = d.url('cell1').replace(/^sqlite:\/\/\//, '');
    const dist = join(REPO, 'dist');
    const out = JSON.parse(
      execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', CHILD, pathToFileURL(dist).href, file], { encoding: 'utf8' }),
    ) as Record<string, { records: number; others: number }>;
    expect(out['readComputeNodes']?.records).toBeGreaterThan(300);
    expect(out['readHealNodes']?.records).toBeGreaterThan(250);
    expect(out['readLiveInstances']?.records).toBeGreaterThan(0);
    expect(out['readServices']?.records).toBeGreaterThan(0);
    for (const [name, r] of Object.entries(out)) expect(r.others, name).toBe(0);
  });
});
