// The benchmark's deployments must look like what Nova writes, or the
// benchmark measures something else: every NOT NULL column filled, deleted
// and mapped written explicitly (nova-behaviour.md §1.3), host names unique
// across cells, and resetDiscovery back to "never discovered".
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateSchema } from '../../src/db/migrate.js';
import { generateScale, hostName, resetDiscovery, type ScaleDatabases } from '../../src/sandbox/scale-generator.js';
import { createScratchDatabases, describeMysql, type ScratchDatabases } from '../helpers/mysql.js';
import { createSqliteDatabases, type SqliteDatabases } from '../helpers/sqlite.js';

/** Columns nova's own writes always fill, beyond the schema's NOT NULL ones. */
const FILLED = {
  services: ['created_at', 'host', 'binary', 'topic', 'report_count', 'disabled', 'deleted', 'last_seen_up', 'forced_down', 'version', 'uuid'],
  compute_nodes: [
    'created_at',
    'service_id',
    'host',
    'hypervisor_hostname',
    'uuid',
    'deleted',
    'mapped',
    'cpu_allocation_ratio',
    'ram_allocation_ratio',
    'disk_allocation_ratio',
  ],
} as const;

async function count(db: Knex, sql: string): Promise<number> {
  const rows = (await db.raw(sql)) as unknown;
  // mysql2 answers [rows, fields]; better-sqlite3 answers rows.
  const list = (Array.isArray(rows) && Array.isArray(rows[0]) ? rows[0] : rows) as { n: number | string }[];
  return Number(list[0]?.n);
}

async function notNullColumns(db: Knex, table: string): Promise<string[]> {
  const rows = (await db
    .select({ name: 'COLUMN_NAME' })
    .from('information_schema.COLUMNS')
    .whereRaw('TABLE_SCHEMA = DATABASE()')
    .where({ TABLE_NAME: table, IS_NULLABLE: 'NO' })) as { name: string }[];
  return rows.map((r) => r.name);
}

async function insertCellMapping(api: Knex, uuid: string, name: string): Promise<number> {
  const [id] = await api('cell_mappings').insert({ uuid, name, transport_url: 'none:///', database_connection: 'mysql+pymysql://x/y', disabled: 0 });
  return Number(id);
}

describeMysql('MariaDB: generateScale', () => {
  let dbs: ScratchDatabases;
  let scale: ScaleDatabases;
  let ironic: ScaleDatabases;

  beforeAll(async () => {
    dbs = await createScratchDatabases('scale', ['api', 'cell1', 'cell2', 'ironic']);
    await Promise.all([
      migrateSchema(dbs.knex('api'), 'api'),
      migrateSchema(dbs.knex('cell1'), 'cell'),
      migrateSchema(dbs.knex('cell2'), 'cell'),
      migrateSchema(dbs.knex('ironic'), 'cell'),
    ]);
    const api = dbs.knex('api');
    const id1 = await insertCellMapping(api, '11111111-1111-4111-8111-111111111111', 'cell1');
    const id2 = await insertCellMapping(api, '22222222-2222-4222-8222-222222222222', 'cell2');
    const id3 = await insertCellMapping(api, '33333333-3333-4333-8333-333333333333', 'ironic');
    scale = { api, cells: [dbs.knex('cell1'), dbs.knex('cell2')], cellIds: [id1, id2] };
    ironic = { api, cells: [dbs.knex('ironic')], cellIds: [id3] };
  });

  afterAll(async () => {
    await dbs?.drop();
  });

  it('writes one service and one compute node per host, 100 hosts in each of 2 cells, all unmapped', async () => {
    const result = await generateScale(scale, { hostsPerCell: 100 });
    expect(result).toEqual({ hosts: 200, services: 200, computeNodes: 200, mappedHosts: 0 });
    for (const cell of scale.cells) {
      expect(await count(cell, 'SELECT COUNT(*) AS n FROM services')).toBe(100);
      expect(await count(cell, "SELECT COUNT(*) AS n FROM services WHERE `binary` = 'nova-compute' AND topic = 'compute' AND deleted = 0")).toBe(100);
      expect(await count(cell, 'SELECT COUNT(*) AS n FROM compute_nodes')).toBe(100);
      // What discover_hosts' node path selects (nova-behaviour.md §1.3).
      expect(await count(cell, 'SELECT COUNT(*) AS n FROM compute_nodes WHERE deleted = 0 AND mapped < 1')).toBe(100);
      // Each node belongs to its own host's service.
      expect(await count(cell, 'SELECT COUNT(*) AS n FROM compute_nodes c JOIN services s ON s.id = c.service_id AND s.host = c.host')).toBe(100);
      expect(await count(cell, "SELECT COUNT(*) AS n FROM compute_nodes WHERE hypervisor_type = 'QEMU' AND hypervisor_hostname = host")).toBe(100);
    }
    expect(await count(scale.api, 'SELECT COUNT(*) AS n FROM host_mappings')).toBe(0);
  });

  it('fills every NOT NULL column and the columns nova always writes', async () => {
    for (const cell of scale.cells) {
      for (const table of ['services', 'compute_nodes'] as const) {
        const columns = [...new Set([...(await notNullColumns(cell, table)), ...FILLED[table]])];
        expect(columns.length).toBeGreaterThan(FILLED[table].length - 1);
        const nulls: string[] = [];
        for (const column of columns) {
          if ((await count(cell, `SELECT COUNT(*) AS n FROM ${table} WHERE \`${column}\` IS NULL`)) > 0) nulls.push(`${table}.${column}`);
        }
        expect(nulls).toEqual([]);
      }
      // nova-manage rewrites NULL or 0.0 ratios while discovering (§1.3).
      expect(
        await count(cell, 'SELECT COUNT(*) AS n FROM compute_nodes WHERE cpu_allocation_ratio = 16 AND ram_allocation_ratio = 1.5 AND disk_allocation_ratio = 1'),
      ).toBe(100);
    }
  });

  it('names hosts uniquely across cells, c<cell>-compute-<n>', async () => {
    const hosts: string[] = [];
    for (const cell of scale.cells) hosts.push(...((await cell('services').pluck('host')) as string[]));
    expect(new Set(hosts.map((h) => h.toLowerCase())).size).toBe(200);
    const [id1, id2] = scale.cellIds;
    expect(hosts).toContain(hostName(id1 ?? 0, 1));
    expect(hosts).toContain(hostName(id2 ?? 0, 100));
    const uuids: string[] = [];
    for (const cell of scale.cells) uuids.push(...((await cell('compute_nodes').pluck('uuid')) as string[]));
    expect(new Set(uuids).size).toBe(200);
  });

  it('writes ironic hosts with several nodes named by their uuid, and maps the older hosts first', async () => {
    const result = await generateScale(ironic, { hostsPerCell: 10, nodesPerHost: 3, unmappedFraction: 0.3 });
    expect(result).toEqual({ hosts: 10, services: 10, computeNodes: 30, mappedHosts: 7 });
    const [cell] = ironic.cells;
    if (cell === undefined) throw new Error('no cell');
    expect(await count(cell, "SELECT COUNT(*) AS n FROM compute_nodes WHERE hypervisor_type = 'ironic' AND hypervisor_hostname = uuid")).toBe(30);
    expect(await count(cell, 'SELECT COUNT(DISTINCT host) AS n FROM compute_nodes')).toBe(10);
    expect(await count(cell, 'SELECT COUNT(*) AS n FROM compute_nodes WHERE mapped = 1')).toBe(21);
    const mapped = (await ironic.api('host_mappings').where({ cell_id: ironic.cellIds[0] }).pluck('host')) as string[];
    const id = ironic.cellIds[0] ?? 0;
    expect(mapped.sort()).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => hostName(id, n)).sort());
  });

  it('resetDiscovery removes every host mapping and sets mapped = 0 on every node', async () => {
    // Discover "by hand" first, as the floor does.
    for (const [i, cell] of scale.cells.entries()) {
      const hosts = (await cell('services').pluck('host')) as string[];
      await scale.api('host_mappings').insert(hosts.map((host) => ({ created_at: '2025-01-01 00:00:00', cell_id: scale.cellIds[i], host })));
      await cell('compute_nodes').update({ mapped: 1 });
    }
    expect(await count(scale.api, 'SELECT COUNT(*) AS n FROM host_mappings')).toBe(207);
    await resetDiscovery(scale);
    await resetDiscovery(ironic);
    expect(await count(scale.api, 'SELECT COUNT(*) AS n FROM host_mappings')).toBe(0);
    for (const cell of [...scale.cells, ...ironic.cells]) {
      expect(await count(cell, 'SELECT COUNT(*) AS n FROM compute_nodes WHERE mapped <> 0 OR mapped IS NULL')).toBe(0);
    }
  });

  it('refuses nonsense sizes', async () => {
    await expect(generateScale(scale, { hostsPerCell: -1 })).rejects.toThrow(RangeError);
    await expect(generateScale(scale, { hostsPerCell: 1, nodesPerHost: 0 })).rejects.toThrow(RangeError);
    await expect(generateScale(scale, { hostsPerCell: 1, unmappedFraction: 2 })).rejects.toThrow(RangeError);
  });
});

describe('SQLite: generateScale', () => {
  let dbs: SqliteDatabases;

  beforeAll(async () => {
    dbs = createSqliteDatabases(['api', 'cell1']);
    await migrateSchema(dbs.knex('api'), 'api');
    await migrateSchema(dbs.knex('cell1'), 'cell');
  });

  afterAll(async () => {
    await dbs?.cleanup();
  });

  it('cuts inserts into chunks SQLite accepts, and resets', async () => {
    const api = dbs.knex('api');
    const [id] = await api('cell_mappings').insert({ uuid: '11111111-1111-4111-8111-111111111111', name: 'cell1', transport_url: 'none:///', database_connection: 'sqlite://', disabled: 0 });
    const scale: ScaleDatabases = { api, cells: [dbs.knex('cell1')], cellIds: [Number(id)] };
    // More than one chunk of each table, a part of it mapped.
    const result = await generateScale(scale, { hostsPerCell: 900, unmappedFraction: 0.5 });
    expect(result).toEqual({ hosts: 900, services: 900, computeNodes: 900, mappedHosts: 450 });
    const cell = dbs.knex('cell1');
    expect(await count(cell, 'SELECT COUNT(*) AS n FROM compute_nodes c JOIN services s ON s.id = c.service_id AND s.host = c.host')).toBe(900);
    expect(await count(api, 'SELECT COUNT(*) AS n FROM host_mappings')).toBe(450);
    await resetDiscovery(scale);
    expect(await count(api, 'SELECT COUNT(*) AS n FROM host_mappings')).toBe(0);
    expect(await count(cell, 'SELECT COUNT(*) AS n FROM compute_nodes WHERE mapped <> 0')).toBe(0);
  });
});
