// compute_node move (the bulk ironic_compute_node_move) through the built binary, on SQLite and MariaDB.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { insertComputeNode, insertHostMapping } from '../../src/sandbox/rows.js';
import { addComputeService } from '../../src/sandbox/builders.js';
import { DAY, HOUR, scenarioClock } from '../../src/sandbox/clock.js';
import { IRONIC_FAILOVER } from '../../src/sandbox/scenarios/ironic-failover.js';

const F = IRONIC_FAILOVER;
const N = F.nodeUuid;
const U2 = F.duplicateUuid;
const I = F.server.uuid;
const [DEAD, LIVE] = F.hosts;

interface MoveDoc {
  readonly changed: boolean;
  readonly nodes_moved: unknown[];
  readonly instances_moved: unknown[];
  readonly nodes_skipped: Array<{ node_uuid: string; reason: string }>;
}

async function retireDuplicate(d: TestDeployment): Promise<void> {
  const row = (await d.knex('cell1')('compute_nodes').where('uuid', U2).first()) as { id: number };
  await d.knex('cell1')('compute_nodes').update({ deleted: row.id, deleted_at: '2026-01-01 00:00:00' }).where('id', row.id);
}

async function hosts(d: TestDeployment): Promise<[string, number | null, string]> {
  const cn = (await d.knex('cell1')('compute_nodes').where({ uuid: N }).first()) as { host: string; service_id: number | null };
  const inst = (await d.knex('cell1')('instances').where('uuid', I).first()) as { host: string };
  return [cn.host, cn.service_id === null ? null : Number(cn.service_id), inst.host];
}

describeEachDialect('compute_node move', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'ironic-failover', 'mv');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('moves the nodes of a forced-down host and their instances, each in one transaction; JSON reports them', async () => {
    await retireDuplicate(d);
    const args = [...d.args, 'compute_node', 'move', '--from-host', DEAD, '--to-host', LIVE, '--format', 'json'];
    const dry = await runBin(args);
    expect(dry.code).toBe(3);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, changed: false, nodes_moved: [], nodes_skipped: [] });
    expect(await hosts(d)).toEqual([DEAD, null, DEAD]);

    const applied = await runBin([...args, '--apply']);
    expect(applied.code, applied.stderr).toBe(4);
    const doc = JSON.parse(applied.stdout) as MoveDoc;
    expect(doc).toMatchObject({
      changed: true,
      nodes_moved: [{ node_uuid: N, from_host: DEAD, to_host: LIVE }],
      instances_moved: [{ instance_uuid: I, node_uuid: N, from_host: DEAD, to_host: LIVE }],
      nodes_skipped: [],
    });
    const live = (await d.knex('cell1')('services').where('host', LIVE).first()) as { id: number };
    expect(await hosts(d)).toEqual([LIVE, Number(live.id), LIVE]);
    const again = await runBin([...args, '--apply']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ changed: false, nodes_moved: [], nodes_skipped: [] });
  });

  it('refuses, with reasons, a duplicate on the destination, a non-ironic node, and an up source', async () => {
    await insertComputeNode(d.knex('cell1'), { uuid: 'e1e1e1e1-0000-4000-8000-000000000001', host: DEAD, hypervisorHostname: 'kvm-0.example.org', hypervisorType: 'QEMU' });
    const r = await runBin([...d.args, 'compute_node', 'move', '--from-host', DEAD, '--to-host', LIVE, '--apply', '--format', 'json']);
    // Every node refused, nothing written: 3 (issue 13.4), not 5.
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.stdout) as MoveDoc;
    expect(doc.nodes_moved).toEqual([]);
    expect(doc.nodes_skipped.map((s) => [s.node_uuid, s.reason])).toEqual([
      [N, `destination ${LIVE} already has a live compute node for it (${U2}): a duplicate`],
      ['e1e1e1e1-0000-4000-8000-000000000001', 'it is a QEMU node, not an ironic node'],
    ]);
    expect(await hosts(d)).toEqual([DEAD, null, DEAD]);

    await retireDuplicate(d);
    await d.knex('cell1')('services').update({ forced_down: 0, last_seen_up: new Date().toISOString().slice(0, 19).replace('T', ' ') }).where('host', DEAD);
    const up = await runBin([...d.args, 'compute_node', 'move', '--node', N, '--to-host', LIVE, '--apply']);
    expect(up.code).toBe(3);
    expect(up.stdout).toContain(`source service ${DEAD} is up and not forced down`);
    expect(await hosts(d)).toEqual([DEAD, null, DEAD]);
  });

  it('a source that is down but not forced down needs --source-down-ok', async () => {
    await retireDuplicate(d);
    await d.knex('cell1')('services').update({ forced_down: 0 }).where('host', DEAD);
    const refused = await runBin([...d.args, 'compute_node', 'move', '--node', N, '--to-host', LIVE, '--apply']);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toContain('is down but not forced down');
    const moved = await runBin([...d.args, 'compute_node', 'move', '--node', N, '--to-host', LIVE, '--apply', '--source-down-ok']);
    expect(moved.code, moved.stdout).toBe(4);
    expect((await hosts(d))[2]).toBe(LIVE);
  });

  it('all or nothing: one refused node means nothing moves (exit 3) unless --skip-refused (exit 5); several --from-host; prints the service-delete follow-up', async () => {
    // A second dead, forced-down ironic host with one node, and a QEMU node on the first: refused.
    await retireDuplicate(d);
    const clock = scenarioClock();
    const DEAD2 = 'ironic-compute-2';
    const SVC2 = '3a9e4c1b-7d2f-4e8a-b5c6-0d1e2f3a4b5c';
    const N2 = '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a';
    const KVM = 'e1e1e1e1-0000-4000-8000-000000000001';
    await addComputeService(d.knex('cell1'), { uuid: SVC2, host: DEAD2, clock, age: 90 * DAY, lastHeartbeatAgo: 2 * HOUR, forcedDown: true });
    await insertHostMapping(d.knex('api'), { cellId: d.dbs.cellIds.cell1, host: DEAD2, createdAt: clock.ago(90 * DAY) });
    await insertComputeNode(d.knex('cell1'), { uuid: N2, host: DEAD2, hypervisorHostname: N2, hypervisorType: 'ironic', createdAt: clock.ago(30 * DAY) });
    await insertComputeNode(d.knex('cell1'), { uuid: KVM, host: DEAD, hypervisorHostname: 'kvm-0.example.org', hypervisorType: 'QEMU' });
    const hostOf = async (uuid: string): Promise<string> => ((await d.knex('cell1')('compute_nodes').where({ uuid, deleted: 0 }).first()) as { host: string }).host;
    const args = [...d.args, 'compute_node', 'move', '--from-host', DEAD, '--from-host', DEAD2, '--to-host', LIVE];

    const dry = await runBin(args);
    expect(dry.code).toBe(3);
    expect(dry.stdout).toContain('compute_node move: 2 unit(s), 2 change(s), 1 refused.');
    expect(dry.stdout).toContain('--apply would apply nothing: 1 item(s) are refused, and this command applies all or nothing');
    expect(dry.stdout).not.toContain('Re-run with --apply');

    const none = await runBin([...args, '--apply']);
    expect(none.code).toBe(3);
    expect(none.stdout).toContain('Nothing was applied:');
    expect(none.stdout).toContain('it is a QEMU node, not an ironic node');
    expect(none.stderr).not.toContain('journal:');
    expect([await hostOf(N), await hostOf(N2), await hostOf(KVM)]).toEqual([DEAD, DEAD2, DEAD]);

    const some = await runBin([...args, '--apply', '--skip-refused']);
    // Something moved and something did not: 5.
    expect(some.code, some.stderr).toBe(5);
    expect(some.stdout).toContain('applied 2 unit(s), skipped 0, refused 1.');
    // The apply names each unit's objects, as the dry run did.
    expect(some.stdout).toContain(`re-home compute node`);
    expect(some.stdout).toContain(`from host ${DEAD2} to ${LIVE}`);
    // ironic-compute-2 has no node left: delete its service through the API. ironic-compute-0 keeps the QEMU node.
    expect(some.stdout).toContain('Next: delete the source service(s) left without a node through the compute API');
    expect(some.stdout).toContain(`openstack --os-compute-api-version 2.53 compute service delete ${SVC2}    # ${DEAD2}`);
    expect(some.stdout).not.toContain(`# ${DEAD}\n`);
    expect([await hostOf(N), await hostOf(N2), await hostOf(KVM)]).toEqual([LIVE, LIVE, DEAD]);
  });

  it('refuses a forced-down or unmapped destination', async () => {
    await retireDuplicate(d);
    await d.knex('api')('host_mappings').delete().where('host', LIVE);
    const unmapped = await runBin([...d.args, 'compute_node', 'move', '--node', N, '--to-host', LIVE]);
    expect(unmapped.code).toBe(3);
    expect(unmapped.stdout).toContain(`destination ${LIVE} has no host mapping`);
    await d.knex('cell1')('services').update({ forced_down: 1 }).where('host', LIVE);
    const forced = await runBin([...d.args, 'compute_node', 'move', '--node', N, '--to-host', LIVE]);
    expect(forced.stdout).toContain(`destination ${LIVE} is forced down`);
  });
});

describeEachDialect('compute_node move: bad input', (dialect) => {
  let d: TestDeployment;
  beforeAll(async () => {
    d = await createTestDeployment(dialect, 'ironic-failover', 'mx');
  });
  afterAll(async () => {
    expect(await hosts(d)).toEqual([DEAD, null, DEAD]);
    await d.cleanup();
  });

  describe.each([
    ['a destination that is not a nova-compute service', ['--node', N, '--to-host', 'nope'], /--to-host nope is not a nova-compute service/],
    ['both --node and --from-host', ['--node', N, '--from-host', DEAD, '--to-host', LIVE], /give either --node \(repeatable\) or --from-host/],
    ['neither --node nor --from-host', ['--to-host', LIVE], /give either --node/],
    ['a malformed node uuid', ['--node', 'xyz', '--to-host', LIVE], /--node "xyz": not a valid UUID/],
    ['an unknown node uuid', ['--node', 'c0ffee00-0000-4000-8000-000000000000', '--to-host', LIVE], /no live compute node has this uuid/],
  ])('%s', (_name, args, message) => {
    it('→ exit 127, one line, no change', async () => {
      const r = await runBin([...d.args, 'compute_node', 'move', '--apply', ...args]);
      expect(r.code).toBe(127);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    });
  });
});
