// compute_node move (the bulk ironic_compute_node_move) through the built binary, on SQLite and MariaDB.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { insertComputeNode } from '../../src/sandbox/rows.js';
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

  it('skips, with reasons, a duplicate on the destination, a non-ironic node, and an up source; the others still move', async () => {
    await insertComputeNode(d.knex('cell1'), { uuid: 'e1e1e1e1-0000-4000-8000-000000000001', host: DEAD, hypervisorHostname: 'kvm-0.example.org', hypervisorType: 'QEMU' });
    const r = await runBin([...d.args, 'compute_node', 'move', '--from-host', DEAD, '--to-host', LIVE, '--apply', '--format', 'json']);
    expect(r.code).toBe(5);
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
    expect(up.code).toBe(5);
    expect(up.stdout).toContain(`source service ${DEAD} is up and not forced down`);
    expect(await hosts(d)).toEqual([DEAD, null, DEAD]);
  });

  it('a source that is down but not forced down needs --source-down-ok', async () => {
    await retireDuplicate(d);
    await d.knex('cell1')('services').update({ forced_down: 0 }).where('host', DEAD);
    const refused = await runBin([...d.args, 'compute_node', 'move', '--node', N, '--to-host', LIVE, '--apply']);
    expect(refused.code).toBe(5);
    expect(refused.stdout).toContain('is down but not forced down');
    const moved = await runBin([...d.args, 'compute_node', 'move', '--node', N, '--to-host', LIVE, '--apply', '--source-down-ok']);
    expect(moved.code, moved.stdout).toBe(4);
    expect((await hosts(d))[2]).toBe(LIVE);
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
