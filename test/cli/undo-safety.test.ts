// Issue 13 item 5, on MariaDB through the built binary: undo changes nothing
// without --apply and then simulates the restore in order (a rebalance
// journal's changes depend on each other through compute_nodes' unique key);
// a change whose restore a retry can never make succeed (Nova re-created a
// provider with the same name) is a listed refusal, exit 5, not exit 2.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { LIBVIRT_HOSTS, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';

async function databases(d: TestDeployment): Promise<Record<string, string>> {
  return Object.fromEntries(Object.entries(await snapshotDeployment(d)).filter(([k]) => !k.startsWith('files of ')));
}

/** The libvirt scenario's compute-3 loses its nova-compute service (soft-deleted): its node and provider become orphans. */
async function deleteServiceOfCompute3(d: TestDeployment): Promise<void> {
  const cell = d.knex('cell1');
  await cell('services').update({ deleted: cell.raw('id'), deleted_at: '2026-01-01 00:00:00' }).where('host', 'compute-3');
}

/** compute-3 orphaned (unless already), then `cleanup_orphans --apply` (exit 4); the path of its journal. */
async function cleanupOrphansApplied(d: TestDeployment, options: { serviceAlreadyGone?: boolean } = {}): Promise<string> {
  if (options.serviceAlreadyGone !== true) await deleteServiceOfCompute3(d);
  const journal = join(d.dir, 'orphans.jsonl');
  const applied = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--journal', journal]);
  expect(applied.code, applied.stderr).toBe(4);
  return journal;
}

describeMysql('undo [mariadb]', () => {
  let d: TestDeployment;
  afterEach(async () => {
    await d.cleanup();
  });

  it('a rebalance journal: without --apply (or with --dry-run) the restore is simulated in order, exit 3, nothing changes; --apply restores it', async () => {
    d = await createTestDeployment('mysql', 'ironic-failover', 'ud');
    const original = await databases(d);
    const journal = join(d.dir, 'rebalance.jsonl');
    const applied = await runBin([...d.args, 'compute_node', 'rebalance', '--apply', '--journal', journal]);
    expect(applied.code, applied.stderr).toBe(4);
    const after = await databases(d);

    for (const extra of [[], ['--dry-run']]) {
      const dry = await runBin([...d.args, 'undo', journal, ...extra]);
      expect(dry.code, dry.stdout + dry.stderr).toBe(3);
      expect(dry.stdout).toContain('2 change(s) would be restored, 0 already restored, 0 would be refused.');
      expect(dry.stdout).toContain('Nothing was changed. Re-run with --apply to restore.');
      expect(dry.stderr).not.toContain('journal:');
      expect(await databases(d)).toEqual(after);
    }

    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
    expect(undo.code, undo.stdout + undo.stderr).toBe(4);
    expect(undo.stdout).toContain('2 change(s) restored');
    expect(await databases(d)).toEqual(original);
    const again = await runBin([...d.args, 'undo', journal]);
    expect(again.code, again.stdout).toBe(0);
  }, 60_000);

  it('nova re-created a provider with the deleted one\'s name: that change is refused and listed (exit 5), the rest is restored', async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'ud');
    const cell = d.knex('cell1');
    const journal = await cleanupOrphansApplied(d);
    // nova-compute came back under a new node uuid and created its provider, with the same name.
    const placement = d.knex('placement');
    const [id] = await placement('resource_providers').insert({ uuid: randomUUID(), name: libvirtHypervisorHostname('compute-3'), generation: 0, created_at: '2026-06-01 00:00:00' });
    await placement('resource_providers').update({ root_provider_id: id }).where('id', id);
    const before = await databases(d);

    const dry = await runBin([...d.args, 'undo', journal]);
    expect(dry.code, dry.stdout + dry.stderr).toBe(5);
    expect(dry.stdout).toMatch(/1 change\(s\) would be restored, 0 already restored, 1 would be refused\./);
    expect(dry.stdout).toMatch(/refused: change 1 \(orphan-node:[^)]+\): the placement database .* refuses the restored rows: .*Duplicate entry/);
    expect(await databases(d)).toEqual(before);

    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--format', 'json']);
    expect(undo.code, undo.stdout + undo.stderr).toBe(5);
    const doc = JSON.parse(undo.stdout) as { items: Array<{ seq: number; status: string; reason?: string }> };
    expect(doc.items.map((i) => [i.seq, i.status])).toEqual([
      [2, 'restored'],
      [1, 'refused'],
    ]);
    expect(doc.items[1]?.reason).toContain('Duplicate entry');
    // The compute node is back; the new provider is untouched.
    const node = (await cell('compute_nodes').where('uuid', LIBVIRT_HOSTS[2]?.nodeUuid ?? '').first()) as { deleted: number };
    expect(Number(node.deleted)).toBe(0);
    expect(await placement('resource_providers').where('name', libvirtHypervisorHostname('compute-3')).select('id')).toEqual([{ id }]);
  }, 60_000);

  it('an undo that fails after restoring some changes says so: exit 2, the JSON error document has changed: true; a re-run finishes', async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'ud');
    const original = await databases(d);
    const cell = d.knex('cell1');
    await deleteServiceOfCompute3(d);
    const withServiceGone = await databases(d);
    const journal = await cleanupOrphansApplied(d, { serviceAlreadyGone: true });
    // Undo runs newest first: the compute node's row (cell) is restored, then
    // the provider's restore cannot start: its table is gone.
    const placement = d.knex('placement');
    await placement.raw('RENAME TABLE inventories TO inventories_away');
    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--format', 'json', '--journal', join(d.dir, 'undo.jsonl')]);
    expect(undo.code, undo.stdout + undo.stderr).toBe(2);
    const doc = JSON.parse(undo.stdout) as { changed: boolean; error: { kind: string; message: string } };
    expect(doc.changed, undo.stdout).toBe(true);
    // The placement database is opened (and its schema checked) only when its first change is reached.
    expect(doc.error.message).toMatch(/placement database .* is not a Nova placement database: table "inventories" is missing/);
    const node = (await cell('compute_nodes').where('uuid', LIBVIRT_HOSTS[2]?.nodeUuid ?? '').first()) as { deleted: number };
    expect(Number(node.deleted)).toBe(0);
    await placement.raw('RENAME TABLE inventories_away TO inventories');
    const again = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo2.jsonl')]);
    expect(again.code, again.stdout + again.stderr).toBe(4);
    expect(await databases(d)).toEqual(withServiceGone);
    expect(original).not.toEqual(withServiceGone);
  }, 60_000);

  it('a hand-edited journal whose changes could reach other rows (empty key, a key that is an object, a table that is no identifier, an image of another row, an unknown database or unmapped cell) is refused whole: exit 127, one line, nothing restored', async () => {
    d = await createTestDeployment('mysql', 'libvirt', 'ud');
    const journal = await cleanupOrphansApplied(d);
    const afterApply = await databases(d);
    const { readFileSync, writeFileSync } = await import('node:fs');
    const lines = readFileSync(journal, 'utf8').trimEnd().split('\n');
    const lineNo = lines.findIndex((l) => (JSON.parse(l) as { type: string }).type === 'change');
    type Image = { table: string; key: Record<string, unknown>; before: Record<string, unknown> | null; after: Record<string, unknown> | null };
    type Entry = { seq: number; target: Record<string, unknown>; rows: Image[] };
    const image = (edit: (img: Image) => void) => (entry: Entry) => edit(entry.rows[0] as Image);
    const corrupt = (detail: RegExp): RegExp => new RegExp(`corrupt at line ${lineNo + 1}: change \\d+: ${detail.source}`);
    const edits: Array<readonly [string, (entry: Entry) => void, RegExp]> = [
      ['empty key', image((img) => (img.key = {})), corrupt(/row image 1 \(\w+\) has no key/)],
      ['key value an object', image((img) => (img.key = { id: { id: 1 } })), corrupt(/row image 1 \(\w+\) has a key id that is not a number or a string/)],
      ['table no identifier', image((img) => (img.table = 'compute_nodes` WHERE 1 -- ')), corrupt(/row image 1 names no table/)],
      ['image of another row', image((img) => (img.key = { id: 999999 })), corrupt(/row image 1 \(\w+\) has a \w+-image of another row than its key names \(id\)/)],
      ['no such database', (entry) => (entry.target = { db: 'nova' }), corrupt(/its database is none of the API, placement, or a cell named by uuid/)],
      ['a cell that is not mapped', (entry) => (entry.target = { db: 'cell', cellUuid: randomUUID() }), /has a change \(\d+\) in cell [0-9a-f-]{36}, which is not in cell_mappings; nothing was restored/],
    ];
    for (const [name, edit, message] of edits) {
      const entry = JSON.parse(lines[lineNo] as string) as Entry;
      edit(entry);
      const tampered = join(d.dir, `tampered-${name.replace(/ /g, '-')}.jsonl`);
      writeFileSync(tampered, [...lines.slice(0, lineNo), JSON.stringify(entry), ...lines.slice(lineNo + 1)].join('\n') + '\n');
      for (const extra of [[], ['--apply']]) {
        const r = await runBin([...d.args, 'undo', tampered, ...extra]);
        expect(r.code, `${name}: ${r.stdout}${r.stderr}`).toBe(127);
        expect(r.stdout).toBe('');
        expect(r.stderr.trim().split('\n'), name).toHaveLength(1);
        expect(r.stderr, name).toMatch(message);
      }
    }
    expect(await databases(d)).toEqual(afterApply);
    // The journal as written still undoes.
    const undo = await runBin([...d.args, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
    expect(undo.code, undo.stdout + undo.stderr).toBe(4);
  }, 60_000);
});
