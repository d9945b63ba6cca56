// `audit` judges a cloud of several cells one cell at a time (issue 41:
// operations/read/audit-by-cell.ts). On SQLite and MariaDB, on two generated
// cells with what each part of the walk must judge:
//  - in a cell: orphans, stale providers of its deleted nodes, unmapped
//    hosts, an instance without allocation, a share on another node, an
//    orphaned consumer, a provider holding a node's name, a host of the cell
//    mapped to the other cell;
//  - beside a cell: a sharing provider that both cells' instances use;
//  - in the last part: a stale provider no node names, with an instance of
//    each cell and an orphaned consumer on it; another whose child holds a
//    share of a consumer that a cell judges too (it holds a share of a
//    node); a consumer only on the sharing provider; a stale host mapping,
//    and a mapping whose host only an instance is on.
// The findings must be exactly the whole snapshot's, and the walk must not
// have fallen back to it. Then what a cell cannot judge alone (a consumer in
// both cells, a host both cells hold) makes it read the cloud whole, and the
// findings are still the whole snapshot's; so does a provider tree that
// would be judged in two parts (a child named after a node, under a root no
// node names).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestDeployment, describeEachDialect, generateTestCloud, useDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { auditSnapshot, countFindings, type Finding } from '../../src/domain/audit/index.js';
import { eachAllocationRowOf } from '../../src/db/placement/audit-reads.js';
import { runAudit } from '../../src/operations/audit.js';
import { WHOLE_READ } from '../../src/operations/read/recipes.js';
import { readSnapshot } from '../../src/operations/read/snapshot.js';
import { insertAllocations, insertHostMapping, insertInventories, insertProviderTraits, insertResourceProvider, insertService } from '../../src/sandbox/rows.js';

interface Both {
  readonly byCell: readonly Finding[];
  readonly whole: readonly Finding[];
  readonly progress: readonly string[];
}

describeEachDialect('the audit by cell', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'empty', 'abc');
    await generateTestCloud(d, { hostsPerCell: 10, instancesPerCell: 10, orphanFraction: 0.2, staleProviderFraction: 0.2, unmappedFraction: 0.2 });
    await addCrossCellState(d);
  }, 120_000);
  afterEach(async () => {
    await d.cleanup();
  });

  async function both(): Promise<Both> {
    return useDeployment(d, async (dep) => {
      const progress: string[] = [];
      const byCell = (await runAudit(dep, { progress: (line) => progress.push(line) })).findings;
      const whole = auditSnapshot(await readSnapshot(dep, WHOLE_READ));
      return { byCell, whole, progress };
    });
  }

  it('finds exactly what the audit of the whole snapshot finds, one cell at a time', async () => {
    const { byCell, whole, progress } = await both();
    expect(progress.some((l) => l.startsWith('reading the keys of cell'))).toBe(true);
    expect(progress.filter((l) => l.includes('reading every cell at once'))).toEqual([]);
    expect(byCell).toEqual(whole);
    const counts = countFindings(byCell);
    for (const kind of ['orphan-node-service-deleted', 'provider-without-node', 'stale-allocation', 'orphaned-allocation', 'instance-without-allocation', 'allocation-on-other-node', 'stale-mapping', 'mapping-host-has-instances', 'wrong-cell-mapping', 'provider-name-conflict', 'unmapped-service'] as const)
      expect([kind, counts[kind]]).not.toEqual([kind, 0]);
    // The stale provider no node names holds an instance of each cell and an orphaned consumer.
    expect(byCell.filter((f) => f.kind === 'stale-allocation' && f.summary.includes('(nameless-stale)')).map((f) => f.objects['class']).sort()).toEqual(['evacuation-leftover', 'evacuation-leftover', 'orphaned']);
  }, 120_000);

  it('hands over each allocation of the consumers asked once, though a case variant asked in another batch brings it again', async () => {
    const p = d.knex('placement');
    const upper = randomUUID().toUpperCase();
    const provider = Number(((await p('resource_providers').select('id').orderBy('id').first()) as { id: number }).id);
    await insertAllocations(p, [{ providerId: provider, consumerUuid: upper, resourceClass: 'VCPU', used: 1 }]);
    // The upper-case id in the first batch of 1,000, the lower-case one in the second.
    const asked = [upper, ...Array.from({ length: 1000 }, () => randomUUID()), upper.toLowerCase()];
    const ids: number[] = [];
    await useDeployment(d, async (dep) => eachAllocationRowOf((await dep.placement()).knex, asked, (id) => ids.push(id)));
    expect(ids.length).toBe(1);
    expect(new Set(ids).size).toBe(ids.length);
  }, 60_000);

  it('reads the cloud whole when a consumer holds allocations in both cells, and finds the same', async () => {
    const p = d.knex('placement');
    const [one, two] = await Promise.all([instanceOn(d.knex('cell1')), instanceOn(d.knex('cell2'))]);
    await insertAllocations(p, [{ providerId: await providerNamed(p, two.node), consumerUuid: one.uuid, resourceClass: 'VCPU', used: 1 }]);
    const { byCell, whole, progress } = await both();
    expect(progress.filter((l) => l.includes('reading every cell at once'))).toEqual([`consumer ${one.uuid} holds allocations on providers of two cells: reading every cell at once…`]);
    expect(byCell).toEqual(whole);
  }, 120_000);

  it('reads the cloud whole when a provider tree no node names holds a child named after a node, and finds the same', async () => {
    const p = d.knex('placement');
    const node = (await instanceOn(d.knex('cell2'))).node;
    await p('resource_providers').where('name', node).update({ name: `${node}-renamed` });
    const root = await insertResourceProvider(p, { uuid: randomUUID(), name: 'tree-root' });
    await insertProviderTraits(p, root, ['COMPUTE_NODE']);
    await insertResourceProvider(p, { uuid: randomUUID(), name: node, parentId: root });
    const { byCell, whole, progress } = await both();
    expect(progress.filter((l) => l.includes('reading every cell at once')).length).toBe(1);
    expect(byCell).toEqual(whole);
    expect(byCell.filter((f) => f.kind === 'provider-without-node' && f.summary.includes('(tree-root)')).map((f) => f.objects['children'])).toEqual([1]);
  }, 120_000);

  it('reads the cloud whole when both cells hold one host, and finds the same', async () => {
    const one = await instanceOn(d.knex('cell1'));
    await insertService(d.knex('cell2'), { uuid: randomUUID(), host: one.host.toUpperCase(), lastSeenUp: '2026-01-01 00:00:00' });
    const { byCell, whole, progress } = await both();
    expect(progress.filter((l) => l.includes('reading every cell at once'))).toEqual(['cells share 1 host(s): reading every cell at once…']);
    expect(byCell).toEqual(whole);
  }, 120_000);
});

async function instanceOn(cell: Knex): Promise<{ uuid: string; host: string; node: string }> {
  const row = (await cell('instances').select('uuid', 'host', 'node').where('deleted', 0).orderBy('id').first()) as { uuid: string; host: string; node: string } | undefined;
  if (row === undefined) throw new Error('no instance');
  return row;
}

async function providerNamed(p: Knex, name: string): Promise<number> {
  const row = (await p('resource_providers').select('id').where('name', name).first()) as { id: number } | undefined;
  if (row === undefined) throw new Error(`no provider named ${name}`);
  return Number(row.id);
}

/** What each part of the walk must judge (see the head of this file). */
async function addCrossCellState(d: TestDeployment): Promise<void> {
  const p = d.knex('placement');
  const api = d.knex('api');
  const [c1, c2] = [d.knex('cell1'), d.knex('cell2')];
  const ones = (await c1('instances').select('uuid', 'host', 'node').where('deleted', 0).orderBy('id')) as Array<{ uuid: string; host: string; node: string }>;
  const twos = (await c2('instances').select('uuid', 'host', 'node').where('deleted', 0).orderBy('id')) as Array<{ uuid: string; host: string; node: string }>;
  const [a1, b1, e1] = ones as [(typeof ones)[0], (typeof ones)[0], (typeof ones)[0]];
  const [a2, b2, e2, f2] = twos as [(typeof twos)[0], (typeof twos)[0], (typeof twos)[0], (typeof twos)[0]];
  // In a cell: an instance without allocation, a share on another node of its cell, an orphaned consumer on a node.
  await p('allocations').where('consumer_id', b2.uuid).delete();
  await insertAllocations(p, [
    { providerId: await providerNamed(p, b1.node), consumerUuid: a1.uuid, resourceClass: 'VCPU', used: 1 },
    { providerId: await providerNamed(p, a2.node), consumerUuid: randomUUID(), resourceClass: 'MEMORY_MB', used: 128 },
  ]);
  // A provider holding a cell1 node's name in upper case, under another uuid (the node's own provider renamed).
  await p('resource_providers').where('name', e1.node).update({ name: `${e1.node}-renamed` });
  const blocker = await insertResourceProvider(p, { uuid: randomUUID(), name: e1.node.toUpperCase() });
  await insertProviderTraits(p, blocker, ['COMPUTE_NODE']);
  // A host of cell2 mapped to cell1.
  await api('host_mappings').where('host', e2.host).update({ cell_id: d.dbs.cellIds.cell1 });
  // Beside the cells: a sharing provider both cells' instances use, and a consumer only there.
  const sharing = await insertResourceProvider(p, { uuid: randomUUID(), name: 'shared-storage' });
  await insertProviderTraits(p, sharing, ['MISC_SHARES_VIA_AGGREGATE']);
  await insertInventories(p, [{ providerId: sharing, resourceClass: 'DISK_GB', total: 10000 }]);
  // The last part: a stale provider no node names, with an instance of each cell and an orphaned consumer on it.
  const stale = await insertResourceProvider(p, { uuid: randomUUID(), name: 'nameless-stale' });
  await insertProviderTraits(p, stale, ['COMPUTE_NODE']);
  await insertAllocations(p, [
    { providerId: sharing, consumerUuid: a1.uuid, resourceClass: 'DISK_GB', used: 10 },
    { providerId: sharing, consumerUuid: a2.uuid, resourceClass: 'DISK_GB', used: 10 },
    { providerId: sharing, consumerUuid: randomUUID(), resourceClass: 'DISK_GB', used: 5 },
    { providerId: stale, consumerUuid: e1.uuid, resourceClass: 'VCPU', used: 1 },
    { providerId: stale, consumerUuid: f2.uuid, resourceClass: 'VCPU', used: 1 },
    { providerId: stale, consumerUuid: randomUUID(), resourceClass: 'VCPU', used: 2 },
  ]);
  // An orphaned consumer of a cell1 node that also holds a share of the stale tree's child: the cell judges it (its
  // orphaned allocation on the node; not on the stale tree), the last part judges the tree (a stale allocation).
  const root = await insertResourceProvider(p, { uuid: randomUUID(), name: 'nameless-stale-root' });
  await insertProviderTraits(p, root, ['COMPUTE_NODE']);
  const child = await insertResourceProvider(p, { uuid: randomUUID(), name: 'nameless-stale-child', parentId: root });
  const both = randomUUID();
  await insertAllocations(p, [
    { providerId: await providerNamed(p, b1.node), consumerUuid: both, resourceClass: 'MEMORY_MB', used: 64 },
    { providerId: child, consumerUuid: both, resourceClass: 'VCPU', used: 1 },
  ]);
  // A stale host mapping (to cell1), and one whose host only an instance of cell2 is on.
  await insertHostMapping(api, { cellId: d.dbs.cellIds.cell1, host: 'long-gone' });
  await insertHostMapping(api, { cellId: d.dbs.cellIds.cell2, host: 'half-gone' });
  await c2('instances').where('uuid', twos[4]?.uuid ?? '').update({ host: 'half-gone' });
}
