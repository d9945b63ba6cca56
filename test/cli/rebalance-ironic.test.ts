// compute_node rebalance with ironic truth (--ironic-source api|file,
// issue 16), through the built binary on SQLite and MariaDB: the conductor
// group of a node whose service died comes from Ironic, not from its host's
// partition; a group that no nova-compute serves is refused; a node that
// Ironic does not list is not re-homed but named for cleanup_orphans; the
// scope options keep working; an Ironic that fails changes nothing. The
// Ironic API is the local fake of test/helpers/fake-ironic.ts.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { runBin, type CliResult } from '../helpers/cli.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { resetPages, startFakeIronic, type FakeIronic, type FakeNode } from '../helpers/fake-ironic.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { addComputeService, addIronicNode } from '../../src/sandbox/builders.js';
import { DAY, HOUR, scenarioClock } from '../../src/sandbox/clock.js';
import { IRONIC_FAILOVER } from '../../src/sandbox/scenarios/ironic-failover.js';

const F = IRONIC_FAILOVER;
/** The scenario's failed-over node: its newest duplicate's host is up, so it goes there whatever Ironic says. */
const N = F.nodeUuid;
const [DEAD, LIVE] = F.hosts;
/** A node of the dead host without instance nor duplicate: only a ring can say where it goes. */
const X = '3c0a5e1d-7b2f-4d6a-9e8c-1f2a3b4c5d6e';
/** A node of the cg-b host, so that the host is a ring member (Nova's ring counts hosts with ironic nodes). */
const Y = '4d1b6f2e-8c3a-4e7b-8f9d-2a3b4c5d6e7f';
const CGB_HOST = 'ironic-compute-b';

interface Doc {
  units: Array<{ id: string; title: string }>;
  refused: Array<{ subject: string; reason: string; suggestion?: string }>;
  ironic_source?: unknown;
}

/** The plan contract (schemas/plan.schema.json) holds with ironic_source beside its keys. */
const planSchema = new Ajv({ allErrors: true, strict: true, strictRequired: false }).compile(JSON.parse(readFileSync(fileURLToPath(new URL('../../schemas/plan.schema.json', import.meta.url)), 'utf8')) as object);

function expectPlanContract(r: CliResult): void {
  expect(planSchema(JSON.parse(r.stdout)), JSON.stringify(planSchema.errors)).toBe(true);
}

function doc(r: CliResult): Doc {
  return JSON.parse(r.stdout) as Doc;
}

function ironic(groupOfX: string | undefined): FakeNode[] {
  return [
    { uuid: N, instance_uuid: F.server.uuid, provision_state: 'active', conductor_group: '' },
    { uuid: Y, provision_state: 'available', conductor_group: 'cg-b' },
    ...(groupOfX === undefined ? [] : [{ uuid: X, provision_state: 'available', conductor_group: groupOfX }]),
  ];
}

async function hostOf(d: TestDeployment, uuid: string): Promise<string> {
  return ((await d.knex('cell1')('compute_nodes').where({ uuid, deleted: 0 }).first()) as { host: string }).host;
}

let fake: FakeIronic;
beforeAll(async () => {
  fake = await startFakeIronic();
});
afterAll(async () => {
  await fake.close();
});

describeEachDialect('compute_node rebalance with ironic truth', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    fake.nodes = ironic('cg-b');
    fake.fault = { kind: 'none' };
    fake.pageSize = 2;
    fake.maxVersion = '1.81';
    fake.requests.length = 0;
    resetPages(fake);
    d = await createTestDeployment(dialect, 'ironic-failover', 'ri');
    const clock = scenarioClock();
    const cell = d.knex('cell1');
    await addComputeService(cell, { uuid: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', host: CGB_HOST, clock, age: 30 * DAY });
    await addIronicNode(cell, d.knex('placement'), { nodeUuid: X, host: DEAD, resourceClass: F.resourceClass, clock, age: 30 * DAY });
    await addIronicNode(cell, d.knex('placement'), { nodeUuid: Y, host: CGB_HOST, resourceClass: F.resourceClass, clock, age: 2 * HOUR });
    // The dead host and the scenario's live one serve the default group; cg-b has a host of its own.
    appendFileSync(d.confPath, ['[nova_reconcile]', `ironic_partitions = : ${DEAD}, ${LIVE}; cg-b: ${CGB_HOST}`, ''].join('\n'));
  });
  afterEach(async () => {
    await d.cleanup();
  });
  const api = (): void => appendFileSync(d.confPath, ['[ironic]', 'auth_type = none', `endpoint_override = ${fake.url}/baremetal`, 'api_max_retries = 0', ''].join('\n'));
  const rebalance = (...args: string[]): Promise<CliResult> => runBin([...d.args, 'compute_node', 'rebalance', '--format', 'json', ...args]);

  it("without ironic truth the dead host's partition decides; with the Ironic API the node's conductor group does, and --apply follows it", async () => {
    const blind = await rebalance();
    expect(blind.code, blind.stderr).toBe(3);
    expect(blind.stderr).toBe('');
    const unitX = doc(blind).units.find((u) => u.id.endsWith(`:${X}`));
    expect(unitX?.title).toContain(`from ${DEAD} to ${LIVE}`);
    expect(doc(blind).ironic_source).toBeUndefined();

    api();
    const before = await snapshotDeployment(d);
    const r = await rebalance();
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toBe(`ironic nodes: 3 from the Ironic API at ${fake.url}/baremetal (complete listing)\n`);
    const planned = doc(r);
    expect(planned.ironic_source).toEqual({ kind: 'api', location: `${fake.url}/baremetal`, nodes: 3 });
    expectPlanContract(r);
    expect(planned.refused).toEqual([]);
    expect(planned.units.find((u) => u.id.endsWith(`:${X}`))?.title).toContain(`from ${DEAD} to ${CGB_HOST}`);
    expect(planned.units.find((u) => u.id.endsWith(`:${N}`))?.title).toContain(`to ${LIVE}`);
    expect(await snapshotDeployment(d)).toEqual(before);

    const text = await runBin([...d.args, 'compute_node', 'rebalance']);
    expect(text.stdout).toContain(`conductor group "cg-b"`);

    const applied = await rebalance('--apply');
    expect(applied.code, applied.stderr).toBe(4);
    expectPlanContract(applied);
    expect(doc(applied).ironic_source).toEqual({ kind: 'api', location: `${fake.url}/baremetal`, nodes: 3 });
    expect(await hostOf(d, X)).toBe(CGB_HOST);
    expect(await hostOf(d, N)).toBe(LIVE);
    const again = await rebalance();
    expect(again.code, again.stdout).toBe(0);
  });

  it('[ironic] conductor_group (Nova 28.0.0+) with peer_list re-homes exactly as partition_key, its old name, does; without either the ring is every live service', async () => {
    const base = readFileSync(d.confPath, 'utf8').replace(/\[nova_reconcile\]\nironic_partitions = [^\n]*\n/, '');
    const planWith = async (ironicLines: readonly string[]): Promise<unknown> => {
      writeFileSync(d.confPath, base + ['[ironic]', 'auth_type = none', `endpoint_override = ${fake.url}/baremetal`, 'api_max_retries = 0', ...ironicLines, ''].join('\n'));
      const r = await rebalance();
      expect(r.code, r.stderr).toBe(3);
      return doc(r).units;
    };
    const byNewName = await planWith(['conductor_group = cg-b', `peer_list = ${CGB_HOST}`]);
    const byOldName = await planWith(['partition_key = cg-b', `peer_list = ${CGB_HOST}`]);
    const bothNewWins = await planWith(['partition_key = cg-x', 'conductor_group = cg-b', `peer_list = ${CGB_HOST}`]);
    const neither = await planWith([]);
    expect(byNewName).toEqual(byOldName);
    expect(bothNewWins).toEqual(byOldName);
    expect((byNewName as Doc['units']).find((u) => u.id.endsWith(`:${X}`))?.title).toContain(`to ${CGB_HOST}`);
    // The option is what makes the difference: without it X hashes over every live ironic service.
    expect(neither).not.toEqual(byNewName);
  });

  it('the same from --ironic-nodes FILE with its Conductor Group column', async () => {
    const file = join(d.dir, 'nodes.json');
    writeFileSync(
      file,
      JSON.stringify(fake.nodes.map((n) => ({ UUID: n.uuid, 'Instance UUID': n.instance_uuid ?? null, Maintenance: false, 'Provisioning State': n.provision_state, 'Conductor Group': n.conductor_group }))),
    );
    const r = await rebalance('--ironic-nodes', file);
    expect(r.code, r.stderr).toBe(3);
    expect(doc(r).ironic_source).toEqual({ kind: 'file', location: file, nodes: 3 });
    expect(doc(r).units.find((u) => u.id.endsWith(`:${X}`))?.title).toContain(`from ${DEAD} to ${CGB_HOST}`);
    // A file that does not list X: X is refused, N still planned.
    writeFileSync(file, [N, Y].join('\n') + '\n');
    const gone = await rebalance('--ironic-source', 'file', '--ironic-nodes', file);
    expect(gone.code, gone.stderr).toBe(3);
    expect(doc(gone).units.map((u) => u.id)).toEqual([`rebalance:${d.dbs.cellUuids.cell1}:${N}`]);
    expect(doc(gone).refused).toEqual([
      {
        subject: `ironic node ${X} in cell cell1`,
        reason: `--ironic-nodes ${file} does not list it (2 nodes): it is gone from Ironic, so it is not re-homed; its compute node(s) are orphans`,
        suggestion: `nova-reconcile --config-file ${d.confPath} compute_node cleanup_orphans --ironic-nodes ${file} --node ${X}`,
      },
    ]);
  });

  it('a node Ironic does not list is not re-homed but named for cleanup_orphans; --apply re-homes the others (exit 5)', async () => {
    api();
    fake.nodes = ironic(undefined);
    const r = await rebalance();
    expect(r.code, r.stderr).toBe(3);
    const planned = doc(r);
    expect(planned.units.map((u) => u.id)).toEqual([`rebalance:${d.dbs.cellUuids.cell1}:${N}`]);
    expect(planned.refused).toHaveLength(1);
    expect(planned.refused[0]?.reason).toBe(`the Ironic API at ${fake.url}/baremetal does not list it (2 nodes): it is gone from Ironic, so it is not re-homed; its compute node(s) are orphans`);
    // No --ironic-nodes: cleanup_orphans reads [ironic] itself.
    expect(planned.refused[0]?.suggestion).toBe(`nova-reconcile --config-file ${d.confPath} compute_node cleanup_orphans --node ${X}`);

    const applied = await rebalance('--apply');
    expect(applied.code, applied.stderr).toBe(5);
    expect(await hostOf(d, X)).toBe(DEAD);
    expect(await hostOf(d, N)).toBe(LIVE);
    // cleanup_orphans takes it, from the same source.
    const orphans = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--node', X, '--format', 'json']);
    expect(orphans.code, orphans.stderr).toBe(3);
    expect(JSON.stringify(JSON.parse(orphans.stdout))).toContain(X);
  });

  it('a conductor group that no nova-compute serves is refused, not hashed over another group', async () => {
    api();
    fake.nodes = ironic('cg-x');
    const r = await rebalance('--apply');
    expect(r.code, r.stderr).toBe(5);
    const refused = doc(r).refused;
    expect(refused).toHaveLength(1);
    expect(refused[0]?.subject).toBe(`ironic node ${X} in cell cell1`);
    expect(refused[0]?.reason).toContain(`Ironic puts it in conductor group "cg-x", which no nova-compute of [nova_reconcile] ironic_partitions serves`);
    expect(await hostOf(d, X)).toBe(DEAD);
    expect(await hostOf(d, N)).toBe(LIVE);
  });

  it('--node, --host, --cell and --max-count select among the planned nodes with the Ironic API', async () => {
    api();
    const byNode = await rebalance('--node', X);
    expect(byNode.code, byNode.stderr).toBe(3);
    expect(doc(byNode).units.map((u) => u.id)).toEqual([`rebalance:${d.dbs.cellUuids.cell1}:${X}`]);
    const byHost = await rebalance('--host', CGB_HOST);
    expect(byHost.code, byHost.stderr).toBe(0);
    expect(doc(byHost).units).toEqual([]);
    const byCell = await rebalance('--cell', 'cell2');
    expect(byCell.code, byCell.stderr).toBe(0);
    // Two units on the dead host (N's canonical row and X): one now, one left for a later run.
    const limited = await rebalance('--host', DEAD, '--max-count', '1', '--apply');
    expect(limited.code, limited.stderr).toBe(4);
    expect((JSON.parse(limited.stdout) as { deferred_units: number }).deferred_units).toBe(1);
    expect([await hostOf(d, N), await hostOf(d, X)].filter((h) => h === DEAD)).toHaveLength(1);
    const rest = await rebalance('--host', DEAD, '--max-count', '1', '--apply');
    expect(rest.code, rest.stderr).toBe(4);
    expect([await hostOf(d, N), await hostOf(d, X)]).toEqual([LIVE, CGB_HOST]);
  });

  it("[ironic] shard with [DEFAULT] host: that compute owns every node of its shard and takes no node of another shard", async () => {
    const shardConf = (host: string | undefined): void =>
      appendFileSync(
        d.confPath,
        [...(host === undefined ? [] : ['[DEFAULT]', `host = ${host}`]), '[ironic]', 'auth_type = none', `endpoint_override = ${fake.url}/baremetal`, 'api_max_retries = 0', 'shard = s1', ''].join('\n'),
      );
    fake.maxVersion = '1.82';
    // X is in the default conductor group, whose ring alone would give it to LIVE.
    const nodes = (shardOfX: string): FakeNode[] => ironic('').map((n) => ({ ...n, shard: n.uuid === X ? shardOfX : 's0' }));
    fake.nodes = nodes('s1');
    const base = readFileSync(d.confPath, 'utf8');
    shardConf(CGB_HOST);
    const owned = await rebalance();
    expect(owned.code, owned.stderr).toBe(3);
    const unit = doc(owned).units.find((u) => u.id.endsWith(`:${X}`));
    expect(unit?.title).toContain(`from ${DEAD} to ${CGB_HOST}`);
    const text = await runBin([...d.args, 'compute_node', 'rebalance']);
    expect(text.stdout).toContain(`Ironic puts it in shard "s1", which ${CGB_HOST} serves alone ([ironic] shard)`);

    // X in another shard, and LIVE is the shard's compute: LIVE does not take it, and no other up host of its group is left.
    writeFileSync(d.confPath, base);
    shardConf(LIVE);
    fake.nodes = nodes('s2');
    const other = await rebalance();
    expect(other.code, other.stderr).toBe(3);
    expect(doc(other).units.map((u) => u.id)).not.toContain(`rebalance:${d.dbs.cellUuids.cell1}:${X}`);
    expect(doc(other).refused.map((r) => r.subject)).toEqual([`ironic node ${X} in cell cell1`]);
    expect(doc(other).refused[0]?.reason).toContain('can take it over');

    // A shard without [DEFAULT] host: which compute owns it would be a guess, so its node is refused (not an error: nova-manage reads the same file).
    writeFileSync(d.confPath, base);
    shardConf(undefined);
    fake.nodes = nodes('s1');
    const guess = await rebalance();
    expect(guess.code, guess.stderr).toBe(3);
    expect(doc(guess).refused.map((r) => r.subject)).toEqual([`ironic node ${X} in cell cell1`]);
    expect(doc(guess).refused[0]?.reason).toContain('sets no [DEFAULT] host');
    const listHosts = await runBin([...d.args, 'cell_v2', 'list_hosts']);
    expect(listHosts.code, listHosts.stderr).toBe(0);
  });

  it('an Ironic that fails (HTTP 500) or --ironic-source api without [ironic]: exit 2, one line, nothing changed', async () => {
    const before = await snapshotDeployment(d);
    const none = await runBin([...d.args, 'compute_node', 'rebalance', '--ironic-source', 'api', '--apply']);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(none.stderr).toContain('--ironic-source api needs nova.conf [ironic]');
    api();
    fake.fault = { kind: 'status', status: 500 };
    const r = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^nova-reconcile: error: cannot list the ironic nodes from the Ironic API at http:\/\/127\.0\.0\.1:\d+: HTTP 500/);
    const misuse = await rebalance('--ironic-source', 'api', '--ironic-nodes', join(d.dir, 'x.json'));
    expect(misuse.code).toBe(127);
    expect(await snapshotDeployment(d)).toEqual(before);
  });
});
