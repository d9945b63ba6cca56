// Issue 13.3: `--plan-out FILE` on a dry run, `--plan-in FILE --apply`
// applies exactly the reviewed units. A unit whose rows changed since the
// review is skipped with what changed and writes nothing (not even in
// placement); a unit the review did not have is never added; a plan of another
// command, deployment or options is refused with one line. Through the built
// binary, on SQLite and MariaDB, on the libvirt sandbox's Nova-written rows.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_HOSTS, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { insertComputeNode } from '../../src/sandbox/rows.js';

const node = (host: string): string => LIBVIRT_HOSTS.find((h) => h.host === host)?.nodeUuid ?? '';
const GHOST_NODE = '4b1f2c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

async function deleteService(k: Knex, host: string): Promise<void> {
  await k('services').update({ deleted: k.raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('host', host);
}

async function liveNode(k: Knex, uuid: string): Promise<{ host: string } | undefined> {
  return (await k('compute_nodes').where({ uuid, deleted: 0 }).first()) as { host: string } | undefined;
}


/** The deployment's rows and files, less the SQLite apply lock's file, which an --apply leaves beside the API database. */
async function state(d: TestDeployment): Promise<Record<string, string>> {
  const s = { ...(await snapshotDeployment(d)) };
  for (const k of Object.keys(s)) if (k.startsWith('files of ')) s[k] = (s[k] ?? '').split('\n').filter((f) => !f.endsWith('.nova-reconcile-apply.lock')).join('\n');
  return s;
}

interface ApplyDoc {
  readonly changed: boolean;
  readonly applied: readonly string[];
  readonly skipped: ReadonlyArray<{ readonly id: string; readonly reason: string }>;
  readonly units: ReadonlyArray<{ readonly id: string; readonly changes: ReadonlyArray<{ readonly description: string }> }>;
}

describeEachDialect('--plan-out / --plan-in', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'pf');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('applies exactly the reviewed units; a unit whose host changed is skipped with the reason and writes nothing; nothing new is added', { timeout: 120_000 }, async () => {
    const cell1 = d.knex('cell1');
    await deleteService(cell1, 'compute-2');
    await deleteService(cell1, 'compute-3');
    const planFile = join(d.dir, 'plan.json');
    const dry = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--plan-out', planFile]);
    expect(dry.code, dry.stderr).toBe(3);
    expect(dry.stdout).toContain(`plan written to ${planFile}`);
    expect(statSync(planFile).mode & 0o777).toBe(0o600);
    const doc = JSON.parse(readFileSync(planFile, 'utf8')) as { format: string; command: string; deployment: { api: string; cells: string[] }; units: Array<{ id: string }> };
    expect(doc).toMatchObject({ format: 'nova-reconcile-plan/1', command: 'compute_node cleanup_orphans' });
    expect(doc.units).toHaveLength(2);
    expect(doc.deployment.cells).toHaveLength(3);
    expect(readFileSync(planFile, 'utf8')).not.toMatch(/password|secret/i);

    // After the review: nova-compute on another host takes compute-3's node
    // (a host without a service: the node is still an orphan, now of that
    // host), and a new orphan appears.
    await cell1('compute_nodes').update({ host: 'compute-9' }).where('uuid', node('compute-3'));
    await insertComputeNode(cell1, { uuid: GHOST_NODE, host: 'compute-ghost', hypervisorHostname: 'compute-ghost.sandbox.example.org', hypervisorType: 'QEMU' });
    const placementBefore = await d.knex('placement')('resource_providers').where('name', libvirtHypervisorHostname('compute-3')).first();
    expect(placementBefore).toBeDefined();

    // Without --plan-in the apply would take host compute-9's node and the new orphan.
    const fresh = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--format', 'json']);
    expect((JSON.parse(fresh.stdout) as { units: unknown[] }).units).toHaveLength(3);

    const applied = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--plan-in', planFile]);
    // Something applied (compute-2) and something not (compute-3): 5.
    expect(applied.code, applied.stderr).toBe(5);
    expect(applied.stdout).toContain('applied 1 unit(s), skipped 1, refused 0.');
    expect(applied.stdout).toMatch(/SKIPPED: orphan compute node .*compute-3.*changed since the plan was reviewed: compute node \d+ \(.*\): host is now compute-9, reviewed compute-3/);
    // Each unit's objects are named, as in the dry run.
    expect(applied.stdout).toContain(`soft-delete compute node`);
    expect(applied.stdout).toContain(`host compute-2)`);
    expect(await liveNode(cell1, node('compute-2'))).toBeUndefined();
    expect(await liveNode(cell1, node('compute-3'))).toEqual(expect.objectContaining({ host: 'compute-9' }));
    expect(await liveNode(cell1, GHOST_NODE)).toBeDefined();
    // The skipped unit released nothing in placement.
    expect(await d.knex('placement')('resource_providers').where('name', libvirtHypervisorHostname('compute-3')).first()).toEqual(placementBefore);

    // The same plan again: compute-2 is done, compute-3 still changed; nothing is written: 3.
    const before = await state(d);
    const again = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--plan-in', planFile, '--format', 'json']);
    expect(again.code, again.stderr).toBe(3);
    const againDoc = JSON.parse(again.stdout) as ApplyDoc;
    expect(againDoc).toMatchObject({ changed: false, applied: [] });
    expect(againDoc.skipped.map((s) => s.reason)).toEqual([
      expect.stringContaining('planning now finds nothing to do for it'),
      expect.stringContaining('host is now compute-9, reviewed compute-3'),
    ]);
    // The JSON names the skipped units' objects too.
    expect(againDoc.units.flatMap((u) => u.changes.map((c) => c.description)).join('\n')).toContain('host compute-3');
    expect(await state(d)).toEqual(before);
  });

  it('a reviewed unit whose node moved to a live host since the review is skipped naming the new owner, as a race during the apply is (issue 40 item 3)', { timeout: 120_000 }, async () => {
    const cell1 = d.knex('cell1');
    await deleteService(cell1, 'compute-3');
    const planFile = join(d.dir, 'plan.json');
    expect((await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--plan-out', planFile])).code).toBe(3);
    // After the review, nova-compute on compute-1 (a live service) takes compute-3's node: no longer an orphan, planning has nothing for it.
    await cell1('compute_nodes').update({ host: 'compute-1' }).where('uuid', node('compute-3'));
    const before = await state(d);
    const applied = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--plan-in', planFile]);
    expect(applied.code, applied.stderr).toBe(3);
    const reason = `changed since the plan was reviewed: ownership changed: compute node ${node('compute-3')} is now on host compute-1, not compute-3`;
    expect(applied.stdout).toContain(reason);
    expect(applied.stdout).not.toContain('planning now finds nothing to do for it');
    const doc = JSON.parse((await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--plan-in', planFile, '--format', 'json'])).stdout) as ApplyDoc;
    expect(doc.skipped.map((u) => u.reason)).toEqual([reason]);
    expect(await state(d)).toEqual(before);
  });

  it('refuses a plan file of another command, another deployment or other options with one line (127), changing nothing', { timeout: 120_000 }, async () => {
    await deleteService(d.knex('cell1'), 'compute-3');
    const planFile = join(d.dir, 'plan.json');
    expect((await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--plan-out', planFile])).code).toBe(3);
    const text = readFileSync(planFile, 'utf8');
    const foreign = join(d.dir, 'foreign.json');
    const doc = JSON.parse(text) as { deployment: { api: string; cells: string[] } };
    writeFileSync(foreign, JSON.stringify({ ...doc, deployment: { ...doc.deployment, api: 'mysql://db.other-region.example.org:3306/nova_api' } }));
    const garbage = join(d.dir, 'garbage.json');
    writeFileSync(garbage, '{"format": "nova-reconcile-journal/1"}');
    const before = await state(d);
    const cases: Array<[string[], RegExp]> = [
      [['placement', 'cleanup_providers', '--apply', '--plan-in', planFile], /the plan is of `compute_node cleanup_orphans`, not of `placement cleanup_providers`/],
      [['compute_node', 'cleanup_orphans', '--apply', '--plan-in', foreign], /the plan is of another deployment \(API database mysql:\/\/db\.other-region\.example\.org:3306\/nova_api/],
      [['compute_node', 'cleanup_orphans', '--apply', '--plan-in', garbage], /not a nova-reconcile plan/],
      [['compute_node', 'cleanup_orphans', '--apply', '--plan-in', join(d.dir, 'nope.json')], /cannot read the file/],
      [['compute_node', 'cleanup_orphans', '--apply', '--plan-in', planFile, '--ironic-nodes', planFile], /the plan was made with no options; give the same options \(now: --ironic-nodes /],
      [['compute_node', 'cleanup_orphans', '--plan-in', planFile], /--plan-in applies a reviewed plan: give it with --apply/],
      [['compute_node', 'cleanup_orphans', '--apply', '--plan-out', planFile], /--plan-out writes the plan of a dry run/],
    ];
    for (const [argv, message] of cases) {
      const r = await runBin([...d.args, ...argv]);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(127);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
    expect(await state(d)).toEqual(before);
    expect(readFileSync(planFile, 'utf8')).toBe(text);
  });
});
