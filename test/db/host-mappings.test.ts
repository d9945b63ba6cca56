// findHostMappings lets the database's collation decide "the same host",
// including the fast path (IN) and the fallback join for candidates spelled
// differently from their mapping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { findHostMappings, readExactHostMappings } from '../../src/db/api/host-mappings.js';
import { migrateSchema } from '../../src/db/migrate.js';
import { createScratchDatabases, describeMysql } from '../helpers/mysql.js';
import { createSqliteDatabases } from '../helpers/sqlite.js';

async function seed(k: Knex): Promise<void> {
  await migrateSchema(k, 'api');
  await k('cell_mappings').insert([{ id: 1, uuid: 'c1', name: 'cell1' }, { id: 2, uuid: 'c2', name: 'cell2' }]);
  await k('host_mappings').insert([
    { cell_id: 1, host: 'alpha' },
    { cell_id: 2, host: 'Beta' },
    { cell_id: 1, host: 'gamma' },
  ]);
}

const CANDIDATES = ['alpha', 'ALPHA', 'beta ', 'gamma', 'delta'];
const EXPECTED = [
  ['ALPHA', 'alpha', 1],
  ['alpha', 'alpha', 1],
  ['beta ', 'Beta', 2],
  ['gamma', 'gamma', 1],
];

function sorted(rows: Array<{ candidate: string; host: string; cellId: number }>): unknown[] {
  return rows.map((r) => [r.candidate, r.host, r.cellId]).sort((a, b) => String(a[0]).localeCompare(String(b[0]), 'en', { caseFirst: 'upper' }));
}

describeMysql('findHostMappings [mariadb]', () => {
  let dbs: Awaited<ReturnType<typeof createScratchDatabases>>;
  beforeAll(async () => {
    dbs = await createScratchDatabases('hm', ['api']);
    await seed(dbs.knex('api'));
  });
  afterAll(async () => {
    await dbs.drop();
  });
  it('matches by collation: case and trailing spaces, exact spellings on the fast path', async () => {
    expect(sorted(await findHostMappings(dbs.knex('api'), 'mysql', CANDIDATES))).toEqual(EXPECTED);
  });
  it('finds nothing for hosts that are not mapped', async () => {
    expect(await findHostMappings(dbs.knex('api'), 'mysql', ['delta', 'epsilon'])).toEqual([]);
  });
  it('with the whole table read once, matches exactly the same; spellings it does not hold still go to the collation', async () => {
    const known = await readExactHostMappings(dbs.knex('api'));
    expect([...known].sort()).toEqual([['Beta', 2], ['alpha', 1], ['gamma', 1]]);
    expect(sorted(await findHostMappings(dbs.knex('api'), 'mysql', CANDIDATES, known))).toEqual(EXPECTED);
  });
  it('a stale read only confirms: a mapping made after it is found by the database, one it holds is taken from it', async () => {
    const known = await readExactHostMappings(dbs.knex('api'));
    await dbs.knex('api')('host_mappings').insert({ cell_id: 2, host: 'Delta' });
    try {
      expect(sorted(await findHostMappings(dbs.knex('api'), 'mysql', ['delta', 'alpha'], known))).toEqual([
        ['alpha', 'alpha', 1],
        ['delta', 'Delta', 2],
      ]);
      // The read is not used on SQLite, whose NOCASE key does not fold trailing spaces.
      expect(await findHostMappings(dbs.knex('api'), 'mysql', [], known)).toEqual([]);
    } finally {
      await dbs.knex('api')('host_mappings').where({ host: 'Delta' }).del();
    }
  });
});

describe('findHostMappings [sqlite]', () => {
  const dbs = createSqliteDatabases(['api']);
  beforeAll(async () => {
    await seed(dbs.knex('api'));
  });
  afterAll(async () => {
    await dbs.cleanup();
  });
  it('matches case- and trailing-space-insensitively', async () => {
    expect(sorted(await findHostMappings(dbs.knex('api'), 'sqlite', CANDIDATES))).toEqual(EXPECTED);
  });
});
