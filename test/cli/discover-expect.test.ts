// cell_v2 discover_hosts --expect/--wait through the built binary, on SQLite
// and MariaDB. A background writer registers two expected nova-compute
// services (service row, then compute node, as nova-compute does at start)
// 5 and 7 s after a --wait 60 run started: the run maps all three expected
// hosts and exits 0. A host that never registers makes a short wait exit 1,
// naming it, with the mappings made on the way kept.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, hostMappings, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_HOSTS } from '../../src/sandbox/scenarios/libvirt.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { addLibvirtHost } from '../../src/sandbox/builders.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { insertService } from '../../src/sandbox/rows.js';

const ALL_MAPPINGS = LIBVIRT_HOSTS.map((h) => [h.host, CELL[h.cell]]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ExpectDoc {
  ok: boolean;
  created: Array<{ host: string; cell_uuid: string }>;
  expected: string[];
  mapped: string[];
  missing: string[];
  waited_s: number;
  passes: number;
  unmapped_services: Array<{ host: string; cell_uuid: string }>;
  warnings: string[];
}

describeEachDialect('cell_v2 discover_hosts --expect/--wait', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'expect');
  });
  afterEach(async () => {
    await d.cleanup();
  });
  const register = async (cell: 'cell1' | 'cell2', host: string, n: number) =>
    addLibvirtHost(d.knex(cell), d.knex('placement'), {
      host,
      serviceUuid: `7c0a3f1e-0000-4000-8000-00000000000${n}`,
      nodeUuid: `7c0a3f1e-1111-4000-8000-00000000000${n}`,
      hypervisorHostname: `${host}.sandbox.example.org`,
      hostIp: `192.0.2.${100 + n}`,
      clock: scenarioClock(),
    });

  it('two expected services register 5 and 7 s after a --wait 60 run starts: all three are mapped, exit 0', async () => {
    const run = runBin([...d.args, 'cell_v2', 'discover_hosts', '--expect', 'compute-1,late-a', '--expect', 'late-b', '--wait', '60', '--interval', '1', '--format', 'json'], { timeoutMs: 90_000 });
    const writer = (async () => {
      await sleep(5000);
      await register('cell1', 'late-a', 1);
      await sleep(2000);
      await register('cell2', 'late-b', 2);
    })();
    const [r] = await Promise.all([run, writer]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as ExpectDoc;
    expect(doc).toMatchObject({ ok: true, expected: ['compute-1', 'late-a', 'late-b'], mapped: ['compute-1', 'late-a', 'late-b'], missing: [] });
    // The writer's clock starts at spawn, the run's a little later (node start-up).
    expect(doc.waited_s).toBeGreaterThanOrEqual(5);
    expect(doc.waited_s).toBeLessThan(60);
    expect(doc.passes).toBeGreaterThan(1);
    // Every mapping made on the way, each once, in the pass that made it.
    expect(doc.created.map((c) => c.host).sort()).toEqual([...LIBVIRT_HOSTS.map((h) => h.host), 'late-a', 'late-b'].sort());
    expect(await hostMappings(d)).toEqual(
      [...ALL_MAPPINGS, ['late-a', CELL.cell1], ['late-b', CELL.cell2]].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    const nodes = (await d.knex('cell1')('compute_nodes').where('host', 'late-a').select('mapped')) as Array<{ mapped: number }>;
    expect(nodes.map((n) => Number(n.mapped))).toEqual([1]);
  }, 120_000);

  it('one expected host never registers: exit 1 after the wait, naming it; the mappings made are kept', async () => {
    const file = join(d.dir, 'expected-hosts');
    writeFileSync(file, '# computes of this deploy\ncompute-4\n\nnever-1  # not coming\n');
    const started = Date.now();
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--expect', 'compute-1', '--expect-file', file, '--wait', '3', '--interval', '1']);
    expect(r.code).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^ERROR: 1 expected host\(s\) not mapped after [0-9.]+ s: never-1\n$/);
    expect(await hostMappings(d)).toEqual(ALL_MAPPINGS);

    // Already mapped: one pass, exit 0, nothing printed (as a nova-manage run that finds nothing new).
    expect(await runBin([...d.args, 'cell_v2', 'discover_hosts', '--expect', 'COMPUTE-1,compute-5', '--wait', '30'])).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // --verbose prints the first pass as nova-manage would; --strict still needs something new.
    const verbose = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--expect', 'compute-1', '--verbose', '--strict']);
    expect(verbose.code).toBe(1);
    expect(verbose.stdout.split('\n')[0]).toBe('Found 3 cell mappings.');

    // The JSON document of a run that exits 1 says ok: false, with the missing host (issue 40).
    const timedOut = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--expect', 'compute-1,never-1', '--wait', '1', '--interval', '1', '--format', 'json']);
    expect(timedOut.code).toBe(1);
    expect(JSON.parse(timedOut.stdout)).toMatchObject({ ok: false, expected: ['compute-1', 'never-1'], mapped: ['compute-1'], missing: ['never-1'] });
  });

  it('the JSON document lists a nova-compute service left unmapped by the run as a warning (an ironic service with no node, without --by-service)', async () => {
    await insertService(d.knex('cell2'), { uuid: '9a1b2c3d-0000-4000-8000-000000000001', host: 'ironic-7', lastSeenUp: scenarioClock().ago(5) });
    const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', '--format', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as ExpectDoc;
    expect(doc.unmapped_services).toEqual([{ host: 'ironic-7', cell_uuid: CELL.cell2 }]);
    expect(doc.warnings).toEqual([`nova-compute service on host ironic-7 in cell ${CELL.cell2} has no host mapping and was not mapped by this run; see --by-service`]);
    const again = JSON.parse((await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service', '--format', 'json'])).stdout) as ExpectDoc;
    expect(again.unmapped_services).toEqual([]);
    expect(again.created).toEqual([{ host: 'ironic-7', cell_uuid: CELL.cell2 }]);
  });

  it('bad values are usage errors (exit 2) and change nothing', async () => {
    for (const args of [['--expect', 'a', '--wait', 'soon'], ['--expect', 'a', '--wait', '5', '--interval', '0'], ['--expect', ','], ['--expect-file', join(d.dir, 'missing')], ['--expect', 'a', '--wait', '5', '--dry-run']]) {
      const r = await runBin([...d.args, 'cell_v2', 'discover_hosts', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^nova-reconcile: error: /);
    }
    expect(await hostMappings(d)).toEqual([]);
  });
});
