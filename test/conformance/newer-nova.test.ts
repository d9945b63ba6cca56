// The seed-1714248 repair on every Nova release the tier covers (issue 36),
// on states written by that release's own code (nova_rt.py), and that
// release's own resource tracker after it: it fails on the broken state, and
// runs its periodic twice without an error once the repair is applied, the
// allocations intact. Plus discover_hosts, byte for byte against that
// release's nova-manage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2/promise';
import { runBin } from '../helpers/cli.js';
import { createReleaseDeployment, releasesToRun, type Release, type ReleaseDeployment } from './release.js';

const N = '4f9b2c1e-7a3d-4e8b-9c6f-1d2e3f4a5b6c';
const A = 'a0e1c2d3-1111-4b5c-8d9e-0f1a2b3c4d5e';
const I = 'c1d2e3f4-3333-4a5b-8c6d-7e8f9a0b1c2d';
const PROJECT = '8d2f6a1c0b3e4f5a9c7d1e2b3a4f5c6d';
const USER = '2b7e9c4a1d3f4e6b8a0c5d7e9f1a3b5c';

const releases = releasesToRun();

type Row = RowDataPacket & Record<string, unknown>;

/** The ironic node as Ironic lists it: in use by the server. */
const IRONIC_NODES = [{ uuid: N, instance_uuid: I }];

async function seedDeployment(release: Release): Promise<ReleaseDeployment> {
  const d = await createReleaseDeployment(release, 'seed');
  const seeded = await d.rt({ op: 'seed-1714248', legacy_host: 'ironic-1', live_host: 'ironic-2', node: N, legacy_uuid: A, instance: I, project: PROJECT, user: USER, cell_uuid: d.cell1Uuid });
  expect(seeded.errors, seeded.errors.join('\n')).toEqual([]);
  const discover = await runBin(['--config-file', d.confPath, 'cell_v2', 'discover_hosts']);
  expect(discover.code, discover.stderr).toBe(0);
  return d;
}

/** The release's own tracker on ironic-2, `times` periodics in one process: it must manage the node and fail on nothing. */
async function expectTrackerClean(d: ReleaseDeployment, times: number): Promise<void> {
  const after = await d.rt({ op: 'periodic', host: 'ironic-2', times, nodes: IRONIC_NODES });
  expect(after['nodes'], 'the tracker must have managed the node').toEqual(Array.from({ length: times }, () => [N]));
  expect(after.errors, after.errors.join('\n')).toEqual([]);
  expect(after.ok, JSON.stringify(after.warnings)).toBe(true);
  expect(after.warnings.filter((w) => /Correcting compute_id|Undeleting|Duplicate|409|Conflict/i.test(w))).toEqual([]);
}

async function liveRows(d: ReleaseDeployment): Promise<Row[]> {
  return d.query<Row>('cell1', 'SELECT id, uuid, host FROM compute_nodes WHERE deleted = 0');
}

async function expectRepaired(d: ReleaseDeployment, release: Release): Promise<void> {
  const live = await liveRows(d);
  expect(live).toHaveLength(1);
  const row = live[0] as Row;
  // From 27.0.0 Nova knows an ironic compute node by the node's uuid alone.
  expect(row['uuid']).toBe(release.novaMajor >= 27 ? N : A);
  expect(row['host']).toBe('ironic-2');
  const [inst] = await d.query<Row>('cell1', 'SELECT * FROM instances WHERE uuid = ?', [I]);
  expect(inst?.['host']).toBe('ironic-2');
  if (release.novaMajor >= 28) expect(Number(inst?.['compute_id'])).toBe(Number(row['id']));
  const providers = await d.query<Row>('placement', 'SELECT uuid, name FROM resource_providers');
  expect(providers.map((p) => [p['uuid'], p['name']])).toEqual([[row['uuid'], N]]);
  const allocations = await d.query<Row>('placement', 'SELECT rp.uuid, a.consumer_id, a.used FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id');
  expect(allocations.map((a) => [a['uuid'], a['consumer_id'], Number(a['used'])])).toEqual([[row['uuid'], I, 1]]);
}

describe.each(releases.map((r) => [r.name, r] as const))('Nova %s: seed 1714248 repaired, its own resource tracker clean after', (_name, release: Release) => {
  let d: ReleaseDeployment;
  const ours = (args: readonly string[]): ReturnType<typeof runBin> => runBin(['--config-file', d.confPath, ...args]);

  beforeAll(async () => {
    d = await seedDeployment(release);
  }, 600_000);
  afterAll(async () => {
    await d?.drop();
  });

  it('rebalance --apply leaves one live row per node, the instance and its allocation on it, audit clean', async () => {
    const applied = await ours(['compute_node', 'rebalance', '--apply']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(4);
    await expectRepaired(d, release);
    const audit = await ours(['audit', '--format', 'json']);
    expect(audit.code, audit.stdout).toBe(0);
  });

  it("the release's own resource tracker runs its periodic twice on the owning service without an error, allocations intact", async () => {
    await expectTrackerClean(d, 2);
    await expectRepaired(d, release);
    const audit = await ours(['audit']);
    expect(audit.code, audit.stdout).toBe(0);
    const again = await ours(['compute_node', 'rebalance']);
    expect(again.code, again.stdout).toBe(0);
  });
});

// What the Zed rule (keep the row with the allocations) leaves on 2023.1+: the
// random-uuid row re-homed onto the live service with the instance, the row
// of the node's uuid soft-deleted. Written here as that plan's writes; the
// release's own tracker then fails on it, and the repair puts it right.
describe.each(releases.filter((r) => r.novaMajor >= 27).map((r) => [r.name, r] as const))('Nova %s: the state the Zed rule leaves is put right', (_name, release: Release) => {
  let d: ReleaseDeployment;
  const ours = (args: readonly string[]): ReturnType<typeof runBin> => runBin(['--config-file', d.confPath, ...args]);

  beforeAll(async () => {
    d = await seedDeployment(release);
    const [a] = await d.query<Row>('cell1', 'SELECT id FROM compute_nodes WHERE uuid = ?', [A]);
    const [n] = await d.query<Row>('cell1', 'SELECT id, service_id FROM compute_nodes WHERE uuid = ?', [N]);
    await d.query('cell1', 'UPDATE compute_nodes SET deleted = id, deleted_at = UTC_TIMESTAMP(), mapped = 0 WHERE id = ?', [Number(n?.['id'])]);
    await d.query('cell1', "UPDATE compute_nodes SET host = 'ironic-2', service_id = ? WHERE id = ?", [Number(n?.['service_id']), Number(a?.['id'])]);
    await d.query('cell1', "UPDATE instances SET host = 'ironic-2' WHERE uuid = ?", [I]);
  }, 600_000);
  afterAll(async () => {
    await d?.drop();
  });

  it("the release's own tracker fails on it: it un-deletes the row of the node's uuid beside the live one", async () => {
    const broken = await d.rt({ op: 'periodic', host: 'ironic-2', times: 1, nodes: IRONIC_NODES });
    expect(broken['nodes']).toEqual([[N]]);
    expect(broken.ok).toBe(false);
    expect([...broken.errors, ...broken.warnings].join('\n')).toMatch(/Duplicate|uniq_compute_nodes0host0hypervisor_hostname0deleted|1062/);
  });

  it('audit names it; rebalance --apply restores the row of the node uuid; the tracker then runs clean twice', async () => {
    // The failed periodic un-deleted nothing (its transaction rolled back) or left the row as it found it.
    const audit = await ours(['audit', '--format', 'json']);
    expect(audit.code).toBe(3);
    expect((JSON.parse(audit.stdout) as { findings: Array<{ kind: string }> }).findings.map((f) => f.kind)).toContain('node-uuid-row-deleted');
    const applied = await ours(['compute_node', 'rebalance', '--apply']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(4);
    await expectRepaired(d, release);
    await expectTrackerClean(d, 2);
    await expectRepaired(d, release);
    const clean = await ours(['audit']);
    expect(clean.code, clean.stdout).toBe(0);
  });
});
