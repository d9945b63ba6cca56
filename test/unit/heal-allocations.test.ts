// The pure parts of heal_allocations: the flavor's resources as nova's
// resources_from_flavor computes them, and nova's walk (pages, --max-count,
// exit codes) over a planned snapshot.
import { describe, expect, it } from 'vitest';
import { parseEmbeddedFlavor, resourcesFromFlavor, type EmbeddedFlavor } from '../../src/domain/flavor-resources.js';
import { allocationRowsScope, capacityScope, openHealWalk, planHealAllocations, type HealCellPart, type HealInput, type HealInstanceRec } from '../../src/domain/heal-allocations.js';
import type { ComputeNodeRec } from '../../src/domain/model.js';
import { instanceFlavorJson } from '../../src/sandbox/rows.js';

const flavor = (extra: Record<string, string> = {}, more: Partial<EmbeddedFlavor> = {}): EmbeddedFlavor => ({
  vcpus: 4,
  memoryMb: 2048,
  rootGb: 20,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: Object.entries(extra),
  ...more,
});

describe('resourcesFromFlavor', () => {
  it.each([
    ['plain', flavor(), false, [['VCPU', 4], ['MEMORY_MB', 2048], ['DISK_GB', 20]]],
    ['volume-backed: no root disk', flavor(), true, [['VCPU', 4], ['MEMORY_MB', 2048]]],
    ['swap rounded up to GB, ephemeral added', flavor({}, { swap: 1025, ephemeralGb: 5 }), false, [['VCPU', 4], ['MEMORY_MB', 2048], ['DISK_GB', 27]]],
    ['extra specs first and overriding', flavor({ 'resources:MEMORY_MB': '1024' }), false, [['MEMORY_MB', 1024], ['VCPU', 4], ['DISK_GB', 20]]],
    [
      'ironic: zeros leave no row',
      flavor({ 'resources:CUSTOM_BAREMETAL_GOLD': '1', 'resources:VCPU': '0', 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0' }),
      false,
      [['CUSTOM_BAREMETAL_GOLD', 1]],
    ],
    ['dedicated CPUs are PCPU', flavor({ 'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate' }), false, [['PCPU', 5], ['MEMORY_MB', 2048], ['DISK_GB', 20]]],
    ['suffixed groups are summed; bad classes and amounts ignored', flavor({ 'resources1:VCPU': '1', 'resources2:VCPU': '2', 'resources:NOPE': '1', 'resources:DISK_GB': '-1' }), false, [['VCPU', 3], ['MEMORY_MB', 2048], ['DISK_GB', 20]]],
  ])('%s', (_name, f, bfv, expected) => {
    expect(resourcesFromFlavor(f, bfv)).toEqual({ ok: true, resources: expected });
  });

  it('refuses what needs more than the flavor', () => {
    expect(resourcesFromFlavor(flavor({ 'hw:cpu_policy': 'mixed' }), false).ok).toBe(false);
    expect(resourcesFromFlavor(flavor({ 'hw:mem_encryption': 'True' }), false).ok).toBe(false);
  });

  it('parses the flavor as Nova embeds it in instance_extra', () => {
    const text = instanceFlavorJson({ id: 3, vcpus: 2, memoryMb: 512, rootGb: 1, swap: 512, extraSpecs: { 'resources:VGPU': '1' } }, '2026-01-01 00:00:00');
    expect(parseEmbeddedFlavor(text)).toEqual({ vcpus: 2, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 512, extraSpecs: [['resources:VGPU', '1']] });
    expect(parseEmbeddedFlavor('{"cur": null}')).toBeUndefined();
    expect(parseEmbeddedFlavor(null)).toBeUndefined();
  });
});

describe('planHealAllocations', () => {
  const C = 'cccccccc-0000-4000-8000-000000000001';
  const node: ComputeNodeRec = {
    cellUuid: C, id: 1, uuid: 'n0000000-0000-4000-8000-000000000001', host: 'h1', hypervisorHostname: 'h1.example', hypervisorType: 'QEMU',
    serviceId: 1, mapped: 1, createdAt: null, updatedAt: null, deleted: false,
  };
  const inst = (n: number, more: Partial<HealInstanceRec> = {}): HealInstanceRec => ({
    cellUuid: C, id: n, uuid: `i000000${n}-0000-4000-8000-000000000000`, host: 'h1', node: 'h1.example', taskState: null, projectId: 'p', userId: 'u',
    createdAt: `2026-01-01 00:00:0${n}`, flavor: flavor(), volumeBacked: false, ...more,
  });
  const input = (instances: HealInstanceRec[]): HealInput => ({
    cells: [{ uuid: '00000000-0000-0000-0000-000000000000', name: 'cell0', isCell0: true }, { uuid: C, name: 'cell1', isCell0: false }],
    instances,
    computeNodes: [node],
    placement: {
      providers: [{ id: 7, uuid: node.uuid ?? '', name: 'h1.example', generation: 3, rootId: 7, parentId: null, traits: [], aggregateCount: 0 }],
      inventories: (['VCPU', 'MEMORY_MB', 'DISK_GB'] as const).map((rc, i) => ({ id: i + 1, providerId: 7, resourceClassId: i, resourceClass: rc, total: 100000, reserved: 0, minUnit: 1, maxUnit: 100000, stepSize: 1, allocationRatio: 1 })),
      allocations: [],
      consumers: [],
    },
    resourceClassIds: new Map([['VCPU', 0], ['MEMORY_MB', 1], ['DISK_GB', 2]]),
    projects: new Map(),
    users: new Map(),
  });
  const opts = { instanceUuid: undefined, maxCount: 50, unlimited: true, dryRun: false, force: false };

  it('heals oldest first, planning generations as its own writes leave them; exit 0', () => {
    const plan = planHealAllocations(input([inst(2), inst(1), inst(3, { taskState: 'spawning' })]), opts);
    const heals = plan.steps.flatMap((s) => (s.kind === 'heal' ? [s] : []));
    expect(heals.map((h) => h.instanceUuid)).toEqual([inst(1).uuid, inst(2).uuid]);
    const gens = heals.map((h) => (h.unit.changes[0]?.change.kind === 'put-allocations' ? h.unit.changes[0].change.allocations[0]?.providerGeneration : -1));
    expect(gens).toEqual([3, 4]);
    expect(plan.end).toMatchObject({ code: 0, text: 'Processed 2 instances.' });
  });

  it('--max-count stops with 1 at the end of a page; a dry run counts nothing (4)', () => {
    expect(planHealAllocations(input([inst(1), inst(2), inst(3)]), { ...opts, maxCount: 2, unlimited: false }).end).toMatchObject({ code: 1, text: 'Max count reached. Processed 2 instances.' });
    expect(planHealAllocations(input([inst(1), inst(2)]), { ...opts, dryRun: true }).end).toMatchObject({ code: 4, text: 'Processed 0 instances.' });
  });

  it('a missing compute node is exit 2; a vGPU flavor is exit 8; no capacity is exit 3', () => {
    expect(planHealAllocations(input([inst(1, { node: 'other' })]), opts).end).toMatchObject({ code: 2, text: 'Compute host h1 could not be found.' });
    expect(planHealAllocations(input([inst(1, { flavor: flavor({ 'resources:VGPU': '1' }) })]), opts).end.code).toBe(8);
    const big = planHealAllocations(input([inst(1, { flavor: flavor({}, { vcpus: 200000 }) })]), opts).end;
    expect(big).toMatchObject({ code: 3, text: `Failed to update allocations for consumer ${inst(1).uuid}. Error: ` });
    expect(big.detail).toContain('would violate inventory constraints');
  });

  describe('one cell at a time (openHealWalk)', () => {
    const C2 = 'cccccccc-0000-4000-8000-000000000002';
    const cells = [
      { uuid: C, name: 'cell1', isCell0: false },
      { uuid: C2, name: 'cell2', isCell0: false },
    ];
    // Both cells' instances land on the same provider (a node whose uuid both cells' nodes share, as after a cross-cell move).
    const part = (cellUuid: string, instances: HealInstanceRec[]): HealCellPart => {
      const whole = input(instances);
      return {
        instances: instances.map((i) => ({ ...i, cellUuid })),
        computeNodes: [{ ...node, cellUuid }],
        placement: { providers: whole.placement.providers, consumers: [], withAllocations: new Set<string>(), allocations: [] },
        capacity: { providerIds: new Set([7]), inventories: whole.placement.inventories, used: new Map([['7:0', 99990]]) },
      };
    };
    const lookups = { resourceClassIds: new Map([['VCPU', 0], ['MEMORY_MB', 1], ['DISK_GB', 2]]), projects: new Map<number, string>(), users: new Map<number, string>() };

    it("carries the planned writes' generations and usage from one cell to the next", () => {
      const walk = openHealWalk(lookups, opts);
      walk.cell(cells[0]!, part(C, [inst(1)]));
      expect(walk.wants(cells[1]!)).toBe(true);
      // cell2 is read as the database is now: generation 3 and 99,990 VCPU used; cell1's planned write makes them 4 and 99,994.
      walk.cell(cells[1]!, part(C2, [inst(2, { flavor: flavor({}, { vcpus: 7 }) })]));
      const plan = walk.finish();
      const heals = plan.steps.flatMap((s) => (s.kind === 'heal' ? [s] : []));
      expect(heals.map((h) => (h.unit.changes[0]?.change.kind === 'put-allocations' ? h.unit.changes[0].change.allocations[0]?.providerGeneration : -1))).toEqual([3]);
      // 99,994 + 7 > 100,000: the second write is refused, as a whole walk would refuse it.
      expect(plan.end).toMatchObject({ code: 3, text: `Failed to update allocations for consumer ${inst(2).uuid}. Error: ` });
    });

    it('wants no further cell once --max-count is reached, and holds no verbose line when told', () => {
      const walk = openHealWalk(lookups, { ...opts, maxCount: 1, unlimited: false, messages: false });
      walk.cell(cells[0]!, part(C, [inst(1)]));
      expect(walk.wants(cells[1]!)).toBe(false);
      const plan = walk.finish();
      expect(plan.steps.map((s) => s.kind)).toEqual(['heal']);
      expect(plan.end).toMatchObject({ code: 1, text: 'Max count reached. Processed 1 instances.' });
    });

    it('names the capacity to read: none for a healthy instance, the node\'s provider for one without allocations; asking beyond it is an internal error', () => {
      const healthy = part(C, [inst(1)]);
      const withAllocations = {
        ...healthy,
        placement: {
          ...healthy.placement,
          allocations: [{ id: 1, providerId: 7, consumerUuid: inst(1).uuid, resourceClassId: 0, resourceClass: 'VCPU', used: 4 }],
          withAllocations: new Set([inst(1).uuid]),
          consumers: [{ id: 1, uuid: inst(1).uuid, generation: 1, projectId: 1, userId: 1 }],
        },
      };
      const known = { ...lookups, projects: new Map([[1, 'p']]), users: new Map([[1, 'u']]) };
      expect(capacityScope(known, C, withAllocations, opts)).toEqual([]);
      expect(capacityScope(known, C, healthy, opts)).toEqual([7]);
      expect(capacityScope(known, C, withAllocations, { ...opts, force: true })).toEqual([7]);
      const walk = openHealWalk(known, opts);
      expect(() => walk.cell(cells[0]!, { ...healthy, capacity: { providerIds: new Set(), inventories: [], used: new Map() } })).toThrow(/capacityScope did not name/);
    });

    it("names the allocation rows to read: none for a healthy instance, an instance's own when nova re-writes them; using others' is an internal error", () => {
      const base = part(C, [inst(1)]);
      const held = { ...base, placement: { ...base.placement, withAllocations: new Set([inst(1).uuid]), consumers: [{ id: 1, uuid: inst(1).uuid, generation: 1, projectId: 1, userId: 1 }] } };
      const same = { ...lookups, projects: new Map([[1, 'p']]), users: new Map([[1, 'u']]) };
      const other = { ...lookups, projects: new Map([[1, 'another-project']]), users: new Map([[1, 'u']]) };
      expect(allocationRowsScope(same, C, held, opts)).toEqual([]);
      expect(allocationRowsScope(same, C, held, { ...opts, force: true })).toEqual([inst(1).uuid]);
      expect(allocationRowsScope(other, C, held, opts)).toEqual([inst(1).uuid]);
      // Without allocations nova creates them from the flavor: no rows to read.
      expect(allocationRowsScope(other, C, base, opts)).toEqual([]);
      expect(() => openHealWalk(other, opts).cell(cells[0]!, held)).toThrow(/allocationRowsScope did not name/);
    });
  });
});
