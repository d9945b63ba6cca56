// placement audit through the built binary, on SQLite and MariaDB: nova-manage's
// lines and exit codes, --delete with its journal, undo, and
// --all-resource-classes for ironic orphans.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { describeMysql } from '../helpers/mysql.js';
import { LIBVIRT_SERVER, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { addIronicNode } from '../../src/sandbox/builders.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { insertAllocations, insertConsumer, insertResourceProvider } from '../../src/sandbox/rows.js';

const PLACEMENT_TABLES = ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_provider_traits', 'projects', 'users'];
const ORPHAN = 'deadbeef-0000-4000-8000-000000000001';
const MULTI = 'deadbeef-0000-4000-8000-000000000002';
const ON_STALE = 'deadbeef-0000-4000-8000-000000000003';
const BAREMETAL = 'deadbeef-0000-4000-8000-000000000004';
const STALE_RP = '5ea1e000-0000-4000-8000-000000000001';
const IRONIC_NODE = '1e0f0000-0000-4000-8000-000000000001';

async function dump(k: Knex, tables: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of tables) {
    const rows: Array<Record<string, unknown>> = await k(t).select('*');
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  }
  return out;
}

interface Rps {
  readonly uuid: (host: string) => string;
}

/**
 * The libvirt scenario plus: an orphaned consumer on compute-3; one with
 * shares on compute-2 and compute-4; web-1's evacuation leftover on
 * compute-5; a provider of no compute node with an allocation; an ironic
 * node (cell1, host ironic-1) holding an orphaned CUSTOM_BAREMETAL unit.
 */
async function addOrphans(d: TestDeployment): Promise<Rps> {
  const p = d.knex('placement');
  const rows = (await p('resource_providers').select('id', 'uuid', 'name')) as Array<{ id: number; uuid: string; name: string }>;
  const rp = (host: string): { id: number; uuid: string } => {
    const r = rows.find((x) => x.name === libvirtHypervisorHostname(host));
    if (r === undefined) throw new Error(`no provider for ${host}`);
    return { id: Number(r.id), uuid: r.uuid };
  };
  const ironic = await addIronicNode(d.knex('cell1'), p, { nodeUuid: IRONIC_NODE, host: 'ironic-1', resourceClass: 'CUSTOM_BAREMETAL', clock: scenarioClock() });
  const stale = await insertResourceProvider(p, { uuid: STALE_RP, name: 'gone.sandbox.example.org' });
  for (const c of [ORPHAN, MULTI, ON_STALE, BAREMETAL]) await insertConsumer(p, { uuid: c, projectId: 'p', userId: 'u' });
  await insertAllocations(p, [
    { providerId: rp('compute-3').id, consumerUuid: ORPHAN, resourceClass: 'VCPU', used: 1 },
    { providerId: rp('compute-3').id, consumerUuid: ORPHAN, resourceClass: 'MEMORY_MB', used: 512 },
    { providerId: rp('compute-2').id, consumerUuid: MULTI, resourceClass: 'VCPU', used: 2 },
    { providerId: rp('compute-4').id, consumerUuid: MULTI, resourceClass: 'VCPU', used: 2 },
    { providerId: rp('compute-5').id, consumerUuid: LIBVIRT_SERVER.uuid, resourceClass: 'VCPU', used: 2 },
    { providerId: stale, consumerUuid: ON_STALE, resourceClass: 'DISK_GB', used: 10 },
    { providerId: ironic.providerId, consumerUuid: BAREMETAL, resourceClass: 'CUSTOM_BAREMETAL', used: 1 },
  ]);
  return { uuid: (host) => rp(host).uuid };
}

const keptOnStale = `Allocations for consumer UUID ${ON_STALE} on Resource Provider ${STALE_RP} are kept, not deleted: provider ${STALE_RP} (gone.sandbox.example.org) is not a compute-node provider (no COMPUTE_NODE trait, no compute node has its uuid): {'DISK_GB': 10}`;
const related = (c: string): string => `Allocations were set against consumer UUID ${c} but no existing instances or active migrations are related. `;
const canDelete = (c: string, rp: string, dict: string): string => `Allocations for consumer UUID ${c} on Resource Provider ${rp} can be deleted: ${dict}`;
const deleted = (c: string, rp: string, dict: string): string => `Deleted allocations for consumer UUID ${c} on Resource Provider ${rp}: ${dict}`;

function expectedLines(rps: Rps, line: typeof canDelete, allClasses: boolean, processed: string): string[] {
  return [
    related(MULTI),
    line(MULTI, rps.uuid('compute-2'), "{'VCPU': 2}"),
    related(ORPHAN),
    line(ORPHAN, rps.uuid('compute-3'), "{'VCPU': 1, 'MEMORY_MB': 512}"),
    related(MULTI),
    line(MULTI, rps.uuid('compute-4'), "{'VCPU': 2}"),
    related(LIBVIRT_SERVER.uuid),
    line(LIBVIRT_SERVER.uuid, rps.uuid('compute-5'), "{'VCPU': 2}"),
    ...(allClasses ? [related(BAREMETAL), line(BAREMETAL, IRONIC_NODE, "{'CUSTOM_BAREMETAL': 1}")] : []),
    `The compute node for UUID ${STALE_RP} can not be found`,
    // nova-manage deletes it; nova-reconcile keeps it (issue 13 item 1).
    keptOnStale,
    processed,
  ];
}

function lines(stdout: string): string[] {
  expect(stdout.endsWith('\n')).toBe(true);
  return stdout.slice(0, -1).split('\n');
}

describeEachDialect('placement audit', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'pa');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('a clean deployment: exit 0 and nothing printed, even with --verbose', async () => {
    for (const args of [[], ['--verbose'], ['--delete', '--verbose'], ['--all-resource-classes']]) {
      const r = await runBin([...d.args, 'placement', 'audit', ...args]);
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
  });

  it("orphans: exit 3 with nova's exact verbose lines, silent without --verbose, nothing changed", async () => {
    const rps = await addOrphans(d);
    const before = await dump(d.knex('placement'), PLACEMENT_TABLES);
    const r = await runBin([...d.args, 'placement', 'audit', '--verbose']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(3);
    expect(lines(r.stdout)).toEqual(expectedLines(rps, canDelete, false, 'Processed 4 allocations.'));
    // argparse-style prefixes work as in nova-manage.
    expect(await runBin([...d.args, 'placement', 'audit', '--verb'])).toMatchObject({ code: 3, stdout: r.stdout });
    expect(await runBin([...d.args, 'placement', 'audit'])).toMatchObject({ code: 3, stdout: '', stderr: '' });
    expect(await dump(d.knex('placement'), PLACEMENT_TABLES)).toEqual(before);
  });

  it('--all-resource-classes finds the CUSTOM_BAREMETAL orphan that the default ignores', async () => {
    const rps = await addOrphans(d);
    const r = await runBin([...d.args, 'placement', 'audit', '--verbose', '--all-resource-classes']);
    expect(r.code).toBe(3);
    expect(lines(r.stdout)).toEqual(expectedLines(rps, canDelete, true, 'Processed 5 allocations.'));
    const one = await runBin([...d.args, 'placement', 'audit', '--verbose', '--resource_provider', IRONIC_NODE]);
    expect(one).toMatchObject({ code: 0, stdout: '' });
    const oneAll = await runBin([...d.args, 'placement', 'audit', '--verbose', '--resource_provider', IRONIC_NODE, '--all-resource-classes']);
    expect(oneAll.code).toBe(3);
    expect(lines(oneAll.stdout)).toEqual([related(BAREMETAL), canDelete(BAREMETAL, IRONIC_NODE, "{'CUSTOM_BAREMETAL': 1}"), 'Processed 1 allocation.']);
  });

  it('--resource_provider: only that provider; an unknown one exits 127 with nova\'s message', async () => {
    const rps = await addOrphans(d);
    const r = await runBin([...d.args, 'placement', 'audit', '--verbose', '--resource_provider', rps.uuid('compute-3')]);
    expect(r.code).toBe(3);
    expect(lines(r.stdout)).toEqual([related(ORPHAN), canDelete(ORPHAN, rps.uuid('compute-3'), "{'VCPU': 1, 'MEMORY_MB': 512}"), 'Processed 1 allocation.']);
    for (const bad of ['f0000000-0000-4000-8000-00000000000f', 'not-a-uuid']) {
      const u = await runBin([...d.args, 'placement', 'audit', '--resource_provider', bad, '--delete']);
      expect(u).toMatchObject({ code: 127, stdout: `Resource provider with UUID ${bad} does not exist.\n`, stderr: '' });
    }
    const json = await runBin([...d.args, 'placement', 'audit', '--resource_provider', 'nope', '--format', 'json']);
    expect(json.code).toBe(127);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { kind: 'not-found', exit_code: 127 } });
    expect((await runBin([...d.args, 'placement', 'audit', '--resource_provider'])).code).toBe(2);
  });

  it('--delete: exit 4, the orphans gone (consumer rows with their last allocation), a journal, a clean re-run, and undo restores every row', async () => {
    const rps = await addOrphans(d);
    const p = d.knex('placement');
    const before = await dump(p, PLACEMENT_TABLES);
    const web1Before = (await p('consumers').where('uuid', LIBVIRT_SERVER.uuid).first()) as { generation: number };
    const rp1Before = (await p('resource_providers').where('uuid', rps.uuid('compute-1')).first()) as { generation: number };

    const journal = join(d.dir, 'audit.jsonl');
    const r = await runBin([...d.args, 'placement', 'audit', '--delete', '--verbose', '--journal', journal]);
    expect(r.code).toBe(4);
    expect(r.stderr).toBe(`journal: ${journal}\n`);
    expect(lines(r.stdout)).toEqual(expectedLines(rps, deleted, false, 'Processed 4 allocations.'));

    const consumers = ((await p('consumers').select('uuid').orderBy('uuid')) as Array<{ uuid: string }>).map((c) => c.uuid);
    // MULTI lost its share on compute-2, then its last one on compute-4: its row went with it.
    expect(consumers).toEqual([LIBVIRT_SERVER.uuid, BAREMETAL, ON_STALE].sort());
    const allocs = (await p('allocations').select('consumer_id')) as Array<{ consumer_id: string }>;
    expect(allocs.map((a) => a.consumer_id).sort()).toEqual([BAREMETAL, ON_STALE, ...Array<string>(3).fill(LIBVIRT_SERVER.uuid)].sort());
    // web-1 kept its allocations on compute-1; as a PUT of the rest would, its generation and compute-1's went up by one.
    const web1 = (await p('consumers').where('uuid', LIBVIRT_SERVER.uuid).first()) as { generation: number };
    expect(Number(web1.generation)).toBe(Number(web1Before.generation) + 1);
    const rp1 = (await p('resource_providers').where('uuid', rps.uuid('compute-1')).first()) as { generation: number };
    expect(Number(rp1.generation)).toBe(Number(rp1Before.generation) + 1);

    const entries = readFileSync(journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; command?: string });
    expect(entries[0]).toMatchObject({ type: 'header', command: 'placement audit' });
    expect(entries.filter((e) => e.type === 'change')).toHaveLength(4);
    expect(entries.filter((e) => e.type === 'commit')).toHaveLength(4);

    // The provider of no compute node is still there, its allocation kept.
    const again = await runBin([...d.args, 'placement', 'audit', '--delete', '--verbose']);
    expect(again).toMatchObject({ code: 0, stdout: `The compute node for UUID ${STALE_RP} can not be found\n${keptOnStale}\n`, stderr: '' });

    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
    expect(undo.stderr).not.toContain('error');
    expect(undo.code).toBe(4);
    expect(await dump(p, PLACEMENT_TABLES)).toEqual(before);
    expect((await runBin([...d.args, 'placement', 'audit'])).code).toBe(3);
  });

  it('--delete --all-resource-classes --format json: the ironic orphan goes too; the journal lands in journal_dir', async () => {
    await addOrphans(d);
    const r = await runBin([...d.args, 'placement', 'audit', '--delete', '--all-resource-classes', '--format', 'json']);
    expect(r.code).toBe(4);
    const journal = /^journal: (.+)$/m.exec(r.stderr)?.[1];
    expect(journal?.startsWith(join(d.dir, 'journal', 'placement-audit-'))).toBe(true);
    expect(existsSync(journal ?? '')).toBe(true);
    const doc = JSON.parse(r.stdout) as { changed: boolean; processed: number; journal: string; orphans: Array<{ consumer_uuid: string; status: string; scope: string; resources: object }> };
    expect(doc).toMatchObject({ changed: true, processed: 5, journal, exit_code: 4 });
    expect(doc.orphans.every((o) => o.status === 'deleted')).toBe(true);
    expect(doc.orphans.find((o) => o.consumer_uuid === BAREMETAL)).toMatchObject({ scope: 'all', resources: { CUSTOM_BAREMETAL: 1 } });
    expect(await d.knex('placement')('consumers').where('uuid', BAREMETAL)).toEqual([]);
    expect((await runBin([...d.args, 'placement', 'audit', '--all-resource-classes'])).code).toBe(0);
  });
});

// --delete stopped by a delete that fails for another reason than a
// conflict: the error says in its document whether anything was deleted
// before. A trigger on placement's allocations refuses one consumer's rows
// (MariaDB). The orphans are deleted in the order of the verbose lines:
// MULTI's share on compute-2 first, then ORPHAN's on compute-3.
describeMysql('placement audit --delete: a delete that fails', () => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'pf');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  for (const [which, consumer, changed] of [
    ['after one was deleted', ORPHAN, true],
    ['at the first one', MULTI, false],
  ] as const) {
    it(`fails ${which}: exit 255, changed ${changed}; the refused rows stay; the re-run finishes; undo restores`, async () => {
      await addOrphans(d);
      const p = d.knex('placement');
      const before = await dump(p, PLACEMENT_TABLES);
      await p.raw(
        `CREATE TRIGGER refuse_one BEFORE DELETE ON allocations FOR EACH ROW BEGIN IF OLD.consumer_id = '${consumer}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test'; END IF; END`,
      );
      const r = await runBin([...d.args, 'placement', 'audit', '--delete', '--format', 'json']);
      expect(r.code, r.stderr).toBe(255);
      const doc = JSON.parse(r.stdout) as { changed: boolean; error: { kind: string; message: string; exit_code: number } };
      expect(doc.changed).toBe(changed);
      expect(doc.error).toMatchObject({ exit_code: 255 });
      expect(doc.error.message).toContain(consumer);
      const journal = /^journal: (\S+)$/m.exec(r.stderr)?.[1] ?? '';
      expect(r.stderr).toBe(`journal: ${journal}\n`);
      const left = async (c: string): Promise<number> => ((await p('allocations').where('consumer_id', c)) as unknown[]).length;
      expect(await left(consumer)).toBe(2);
      // The run stopped at the refused consumer: ORPHAN's rows stay either way;
      // MULTI's share on compute-2 is the first delete: gone when the failure came after it.
      expect(await left(ORPHAN)).toBe(2);
      expect(await left(MULTI)).toBe(changed ? 1 : 2);
      await p.raw('DROP TRIGGER refuse_one');
      const again = await runBin([...d.args, 'placement', 'audit', '--delete', '--journal', join(d.dir, 'again.jsonl')]);
      expect(again.code, again.stderr).toBe(4);
      expect(await left(ORPHAN)).toBe(0);
      expect(await left(MULTI)).toBe(0);
      // Undo both journals, the last first: every row as before.
      expect((await runBin([...d.args, 'undo', join(d.dir, 'again.jsonl'), '--apply', '--journal', join(d.dir, 'undo-again.jsonl')])).code).toBe(4);
      const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo-first.jsonl')]);
      expect(undo.code, undo.stderr).toBe(changed ? 4 : 0);
      expect(await dump(p, PLACEMENT_TABLES)).toEqual(before);
    }, 180_000);
  }
});
