// Each repair command on each release the tier covers (issue 36), on states
// written by that release's own code (nova_rt.py: its tracker takes the
// ironic node and creates the row and provider, the scheduler's claim and
// the object layer boot the server), each case ending with that release's
// own resource tracker running its periodic twice on the owning service
// without an error, the allocations intact.
//   - compute_node restore: a node soft-deleted while it exists (bug 1839560);
//   - compute_node move: a node of a forced-down service to another;
//   - compute_node cleanup_orphans: an ironic node gone from Ironic;
//   - placement heal_allocations: a server whose allocation was deleted;
//   - placement cleanup_providers: a deleted legacy row's provider holding
//     the name of the node's live row, whose provider create gets a 409.
// The rebalance is newer-nova.test.ts's.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2/promise';
import { runBin } from '../helpers/cli.js';
import { createReleaseDeployment, releasesToRun, type Release, type ReleaseDeployment } from './release.js';

const PROJECT = '8d2f6a1c0b3e4f5a9c7d1e2b3a4f5c6d';
const USER = '2b7e9c4a1d3f4e6b8a0c5d7e9f1a3b5c';
const R = '5a000000-0000-4000-8000-0000000000a1';
const RI = '5a000000-0000-4000-8000-0000000000b1';
const M = '5b000000-0000-4000-8000-0000000000a1';
const MI = '5b000000-0000-4000-8000-0000000000b1';
const C1 = '5c000000-0000-4000-8000-0000000000a1';
const C1I = '5c000000-0000-4000-8000-0000000000b1';
const C2 = '5c000000-0000-4000-8000-0000000000a2';
const H = '5d000000-0000-4000-8000-0000000000a1';
const HI = '5d000000-0000-4000-8000-0000000000b1';
const P = '5e000000-0000-4000-8000-0000000000a1';
const PX = '5e000000-0000-4000-8000-0000000000ff';

type Row = RowDataPacket & Record<string, unknown>;

describe.each(releasesToRun().map((r) => [r.name, r] as const))('Nova %s: every repair leaves its own resource tracker clean', (_name, release: Release) => {
  let d: ReleaseDeployment;
  const ours = (args: readonly string[]): ReturnType<typeof runBin> => runBin(['--config-file', d.confPath, ...args]);
  const boot = async (host: string, node: string, instance?: string): Promise<void> => {
    const r = await d.rt({ op: 'boot', host, node, ...(instance === undefined ? {} : { instance }), project: PROJECT, user: USER, cell_uuid: d.cell1Uuid });
    expect(r.errors, r.errors.join('\n')).toEqual([]);
  };
  /** The release's tracker on `host`, twice in one process, Ironic listing `nodes`; it must manage `managed`. */
  const expectTrackerClean = async (host: string, nodes: ReadonlyArray<Record<string, string>>, managed: readonly string[]): Promise<void> => {
    const r = await d.rt({ op: 'periodic', host, times: 2, nodes, ring: [host] });
    expect(r['nodes'], 'the tracker must have managed the nodes').toEqual([[...managed], [...managed]]);
    expect(r.errors, r.errors.join('\n')).toEqual([]);
    expect(r.ok, JSON.stringify(r.warnings)).toBe(true);
    expect(r.warnings.filter((w) => /Correcting compute_id|Undeleting|Duplicate|409|Conflict/i.test(w))).toEqual([]);
  };
  const allocationOf = async (consumer: string): Promise<string[]> =>
    (await d.query<Row>('placement', 'SELECT rp.uuid, rp.name, a.used FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id WHERE a.consumer_id = ?', [consumer])).map(
      (a) => `${String(a['uuid'])}|${String(a['name'])}|${String(a['used'])}`,
    );

  beforeAll(async () => {
    d = await createReleaseDeployment(release, 'repair');
    await boot('ironic-r', R, RI);
    await boot('ironic-m1', M, MI);
    await boot('ironic-c', C1, C1I);
    await boot('ironic-c', C2);
    await boot('ironic-h', H, HI);
    expect((await d.rt({ op: 'legacy-provider', host: 'ironic-p', node: P, legacy_uuid: PX })).errors).toEqual([]);
    // ironic-m2's nova-compute has started (its service registered) and has no node yet.
    expect((await d.rt({ op: 'hosts', hosts: [{ host: 'ironic-m2', nodes: [] }] })).errors).toEqual([]);
    const discover = await ours(['cell_v2', 'discover_hosts', '--by-service']);
    expect(discover.code, discover.stderr).toBe(0);
  }, 900_000);
  afterAll(async () => {
    await d?.drop();
  });

  it('compute_node restore: the soft-deleted row of a node that exists comes back; its tracker runs clean', async () => {
    const destroyed = await d.rt({ op: 'destroy-node', uuid: R });
    expect(destroyed.errors).toEqual([]);
    const audit = await ours(['audit', '--format', 'json']);
    expect((JSON.parse(audit.stdout) as { findings: Array<{ kind: string }> }).findings.map((f) => f.kind)).toContain('soft-deleted-node-with-provider');
    const applied = await ours(['compute_node', 'restore', '--uuid', R, '--apply']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(4);
    const [row] = await d.query<Row>('cell1', 'SELECT deleted FROM compute_nodes WHERE uuid = ?', [R]);
    expect(Number(row?.['deleted'])).toBe(0);
    await expectTrackerClean('ironic-r', [{ uuid: R, instance_uuid: RI }], [R]);
    expect(await allocationOf(RI)).toEqual([`${R}|${R}|1`]);
  });

  it("compute_node move: a forced-down service's node and its server go to another; that service's tracker runs clean", async () => {
    expect((await d.rt({ op: 'force-down', host: 'ironic-m1' })).errors).toEqual([]);
    const applied = await ours(['compute_node', 'move', '--node', M, '--to-host', 'ironic-m2', '--apply']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(4);
    const [node] = await d.query<Row>('cell1', 'SELECT id, host FROM compute_nodes WHERE uuid = ? AND deleted = 0', [M]);
    expect(node?.['host']).toBe('ironic-m2');
    const [inst] = await d.query<Row>('cell1', 'SELECT * FROM instances WHERE uuid = ?', [MI]);
    expect(inst?.['host']).toBe('ironic-m2');
    if (release.novaMajor >= 28) expect(Number(inst?.['compute_id'])).toBe(Number(node?.['id']));
    await expectTrackerClean('ironic-m2', [{ uuid: M, instance_uuid: MI }], [M]);
    expect(await allocationOf(MI)).toEqual([`${M}|${M}|1`]);
  });

  it('compute_node cleanup_orphans: the node Ironic no longer lists goes with its provider; the tracker of its host runs clean', async () => {
    const file = join(d.confPath, '..', 'ironic-nodes.json');
    // Ironic's whole list, as `openstack baremetal node list -f json` gives it: C2 is gone.
    const listed = [
      [R, RI],
      [M, MI],
      [C1, C1I],
      [H, HI],
      [P, null],
    ].map(([uuid, instance]) => ({ UUID: uuid, Name: null, 'Instance UUID': instance, 'Power State': 'power on', 'Provisioning State': 'active', Maintenance: false }));
    writeFileSync(file, JSON.stringify(listed));
    const applied = await ours(['compute_node', 'cleanup_orphans', '--ironic-nodes', file, '--apply']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(4);
    const live = await d.query<Row>('cell1', "SELECT uuid FROM compute_nodes WHERE deleted = 0 AND host = 'ironic-c'");
    expect(live.map((r) => r['uuid'])).toEqual([C1]);
    const providers = await d.query<Row>('placement', 'SELECT uuid FROM resource_providers WHERE uuid IN (?, ?)', [C1, C2]);
    expect(providers.map((p) => p['uuid'])).toEqual([C1]);
    await expectTrackerClean('ironic-c', [{ uuid: C1, instance_uuid: C1I }], [C1]);
    expect(await allocationOf(C1I)).toEqual([`${C1}|${C1}|1`]);
    const audit = await ours(['audit', '--ironic-nodes', file, '--host', 'ironic-c']);
    expect(audit.code, audit.stdout).toBe(0);
  });

  it('placement heal_allocations: a server whose allocation was deleted gets it back; its tracker runs clean', async () => {
    expect((await d.rt({ op: 'drop-allocation', instance: HI })).errors).toEqual([]);
    expect(await allocationOf(HI)).toEqual([]);
    const healed = await ours(['placement', 'heal_allocations', '--instance', HI]);
    expect(healed.code, healed.stderr + healed.stdout).toBe(0);
    expect(await allocationOf(HI)).toEqual([`${H}|${H}|1`]);
    await expectTrackerClean('ironic-h', [{ uuid: H, instance_uuid: HI }], [H]);
    expect(await allocationOf(HI)).toEqual([`${H}|${H}|1`]);
  });

  it("placement cleanup_providers: the deleted legacy row's provider that holds the name is re-keyed to the live row; its tracker, failing before, runs clean", async () => {
    // nova-compute on ironic-p took the node: its row, and a provider create that hits the name.
    const before = await d.rt({ op: 'periodic', host: 'ironic-p', times: 1, nodes: [{ uuid: P }], ring: ['ironic-p'] });
    expect(before['nodes']).toEqual([[P]]);
    expect(before.ok).toBe(false);
    const applied = await ours(['placement', 'cleanup_providers', '--apply']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(4);
    await expectTrackerClean('ironic-p', [{ uuid: P }], [P]);
    const providers = await d.query<Row>('placement', 'SELECT uuid, name FROM resource_providers WHERE name = ?', [P]);
    expect(providers.map((p) => [p['uuid'], p['name']])).toEqual([[P, P]]);
  });
});
