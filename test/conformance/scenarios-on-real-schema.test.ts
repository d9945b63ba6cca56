// Every scenario of src/sandbox/ loaded into databases that the real
// nova-manage and placement-manage built, and every nova-manage compatible
// command of ours run on them: no error, the exit codes nova would give, and
// rows that say the command did its job. Scenarios differ (some start with
// host mappings, flagged or soft-deleted nodes, hosts mapped to the wrong
// cell), so every expectation is computed from the rows before each command;
// a new scenario joins this tier by being listed in SCENARIOS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCENARIOS } from '../../src/sandbox/scenarios.js';
import { createRealDeployment, realNovaAvailable, realNovaSkipNotice, type RealDeployment } from './real-nova.js';
import {
  CELL0_UUID,
  collationKey,
  populateScenario,
  readComparedRows,
  realScenarioDatabases,
  runOurs,
  type ComparedRows,
  type NodeRow,
  type RealScenarioDatabases,
} from './real-scenario.js';

const available = realNovaAvailable();
const required = process.env['CI'] === 'true';
if (!available && !required) console.warn(`\n*** ${realNovaSkipNotice}\n`);

type CellName = 'cell0' | 'cell1' | 'cell2';
const CELLS: readonly CellName[] = ['cell0', 'cell1', 'cell2'];
const HOST_CELLS = ['cell1', 'cell2'] as const;

interface Liveness {
  /** Hosts of live nova-compute services, per cell. */
  readonly serviceHosts: Record<'cell1' | 'cell2', string[]>;
  /** Hosts with live instances, per cell (cell0 included: delete_host looks there too). */
  readonly instanceHosts: Record<CellName, string[]>;
}

async function liveness(k: RealScenarioDatabases['knex']): Promise<Liveness> {
  const pluck = (rows: { host: string | null }[]): string[] => [...new Set(rows.map((r) => r.host).filter((h): h is string => h !== null))];
  const out: Liveness = { serviceHosts: { cell1: [], cell2: [] }, instanceHosts: { cell0: [], cell1: [], cell2: [] } };
  for (const cell of HOST_CELLS) out.serviceHosts[cell] = pluck(await k[cell]('services').select('host').where({ deleted: 0, binary: 'nova-compute' }));
  for (const cell of CELLS) out.instanceHosts[cell] = pluck(await k[cell]('instances').select('host').where({ deleted: 0 }).whereNotNull('host'));
  return out;
}

/** The cell uuid a host is mapped to, by the collation's notion of equality. */
function mappingOf(rows: ComparedRows, host: string): string | undefined {
  return rows.mappings.find(([h]) => collationKey(h) === collationKey(host))?.[1];
}

/** Nodes that either discover path can act on: a host, and a mapped flag nova's query can see. */
function visibleNodes(rows: ComparedRows): Array<NodeRow & { readonly host: string }> {
  return rows.nodes.filter((n): n is NodeRow & { readonly host: string } => n.host !== null && n.mapped !== null);
}

/** Our stderr may carry only documented WARNING lines (a host mapped to another cell, nodes without a host). */
function expectOnlyWarnings(stderr: string, what: string): void {
  const lines = stderr.split('\n').filter((l) => l !== '');
  expect(lines.filter((l) => !l.startsWith('WARNING: ')), `${what}: stderr`).toEqual([]);
}

// Scenarios are independent (one deployment each): their suites run
// concurrently, the steps of one scenario in order.
describe.concurrent('our commands on scenarios loaded into real-Nova-built databases', () => {
  it.runIf(!available && required)('real Nova is installed (required when CI=true)', () => {
    throw new Error(realNovaSkipNotice);
  });

  (available ? describe.sequential : describe.skip).each(SCENARIOS.map((s) => ({ name: s.name })))('scenario $name', ({ name }) => {
    let d: RealDeployment;
    let s: RealScenarioDatabases;
    let live: Liveness;
    let populated: ComparedRows;

    beforeAll(async () => {
      d = await createRealDeployment(`scn_${name}`);
      s = await realScenarioDatabases(d);
    });

    afterAll(async () => {
      await s?.destroy();
      await d?.drop();
    });

    const uuidOf = (cell: CellName): string => d.cells[cell];
    const rows = (): Promise<ComparedRows> => readComparedRows(s.knex);

    it('populates into the real schema (strict sql_mode, real keys and foreign keys)', async () => {
      await populateScenario(s.dbs, name);
      live = await liveness(s.knex);
      populated = await rows();
      // Every mapping points at one of the three cells that create_cell / map_cell0 wrote.
      for (const [host, cell] of populated.mappings) expect([d.cells.cell0, d.cells.cell1, d.cells.cell2], host).toContain(cell);
    });

    it('list_cells and list_cells --verbose: exit 0, the three cells', async () => {
      for (const args of [['cell_v2', 'list_cells'], ['cell_v2', 'list_cells', '--verbose']]) {
        const r = await runOurs(d, args);
        expect(r.stderr, args.join(' ')).toBe('');
        expect(r.code, args.join(' ')).toBe(0);
        for (const uuid of [d.cells.cell0, d.cells.cell1, d.cells.cell2]) expect(r.stdout).toContain(` ${uuid} `);
      }
    });

    it('discover_hosts --cell_uuid cell0 --strict: exit 1, nothing changes', async () => {
      const r = await runOurs(d, ['cell_v2', 'discover_hosts', '--cell_uuid', CELL0_UUID, '--strict']);
      expect(r).toEqual({ stdout: '', stderr: '', code: 1 });
      expect(await rows()).toEqual(populated);
    });

    it('discover_hosts (node path) --verbose --strict: maps every unmapped host with a live node to its cell', async () => {
      const before = await rows();
      // Nova's candidates (mapped < 1) and ours' bug-2085135 addition (mapped = 1, no mapping): any visible node of an unmapped host.
      const fresh = visibleNodes(before).filter((n) => mappingOf(before, n.host) === undefined);
      const r = await runOurs(d, ['cell_v2', 'discover_hosts', '--verbose', '--strict']);
      expectOnlyWarnings(r.stderr, 'node path');
      expect(r.code).toBe(fresh.length > 0 ? 0 : 1);
      expect(r.stdout.startsWith('Found 3 cell mappings.\nSkipping cell0 since it does not contain hosts.\n')).toBe(true);
      const after = await rows();
      // Existing mappings are never re-pointed or removed.
      for (const m of before.mappings) expect(after.mappings).toContainEqual(m);
      for (const n of fresh) {
        expect(mappingOf(after, n.host), n.host).toBe(uuidOf(n.cell));
        expect(r.stdout).toContain(`Creating host mapping for compute host '${n.host}': `);
      }
      // Every visible node of a host mapped to the cell that holds it is flagged (DESIGN.md); others keep their flag.
      for (const n of visibleNodes(after)) {
        const was = before.nodes.find((b) => b.cell === n.cell && b.id === n.id);
        expect(n.mapped, `${n.cell} ${n.host} ${n.uuid}`).toBe(mappingOf(after, n.host) === uuidOf(n.cell) ? 1 : was?.mapped);
      }
    });

    it('discover_hosts --by-service --verbose --strict: maps every unmapped host with a live nova-compute service', async () => {
      const before = await rows();
      const fresh = HOST_CELLS.flatMap((cell) => live.serviceHosts[cell].map((host) => ({ cell, host }))).filter((x) => mappingOf(before, x.host) === undefined);
      const r = await runOurs(d, ['cell_v2', 'discover_hosts', '--by-service', '--verbose', '--strict']);
      expectOnlyWarnings(r.stderr, 'by-service');
      expect(r.code).toBe(fresh.length > 0 ? 0 : 1);
      const after = await rows();
      for (const m of before.mappings) expect(after.mappings).toContainEqual(m);
      for (const x of fresh) {
        expect(r.stdout).toContain(`Creating host mapping for service ${x.host}\n`);
        expect(mappingOf(after, x.host), x.host).toBe(uuidOf(x.cell));
      }
    });

    it('re-runs of both paths, and with --cell_uuid: exit 0, and --strict 1 (nothing left to map)', async () => {
      const paths: ReadonlyArray<readonly [string[], 'cell1' | 'cell2']> = [
        [[], 'cell1'],
        [['--by-service'], 'cell2'],
      ];
      for (const [extra, cell] of paths) {
        const again = await runOurs(d, ['cell_v2', 'discover_hosts', ...extra]);
        expectOnlyWarnings(again.stderr, `discover_hosts ${extra.join(' ')}`);
        expect({ stdout: again.stdout, code: again.code }, `discover_hosts ${extra.join(' ')}`).toEqual({ stdout: '', code: 0 });
        const before = await rows();
        const r = await runOurs(d, ['cell_v2', 'discover_hosts', '--cell_uuid', uuidOf(cell), '--strict', '--verbose', ...extra]);
        expectOnlyWarnings(r.stderr, `discover_hosts --cell_uuid ${cell} ${extra.join(' ')}`);
        expect(r.code).toBe(1);
        // Node path: nova's "Checking" line for each node still at mapped < 1 (hosts mapped to another cell), by id.
        const checking =
          extra.length > 0
            ? []
            : before.nodes
                .filter((n) => n.cell === cell && n.host !== null && n.mapped !== null && n.mapped < 1)
                .map((n) => `Checking host mapping for compute host '${n.host}': ${n.uuid}\n`);
        expect(r.stdout).toBe(`Getting computes from cell '${cell}': ${uuidOf(cell)}\n${checking.join('')}Found 0 unmapped computes in cell: ${uuidOf(cell)}\n`);
      }
    });

    it('list_hosts, with and without --cell_uuid: exit 0, one row per mapping', async () => {
      const now = await rows();
      const all = await runOurs(d, ['cell_v2', 'list_hosts']);
      expect(all.stderr).toBe('');
      expect(all.code).toBe(0);
      // rule, header, rule, rows..., rule
      expect(all.stdout.split('\n').length - 1).toBe(4 + now.mappings.length);
      for (const [host] of now.mappings) expect(all.stdout).toContain(` ${host} `);
      for (const cell of HOST_CELLS) {
        const one = await runOurs(d, ['cell_v2', 'list_hosts', '--cell_uuid', uuidOf(cell)]);
        expect(one.stderr).toBe('');
        expect(one.code).toBe(0);
        expect(one.stdout.split('\n').length - 1).toBe(4 + now.mappings.filter(([, c]) => c === uuidOf(cell)).length);
      }
    });

    it('delete_host on every mapped host, in its own cell: 4 with live instances, else 0 and the node flags reset', async () => {
      const unknown = await runOurs(d, ['cell_v2', 'delete_host', '--cell_uuid', d.cells.cell1, '--host', 'no-such-host']);
      expect(unknown).toEqual({ stdout: 'The host no-such-host was not found.\n', stderr: '', code: 2 });
      const before = await rows();
      const deleted: Array<{ host: string; cell: string }> = [];
      for (const [host, uuid] of before.mappings) {
        const cell = CELLS.find((c) => uuidOf(c) === uuid) ?? 'cell0';
        const busy = live.instanceHosts[cell].some((h) => collationKey(h) === collationKey(host));
        const r = await runOurs(d, ['cell_v2', 'delete_host', '--cell_uuid', uuid, '--host', host]);
        if (busy) {
          expect(r, host).toEqual({ stdout: `There are instances on the host ${host}.\n`, stderr: '', code: 4 });
        } else {
          expect(r, host).toEqual({ stdout: '', stderr: '', code: 0 });
          deleted.push({ host, cell: uuid });
        }
      }
      const after = await rows();
      expect(after.mappings).toEqual(before.mappings.filter(([h, c]) => !deleted.some((x) => x.host === h && x.cell === c)));
      for (const n of after.nodes) {
        const was = before.nodes.find((b) => b.cell === n.cell && b.id === n.id);
        const reset = deleted.some((x) => x.cell === uuidOf(n.cell) && n.host !== null && collationKey(x.host) === collationKey(n.host));
        expect(n.mapped, `${n.cell} ${n.host} ${n.uuid}`).toBe(reset ? 0 : was?.mapped);
      }
    });

    it('discover_hosts, both paths, maps the deleted hosts again', async () => {
      for (const extra of [[], ['--by-service']]) {
        const r = await runOurs(d, ['cell_v2', 'discover_hosts', ...extra]);
        expectOnlyWarnings(r.stderr, `discover_hosts ${extra.join(' ')}`);
        expect({ stdout: r.stdout, code: r.code }).toEqual({ stdout: '', code: 0 });
      }
      const after = await rows();
      const hosts = [...HOST_CELLS.flatMap((cell) => live.serviceHosts[cell]), ...visibleNodes(after).map((n) => n.host)];
      for (const host of hosts) expect(mappingOf(after, host), host).toBeDefined();
    });
  });
});
