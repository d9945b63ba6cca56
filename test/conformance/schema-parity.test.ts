// Schema parity: our migrations/ against the databases that the real
// nova-manage (api_db sync, db sync) and placement-manage (db sync) built.
//
// For every table of TOUCHED_SCHEMA (src/db/schema-manifest.ts, the one list
// the runtime schema check uses too) and every column of those tables:
// column names, type family and length, nullability, defaults,
// auto-increment, charset and collation; the table's collation and engine;
// unique keys (PRIMARY included), other keys and foreign keys, each compared
// as a set of "name(columns)" because the order of the indexes in SHOW CREATE
// TABLE varies between real runs. Every difference is listed. Then the
// comparison is shown to fail: scratch copies of ours are broken on purpose
// (a dropped touched column, a changed collation, a dropped unique key, ...)
// and each break must be reported.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateSchema, type SchemaKind } from '../../src/db/migrate.js';
import { TOUCHED_SCHEMA } from '../../src/db/schema-manifest.js';
import { createScratchDatabases, mysqlKnex, readMysqlSchema, type ColumnShape, type SchemaShape, type ScratchDatabases, type TableShape } from '../helpers/mysql.js';
import { realNovaAvailable, realNovaSkipNotice, realNovaTemplate } from './real-nova.js';

const available = realNovaAvailable();
const required = process.env['CI'] === 'true';
if (!available && !required) console.warn(`\n*** ${realNovaSkipNotice}\n`);

type RealDb = 'api' | 'cell0' | 'cell1' | 'cell2' | 'placement';
const REAL_OF: ReadonlyArray<{ kind: SchemaKind; real: RealDb }> = [
  { kind: 'api', real: 'api' },
  { kind: 'cell', real: 'cell0' },
  { kind: 'cell', real: 'cell1' },
  { kind: 'cell', real: 'cell2' },
  { kind: 'placement', real: 'placement' },
];

// ---------------------------------------------------------------------------
// The comparison

const INTEGER_TYPES = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'bigint']);

interface TypeParts {
  /** int, varchar, text, datetime, float, enum ... plus " unsigned"/" zerofill". */
  readonly family: string;
  /** varchar/char length, decimal precision, enum members; null for integers (display width is not storage). */
  readonly size: string | null;
}

function typeParts(columnType: string): TypeParts {
  const m = /^(\w+)(?:\((.*)\))?((?: unsigned| zerofill)*)$/.exec(columnType.trim().toLowerCase());
  if (m === null) return { family: columnType, size: null };
  const base = m[1] ?? columnType;
  const family = `${base}${m[3] ?? ''}`;
  return { family, size: INTEGER_TYPES.has(base) ? null : (m[2] ?? null) };
}

function show(v: string | null): string {
  return v === null ? 'NULL' : JSON.stringify(v);
}

function keySet(keys: ReadonlyMap<string, string>): Set<string> {
  return new Set([...keys].map(([name, cols]) => `${name}(${cols})`));
}

function compareSets(diffs: string[], what: string, real: Set<string>, ours: Set<string>): void {
  for (const k of [...real].sort()) if (!ours.has(k)) diffs.push(`${what} ${k}: in the real schema, missing from ours`);
  for (const k of [...ours].sort()) if (!real.has(k)) diffs.push(`${what} ${k}: in ours, not in the real schema`);
}

function compareColumn(diffs: string[], where: string, real: ColumnShape, ours: ColumnShape): void {
  const r = typeParts(real.type);
  const o = typeParts(ours.type);
  if (r.family !== o.family) diffs.push(`${where}: type family is ${o.family} (${ours.type}) in ours, ${r.family} (${real.type}) in the real schema`);
  else if (r.size !== o.size) diffs.push(`${where}: type is ${ours.type} in ours, ${real.type} in the real schema`);
  const nullable = (c: ColumnShape): string => (c.nullable === 'YES' ? 'NULL' : 'NOT NULL');
  if (real.nullable !== ours.nullable) diffs.push(`${where}: ${nullable(ours)} in ours, ${nullable(real)} in the real schema`);
  if (real.default !== ours.default) diffs.push(`${where}: default is ${show(ours.default)} in ours, ${show(real.default)} in the real schema`);
  if (real.extra !== ours.extra) diffs.push(`${where}: extra is ${show(ours.extra)} in ours, ${show(real.extra)} in the real schema`);
  if (real.charset !== ours.charset) diffs.push(`${where}: charset is ${show(ours.charset)} in ours, ${show(real.charset)} in the real schema`);
  if (real.collation !== ours.collation) diffs.push(`${where}: collation is ${show(ours.collation)} in ours, ${show(real.collation)} in the real schema`);
}

function compareTable(diffs: string[], label: string, table: string, manifestColumns: readonly string[], real: TableShape, ours: TableShape): void {
  const t = `${label}.${table}`;
  for (const c of manifestColumns) if (!real.columns.has(c)) diffs.push(`${t}.${c}: touched by the tool (TOUCHED_SCHEMA) but not in the real schema`);
  if (real.collation !== ours.collation) diffs.push(`${t}: table collation is ${show(ours.collation)} in ours, ${show(real.collation)} in the real schema`);
  if (real.engine !== ours.engine) diffs.push(`${t}: engine is ${show(ours.engine)} in ours, ${show(real.engine)} in the real schema`);
  for (const [column, realColumn] of real.columns) {
    const ourColumn = ours.columns.get(column);
    const touched = manifestColumns.includes(column) ? ' (touched)' : '';
    if (ourColumn === undefined) diffs.push(`${t}.${column}${touched}: in the real schema, missing from ours`);
    else compareColumn(diffs, `${t}.${column}${touched}`, realColumn, ourColumn);
  }
  for (const column of ours.columns.keys()) if (!real.columns.has(column)) diffs.push(`${t}.${column}: in ours, not in the real schema`);
  compareSets(diffs, `${t}: unique key`, keySet(real.uniqueKeys), keySet(ours.uniqueKeys));
  compareSets(diffs, `${t}: key`, keySet(real.otherKeys), keySet(ours.otherKeys));
  compareSets(diffs, `${t}: foreign key`, keySet(real.foreignKeys), keySet(ours.foreignKeys));
}

/** Every difference between the real schema and ours, for the tables of the manifest. */
function diffAgainstReal(label: string, real: SchemaShape, ours: SchemaShape, manifest: Readonly<Record<string, readonly string[]>>): string[] {
  const diffs: string[] = [];
  for (const [table, columns] of Object.entries(manifest)) {
    const r = real.get(table);
    const o = ours.get(table);
    if (r === undefined) diffs.push(`${label}.${table}: touched by the tool (TOUCHED_SCHEMA) but not in the real schema`);
    else if (o === undefined) diffs.push(`${label}.${table}: in the real schema, missing from ours`);
    else compareTable(diffs, label, table, columns, r, o);
  }
  return diffs;
}

/**
 * The collations that decide how the tool's lookups match (nova-behaviour.md
 * §1.7, §11): host names are case- and trailing-space-insensitive, as are
 * provider names; trait and resource-class names too. Checked by name so that
 * a change here is a deliberate edit, not a side effect.
 */
const KEY_COLUMN_COLLATIONS: ReadonlyArray<readonly [SchemaKind, string, string, string]> = [
  ['api', 'host_mappings', 'host', 'utf8mb3_general_ci'],
  ['api', 'cell_mappings', 'uuid', 'utf8mb3_general_ci'],
  ['api', 'instance_mappings', 'instance_uuid', 'utf8mb3_general_ci'],
  ['cell', 'services', 'host', 'utf8mb3_general_ci'],
  ['cell', 'services', 'binary', 'utf8mb3_general_ci'],
  ['cell', 'compute_nodes', 'host', 'utf8mb3_general_ci'],
  ['cell', 'compute_nodes', 'hypervisor_hostname', 'utf8mb3_general_ci'],
  ['cell', 'compute_nodes', 'uuid', 'utf8mb3_general_ci'],
  ['cell', 'instances', 'host', 'utf8mb3_general_ci'],
  ['cell', 'instances', 'node', 'utf8mb3_general_ci'],
  ['cell', 'instances', 'uuid', 'utf8mb3_general_ci'],
  ['cell', 'migrations', 'instance_uuid', 'utf8mb3_general_ci'],
  ['placement', 'resource_providers', 'name', 'utf8mb4_general_ci'],
  ['placement', 'resource_providers', 'uuid', 'utf8mb4_general_ci'],
  ['placement', 'consumers', 'uuid', 'utf8mb4_general_ci'],
  ['placement', 'allocations', 'consumer_id', 'utf8mb4_general_ci'],
  ['placement', 'projects', 'external_id', 'utf8mb4_general_ci'],
  ['placement', 'users', 'external_id', 'utf8mb4_general_ci'],
  ['placement', 'traits', 'name', 'utf8mb4_general_ci'],
  ['placement', 'resource_classes', 'name', 'utf8mb4_general_ci'],
];

// ---------------------------------------------------------------------------

describe('schema parity with the real Nova 26.2.2 / Placement 8.0.0', () => {
  it.runIf(!available && required)('real Nova is installed (required when CI=true)', () => {
    throw new Error(realNovaSkipNotice);
  });

  describe.skipIf(!available)('migrations/ against the databases the real tools built', () => {
    const real = {} as Record<RealDb, SchemaShape>;
    const ours = {} as Record<SchemaKind, SchemaShape>;
    let scratch: ScratchDatabases;
    const realKnex: Knex[] = [];

    beforeAll(async () => {
      const template = await realNovaTemplate();
      // The real databases were created with the server's default charset
      // (CREATE DATABASE without options): so are ours, and every table's
      // charset has to come from the DDL, as it does for the real tools.
      scratch = await createScratchDatabases('parity', ['api', 'cell', 'placement', 'broken_api', 'broken_cell', 'broken_placement'], {
        api: 'utf8mb4',
        cell: 'utf8mb4',
        placement: 'utf8mb4',
        broken_api: 'utf8mb4',
        broken_cell: 'utf8mb4',
        broken_placement: 'utf8mb4',
      });
      await Promise.all(
        (['api', 'cell', 'placement'] as const).flatMap((kind) => [migrateSchema(scratch.knex(kind), kind), migrateSchema(scratch.knex(`broken_${kind}`), kind)]),
      );
      for (const kind of ['api', 'cell', 'placement'] as const) ours[kind] = await readMysqlSchema(scratch.knex(kind), Object.keys(TOUCHED_SCHEMA[kind]));
      for (const { kind, real: db } of REAL_OF) {
        const k = mysqlKnex(template.db[db]);
        realKnex.push(k);
        real[db] = await readMysqlSchema(k, Object.keys(TOUCHED_SCHEMA[kind]));
      }
    });

    afterAll(async () => {
      await Promise.all(realKnex.map((k) => k.destroy()));
      await scratch?.drop();
    });

    it.each(REAL_OF)('$kind: ours matches the real $real database, table by table', ({ kind, real: db }) => {
      expect(real[db].size, 'tables of TOUCHED_SCHEMA found in the real database').toBe(Object.keys(TOUCHED_SCHEMA[kind]).length);
      expect(diffAgainstReal(db, real[db], ours[kind], TOUCHED_SCHEMA[kind])).toEqual([]);
    });

    it('key columns have the collations the lookups rely on, in ours and in the real schema', () => {
      const realOf: Record<SchemaKind, RealDb> = { api: 'api', cell: 'cell1', placement: 'placement' };
      const seen: string[] = [];
      const expected: string[] = [];
      for (const [kind, table, column, collation] of KEY_COLUMN_COLLATIONS) {
        const r = real[realOf[kind]].get(table)?.columns.get(column)?.collation ?? null;
        const o = ours[kind].get(table)?.columns.get(column)?.collation ?? null;
        seen.push(`${table}.${column}: real ${String(r)}, ours ${String(o)}`);
        expected.push(`${table}.${column}: real ${collation}, ours ${collation}`);
      }
      expect(seen).toEqual(expected);
    });

    it('the unique keys the tool relies on exist in the real schema and in ours', () => {
      const relied: ReadonlyArray<readonly [SchemaKind, string, string]> = [
        ['api', 'host_mappings', 'uniq_host_mappings0host(host)'],
        ['api', 'cell_mappings', 'uniq_cell_mappings0uuid(uuid)'],
        ['cell', 'compute_nodes', 'uniq_compute_nodes0host0hypervisor_hostname0deleted(host,hypervisor_hostname,deleted)'],
        ['cell', 'compute_nodes', 'compute_nodes_uuid_idx(uuid)'],
        ['cell', 'services', 'uniq_services0host0binary0deleted(host,binary,deleted)'],
        ['placement', 'resource_providers', 'uniq_resource_providers0name(name)'],
        ['placement', 'resource_providers', 'uniq_resource_providers0uuid(uuid)'],
        ['placement', 'consumers', 'uniq_consumers0uuid(uuid)'],
      ];
      const realOf: Record<SchemaKind, RealDb> = { api: 'api', cell: 'cell1', placement: 'placement' };
      const missing: string[] = [];
      for (const [kind, table, key] of relied) {
        const r = real[realOf[kind]].get(table);
        const o = ours[kind].get(table);
        if (r === undefined || !keySet(r.uniqueKeys).has(key)) missing.push(`real ${table} ${key}`);
        if (o === undefined || !keySet(o.uniqueKeys).has(key)) missing.push(`ours ${table} ${key}`);
      }
      expect(missing).toEqual([]);
    });

    it('keys are compared as sets: the order of the indexes does not matter', () => {
      const cn = real['cell1'].get('compute_nodes');
      if (cn === undefined) throw new Error('no compute_nodes in the real cell1');
      const reversed = new Map(real['cell1']);
      reversed.set('compute_nodes', {
        ...cn,
        uniqueKeys: new Map([...cn.uniqueKeys].reverse()),
        otherKeys: new Map([...cn.otherKeys].reverse()),
        foreignKeys: new Map([...cn.foreignKeys].reverse()),
      });
      expect(diffAgainstReal('cell1', real['cell1'], reversed, TOUCHED_SCHEMA.cell)).toEqual([]);
    });

    it('fails, listing every difference, when our schema is broken', async () => {
      const api = scratch.knex('broken_api');
      const cell = scratch.knex('broken_cell');
      const placement = scratch.knex('broken_placement');
      // A touched column dropped from a touched table (what deleting it from
      // migrations/cell/0001_nova_cell_zed.ts would do).
      await cell.raw('ALTER TABLE compute_nodes DROP COLUMN mapped');
      // A type family, a length, a nullability and a default.
      await cell.raw('ALTER TABLE services MODIFY COLUMN report_count bigint(20) NOT NULL');
      await cell.raw('ALTER TABLE instances MODIFY COLUMN host varchar(100) DEFAULT NULL');
      await cell.raw('ALTER TABLE compute_nodes MODIFY COLUMN deleted int(11) NOT NULL DEFAULT 0');
      // The collation of a key column, and a unique key.
      await api.raw('ALTER TABLE host_mappings MODIFY COLUMN host varchar(255) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin NOT NULL');
      await api.raw('ALTER TABLE host_mappings DROP INDEX uniq_host_mappings0host');
      await placement.raw('ALTER TABLE resource_providers MODIFY COLUMN name varchar(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL');
      // A column ours has and the real schema has not.
      await placement.raw('ALTER TABLE consumers ADD COLUMN extra_flag int(11) DEFAULT NULL');

      const brokenApi = diffAgainstReal('api', real['api'], await readMysqlSchema(api, Object.keys(TOUCHED_SCHEMA.api)), TOUCHED_SCHEMA.api);
      const brokenCell = diffAgainstReal('cell1', real['cell1'], await readMysqlSchema(cell, Object.keys(TOUCHED_SCHEMA.cell)), TOUCHED_SCHEMA.cell);
      const brokenPlacement = diffAgainstReal(
        'placement',
        real['placement'],
        await readMysqlSchema(placement, Object.keys(TOUCHED_SCHEMA.placement)),
        TOUCHED_SCHEMA.placement,
      );
      expect(brokenCell).toEqual([
        'cell1.services.report_count (touched): type family is bigint (bigint(20)) in ours, int (int(11)) in the real schema',
        'cell1.compute_nodes.deleted (touched): NOT NULL in ours, NULL in the real schema',
        'cell1.compute_nodes.deleted (touched): default is "0" in ours, NULL in the real schema',
        'cell1.compute_nodes.mapped (touched): in the real schema, missing from ours',
        'cell1.instances.host (touched): type is varchar(100) in ours, varchar(255) in the real schema',
      ]);
      expect(brokenApi).toEqual([
        'api.host_mappings.host (touched): collation is "utf8mb3_bin" in ours, "utf8mb3_general_ci" in the real schema',
        'api.host_mappings: unique key uniq_host_mappings0host(host): in the real schema, missing from ours',
      ]);
      expect(brokenPlacement).toEqual([
        'placement.resource_providers.name (touched): collation is "utf8mb4_bin" in ours, "utf8mb4_general_ci" in the real schema',
        'placement.consumers.extra_flag: in ours, not in the real schema',
      ]);
    });
  });
});
