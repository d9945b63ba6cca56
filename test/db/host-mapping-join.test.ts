// discover_hosts finds hosts without a mapping by one join on the cell's
// server when the API and cell databases are proved to share it
// (db/host-mapping-join.ts), else by reading both tables. The two must give
// the same answer: each scenario below runs three times on the same state,
// once joined (the cells reached as root, on the API's server), once as a
// user who cannot see the API database, once with the cell's host columns
// in another collation, once as a user who sees host_mappings but may only
// insert into it (the join itself fails and falls back), and stdout, stderr, exit code and the rows that
// result must agree, and hold what nova-behaviour says they hold. The
// --debug log says which way each run went, so that the join is known to
// have run at all. A copy of the API database on another server is the
// subject of cells-on-servers.test.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateScale, resetDiscovery } from '../../src/sandbox/scale-generator.js';
import { createScratchDeployment, parseServer, serverKnex, type ScratchDeployment } from '../../bench/scratch-deployment.js';
import { runBin } from '../helpers/cli.js';
import { describeMysql, MYSQL_URL } from '../helpers/mysql.js';

const HOSTS_PER_CELL = 12;
type Variant = 'joined' | 'user without the API database' | 'host columns in utf8mb3_bin' | 'user who may only insert into host_mappings';
const VARIANTS: readonly Variant[] = ['joined', 'user without the API database', 'host columns in utf8mb3_bin', 'user who may only insert into host_mappings'];

describeMysql('discover_hosts: the join on the cell\'s server and the two reads agree [mariadb]', () => {
  const main = parseServer(MYSQL_URL);
  const user = `nrjoin_${randomBytes(3).toString('hex')}`;
  const inserter = `${user}_i`;
  const password = randomBytes(8).toString('hex');
  let d: ScratchDeployment;
  let dir: string;
  /** Each cell's database_connection as created (root). */
  let rootUrls: Map<number, string>;

  beforeAll(async () => {
    d = await createScratchDeployment(main, 2);
    await generateScale(d.scaleDatabases, { hostsPerCell: HOSTS_PER_CELL, nodesPerHost: 1 });
    dir = mkdtempSync(join(tmpdir(), 'nr-join-'));
    const rows = (await d.api('cell_mappings').select('id', 'database_connection')) as Array<{ id: number; database_connection: string }>;
    rootUrls = new Map(rows.map((r) => [Number(r.id), r.database_connection]));
    const admin = serverKnex(main);
    try {
      for (const u of [user, inserter]) {
        await admin.raw(`CREATE USER ?@'%' IDENTIFIED BY ?`, [u, password]);
        for (const c of d.cells) await admin.raw(`GRANT ALL PRIVILEGES ON \`${c.database}\`.* TO ?@'%'`, [u]);
      }
      await admin.raw(`GRANT INSERT ON \`${d.apiDatabase}\`.host_mappings TO ?@'%'`, [inserter]);
    } finally {
      await admin.destroy();
    }
  });

  afterAll(async () => {
    const admin = serverKnex(main);
    for (const u of [user, inserter]) await admin.raw(`DROP USER IF EXISTS ?@'%'`, [u]).catch(() => undefined);
    await admin.destroy();
    await d?.drop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function setVariant(variant: Variant): Promise<void> {
    for (const c of d.cells) {
      const url = rootUrls.get(c.id) as string;
      const as = (u: string): string => url.replace(/^mysql\+pymysql:\/\/[^@]+@/, `mysql+pymysql://${u}:${password}@`);
      const connection = variant === 'user without the API database' ? as(user) : variant === 'user who may only insert into host_mappings' ? as(inserter) : url;
      await d.api('cell_mappings').where({ id: c.id }).update({ database_connection: connection });
      const collation = variant === 'host columns in utf8mb3_bin' ? 'utf8mb3_bin' : 'utf8mb3_general_ci';
      for (const table of ['compute_nodes', 'services']) await c.knex.raw(`ALTER TABLE ${table} MODIFY host varchar(255) COLLATE ${collation} DEFAULT NULL`);
    }
  }

  const cell = (i: number) => {
    const c = d.cells[i];
    if (c === undefined) throw new Error(`cell ${i} expected`);
    return c;
  };

  /**
   * From every host mapped by a first run: two mappings lost (their nodes
   * keep mapped = 1, bug 2085135), one re-cased with a trailing space, one
   * moved to cell2 while its node is unmapped again, and a service with no
   * node on a new host.
   */
  async function breakMappings(): Promise<{ lost: string[]; recased: string; foreign: string; serviceOnly: string }> {
    await resetDiscovery(d.scaleDatabases);
    const first = await runBin(['--config-file', d.confPath, 'cell_v2', 'discover_hosts']);
    expect(first.code, first.stderr).toBe(0);
    const hosts = ((await cell(0).knex('compute_nodes').select('host').orderBy('id')) as Array<{ host: string }>).map((r) => r.host);
    const [lostA, lostB, recased, foreign] = hosts;
    if (lostA === undefined || lostB === undefined || recased === undefined || foreign === undefined) throw new Error('hosts expected');
    await d.api('host_mappings').whereIn('host', [lostA, lostB]).del();
    await d.api('host_mappings').where({ host: recased }).update({ host: `${recased.toUpperCase()} ` });
    await d.api('host_mappings').where({ host: foreign }).update({ cell_id: cell(1).id });
    await cell(0).knex('compute_nodes').where({ host: foreign }).update({ mapped: 0 });
    const serviceOnly = 'service-only-1';
    await cell(0).knex('services').where({ host: serviceOnly }).del();
    await cell(0).knex.raw("INSERT INTO services (created_at, host, `binary`, topic, report_count, disabled, deleted, version) SELECT created_at, ?, `binary`, topic, report_count, disabled, deleted, version FROM services WHERE host = ?", [serviceOnly, lostA]);
    return { lost: [lostA, lostB], recased, foreign, serviceOnly };
  }

  async function state(): Promise<{ mappings: string[]; flags: string[] }> {
    const mappings = ((await d.api('host_mappings').select('host', 'cell_id').orderBy('host')) as Array<{ host: string; cell_id: number }>).map((r) => `${r.host}|${r.cell_id}`);
    const flags: string[] = [];
    for (const c of d.cells) for (const r of (await c.knex('compute_nodes').select('host', 'mapped').orderBy('id')) as Array<{ host: string; mapped: number }>) flags.push(`${c.name}:${r.host}=${r.mapped}`);
    return { mappings, flags };
  }

  async function runScenario(variant: Variant, args: readonly string[]) {
    await setVariant(variant);
    const broken = await breakMappings();
    const log = join(dir, `${variant.replace(/\W+/g, '-')}-${args.join('')}.log`);
    const r = await runBin(['--config-file', d.confPath, '--debug', '--log-file', log, 'cell_v2', 'discover_hosts', ...args]);
    const how = readFileSync(log, 'utf8')
      .split('\n')
      .flatMap((l) => /DEBUG .* cell ([0-9a-f-]{36}): hosts without a host mapping: (.*)$/.exec(l)?.slice(1, 3).join(' ') ?? []);
    return { broken, result: { code: r.code, stdout: r.stdout, stderr: r.stderr, ...(await state()) }, how };
  }

  for (const args of [['--verbose'], ['--by-service', '--verbose'], ['--format', 'json']] as ReadonlyArray<readonly string[]>) {
    it(`discover_hosts ${args.join(' ')}: the same output and rows whichever way the hosts are found`, async () => {
      const runs = [];
      for (const variant of VARIANTS) runs.push({ variant, ...(await runScenario(variant, args)) });
      const [joined, ...others] = runs;
      if (joined === undefined) throw new Error('runs expected');
      const table = args.includes('--by-service') ? 'services' : 'compute_nodes';
      expect(joined.how).toEqual(d.cells.map((c) => `${c.uuid} joined on the cell's server`));
      expect(others[0]?.how).toEqual(d.cells.map((c) => `${c.uuid} both tables read (the cell database's user cannot see ${d.apiDatabase}.host_mappings)`));
      expect(others[1]?.how).toEqual(d.cells.map((c) => `${c.uuid} both tables read (${table}.host is utf8mb3_bin and host_mappings.host is utf8mb3_general_ci)`));
      expect(others[2]?.how).toEqual(d.cells.map((c) => expect.stringMatching(new RegExp(`^${c.uuid} both tables read \\(the join failed: .*SELECT command denied`))));
      for (const o of others) expect({ variant: o.variant, ...o.result }).toEqual({ variant: o.variant, ...joined.result });

      // And what they agree on is nova's answer (nova-behaviour §1.7, §1.8).
      const { lost, recased, foreign, serviceOnly } = joined.broken;
      const r = joined.result;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`WARNING: host '${foreign}' has a compute service or node in cell ${cell(0).uuid} but is mapped to cell ${cell(1).uuid}`);
      expect(r.mappings).toContain(`${recased.toUpperCase()} |${cell(0).id}`);
      expect(r.mappings.filter((m) => m.startsWith(`${recased}|`))).toEqual([]);
      expect(r.mappings).toContain(`${foreign}|${cell(1).id}`);
      if (args.includes('--by-service')) {
        // Services are the candidates: the service-only host is mapped, and
        // so are the lost hosts (their services have no mapping).
        expect(r.mappings).toEqual(expect.arrayContaining([...lost, serviceOnly].map((h) => `${h}|${cell(0).id}`)));
        expect(r.stdout.match(/^Creating host mapping for service .*$/gm)).toEqual([...lost, serviceOnly].map((h) => `Creating host mapping for service ${h}`));
      } else {
        expect(r.mappings).toEqual(expect.arrayContaining(lost.map((h) => `${h}|${cell(0).id}`)));
        expect(r.mappings.filter((m) => m.startsWith(`${serviceOnly}|`))).toEqual([]);
        if (args.includes('--verbose')) expect(r.stdout.match(/^Creating host mapping for compute host '([^']+)'/gm)).toEqual(lost.map((h) => `Creating host mapping for compute host '${h}'`));
        else expect((JSON.parse(r.stdout) as { created: Array<{ host: string }> }).created.map((c) => c.host)).toEqual(lost);
      }
    });
  }
});
