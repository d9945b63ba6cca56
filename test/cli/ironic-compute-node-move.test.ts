// db ironic_compute_node_move (nova-manage master) through the built binary,
// on SQLite and MariaDB: every precondition in nova-manage's order with its
// message ("An error has occurred:" and one line, exit 255, nothing changed),
// then the move itself, journaled and undoable.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { startProxy } from '../helpers/tcp-proxy.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { insertComputeNode } from '../../src/sandbox/rows.js';
import { IRONIC_FAILOVER } from '../../src/sandbox/scenarios/ironic-failover.js';

const F = IRONIC_FAILOVER;
const N = F.nodeUuid;
const U2 = F.duplicateUuid;
const I = F.server.uuid;
const [DEAD, LIVE] = F.hosts;
const KVM = 'e1e1e1e1-0000-4000-8000-000000000001';

async function cellDump(k: Knex): Promise<string[]> {
  const out: string[] = [];
  for (const t of ['compute_nodes', 'instances', 'services']) for (const r of (await k(t).select('*').orderBy('id')) as unknown[]) out.push(`${t}:${JSON.stringify(r)}`);
  return out;
}

describeEachDialect('db ironic_compute_node_move', (dialect) => {
  let d: TestDeployment;
  let cell: Knex;
  beforeAll(async () => {
    d = await createTestDeployment(dialect, 'ironic-failover', 'im');
    cell = d.knex('cell1');
    await insertComputeNode(cell, { uuid: KVM, host: DEAD, hypervisorHostname: 'kvm-0.example.org', hypervisorType: 'QEMU' });
  });
  afterAll(async () => {
    await d.cleanup();
  });

  const move = (...args: string[]) => runBin([...d.args, 'db', 'ironic_compute_node_move', ...args]);
  const moveNode = (uuid: string, host: string) => move('--ironic-node-uuid', uuid, '--destination-host', host);

  async function expectError(run: Promise<{ code: number; stdout: string }>, message: string): Promise<void> {
    const before = await cellDump(cell);
    const r = await run;
    expect(r.stdout).toBe(`An error has occurred:\n${message}\n`);
    expect(r.code).toBe(255);
    expect(await cellDump(cell)).toEqual(before);
  }

  it('checks the preconditions in nova-manage order, then moves node and instance in one transaction', async () => {
    await expectError(move('--destination-host', LIVE), 'Missing arguments: ironic_node_uuid');
    await expectError(move(), 'Missing arguments: ironic_node_uuid, destination_host');
    await expectError(moveNode(N, 'nope'), 'Compute host nope could not be found.');
    await cell('services').update({ forced_down: 1 }).where('host', LIVE);
    await expectError(moveNode(N, LIVE), 'Destination compute is forced down!');
    await cell('services').update({ forced_down: 0 }).where('host', LIVE);
    await expectError(moveNode('c0ffee00-0000-4000-8000-000000000000', LIVE), 'Compute host c0ffee00-0000-4000-8000-000000000000 could not be found.');
    await expectError(moveNode('not-a-uuid', LIVE), 'Compute host not-a-uuid could not be found.');
    await expectError(moveNode(KVM, LIVE), `Compute node ${KVM} is not an ironic node (hypervisor_type QEMU); only ironic nodes can be moved this way.`);
    // Zed never fills compute_nodes.service_id, so master's lookup by it fails on Zed rows.
    await expectError(moveNode(N, LIVE), 'Service None could not be found.');
    const dead = (await cell('services').where('host', DEAD).first()) as { id: number };
    const live = (await cell('services').where('host', LIVE).first()) as { id: number };
    await cell('compute_nodes').update({ service_id: dead.id }).where('uuid', N);
    await cell('services').update({ forced_down: 0 }).where('host', DEAD);
    await expectError(moveNode(N, LIVE), 'Source service is not yet forced down!');
    await cell('services').update({ forced_down: 1 }).where('host', DEAD);
    const row = (await cell('instances').where('uuid', I).first()) as Record<string, unknown>;
    await cell('instances').insert({ ...row, id: undefined, uuid: 'a1b2c3d4-0000-4000-8000-00000000aaaa', reservation_id: 'r-second' });
    await expectError(
      moveNode(N, LIVE),
      'Found an ironic host with more than one instance! Please delete all Nova instances that do not match the instance uuid recorded on the Ironic node.',
    );
    await cell('instances').delete().where('uuid', 'a1b2c3d4-0000-4000-8000-00000000aaaa');
    // The duplicate U2 on the destination would violate the (host, hypervisor_hostname, deleted) key.
    await expectError(moveNode(N, LIVE), `host ${LIVE} already has a live compute node for ${N}; nothing was changed.`);
    const u2 = (await cell('compute_nodes').where('uuid', U2).first()) as { id: number };
    await cell('compute_nodes').update({ deleted: u2.id, deleted_at: '2026-01-01 00:00:00' }).where('id', u2.id);

    const before = await cellDump(cell);
    const journal = join(d.dir, 'move.jsonl');
    const ok = await move('--ironic-node-uuid', N, '--destination-host', LIVE, '--journal', journal);
    expect(ok).toMatchObject({ code: 0, stdout: '' });
    expect(ok.stderr).toBe(`journal: ${journal}\n`);
    const cn = (await cell('compute_nodes').where('uuid', N).first()) as { host: string; service_id: number; hypervisor_hostname: string };
    expect([cn.host, Number(cn.service_id), cn.hypervisor_hostname]).toEqual([LIVE, Number(live.id), N]);
    const inst = (await cell('instances').where('uuid', I).first()) as { host: string; node: string };
    expect([inst.host, inst.node]).toEqual([LIVE, N]);
    // Placement is not touched: the provider uuid is the node uuid.
    expect(Number(((await d.knex('placement')('resource_providers').where('uuid', N).first()) as { generation: number }).generation)).toBe(4);

    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
    expect(undo.code, undo.stdout + undo.stderr).toBe(4);
    expect(await cellDump(cell)).toEqual(before);
  });
});

describeMysql('db ironic_compute_node_move: the connection goes while its COMMIT is in flight', () => {
  it('exit 255 with one line saying the outcome is unknown, the hint naming the journal; the server did move the node, undo says so (exit 3) and moves it back', async () => {
    const d = await createTestDeployment('mysql', 'ironic-failover', 'ic');
    const api = d.knex('api');
    const direct = d.url('cell1');
    try {
      const cell = d.knex('cell1');
      // What the test above does step by step: a movable node (its service known and forced down, the duplicate gone).
      const dead = (await cell('services').where('host', DEAD).first()) as { id: number };
      await cell('compute_nodes').update({ service_id: dead.id }).where('uuid', N);
      await cell('services').update({ forced_down: 1 }).where('host', DEAD);
      const u2 = (await cell('compute_nodes').where('uuid', U2).first()) as { id: number };
      await cell('compute_nodes').update({ deleted: u2.id, deleted_at: '2026-01-01 00:00:00' }).where('id', u2.id);
      const before = await cellDump(cell);

      // The cell database through a proxy that lets the first COMMIT reach the server and withholds its answer.
      const target = new URL(direct.replace(/^mysql\+pymysql:/, 'mysql:'));
      const proxy = await startProxy({ host: target.hostname, port: Number(target.port || 3306) }, () => true);
      const viaProxy = direct.replace(/@[^/]+\//, `@127.0.0.1:${proxy.port}/`);
      expect(viaProxy).not.toBe(direct);
      await api('cell_mappings').update({ database_connection: viaProxy }).where('uuid', d.dbs.cellUuids.cell1);
      const conf = join(d.dir, 'via-proxy.conf');
      writeFileSync(conf, readFileSync(d.confPath, 'utf8').replace(`connection = ${direct}\n`, `connection = ${viaProxy}\n`));
      const journal = join(d.dir, 'cut.jsonl');
      const r = await runBin(['--config-file', conf, 'db', 'ironic_compute_node_move', '--ironic-node-uuid', N, '--destination-host', LIVE, '--journal', journal]);
      await proxy.refuse();
      await api('cell_mappings').update({ database_connection: direct }).where('uuid', d.dbs.cellUuids.cell1);

      expect(r.code, r.stdout + r.stderr).toBe(255);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('An error has occurred:');
      expect(lines, r.stdout).toHaveLength(2);
      expect(lines[1]).toMatch(new RegExp(`was lost while committing the move of compute node ${N} to ${LIVE} \\(.+\\); whether the move committed is unknown$`));
      expect(r.stdout + r.stderr).not.toMatch(/rolled back|^\s+at /m);
      expect(r.stderr).toContain(journal);
      // The server committed: the node and its instance are on the destination.
      const cn = (await cell('compute_nodes').where('uuid', N).first()) as { host: string };
      expect(cn.host).toBe(LIVE);
      const dry = await runBin([...d.args, 'undo', journal]);
      expect(dry.code, dry.stdout + dry.stderr).toBe(3);
      const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
      expect(undo.code, undo.stdout + undo.stderr).toBe(4);
      expect(await cellDump(cell)).toEqual(before);
    } finally {
      await api('cell_mappings').update({ database_connection: direct }).where('uuid', d.dbs.cellUuids.cell1);
      await d.cleanup();
    }
  }, 60_000);
});
