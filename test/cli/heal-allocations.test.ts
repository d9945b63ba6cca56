// placement heal_allocations through the built binary, on SQLite and MariaDB,
// on the state of bug 1841481: an instance live on an in-use ironic node
// (its provider re-created with reserved = 1) whose allocation a cascade
// delete removed, next to a libvirt server whose allocations are lost too.
// Dry run: nothing changes, exit 4. Run: the exact rows Placement would hold,
// exit 0, the in-use exception stated on stderr. Re-run: exit 4. Undo: the
// databases as before. Plus nova's input errors (exit 127), and exit 2 for an
// instance whose compute node is gone.
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { describeMysql } from '../helpers/mysql.js';
import { addIronicNode } from '../../src/sandbox/builders.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { insertInstance, insertInstanceExtra, insertInstanceMapping } from '../../src/sandbox/rows.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER } from '../../src/sandbox/scenarios/libvirt.js';

const NODE = '1e0f0000-0000-4000-8000-0000000000a1';
const BAREMETAL = 'bbbb0000-0000-4000-8000-0000000000a1';
const P = 'p-baremetal';
const U = 'u-baremetal';
// projects and users are get-or-created and, as in Placement, never deleted (undo leaves them too).
const TABLES = ['resource_providers', 'inventories', 'allocations', 'consumers'];

async function dump(k: Knex): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of TABLES) out[t] = ((await k(t).select('*')) as Array<Record<string, unknown>>).map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  return out;
}

async function allocationRows(p: Knex, consumer: string): Promise<string[]> {
  const rows = (await p('allocations as a')
    .join('resource_providers as rp', 'rp.id', 'a.resource_provider_id')
    .join('resource_classes as rc', 'rc.id', 'a.resource_class_id')
    .select('rp.uuid', 'rc.name', 'a.used')
    .where('a.consumer_id', consumer)) as Array<{ uuid: string; name: string; used: number }>;
  return rows.map((r) => `${r.uuid} ${r.name} ${r.used}`).sort();
}

async function consumerRow(p: Knex, uuid: string): Promise<string | undefined> {
  const row = (await p('consumers as c')
    .join('projects as pr', 'pr.id', 'c.project_id')
    .join('users as u', 'u.id', 'c.user_id')
    .select('c.generation', 'pr.external_id as project', 'u.external_id as user', 'c.consumer_type_id')
    .where('c.uuid', uuid)
    .first()) as { generation: number; project: string; user: string; consumer_type_id: number | null } | undefined;
  return row === undefined ? undefined : `${row.generation} ${row.project} ${row.user} ${String(row.consumer_type_id)}`;
}

/** The state of bug 1841481 (see the top of this file) on a new deployment. */
async function createHealDeployment(dialect: 'sqlite' | 'mysql'): Promise<TestDeployment> {
  const d = await createTestDeployment(dialect, 'libvirt', 'ha');
  const clock = scenarioClock();
  const p = d.knex('placement');
  const cell = d.knex('cell1');
  // The in-use ironic node: its provider re-created with reserved = 1 and no allocation (bug 1841481).
  await addIronicNode(cell, p, { nodeUuid: NODE, host: 'ironic-1', resourceClass: 'CUSTOM_BAREMETAL_GOLD', reserved: 1, clock });
  const createdAt = clock.ago(3600);
  await insertInstance(cell, { uuid: BAREMETAL, host: 'ironic-1', node: NODE, vmState: 'active', projectId: P, userId: U, vcpus: 32, memoryMb: 262144, rootGb: 900, flavorId: 7, createdAt });
  await insertInstanceExtra(cell, {
    instanceUuid: BAREMETAL,
    flavor: { id: 7, vcpus: 32, memoryMb: 262144, rootGb: 900, extraSpecs: { 'resources:CUSTOM_BAREMETAL_GOLD': '1', 'resources:VCPU': '0', 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0' } },
    createdAt,
  });
  const cellId = Number(((await d.knex('api')('cell_mappings').where('name', 'cell1').first()) as { id: number }).id);
  await insertInstanceMapping(d.knex('api'), { instanceUuid: BAREMETAL, cellId, projectId: P, userId: U, createdAt });
  // web-1's allocations lost too.
  await p('allocations').delete().where('consumer_id', LIBVIRT_SERVER.uuid);
  await p('consumers').delete().where('uuid', LIBVIRT_SERVER.uuid);
  return d;
}

describeEachDialect('placement heal_allocations', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createHealDeployment(dialect);
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('dry run changes nothing (4); the run writes the exact rows (0); the re-run is clean (4); undo restores', async () => {
    const p = d.knex('placement');
    const before = await dump(p);
    const rp = async (uuid: string): Promise<number> => Number(((await p('resource_providers').where('uuid', uuid).first()) as { generation: number }).generation);
    const web1Node = LIBVIRT_HOSTS.find((h) => h.host === LIBVIRT_SERVER.host)?.nodeUuid ?? '';
    const [nodeGen, web1Gen] = [await rp(NODE), await rp(web1Node)];

    const dry = await runBin([...d.args, 'placement', 'heal_allocations', '--dry-run', '--verbose']);
    expect(dry.code).toBe(4);
    expect(dry.stdout).toContain(
      `[dry-run] Create allocations for instance ${BAREMETAL}: {"allocations": {"${NODE}": {"resources": {"CUSTOM_BAREMETAL_GOLD": 1}}}, "project_id": "${P}", "user_id": "${U}", "consumer_generation": null}\n`,
    );
    expect(dry.stdout).toContain(`[dry-run] Create allocations for instance ${LIBVIRT_SERVER.uuid}: `);
    expect(dry.stdout.endsWith('Processed 0 instances.\n')).toBe(true);
    expect(dry.stderr).toContain(`note: instance ${BAREMETAL}: CUSTOM_BAREMETAL_GOLD on resource provider ${NODE} has total 1 and reserved 1 because the node is in use`);
    expect(await dump(p)).toEqual(before);

    const run = await runBin([...d.args, 'placement', 'heal_allocations', '--verbose']);
    expect(run.stdout).toContain(`Successfully created allocations for instance ${BAREMETAL}.\n`);
    expect(run.stdout).toContain(`Successfully created allocations for instance ${LIBVIRT_SERVER.uuid}.\n`);
    expect(run.stdout.endsWith('Processed 2 instances.\n')).toBe(true);
    expect(run.code).toBe(0);
    const journal = /^journal: (\S+)$/m.exec(run.stderr)?.[1] ?? '';
    expect(journal).not.toBe('');
    // Exactly what Placement's PUT leaves: the flavor's non-zero classes, the consumer at 1 with its project and user, each provider + 1.
    expect(await allocationRows(p, BAREMETAL)).toEqual([`${NODE} CUSTOM_BAREMETAL_GOLD 1`]);
    expect(await allocationRows(p, LIBVIRT_SERVER.uuid)).toEqual(
      [`${web1Node} VCPU ${LIBVIRT_SERVER.flavor.vcpus}`, `${web1Node} MEMORY_MB ${LIBVIRT_SERVER.flavor.memoryMb}`, `${web1Node} DISK_GB ${LIBVIRT_SERVER.flavor.rootGb}`].sort(),
    );
    expect(await consumerRow(p, BAREMETAL)).toBe(`1 ${P} ${U} null`);
    expect(await consumerRow(p, LIBVIRT_SERVER.uuid)).toBe(`1 ${LIBVIRT_SERVER.projectId} ${LIBVIRT_SERVER.userId} null`);
    expect([await rp(NODE), await rp(web1Node)]).toEqual([nodeGen + 1, web1Gen + 1]);
    const inv = (await p('inventories').where('resource_provider_id', Number(((await p('resource_providers').where('uuid', NODE).first()) as { id: number }).id)).first()) as { reserved: number };
    expect(Number(inv.reserved)).toBe(1);

    const again = await runBin([...d.args, 'placement', 'heal_allocations']);
    expect({ code: again.code, stdout: again.stdout, stderr: again.stderr }).toEqual({ code: 4, stdout: '', stderr: '' });

    const undo = await runBin([...d.args, 'undo', journal, '--apply']);
    expect(undo.code).toBe(4);
    expect(await dump(p)).toEqual(before);
    expect((await p('projects').where('external_id', P)).length).toBe(1);
  }, 180_000);

  it("nova's input errors exit 127 and change nothing; a missing compute node exits 2; --format json", async () => {
    const p = d.knex('placement');
    const before = await dump(p);
    const heal = (...args: string[]) => runBin([...d.args, 'placement', 'heal_allocations', ...args]);
    expect(await heal('--cell', 'c', '--instance', BAREMETAL)).toMatchObject({ code: 127, stdout: 'The --cell and --instance options are mutually exclusive.\n' });
    expect(await heal('--force')).toMatchObject({ code: 127, stdout: 'The --instance flag is required when using --force flag.\n' });
    expect(await heal('--max-count', '0')).toMatchObject({ code: 127, stdout: 'Must supply a positive integer for --max-count.\n' });
    expect(await heal('--cell', 'f0000000-0000-4000-8000-00000000000f')).toMatchObject({ code: 127, stdout: 'Cell with uuid f0000000-0000-4000-8000-00000000000f was not found.\n' });
    const unmapped = await heal('--instance', 'f0000000-0000-4000-8000-00000000000f');
    expect(unmapped.code).toBe(127);
    expect(unmapped.stdout).toMatch(/^Unable to find cell for instance f0000000-0000-4000-8000-00000000000f, is it mapped\?/);

    const json = await heal('--dry-run', '--format', 'json', '--instance', BAREMETAL);
    expect(json.code).toBe(4);
    const doc = JSON.parse(json.stdout) as { instances: Array<{ instance_uuid: string; action: string; capacity_exception: string | null }> };
    expect(doc.instances).toHaveLength(1);
    expect(doc.instances[0]).toMatchObject({ instance_uuid: BAREMETAL, action: 'create' });
    expect(doc.instances[0]?.capacity_exception).toContain('reserved 1');

    // The ironic node's compute node soft-deleted: nova's ComputeHostNotFound, exit 2.
    await d.knex('cell1')('compute_nodes').update({ deleted: d.knex('cell1').raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('uuid', NODE);
    expect(await heal('--instance', BAREMETAL)).toMatchObject({ code: 2, stdout: 'Compute host ironic-1 could not be found.\n' });
    expect(await dump(p)).toEqual(before);
  }, 180_000);
});

// A write that fails for another reason than a conflict stops the run with
// one line and the error document's `changed` saying whether anything was
// committed before it. The failure is made by a trigger on placement's
// allocations that refuses one instance's rows. Instances are healed in id
// order: web-1 (the libvirt scenario's) first, then the bare-metal one.
describeMysql('placement heal_allocations: a write that fails', () => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createHealDeployment('mysql');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  const refuse = async (consumer: string): Promise<void> => {
    await d.knex('placement').raw(
      `CREATE TRIGGER refuse_one BEFORE INSERT ON allocations FOR EACH ROW BEGIN IF NEW.consumer_id = '${consumer}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test'; END IF; END`,
    );
  };

  for (const [which, consumer, changed] of [
    ['the second instance', BAREMETAL, true],
    ['the first instance', LIBVIRT_SERVER.uuid, false],
  ] as const) {
    it(`fails on ${which}: exit 255, changed ${changed}, one line; what was healed before stays, the re-run finishes, undo takes it back`, async () => {
      await refuse(consumer);
      const p = d.knex('placement');
      const r = await runBin([...d.args, 'placement', 'heal_allocations', '--format', 'json']);
      expect(r.code, r.stderr).toBe(255);
      const doc = JSON.parse(r.stdout) as { changed: boolean; error: { kind: string; message: string; exit_code: number } };
      expect(doc.changed).toBe(changed);
      expect(doc.error).toMatchObject({ kind: 'connection', exit_code: 255 });
      const journal = /^journal: (\S+)$/m.exec(r.stderr)?.[1];
      expect(r.stderr).toBe(`journal: ${journal}\n`);
      expect(doc.error.message).toContain(`failed writing the allocations of instance ${consumer} in the placement database`);
      expect(doc.error.message).toContain('that write was rolled back');
      expect(await allocationRows(p, consumer)).toEqual([]);
      expect((await allocationRows(p, LIBVIRT_SERVER.uuid)).length).toBe(changed ? 3 : 0);
      expect(await allocationRows(p, BAREMETAL)).toEqual([]);
      // As a table, as nova-manage says it: "An error has occurred:" and the error in one line on stdout; the journal and the hint on stderr.
      const table = await runBin([...d.args, 'placement', 'heal_allocations']);
      expect(table.code).toBe(255);
      expect(table.stdout).toMatch(new RegExp(`^An error has occurred:\\nfailed writing the allocations of instance ${consumer} in the placement database [^\\n]*; that write was rolled back\\n$`));
      expect(table.stderr).toMatch(/^journal: \S+\nhint: the journal lists the writes committed before; re-run the command to finish\n$/);
      // The re-run after the trigger is gone finishes the job; undo of the first journal takes back what it healed.
      await p.raw('DROP TRIGGER refuse_one');
      const again = await runBin([...d.args, 'placement', 'heal_allocations']);
      expect(again.code, again.stderr).toBe(0);
      expect(await allocationRows(p, BAREMETAL)).toHaveLength(1);
      const undo = await runBin([...d.args, 'undo', journal ?? '', '--apply']);
      expect(undo.code, undo.stderr).toBe(changed ? 4 : 0);
      expect((await allocationRows(p, LIBVIRT_SERVER.uuid)).length).toBe(changed ? 0 : 3);
    }, 180_000);
  }
});
