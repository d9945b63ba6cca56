// migrations/ must build, on MariaDB and on SQLite, the tables the tool uses
// exactly as Nova 26.2.2 and Placement 8.0.0 build them, and the runtime
// schema check must accept those and refuse anything else. The reference is
// the real mysqldump in reference/nova-zed-schema/.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { up as insertStandardResourceClasses } from '../../migrations/placement/0002_standard_resource_classes.js';
import { migrateSchema, type SchemaKind } from '../../src/db/migrate.js';
import { checkSchema } from '../../src/db/schema-check.js';
import { TOUCHED_SCHEMA } from '../../src/db/schema-manifest.js';
import { ReconcileError } from '../../src/errors.js';
import {
  createScratchDatabases,
  describeMysql,
  diffMysqlSchemas,
  loadDump,
  parseDump,
  readMysqlSchema,
  readReferenceDump,
  type ReferenceDump,
  type ScratchDatabases,
} from '../helpers/mysql.js';
import { createSqliteDatabases, diffSqliteSchema, readSqliteSchema, type SqliteDatabases } from '../helpers/sqlite.js';

const KINDS: readonly { kind: SchemaKind; dump: ReferenceDump }[] = [
  { kind: 'api', dump: 'nova_api' },
  { kind: 'cell', dump: 'nova_cell' },
  { kind: 'placement', dump: 'placement' },
];

const STANDARD_RESOURCE_CLASSES = [
  'VCPU',
  'MEMORY_MB',
  'DISK_GB',
  'PCI_DEVICE',
  'SRIOV_NET_VF',
  'NUMA_SOCKET',
  'NUMA_CORE',
  'NUMA_THREAD',
  'NUMA_MEMORY_MB',
  'IPV4_ADDRESS',
  'VGPU',
  'VGPU_DISPLAY_HEAD',
  'NET_BW_EGR_KILOBIT_PER_SEC',
  'NET_BW_IGR_KILOBIT_PER_SEC',
  'PCPU',
  'MEM_ENCRYPTION_CONTEXT',
  'FPGA',
  'PGPU',
  'NET_PACKET_RATE_KILOPACKET_PER_SEC',
  'NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC',
  'NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC',
];

/** The unique keys the tool's correctness depends on (nova-behaviour.md §8). */
const RELIED_ON_UNIQUE_KEYS: Readonly<Record<SchemaKind, readonly string[]>> = {
  api: ['uniq_cell_mappings0uuid', 'uniq_host_mappings0host', 'uniq_instance_mappings0instance_uuid'],
  cell: [
    'uniq_services0host0topic0deleted',
    'uniq_services0host0binary0deleted',
    'services_uuid_idx',
    'uniq_compute_nodes0host0hypervisor_hostname0deleted',
    'compute_nodes_uuid_idx',
    'uniq_instances0uuid',
    'migrations_uuid',
  ],
  placement: [
    'uniq_resource_providers0uuid',
    'uniq_resource_providers0name',
    'uniq_inventories0resource_provider_resource_class',
    'uniq_consumers0uuid',
    'uniq_consumer_types0name',
    'uniq_projects0external_id',
    'uniq_users0external_id',
    'uniq_resource_classes0name',
    'uniq_traits0name',
    'uniq_placement_aggregates0uuid',
  ],
};

const UUID_A = '8a9cbe13-5e1f-4d4b-9d3c-3c8e3a7d1f01';
const UUID_B = '8a9cbe13-5e1f-4d4b-9d3c-3c8e3a7d1f02';

async function schemaError(promise: Promise<unknown>): Promise<ReconcileError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ReconcileError) return err;
    throw err;
  }
  throw new Error('expected a schema error, but the check passed');
}

async function insertCell(db: Knex): Promise<number> {
  const [id] = await db('cell_mappings').insert({ uuid: UUID_A, name: 'cell1', transport_url: 'none:///', database_connection: 'sqlite://' });
  return Number(id);
}

async function migrationCount(db: Knex): Promise<number> {
  const [row] = await db('nova_reconcile_migrations').count({ n: '*' });
  return Number(row?.['n']);
}

describe('the schema manifest', () => {
  it.each(KINDS)('names only tables and columns of the real $dump schema', ({ kind, dump }) => {
    const reference = parseDump(readReferenceDump(dump));
    const drift: string[] = [];
    for (const [table, columns] of Object.entries(TOUCHED_SCHEMA[kind])) {
      const ref = reference.get(table);
      if (ref === undefined) drift.push(table);
      else for (const column of columns) if (!ref.columns.has(column)) drift.push(`${table}.${column}`);
    }
    expect(drift).toEqual([]);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(TOUCHED_SCHEMA)).toBe(true);
    expect(Object.isFrozen(TOUCHED_SCHEMA.cell)).toBe(true);
    expect(Object.isFrozen(TOUCHED_SCHEMA.cell['compute_nodes'])).toBe(true);
  });
});

describe('SQLite: migrations/ build the reference schema', () => {
  let dbs: SqliteDatabases;

  beforeAll(async () => {
    dbs = createSqliteDatabases(['api', 'cell', 'placement', 'empty', 'cell_without_mapped']);
    for (const { kind } of KINDS) await migrateSchema(dbs.knex(kind), kind);
    await migrateSchema(dbs.knex('cell_without_mapped'), 'cell');
    await dbs.knex('cell_without_mapped').raw('ALTER TABLE compute_nodes DROP COLUMN mapped');
  });

  afterAll(async () => {
    await dbs.cleanup();
  });

  it.each(KINDS)('$kind matches reference $dump: columns, types, NOT NULL, defaults, keys', async ({ kind, dump }) => {
    const manifest = TOUCHED_SCHEMA[kind];
    const ours = await readSqliteSchema(dbs.knex(kind), Object.keys(manifest));
    expect(diffSqliteSchema(parseDump(readReferenceDump(dump)), ours, manifest)).toEqual([]);
  });

  it.each(KINDS)('$kind has the unique indexes the tool relies on, by name', async ({ kind }) => {
    const rows = (await dbs.knex(kind).raw("select name from sqlite_master where type = 'index'")) as { name: string }[];
    const names = new Set(rows.map((r) => r.name));
    expect(RELIED_ON_UNIQUE_KEYS[kind].filter((n) => !names.has(n))).toEqual([]);
  });

  it.each(KINDS)('migrating $kind again changes nothing', async ({ kind }) => {
    const before = await migrationCount(dbs.knex(kind));
    await migrateSchema(dbs.knex(kind), kind);
    expect(await migrationCount(dbs.knex(kind))).toBe(before);
  });

  it.each(KINDS)('checkSchema accepts the migrated $kind database', async ({ kind }) => {
    await expect(checkSchema(dbs.knex(kind), kind, `${kind} test database`)).resolves.toMatchObject({ head: null });
  });

  it('host_mappings.host is unique regardless of case, as utf8mb3_general_ci makes it', async () => {
    const db = dbs.knex('api');
    const cellId = await insertCell(db);
    await db('host_mappings').insert({ cell_id: cellId, host: 'Host-A' });
    await expect(db('host_mappings').insert({ cell_id: cellId, host: 'host-a' })).rejects.toThrow(/UNIQUE constraint failed: host_mappings\.host/);
    const found = await db('host_mappings').where({ host: 'HOST-A' }).select('host');
    expect(found).toEqual([{ host: 'Host-A' }]);
  });

  it('resource_providers.name is unique regardless of case (placement: "NODE-1" collides with "node-1")', async () => {
    const db = dbs.knex('placement');
    await db('resource_providers').insert({ uuid: UUID_A, name: 'NODE-1', generation: 0 });
    await expect(db('resource_providers').insert({ uuid: UUID_B, name: 'node-1', generation: 0 })).rejects.toThrow(
      /UNIQUE constraint failed: resource_providers\.name/,
    );
  });

  it('the standard resource classes have ids 0-20 in os-resource-classes order', async () => {
    const rows = await dbs.knex('placement')('resource_classes').select('id', 'name').orderBy('id');
    expect(rows).toEqual(STANDARD_RESOURCE_CLASSES.map((name, id) => ({ id, name })));
  });

  it('host_mappings.cell_id is a foreign key to cell_mappings.id', async () => {
    await expect(dbs.knex('api')('host_mappings').insert({ cell_id: 999, host: 'orphan' })).rejects.toThrow(/FOREIGN KEY/);
  });

  it('checkSchema calls a database without tables empty', async () => {
    const err = await schemaError(checkSchema(dbs.knex('empty'), 'api', 'API database sqlite:///empty'));
    expect(err.kind).toBe('schema');
    expect(err.message).toBe('API database sqlite:///empty is empty: it has no Nova tables');
    expect(err.hint).toMatch(/\[api_database\] connection/);
  });

  it('checkSchema names a missing column', async () => {
    const err = await schemaError(checkSchema(dbs.knex('cell_without_mapped'), 'cell', 'cell database x'));
    expect(err.kind).toBe('schema');
    expect(err.message).toBe('cell database x is not a Nova cell database: column "compute_nodes.mapped" is missing');
    expect(err.hint).toMatch(/database_connection/);
  });

  it('checkSchema names every missing table of the wrong kind of database at once', async () => {
    const err = await schemaError(checkSchema(dbs.knex('api'), 'cell', 'cell database y'));
    expect(err.message).toBe('cell database y is not a Nova cell database: missing: services, compute_nodes, instances, instance_extra, block_device_mapping, migrations');
    const placement = await schemaError(checkSchema(dbs.knex('cell'), 'placement', 'placement database z'));
    expect(placement.message).toMatch(/^placement database z is not a Nova placement database: missing: resource_providers, inventories, /);
    expect(placement.hint).toMatch(/\[placement_database\] connection/);
  });

  it('the SQLite comparison reports a dropped column', async () => {
    const manifest = TOUCHED_SCHEMA.cell;
    const ours = await readSqliteSchema(dbs.knex('cell_without_mapped'), Object.keys(manifest));
    expect(diffSqliteSchema(parseDump(readReferenceDump('nova_cell')), ours, manifest)).toEqual([
      'compute_nodes.mapped: missing from our SQLite migrations',
    ]);
  });
});

describeMysql('MariaDB: migrations/ match the reference dumps', () => {
  let dbs: ScratchDatabases;

  beforeAll(async () => {
    dbs = await createScratchDatabases('schema', [
      'ref_api',
      'ref_cell',
      'ref_placement',
      'api',
      'cell',
      'placement',
      'mutant_api',
      'mutant_cell',
      'empty',
    ]);
    for (const { kind, dump } of KINDS) {
      await loadDump(dbs.dbNames[`ref_${kind}`] ?? '', readReferenceDump(dump));
      await migrateSchema(dbs.knex(kind), kind);
    }
    await migrateSchema(dbs.knex('mutant_api'), 'api');
    await migrateSchema(dbs.knex('mutant_cell'), 'cell');
  });

  afterAll(async () => {
    await dbs?.drop();
  });

  async function diffKind(kind: SchemaKind, ours: string): Promise<string[]> {
    const manifest = TOUCHED_SCHEMA[kind];
    const tables = Object.keys(manifest);
    const reference = await readMysqlSchema(dbs.knex(`ref_${kind}`), tables);
    return diffMysqlSchemas(reference, await readMysqlSchema(dbs.knex(ours), tables), manifest);
  }

  it('creates the databases with the real charsets', async () => {
    const rows = (await dbs
      .knex('api')
      .select({ name: 'SCHEMA_NAME', charset: 'DEFAULT_CHARACTER_SET_NAME' })
      .from('information_schema.SCHEMATA')
      .whereIn('SCHEMA_NAME', [dbs.dbNames['api'] ?? '', dbs.dbNames['placement'] ?? ''])
      .orderBy('SCHEMA_NAME')) as { name: string; charset: string }[];
    expect(Object.fromEntries(rows.map((r) => [r.name, r.charset]))).toEqual({
      [dbs.dbNames['api'] ?? '']: 'utf8mb3',
      [dbs.dbNames['placement'] ?? '']: 'utf8mb4',
    });
    expect(dbs.url('api')).toMatch(/^mysql\+pymysql:\/\/[^@]+@[^/]+\/nr_schema_api_[a-f0-9]{6}$/);
  });

  it.each(KINDS)('$kind matches reference $dump column for column, key for key', async ({ kind }) => {
    expect(await diffKind(kind, kind)).toEqual([]);
  });

  it.each(KINDS)('every manifest entry of $kind exists in the loaded reference $dump dump', async ({ kind }) => {
    const manifest = TOUCHED_SCHEMA[kind];
    const reference = await readMysqlSchema(dbs.knex(`ref_${kind}`), Object.keys(manifest));
    // Compared with itself, only manifest drift can show up.
    expect(diffMysqlSchemas(reference, reference, manifest)).toEqual([]);
    expect(diffMysqlSchemas(reference, reference, { ...manifest, host_mappings: ['host', 'hostname'] })).toEqual(
      kind === 'api' ? ['host_mappings.hostname: in the manifest but not in the reference schema'] : ['host_mappings: in the manifest but not in the reference schema'],
    );
  });

  it.each(KINDS)('checkSchema accepts both the real $dump schema and ours', async ({ kind }) => {
    await expect(checkSchema(dbs.knex(`ref_${kind}`), kind, 'reference')).resolves.toMatchObject({ head: null });
    await expect(checkSchema(dbs.knex(kind), kind, 'ours')).resolves.toMatchObject({ head: null });
  });

  it.each(KINDS)('migrating $kind again changes nothing', async ({ kind }) => {
    const before = await migrationCount(dbs.knex(kind));
    await migrateSchema(dbs.knex(kind), kind);
    expect(await migrationCount(dbs.knex(kind))).toBe(before);
  });

  it('checkSchema calls a database without tables empty', async () => {
    const err = await schemaError(checkSchema(dbs.knex('empty'), 'placement', 'placement database mysql://127.0.0.1:3306/p'));
    expect(err.kind).toBe('schema');
    expect(err.message).toBe('placement database mysql://127.0.0.1:3306/p is empty: it has no Nova tables');
  });

  it('checkSchema names every missing table when pointed at the wrong kind of database', async () => {
    const err = await schemaError(checkSchema(dbs.knex('ref_cell'), 'api', 'API database db'));
    expect(err.message).toBe('API database db is not a Nova API database: missing: cell_mappings, host_mappings, instance_mappings');
  });

  describe('with a damaged copy', () => {
    beforeAll(async () => {
      const cell = dbs.knex('mutant_cell');
      await cell.raw('ALTER TABLE compute_nodes DROP COLUMN mapped');
      await cell.raw('ALTER TABLE services MODIFY report_count int(11) NULL');
      await cell.raw('ALTER TABLE instances MODIFY node varchar(64) DEFAULT NULL');
      const api = dbs.knex('mutant_api');
      await api.raw('ALTER TABLE host_mappings DROP INDEX uniq_host_mappings0host');
      await api.raw('ALTER TABLE host_mappings MODIFY host varchar(255) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin NOT NULL');
      await api.raw("ALTER TABLE cell_mappings MODIFY disabled tinyint(1) DEFAULT '0'");
    });

    it('the comparison reports every difference', async () => {
      expect(await diffKind('cell', 'mutant_cell')).toEqual([
        'services.report_count: nullable is "YES", reference has "NO"',
        'compute_nodes.mapped: missing from our migrations',
        'instances.node: type is "varchar(64)", reference has "varchar(255)"',
      ]);
      expect(await diffKind('api', 'mutant_api')).toEqual([
        'cell_mappings.disabled: default is "0", reference has null',
        'host_mappings.host: collation is "utf8mb3_bin", reference has "utf8mb3_general_ci"',
        'host_mappings: unique key uniq_host_mappings0host (host) is missing',
      ]);
    });

    it('checkSchema names the missing column', async () => {
      const err = await schemaError(checkSchema(dbs.knex('mutant_cell'), 'cell', 'cell database c'));
      expect(err.message).toBe('cell database c is not a Nova cell database: column "compute_nodes.mapped" is missing');
    });
  });

  it('host_mappings.host ignores case and trailing spaces, as nova-manage relies on (§1.7)', async () => {
    const db = dbs.knex('api');
    const cellId = await insertCell(db);
    await db('host_mappings').insert({ cell_id: cellId, host: 'c1-a' });
    await expect(db('host_mappings').insert({ cell_id: cellId, host: 'C1-A ' })).rejects.toThrow(/Duplicate entry/);
  });

  it('resource_providers.name is case-insensitive in placement', async () => {
    const db = dbs.knex('placement');
    await db('resource_providers').insert({ uuid: UUID_A, name: 'NODE-1', generation: 0 });
    await expect(db('resource_providers').insert({ uuid: UUID_B, name: 'node-1', generation: 0 })).rejects.toThrow(/Duplicate entry/);
  });

  it('the standard resource classes have ids 0-20, VCPU at 0', async () => {
    const rows = await dbs.knex('placement')('resource_classes').select('id', 'name').orderBy('id');
    expect(rows).toEqual(STANDARD_RESOURCE_CLASSES.map((name, id) => ({ id, name })));
  });

  it('re-inserting a missing standard class keeps id 0 and restores the session sql_mode', async () => {
    const db = dbs.knex('placement');
    await db('resource_classes').where({ id: 0 }).delete();
    const modes = await db.transaction(async (trx) => {
      await trx.raw("SET SESSION sql_mode = 'TRADITIONAL'");
      const before = await sessionMode(trx);
      await insertStandardResourceClasses(trx);
      return { before, after: await sessionMode(trx) };
    });
    expect(modes.after).toBe(modes.before);
    expect(modes.after).not.toMatch(/NO_AUTO_VALUE_ON_ZERO/);
    expect(await db('resource_classes').where({ name: 'VCPU' }).select('id')).toEqual([{ id: 0 }]);
  });
});

async function sessionMode(trx: Knex.Transaction): Promise<string> {
  const [rows] = (await trx.raw('SELECT @@SESSION.sql_mode AS mode')) as [{ mode: string }[]];
  return rows[0]?.mode ?? '';
}
