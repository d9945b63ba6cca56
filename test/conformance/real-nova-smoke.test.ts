// Smoke test of the real-Nova harness: the deployment built with the real
// nova-manage / placement-manage, and the exact output of a few read-only
// cell_v2 commands on it (what nova-reconcile must reproduce byte for byte).
//
// Set NRC_CAPTURE_DIR=<dir> to write every captured stdout to files there.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRealDeployment,
  filterNovaStderr,
  realNovaAvailable,
  realNovaSkipNotice,
  realNovaStats,
  realNovaTemplate,
  runNovaManage,
} from './real-nova.js';
import type { RealDeployment, ToolResult } from './real-nova.js';
import { REFERENCE_SCHEMA_DIR } from '../helpers/mysql.js';

const available = realNovaAvailable();
const required = process.env['CI'] === 'true';
if (!available && !required) console.warn(`\n*** ${realNovaSkipNotice}\n`);

const REFERENCE_DIR = REFERENCE_SCHEMA_DIR;

/** prettytable 3.6 default style, every cell centred like str.center(). */
function prettyTable(header: readonly string[], body: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const center = (s: string, w: number): string => {
    // CPython str.center: left = pad/2 + (pad & width & 1)
    const pad = w - s.length;
    const left = Math.floor(pad / 2) + (pad & w & 1);
    return ' '.repeat(left) + s + ' '.repeat(pad - left);
  };
  const rule = '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+';
  const line = (r: readonly string[]): string =>
    '|' + r.map((c, i) => ' ' + center(c, widths[i] ?? 0) + ' ').join('|') + '|';
  return [rule, line(header), rule, ...body.map(line), rule].join('\n');
}

async function capture(name: string, r: ToolResult): Promise<void> {
  const dir = process.env['NRC_CAPTURE_DIR'];
  if (dir === undefined || dir === '') return;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${name}.stdout`), r.stdout);
  await writeFile(join(dir, `${name}.stderr`), r.stderr);
  await writeFile(join(dir, `${name}.code`), `${r.code}\n`);
}

async function mysql(): Promise<Connection> {
  const raw = process.env['TEST_MYSQL_URL'];
  const u = raw !== undefined && raw !== '' ? new URL(raw) : new URL('mysql://root@127.0.0.1:3306');
  return createConnection({
    host: u.hostname,
    port: u.port === '' ? 3306 : Number(u.port),
    user: u.username === '' ? 'root' : decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    dateStrings: true,
  });
}

async function tables(c: Connection, db: string): Promise<string[]> {
  const [r] = await c.query<(RowDataPacket & { t: string })[]>(
    "SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
    [db],
  );
  return r.map((x) => x.t);
}

async function showCreate(c: Connection, db: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const t of await tables(c, db)) {
    const [r] = await c.query<(RowDataPacket & { 'Create Table': string })[]>(`SHOW CREATE TABLE \`${db}\`.\`${t}\``);
    out.set(t, r[0]?.['Create Table'] ?? '');
  }
  return out;
}

/** Index order in the DDL that nova's alembic migrations emit varies from run to run (Python set
 * iteration), so compare the lines of each CREATE TABLE as a multiset. */
function normalizeDdl(sql: string): string {
  return sql
    .split('\n')
    .map((l) => l.replace(/,$/, '').replace(/ AUTO_INCREMENT=\d+/, ''))
    .sort()
    .join('\n');
}

function parseDump(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/CREATE TABLE `([^`]+)` \([\s\S]*?\n\)[^;]*;/g)) {
    const name = m[1];
    if (name !== undefined) out.set(name, m[0].replace(/;$/, ''));
  }
  return out;
}

describe('real nova-manage harness', () => {
  it.runIf(!available && required)('real Nova is installed (required when CI=true)', () => {
    throw new Error(realNovaSkipNotice);
  });

  describe.skipIf(!available)('on a real-tools deployment', () => {
    let d: RealDeployment;
    let c: Connection;

    beforeAll(async () => {
      const t0 = performance.now();
      d = await createRealDeployment('smoke');
      const firstMs = Math.round(performance.now() - t0);
      const t1 = performance.now();
      const second = await createRealDeployment('smoke2');
      const secondMs = Math.round(performance.now() - t1);
      await second.drop();
      c = await mysql();
      console.info(
        `[real-nova] template ${realNovaStats.templateKey}: ` +
          (realNovaStats.templateReused === true
            ? `reused (validated in ${realNovaStats.templateReadyMs} ms)`
            : `built with the real tools in ${realNovaStats.templateBuildMs} ms ` +
              `(steps: ${JSON.stringify(realNovaStats.buildSteps)}), ready in ${realNovaStats.templateReadyMs} ms`) +
          `; first createRealDeployment ${firstMs} ms, a further clone ${secondMs} ms`,
      );
    });

    afterAll(async () => {
      await c?.end();
      await d?.drop();
    });

    it('names the databases nrc_<prefix>_<kind>_<rand>', () => {
      for (const [kind, name] of Object.entries(d.db)) {
        expect(name).toMatch(new RegExp(`^nrc_smoke_${kind}_[0-9a-f]{8}$`));
        expect(name.length).toBeLessThanOrEqual(64);
      }
      expect(d.url('cell1')).toBe(`mysql+pymysql://root@127.0.0.1:3306/${d.db.cell1}?charset=utf8`);
      expect(d.cells.cell0).toBe('00000000-0000-0000-0000-000000000000');
      expect(d.cells.cell1).not.toBe(d.cells.cell2);
    });

    it('has the expected tables and alembic heads', async () => {
      const api = await tables(c, d.db.api);
      expect(api).toEqual(expect.arrayContaining(['cell_mappings', 'host_mappings', 'instance_mappings', 'alembic_version']));
      expect(api).toHaveLength(32);
      for (const cell of [d.db.cell0, d.db.cell1, d.db.cell2]) {
        const t = await tables(c, cell);
        expect(t).toEqual(
          expect.arrayContaining(['compute_nodes', 'services', 'instances', 'migrations', 'shadow_instances', 'alembic_version']),
        );
        expect(t).toHaveLength(110);
      }
      const pl = await tables(c, d.db.placement);
      expect(pl).toEqual(
        expect.arrayContaining(['resource_providers', 'inventories', 'allocations', 'consumers', 'projects', 'users', 'traits']),
      );
      expect(pl).toHaveLength(13);
      const head = async (db: string): Promise<string> => {
        const [r] = await c.query<(RowDataPacket & { v: string })[]>(`SELECT version_num AS v FROM \`${db}\`.alembic_version`);
        return r.map((x) => x.v).join(',');
      };
      expect(await head(d.db.api)).toBe('b30f573d3377');
      for (const cell of [d.db.cell0, d.db.cell1, d.db.cell2]) expect(await head(cell)).toBe('ccb0fa1a2252');
      expect(await head(d.db.placement)).toBe('422ece571366');
    });

    it('clones are byte-identical in schema to the template the real tools built', async () => {
      const tmpl = await realNovaTemplate();
      for (const kind of ['api', 'cell0', 'cell1', 'cell2', 'placement'] as const) {
        const a = await showCreate(c, tmpl.db[kind]);
        const b = await showCreate(c, d.db[kind]);
        expect([...b.keys()]).toEqual([...a.keys()]);
        for (const [t, sql] of a) expect(b.get(t), `${kind}.${t}`).toBe(sql);
      }
    });

    it('matches the reference schema dumps (index order aside)', async () => {
      const pairs = [
        ['nova_api.sql', d.db.api],
        ['nova_cell.sql', d.db.cell1],
        ['placement.sql', d.db.placement],
      ] as const;
      for (const [file, db] of pairs) {
        const ref = parseDump(await readFile(join(REFERENCE_DIR, file), 'utf8'));
        const got = await showCreate(c, db);
        expect([...got.keys()].sort()).toEqual([...ref.keys()].sort());
        for (const [t, sql] of ref) expect(normalizeDdl(got.get(t) ?? ''), `${file}: ${t}`).toBe(normalizeDdl(sql));
      }
    });

    it('filters only the eventlet warning from stderr', () => {
      const w =
        'Modules with known eventlet monkey patching issues were imported prior to eventlet monkey patching: urllib3. ' +
        'This warning can usually be ignored if the caller is only importing and not executing nova code.';
      expect(filterNovaStderr(`${w}\n`)).toBe('');
      expect(filterNovaStderr(`a\n${w}\nb\n`)).toBe('a\nb\n');
      expect(filterNovaStderr(`${w} extra\n`)).toBe(`${w} extra\n`);
      expect(filterNovaStderr('usage: nova-manage\n')).toBe('usage: nova-manage\n');
    });

    it('cell_v2 list_cells (masked) lists cell0, cell1, cell2', async () => {
      const r = await runNovaManage(d.confPath, ['cell_v2', 'list_cells']);
      await capture('list_cells', r);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const mask = (u: string): string => u.replace('guest:guest@', 'guest:****@');
      const tu = (cell: 'cell1' | 'cell2'): string => `rabbit://guest:guest@127.0.0.1:5672/${d.db[cell]}`;
      expect(r.stdout).toBe(
        prettyTable(
          ['Name', 'UUID', 'Transport URL', 'Database Connection', 'Disabled'],
          [
            ['cell0', d.cells.cell0, 'none:/', d.url('cell0'), 'False'],
            ['cell1', d.cells.cell1, mask(tu('cell1')), d.url('cell1'), 'False'],
            ['cell2', d.cells.cell2, mask(tu('cell2')), d.url('cell2'), 'False'],
          ],
        ) + '\n',
      );
    });

    it('cell_v2 list_cells --verbose shows the raw URLs', async () => {
      const r = await runNovaManage(d.confPath, ['cell_v2', 'list_cells', '--verbose']);
      await capture('list_cells_verbose', r);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const tu = (cell: 'cell1' | 'cell2'): string => `rabbit://guest:guest@127.0.0.1:5672/${d.db[cell]}`;
      expect(r.stdout).toBe(
        prettyTable(
          ['Name', 'UUID', 'Transport URL', 'Database Connection', 'Disabled'],
          [
            ['cell0', d.cells.cell0, 'none:///', d.url('cell0'), 'False'],
            ['cell1', d.cells.cell1, tu('cell1'), d.url('cell1'), 'False'],
            ['cell2', d.cells.cell2, tu('cell2'), d.url('cell2'), 'False'],
          ],
        ) + '\n',
      );
    });

    it('cell_v2 discover_hosts --verbose on the empty deployment', async () => {
      const r = await runNovaManage(d.confPath, ['cell_v2', 'discover_hosts', '--verbose']);
      await capture('discover_hosts_verbose', r);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(
        [
          'Found 3 cell mappings.',
          'Skipping cell0 since it does not contain hosts.',
          `Getting computes from cell 'cell1': ${d.cells.cell1}`,
          `Found 0 unmapped computes in cell: ${d.cells.cell1}`,
          `Getting computes from cell 'cell2': ${d.cells.cell2}`,
          `Found 0 unmapped computes in cell: ${d.cells.cell2}`,
          '',
        ].join('\n'),
      );
    });

    it('cell_v2 discover_hosts (quiet) prints nothing, exit 0; --strict exits 1', async () => {
      const quiet = await runNovaManage(d.confPath, ['cell_v2', 'discover_hosts']);
      await capture('discover_hosts', quiet);
      expect(quiet).toEqual({ stdout: '', stderr: '', code: 0 });
      const strict = await runNovaManage(d.confPath, ['cell_v2', 'discover_hosts', '--strict']);
      await capture('discover_hosts_strict', strict);
      expect(strict).toEqual({ stdout: '', stderr: '', code: 1 });
    });

    it('cell_v2 discover_hosts --cell_uuid <unknown> exits 255 with the traceback on stdout', async () => {
      const unknown = '11111111-2222-3333-4444-555555555555';
      const r = await runNovaManage(d.confPath, ['cell_v2', 'discover_hosts', '--cell_uuid', unknown]);
      await capture('discover_hosts_unknown_cell', r);
      expect(r.code).toBe(255);
      expect(r.stderr).toBe('');
      expect(r.stdout.startsWith('An error has occurred:\nTraceback (most recent call last):\n')).toBe(true);
      expect(r.stdout.endsWith(`nova.exception.CellMappingNotFound: Cell ${unknown} has no mapping.\n\n`)).toBe(true);
    });

    it('argparse errors: usage on stderr, exit 2, program name nova-manage', async () => {
      const r = await runNovaManage(d.confPath, ['cell_v2', 'discover_hosts', '--by_service']);
      await capture('discover_hosts_by_underscore', r);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.startsWith('usage: nova-manage [-h] [--config-dir DIR] [--config-file PATH] [--debug]\n')).toBe(true);
      expect(r.stderr.endsWith('nova-manage: error: unrecognized arguments: --by_service\n')).toBe(true);
      const missing = await runNovaManage(d.confPath, ['cell_v2', 'delete_host', '--cell_uuid', d.cells.cell1]);
      await capture('delete_host_missing_host', missing);
      expect(missing).toEqual({
        stdout: '',
        stderr:
          'usage: nova-manage cell_v2 delete_host [-h] --cell_uuid <cell_uuid> --host\n' +
          '                                       <host>\n' +
          'nova-manage cell_v2 delete_host: error: the following arguments are required: --host\n',
        code: 2,
      });
    });

    it('cell_v2 list_hosts: empty, then two mappings sorted case-sensitively', async () => {
      const empty = await runNovaManage(d.confPath, ['cell_v2', 'list_hosts']);
      await capture('list_hosts_empty', empty);
      expect(empty.code).toBe(0);
      expect(empty.stderr).toBe('');
      expect(empty.stdout).toBe(prettyTable(['Cell Name', 'Cell UUID', 'Hostname'], []) + '\n');

      await c.query(
        `INSERT INTO \`${d.db.api}\`.host_mappings (created_at, cell_id, host)
         SELECT UTC_TIMESTAMP(), id, 'compute-b' FROM \`${d.db.api}\`.cell_mappings WHERE name = 'cell1'
         UNION ALL
         SELECT UTC_TIMESTAMP(), id, 'Compute-A' FROM \`${d.db.api}\`.cell_mappings WHERE name = 'cell2'`,
      );
      const two = await runNovaManage(d.confPath, ['cell_v2', 'list_hosts']);
      await capture('list_hosts_two', two);
      expect(two.code).toBe(0);
      expect(two.stderr).toBe('');
      expect(two.stdout).toBe(
        prettyTable(
          ['Cell Name', 'Cell UUID', 'Hostname'],
          [
            ['cell2', d.cells.cell2, 'Compute-A'],
            ['cell1', d.cells.cell1, 'compute-b'],
          ],
        ) + '\n',
      );

      const one = await runNovaManage(d.confPath, ['cell_v2', 'list_hosts', '--cell_uuid', d.cells.cell1]);
      await capture('list_hosts_cell1', one);
      expect(one.code).toBe(0);
      expect(one.stdout).toBe(
        prettyTable(['Cell Name', 'Cell UUID', 'Hostname'], [['cell1', d.cells.cell1, 'compute-b']]) + '\n',
      );

      const missing = await runNovaManage(d.confPath, ['cell_v2', 'list_hosts', '--cell_uuid', 'nope']);
      await capture('list_hosts_unknown_cell', missing);
      expect(missing).toEqual({ stdout: 'Cell with uuid nope was not found.\n', stderr: '', code: 1 });
    });

    it('reset() empties data tables and keeps cell_mappings', async () => {
      await c.query(
        `INSERT INTO \`${d.db.cell1}\`.compute_nodes (created_at, deleted, mapped, uuid, host, vcpus, memory_mb, local_gb,
           vcpus_used, memory_mb_used, local_gb_used, hypervisor_type, hypervisor_version, cpu_info)
         VALUES (UTC_TIMESTAMP(), 0, 0, 'aaaaaaaa-0000-0000-0000-000000000001', 'h1', 1, 1, 1, 0, 0, 0, 'fake', 1, '')`,
      );
      await c.query(
        `INSERT INTO \`${d.db.api}\`.cell_mappings (created_at, uuid, name, transport_url, database_connection)
         VALUES (UTC_TIMESTAMP(), 'bbbbbbbb-0000-0000-0000-000000000001', 'extra', 'rabbit://x', 'mysql://x')`,
      );
      await d.reset();
      const count = async (sql: string): Promise<number> => {
        const [r] = await c.query<(RowDataPacket & { n: number })[]>(sql);
        return Number(r[0]?.n);
      };
      expect(await count(`SELECT COUNT(*) AS n FROM \`${d.db.api}\`.host_mappings`)).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM \`${d.db.cell1}\`.compute_nodes`)).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM \`${d.db.api}\`.cell_mappings`)).toBe(3);
      const [ai] = await c.query<(RowDataPacket & { ai: number })[]>(
        "SELECT AUTO_INCREMENT AS ai FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'compute_nodes'",
        [d.db.cell1],
      );
      expect(Number(ai[0]?.ai)).toBe(1);
      const r = await runNovaManage(d.confPath, ['cell_v2', 'discover_hosts', '--verbose']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Found 0 unmapped computes in cell: ${d.cells.cell2}\n`);
    });
  });
});
