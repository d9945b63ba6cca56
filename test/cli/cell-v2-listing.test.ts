// cell_v2 list_hosts and list_cells through the built binary, on SQLite and
// MariaDB: nova-manage's exact table bytes (prettytable 3.6 centring),
// sorting, filtering, masking and exit codes (nova-behaviour §0.1, §2.1, §2.3).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { insertCellMapping, insertHostMapping } from '../../src/sandbox/rows.js';

// ---------------------------------------------------------------------------
// An independent model of prettytable 3.6's default style, checked below
// against real nova-manage output, so the expected tables are not produced by
// the code under test.

/** prettytable's _justify for "c": odd-length text gets the extra space on the right. */
function centre(text: string, width: number): string {
  const excess = width - [...text].length;
  const half = Math.floor(excess / 2);
  if (excess % 2 === 0) return ' '.repeat(half) + text + ' '.repeat(half);
  return [...text].length % 2 === 1 ? ' '.repeat(half) + text + ' '.repeat(half + 1) : ' '.repeat(half + 1) + text + ' '.repeat(half);
}

function prettyTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...(r[i] ?? '')].length)));
  const rule = '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+';
  const line = (cells: readonly string[]): string => '|' + cells.map((c, i) => ` ${centre(c, widths[i] ?? 0)} `).join('|') + '|';
  return [rule, line(header), rule, ...rows.map(line), rule].join('\n') + '\n';
}

const HOSTS_HEADER = ['Cell Name', 'Cell UUID', 'Hostname'] as const;
const CELLS_HEADER = ['Name', 'UUID', 'Transport URL', 'Database Connection', 'Disabled'] as const;

describe('the prettytable model used by these tests', () => {
  it('reproduces real nova-manage list_cells output byte for byte', () => {
    const real = [
      '+-------+--------------------------------------+-------------------------------------------------------------+---------------------------------------------------------------------------+----------+',
      '|  Name |                 UUID                 |                        Transport URL                        |                            Database Connection                            | Disabled |',
      '+-------+--------------------------------------+-------------------------------------------------------------+---------------------------------------------------------------------------+----------+',
      '| cell0 | 00000000-0000-0000-0000-000000000000 |                            none:/                           | mysql+pymysql://root@127.0.0.1:3306/nrc_smoke_cell0_51a444c7?charset=utf8 |  False   |',
    ];
    // The real table is wider than its one row: another row (not shown) had a 59-character transport URL.
    const wide = 'x'.repeat(59);
    const mine = prettyTable(CELLS_HEADER, [
      ['cell0', CELL.cell0, 'none:/', 'mysql+pymysql://root@127.0.0.1:3306/nrc_smoke_cell0_51a444c7?charset=utf8', 'False'],
      ['', '', wide, '', ''],
    ]).split('\n');
    expect(mine.slice(0, 4)).toEqual(real);
  });
});

/** nova's mask_passwd_in_url on the URLs these tests use (greedy ':.*@' in the netloc; urlunparse). */
function novaMask(url: string): string {
  if (url === 'none:///') return 'none:/';
  // urlunparse drops the empty netloc of sqlite:////abs/path: sqlite://abs/path.
  if (url.startsWith('sqlite:////')) return `sqlite://${url.slice('sqlite:////'.length)}`;
  const m = /^([a-z0-9+]+):\/\/([^/?#]*)(.*)$/i.exec(url);
  if (m === null) return url;
  return `${m[1]}://${(m[2] ?? '').replace(/:.*@/, ':****@')}${m[3] ?? ''}`;
}

describeEachDialect('cell_v2 list_hosts', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'lh');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('prints the header-only table when nothing is mapped (exact bytes), exit 0', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'list_hosts']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        '+-----------+-----------+----------+',
        '| Cell Name | Cell UUID | Hostname |',
        '+-----------+-----------+----------+',
        '+-----------+-----------+----------+',
        '',
      ].join('\n'),
    );
  });

  it('after discover_hosts: every host with its cell, sorted by host (exact bytes)', async () => {
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    const r = await runBin([...d.args, 'cell_v2', 'list_hosts']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        '+-----------+--------------------------------------+-----------+',
        '| Cell Name |              Cell UUID               |  Hostname |',
        '+-----------+--------------------------------------+-----------+',
        '|   cell1   | 4dde17f6-6b53-4318-915d-00c67a4771f4 | compute-1 |',
        '|   cell1   | 4dde17f6-6b53-4318-915d-00c67a4771f4 | compute-2 |',
        '|   cell1   | 4dde17f6-6b53-4318-915d-00c67a4771f4 | compute-3 |',
        '|   cell2   | 39d68972-336c-428f-8ff5-77ff98269691 | compute-4 |',
        '|   cell2   | 39d68972-336c-428f-8ff5-77ff98269691 | compute-5 |',
        '+-----------+--------------------------------------+-----------+',
        '',
      ].join('\n'),
    );
  });

  it('sorts case-sensitively as Python does: uppercase before lowercase, by code point', async () => {
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    // Inserted in an order that is neither the id order nor a case-insensitive one.
    for (const [host, cell] of [
      ['compute-10', 'cell2'],
      ['Zeta', 'cell1'],
      ['alpha', 'cell2'],
      ['Compute-9', 'cell1'],
      ['_under', 'cell1'],
      ['compute-1a', 'cell1'],
    ] as const) {
      await insertHostMapping(d.dbs.api, { cellId: d.dbs.cellIds[cell], host });
    }
    const r = await runBin([...d.args, 'cell_v2', 'list_hosts']);
    expect(r.code).toBe(0);
    const cellOf: Record<string, 'cell1' | 'cell2'> = {
      'Compute-9': 'cell1',
      Zeta: 'cell1',
      _under: 'cell1',
      alpha: 'cell2',
      'compute-1': 'cell1',
      'compute-10': 'cell2',
      'compute-1a': 'cell1',
      'compute-2': 'cell1',
      'compute-3': 'cell1',
      'compute-4': 'cell2',
      'compute-5': 'cell2',
    };
    // Python: sorted(['compute-10', 'Zeta', ...]) — 'C' (67) < 'Z' (90) < '_' (95) < 'a' (97) < 'c' (99).
    const order = ['Compute-9', 'Zeta', '_under', 'alpha', 'compute-1', 'compute-10', 'compute-1a', 'compute-2', 'compute-3', 'compute-4', 'compute-5'];
    expect(r.stdout).toBe(
      prettyTable(
        HOSTS_HEADER,
        order.map((h) => {
          const cell = cellOf[h] ?? 'cell1';
          return [cell, CELL[cell], h];
        }),
      ),
    );
  });

  it('--cell_uuid lists only that cell', async () => {
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    const r = await runBin([...d.args, 'cell_v2', 'list_hosts', '--cell_uuid', CELL.cell2]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(
      prettyTable(HOSTS_HEADER, [
        ['cell2', CELL.cell2, 'compute-4'],
        ['cell2', CELL.cell2, 'compute-5'],
      ]),
    );
    const cell0 = await runBin([...d.args, 'cell_v2', 'list_hosts', '--cell_uuid', CELL.cell0]);
    expect(cell0.code).toBe(0);
    expect(cell0.stdout).toBe(prettyTable(HOSTS_HEADER, []));
  });

  it('an unknown --cell_uuid prints "Cell with uuid <U> was not found." and exits 1', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'list_hosts', '--cell_uuid', 'nope']);
    expect(r).toEqual(expect.objectContaining({ code: 1, stdout: 'Cell with uuid nope was not found.\n', stderr: '' }));
    const json = await runBin([...d.args, 'cell_v2', 'list_hosts', '--cell_uuid', 'nope', '--format', 'json']);
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout) as { error: { message: string; exit_code: number } };
    expect(doc.error).toMatchObject({ message: 'Cell with uuid nope was not found.', exit_code: 1 });
  });

  it('--format json prints one document with every host, sorted', async () => {
    const empty = await runBin([...d.args, 'cell_v2', 'list_hosts', '--format', 'json']);
    expect(empty.code).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual({ schema_version: 1, changed: false, hosts: [] });
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    const r = await runBin([...d.args, 'cell_v2', 'list_hosts', '--format', 'json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toEqual({
      schema_version: 1,
      changed: false,
      hosts: [
        { cell_name: 'cell1', cell_uuid: CELL.cell1, host: 'compute-1' },
        { cell_name: 'cell1', cell_uuid: CELL.cell1, host: 'compute-2' },
        { cell_name: 'cell1', cell_uuid: CELL.cell1, host: 'compute-3' },
        { cell_name: 'cell2', cell_uuid: CELL.cell2, host: 'compute-4' },
        { cell_name: 'cell2', cell_uuid: CELL.cell2, host: 'compute-5' },
      ],
    });
  });
});

describeEachDialect('cell_v2 list_cells', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'empty', 'lc');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  const raw = (): Array<[string, string, string, string]> => [
    ['cell0', CELL.cell0, 'none:///', d.url('cell0')],
    ['cell1', CELL.cell1, 'rabbit://guest:guest@127.0.0.1:5672/cell1', d.url('cell1')],
    ['cell2', CELL.cell2, 'rabbit://guest:guest@127.0.0.1:5672/cell2', d.url('cell2')],
  ];

  it('prints every cell sorted by name, URLs masked as nova masks them (none:/// as none:/), exit 0', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'list_cells']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(prettyTable(CELLS_HEADER, raw().map(([n, u, t, db]) => [n, u, novaMask(t), novaMask(db), 'False'])));
    expect(r.stdout).toContain(' none:/ ');
    expect(r.stdout).toContain('rabbit://guest:****@127.0.0.1:5672/cell1');
    expect(r.stdout).not.toContain('guest:guest');
  });

  it('--verbose prints the raw URLs', async () => {
    const r = await runBin([...d.args, 'cell_v2', 'list_cells', '--verbose']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(prettyTable(CELLS_HEADER, raw().map(([n, u, t, db]) => [n, u, t, db, 'False'])));
    expect(r.stdout).toContain(' none:/// ');
  });

  it('a disabled cell shows True; a cell with a NULL name sorts first with an empty name', async () => {
    await d.dbs.api('cell_mappings').update({ disabled: 1 }).where('uuid', CELL.cell2);
    const nameless = 'f2b0f4a8-2c5d-4c38-9d51-3c9a4b0c7e11';
    const namelessDb = d.dialect === 'mysql' ? 'mysql+pymysql://nova:S3cr3tMarker42@db.example.org/nova_cell9' : 'sqlite:////var/lib/nova/cell9.sqlite';
    await insertCellMapping(d.dbs.api, { uuid: nameless, name: null, transportUrl: 'rabbit://a:b@h1:5672,c:d@h2:5672/v', databaseConnection: namelessDb });
    // And one named after the others but inserted before a later id, so the order is by name, not id.
    await insertCellMapping(d.dbs.api, { uuid: 'a1b2c3d4-0000-4000-8000-000000000001', name: 'Cell-Upper', transportUrl: 'none:///', databaseConnection: d.url('cell0') });
    const r = await runBin([...d.args, 'cell_v2', 'list_cells']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const rows = [
      // nova's multi-host quirk: the greedy match loses the first host.
      ['', nameless, 'rabbit://a:****@h2:5672/v', novaMask(namelessDb), 'False'],
      ['Cell-Upper', 'a1b2c3d4-0000-4000-8000-000000000001', 'none:/', novaMask(d.url('cell0')), 'False'],
      ...raw().map(([n, u, t, db]) => [n, u, novaMask(t), novaMask(db), n === 'cell2' ? 'True' : 'False']),
    ];
    expect(r.stdout).toBe(prettyTable(CELLS_HEADER, rows));
    expect(r.stdout).not.toContain('S3cr3tMarker42');
    expect(r.stdout.split('\n')[3]).toMatch(/^\| {2,}\| f2b0f4a8-/);

    const json = await runBin([...d.args, 'cell_v2', 'list_cells', '--format', 'json']);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as { cells: Array<{ name: string | null; uuid: string; transport_url: string; database_connection: string; disabled: boolean }> };
    expect(doc.cells.map((c) => c.uuid)).toEqual(rows.map((row) => row[1]));
    expect(doc.cells.find((c) => c.uuid === CELL.cell2)?.disabled).toBe(true);
    expect(doc.cells.find((c) => c.uuid === CELL.cell0)?.transport_url).toBe('none:/');
    expect(json.stdout).not.toContain('S3cr3tMarker42');
  });

  if (dialect === 'mysql') {
    it('renders a templated cell URL against the local [database] connection and [DEFAULT] transport_url', async () => {
      const tmplUuid = 'c0ffee00-1234-4abc-8def-0123456789ab';
      await insertCellMapping(d.dbs.api, {
        uuid: tmplUuid,
        name: 'templated',
        transportUrl: 'rabbit://{username}:{password}@{hostname}:{port}/cellT',
        databaseConnection: 'mysql+pymysql://{username}:{password}@{hostname}:{port}/dbname',
      });
      const conf = (database: string): string => {
        const path = join(d.dir, `tmpl-${Math.random().toString(36).slice(2)}.conf`);
        writeFileSync(
          path,
          [
            '[DEFAULT]',
            'transport_url = rabbit://mq:MqS3cr3tMarker42@MQ.Example.ORG:5673/',
            '[api_database]',
            `connection = ${d.url('api')}`,
            '[database]',
            `connection = ${database}`,
            '',
          ].join('\n'),
        );
        return path;
      };
      // Not a server anyone connects to: list_cells only renders the template.
      const withPort = conf('mysql+pymysql://nova:S3cr3tMarker42@DB.Example.ORG:3307/nova_cell1?charset=utf8');
      const verbose = await runBin(['--config-file', withPort, 'cell_v2', 'list_cells', '--verbose']);
      expect(verbose).toMatchObject({ code: 0, stderr: '' });
      // hostname is lower-cased, the password is not decoded, the template's own path stays.
      const rendered = ['templated', tmplUuid, 'rabbit://mq:MqS3cr3tMarker42@mq.example.org:5673/cellT', 'mysql+pymysql://nova:S3cr3tMarker42@db.example.org:3307/dbname', 'False'];
      const rows = raw().map(([n, u, t, db]) => [n, u, t, db, 'False']);
      expect(verbose.stdout).toBe(prettyTable(CELLS_HEADER, [...rows, rendered]));

      const masked = await runBin(['--config-file', withPort, 'cell_v2', 'list_cells']);
      expect(masked.code).toBe(0);
      expect(masked.stdout).toBe(
        prettyTable(CELLS_HEADER, [
          ...raw().map(([n, u, t, db]) => [n, u, novaMask(t), novaMask(db), 'False']),
          ['templated', tmplUuid, 'rabbit://mq:****@mq.example.org:5673/cellT', 'mysql+pymysql://nova:****@db.example.org:3307/dbname', 'False'],
        ]),
      );
      expect(masked.stdout).not.toContain('S3cr3tMarker42');

      // A missing port (or password) renders as Python's None.
      const noPort = conf('mysql+pymysql://nova:S3cr3tMarker42@db.example.org/nova_cell1');
      const r = await runBin(['--config-file', noPort, 'cell_v2', 'list_cells', '--verbose']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/\| +mysql\+pymysql:\/\/nova:S3cr3tMarker42@db\.example\.org:None\/dbname +\|/);
    });
  }
});
