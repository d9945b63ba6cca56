// nova-manage placement audit's orphan definition on small snapshots built in
// code (table-driven), the plan of deletes it carries, and the exact lines and
// exit codes it renders to.
import { describe, expect, it } from 'vitest';
import { auditPlacementAllocations, orphansOf, type PlacementAuditOptions, type PlacementAuditReport } from '../../src/domain/audit/nova-orphaned-allocations.js';
import type { AllocationRec, ComputeNodeRec, ConsumerRec, InstanceRec, MigrationRec, ProviderRec, Snapshot } from '../../src/domain/model.js';
import { STANDARD_RESOURCE_CLASSES } from '../../src/sandbox/rows.js';
import { placementAuditExitCode, pythonResourcesRepr, pythonStrRepr, renderPlacementAuditJson, renderPlacementAuditLines } from '../../src/cli/render-placement-audit.js';
import type { OrphanOutcome, PlacementAuditResult } from '../../src/operations/placement-audit.js';
import { u, uuidNames } from '../helpers/snapshot-builders.js';

const CELL1 = '11111111-1111-4111-8111-111111111111';
const CELL2 = '22222222-2222-4222-8222-222222222222';


let nextId = 1;

function node(name: string, host: string, over: Partial<ComputeNodeRec> = {}): ComputeNodeRec {
  return {
    cellUuid: CELL1,
    id: nextId++,
    uuid: u(name),
    host,
    hypervisorHostname: `${name}.example.org`,
    hypervisorType: 'QEMU',
    serviceId: null,
    mapped: 1,
    createdAt: null,
    updatedAt: null,
    deleted: false,
    ...over,
  };
}

function instance(name: string, host: string | null, nodeName: string | null, over: Partial<InstanceRec> = {}): InstanceRec {
  return { cellUuid: CELL1, id: nextId++, uuid: u(name), host, node: nodeName, vmState: 'active', taskState: null, ...over };
}

function migration(name: string, over: Partial<MigrationRec> = {}): MigrationRec {
  return {
    cellUuid: CELL1,
    id: nextId++,
    uuid: u(name),
    instanceUuid: null,
    sourceCompute: null,
    destCompute: null,
    sourceNode: null,
    destNode: null,
    status: 'running',
    migrationType: 'live-migration',
    ...over,
  };
}

/** A provider with a fixed id; root defaults to itself. */
function provider(id: number, name: string, over: Partial<ProviderRec> = {}): ProviderRec {
  return { id, uuid: u(name), name, generation: 3, rootId: id, parentId: null, traits: ['COMPUTE_NODE'], aggregateCount: 0, ...over };
}

function classId(rc: string): number {
  const i = STANDARD_RESOURCE_CLASSES.indexOf(rc);
  return i >= 0 ? i : 10000 + rc.length;
}

function alloc(providerId: number, consumer: string, rc: string, used: number): AllocationRec {
  return { id: nextId++, providerId, consumerUuid: u(consumer), resourceClassId: classId(rc), resourceClass: rc, used };
}

function consumer(name: string, generation = 1): ConsumerRec {
  return { id: nextId++, uuid: u(name), generation, projectId: 1, userId: 1 };
}

interface World {
  readonly nodes?: readonly ComputeNodeRec[];
  readonly instances?: readonly InstanceRec[];
  readonly migrations?: readonly MigrationRec[];
  readonly providers: readonly ProviderRec[];
  readonly allocations: readonly AllocationRec[];
  /** Default: a consumer row (generation 1) for every allocation's consumer. */
  readonly consumers?: readonly ConsumerRec[];
}

function snapshot(w: World): Snapshot {
  const consumers = w.consumers ?? [...new Set(w.allocations.map((a) => a.consumerUuid))].map((uuid) => ({ id: nextId++, uuid, generation: 1, projectId: 1, userId: 1 }));
  return {
    takenAt: 0,
    serviceDownTime: 60,
    cells: [],
    hostMappings: [],
    services: [],
    computeNodes: w.nodes ?? [],
    instances: w.instances ?? [],
    migrations: w.migrations ?? [],
    placement: { providers: w.providers, inventories: [], allocations: w.allocations, consumers },
    ironicNodes: undefined,
  };
}

const DEFAULT: PlacementAuditOptions = { allResourceClasses: false };

/** [provider name, consumer name] of every orphan, in audit order. */
function orphanNames(report: PlacementAuditReport): Array<[string, string]> {
  const names = uuidNames();
  return orphansOf(report).map(({ provider: p, orphan }) => [names.get(p.uuid) ?? p.uuid, names.get(orphan.consumerUuid) ?? orphan.consumerUuid]);
}

function keptNames(report: PlacementAuditReport): Array<[string, string]> {
  const names = uuidNames();
  if (report.kind !== 'audited') return [];
  return report.providers.flatMap((p) => p.kept.map((k): [string, string] => [names.get(p.uuid) ?? p.uuid, names.get(k.consumerUuid) ?? k.consumerUuid]));
}

const cn1 = node('cn1', 'compute-1');
const rp1 = provider(1, 'cn1');

describe('the orphan definition (nova-manage placement audit, §3.1)', () => {
  // `kept`: what nova calls orphaned and nova-reconcile never deletes (issue 13 item 1).
  const cases: Array<{ name: string; world: () => World; options?: PlacementAuditOptions; orphans: Array<[string, string]>; kept?: Array<[string, string]> }> = [
    {
      name: 'a live instance on the node (same host and node) is kept; a deleted one is orphaned',
      world: () => ({
        nodes: [cn1],
        instances: [instance('vm-live', 'compute-1', 'cn1.example.org')],
        providers: [rp1],
        allocations: [alloc(1, 'vm-live', 'VCPU', 2), alloc(1, 'vm-gone', 'VCPU', 1), alloc(1, 'vm-gone', 'MEMORY_MB', 512)],
      }),
      orphans: [['cn1', 'vm-gone']],
    },
    {
      name: 'host and node compare as the cell columns do: case- and trailing-space-insensitive',
      world: () => ({
        nodes: [cn1],
        instances: [instance('vm-case', 'Compute-1 ', 'CN1.example.org')],
        providers: [rp1],
        allocations: [alloc(1, 'vm-case', 'VCPU', 2)],
      }),
      orphans: [],
    },
    {
      name: 'a live instance on another node of the same host is orphaned here (nova matches host AND node)',
      world: () => ({
        nodes: [cn1, node('cn1b', 'compute-1')],
        instances: [instance('vm-other-node', 'compute-1', 'cn1b.example.org')],
        providers: [rp1],
        allocations: [alloc(1, 'vm-other-node', 'VCPU', 2)],
      }),
      // Kept: they are the live instance's last allocations.
      orphans: [],
      kept: [['cn1', 'vm-other-node']],
    },
    {
      name: 'an instance of the same host and node in another cell does not count',
      world: () => ({
        nodes: [cn1],
        instances: [instance('vm-cell2', 'compute-1', 'cn1.example.org', { cellUuid: CELL2 })],
        providers: [rp1],
        allocations: [alloc(1, 'vm-cell2', 'VCPU', 2)],
      }),
      orphans: [],
      kept: [['cn1', 'vm-cell2']],
    },
    {
      name: 'custom-class-only allocations are never reported by default (every ironic allocation)',
      world: () => ({ nodes: [cn1], providers: [rp1], allocations: [alloc(1, 'bm-gone', 'CUSTOM_BAREMETAL_GOLD', 1)] }),
      orphans: [],
    },
    {
      name: '--all-resource-classes makes the ironic orphan visible',
      world: () => ({ nodes: [cn1], providers: [rp1], allocations: [alloc(1, 'bm-gone', 'CUSTOM_BAREMETAL_GOLD', 1)] }),
      options: { allResourceClasses: true },
      orphans: [['cn1', 'bm-gone']],
    },
    {
      name: 'PCI_DEVICE, SRIOV_NET_VF, FPGA, PGPU and NET_PACKET_RATE_* are not nova classes either',
      world: () => ({
        nodes: [cn1],
        providers: [rp1],
        allocations: ['PCI_DEVICE', 'SRIOV_NET_VF', 'FPGA', 'PGPU', 'NET_PACKET_RATE_KILOPACKET_PER_SEC'].map((rc, i) => alloc(1, `other-${i}`, rc, 1)),
      }),
      orphans: [],
    },
    {
      name: 'any one nova class is enough: a custom class next to VCPU is reported',
      world: () => ({ nodes: [cn1], providers: [rp1], allocations: [alloc(1, 'mixed', 'CUSTOM_GPU', 1), alloc(1, 'mixed', 'PCPU', 4)] }),
      orphans: [['cn1', 'mixed']],
    },
    {
      name: 'each of the eight nova classes alone is reported',
      world: () => ({
        nodes: [cn1],
        providers: [rp1],
        allocations: ['VCPU', 'MEMORY_MB', 'DISK_GB', 'VGPU', 'NET_BW_EGR_KILOBIT_PER_SEC', 'NET_BW_IGR_KILOBIT_PER_SEC', 'PCPU', 'MEM_ENCRYPTION_CONTEXT'].map((rc, i) =>
          alloc(1, `rc-${i}`, rc, 10 + i),
        ),
      }),
      orphans: [0, 1, 2, 3, 4, 5, 6, 7].map((i) => ['cn1', `rc-${i}`] as [string, string]),
    },
    {
      name: 'a provider whose root is no live compute node has ALL its nova-class allocations orphaned, live instances included',
      world: () => ({
        nodes: [node('cn-deleted', 'compute-9', { deleted: true })],
        instances: [instance('vm-on-deleted', 'compute-9', 'cn-deleted.example.org')],
        providers: [provider(7, 'cn-deleted')],
        allocations: [alloc(7, 'vm-on-deleted', 'VCPU', 1), alloc(7, 'bm', 'CUSTOM_BAREMETAL', 1)],
      }),
      orphans: [],
      kept: [['cn-deleted', 'vm-on-deleted']],
    },
    {
      name: 'a sharing provider (root is itself, not a compute node) has its DISK_GB allocations orphaned',
      world: () => ({
        nodes: [cn1],
        instances: [instance('vm-live', 'compute-1', 'cn1.example.org')],
        providers: [rp1, provider(2, 'shared-disk', { traits: ['MISC_SHARES_VIA_AGGREGATE'] })],
        allocations: [alloc(1, 'vm-live', 'VCPU', 1), alloc(2, 'vm-live', 'DISK_GB', 20)],
      }),
      orphans: [],
      kept: [['shared-disk', 'vm-live']],
    },
    {
      name: "a child provider is judged by its root's compute node",
      world: () => ({
        nodes: [cn1],
        instances: [instance('vm-live', 'compute-1', 'cn1.example.org')],
        // Nova names a vGPU provider <node name>_<PCI address>.
        providers: [rp1, provider(2, 'cn1_pci_0000_81_00_0', { rootId: 1, parentId: 1, traits: [] })],
        allocations: [alloc(1, 'vm-live', 'VCPU', 1), alloc(2, 'vm-live', 'VGPU', 1), alloc(2, 'vm-gone', 'VGPU', 1)],
      }),
      orphans: [['cn1_pci_0000_81_00_0', 'vm-gone']],
    },
    {
      name: 'a child provider Nova did not create (a neutron agent) is never deleted from: kept',
      world: () => ({
        nodes: [cn1],
        providers: [rp1, provider(2, 'cn1:Open vSwitch agent', { rootId: 1, parentId: 1, traits: [] })],
        allocations: [alloc(2, 'port-gone', 'NET_BW_EGR_KILOBIT_PER_SEC', 1000)],
      }),
      orphans: [],
      kept: [['cn1:Open vSwitch agent', 'port-gone']],
    },
    {
      name: 'a live instance elsewhere keeps allocations on its own node: this stale share is deleted',
      world: () => ({
        nodes: [cn1, node('cn2', 'compute-2')],
        instances: [instance('vm-moved', 'compute-2', 'cn2.example.org')],
        providers: [rp1, provider(2, 'cn2')],
        allocations: [alloc(1, 'vm-moved', 'VCPU', 1), alloc(2, 'vm-moved', 'VCPU', 1)],
      }),
      orphans: [['cn1', 'vm-moved']],
    },
    {
      name: 'in-progress migrations of the node (source or destination) are kept; final or elsewhere are not',
      world: () => ({
        nodes: [cn1],
        migrations: [
          migration('mig-source', { sourceCompute: 'compute-1', sourceNode: 'cn1.example.org', destCompute: 'compute-2', destNode: 'cn2.example.org' }),
          migration('mig-dest', { sourceCompute: 'compute-2', sourceNode: 'cn2.example.org', destCompute: 'compute-1', destNode: 'cn1.example.org', status: 'finished' }),
          migration('mig-done', { sourceCompute: 'compute-1', sourceNode: 'cn1.example.org', status: 'confirmed' }),
          migration('mig-null', { sourceCompute: 'compute-1', sourceNode: 'cn1.example.org', status: null }),
          migration('mig-elsewhere', { sourceCompute: 'compute-1', sourceNode: 'other.example.org' }),
        ],
        providers: [rp1],
        allocations: ['mig-source', 'mig-dest', 'mig-done', 'mig-null', 'mig-elsewhere'].map((m, i) => alloc(1, m, 'VCPU', i + 1)),
      }),
      orphans: [
        ['cn1', 'mig-done'],
        ['cn1', 'mig-null'],
        ['cn1', 'mig-elsewhere'],
      ],
    },
    {
      name: 'an allocation without a consumer row is invisible (placement inner-joins consumers)',
      world: () => ({ nodes: [cn1], providers: [rp1], allocations: [alloc(1, 'no-consumer-row', 'VCPU', 1)], consumers: [] }),
      orphans: [],
    },
    {
      name: 'a provider without a root is not listed by GET /resource_providers',
      world: () => ({ providers: [provider(5, 'rootless', { rootId: null })], allocations: [alloc(5, 'x', 'VCPU', 1)] }),
      orphans: [],
    },
    {
      name: 'providers are walked by id; consumers by (class id, amount, row id), as MariaDB returns them',
      world: () => ({
        nodes: [],
        providers: [provider(9, 'rp-b'), provider(3, 'rp-a')],
        allocations: [
          alloc(9, 'big', 'MEMORY_MB', 100),
          alloc(9, 'big', 'VCPU', 8),
          alloc(9, 'small', 'VCPU', 1),
          alloc(9, 'memory-only', 'MEMORY_MB', 50),
          alloc(3, 'on-a', 'DISK_GB', 1),
        ],
      }),
      orphans: [
        ['rp-a', 'on-a'],
        ['rp-b', 'small'],
        ['rp-b', 'big'],
        ['rp-b', 'memory-only'],
      ],
    },
  ];

  it.each(cases)('$name', ({ world, options, orphans, kept }) => {
    const report = auditPlacementAllocations(snapshot(world()), options ?? DEFAULT);
    expect(orphanNames(report)).toEqual(orphans);
    expect(keptNames(report)).toEqual(kept ?? []);
  });

  it("lists a consumer's classes in class-id order, whatever order the rows were written in", () => {
    const report = auditPlacementAllocations(snapshot({ providers: [rp1], allocations: [alloc(1, 'c', 'DISK_GB', 20), alloc(1, 'c', 'MEMORY_MB', 512), alloc(1, 'c', 'VCPU', 1)] }), DEFAULT);
    expect(orphansOf(report)[0]?.orphan.resources.map((r) => r.resourceClass)).toEqual(['VCPU', 'MEMORY_MB', 'DISK_GB']);
  });

  it('reports whether the root is a live compute node', () => {
    const report = auditPlacementAllocations(snapshot({ nodes: [cn1], providers: [rp1, provider(2, 'gone')], allocations: [] }), DEFAULT);
    expect(report.kind === 'audited' && report.providers.map((p) => [p.uuid, p.rootUuid, p.computeNodeFound])).toEqual([
      [u('cn1'), u('cn1'), true],
      [u('gone'), u('gone'), false],
    ]);
  });
});

describe('--resource_provider', () => {
  const world = (): World => ({ providers: [rp1, provider(2, 'two')], allocations: [alloc(1, 'a', 'VCPU', 1), alloc(2, 'b', 'VCPU', 1)] });

  it.each([
    ['an unknown uuid', '99999999-0000-4000-8000-000000000000', 'unknown'],
    ['not a uuid (placement answers 400; nova reports it the same way)', 'not-a-uuid', 'unknown'],
    ['the uuid in upper case (the column collation is case-insensitive)', u('two').toUpperCase(), 'two'],
    ['an empty string, which nova treats as "all"', '', 'all'],
  ])('%s', (_name, providerUuid, expected) => {
    const report = auditPlacementAllocations(snapshot(world()), { allResourceClasses: false, providerUuid });
    if (expected === 'unknown') expect(report).toEqual({ kind: 'unknown-provider', providerUuid });
    else expect(orphanNames(report).map(([p]) => p)).toEqual(expected === 'all' ? ['cn1', 'two'] : ['two']);
  });
});

describe('the plan of deletes', () => {
  it("removes only this provider's share while the consumer keeps others, chaining the consumer generation", () => {
    const report = auditPlacementAllocations(
      snapshot({
        providers: [provider(1, 'p1'), provider(2, 'p2'), provider(3, 'p3')],
        allocations: [alloc(1, 'multi', 'VCPU', 1), alloc(2, 'multi', 'VCPU', 2), alloc(3, 'multi', 'MEMORY_MB', 64), alloc(3, 'single', 'VCPU', 1)],
        consumers: [consumer('multi', 7), consumer('single', 1)],
      }),
      DEFAULT,
    );
    expect(orphansOf(report).map(({ orphan }) => [orphan.scope, orphan.change.consumerGeneration, orphan.change.providerId])).toEqual([
      ['provider-share', 7, 1],
      ['provider-share', 8, 2],
      // On p3 the VCPU row sorts before MEMORY_MB, so 'single' comes first.
      ['all', 1, 3],
      ['all', 9, 3],
    ]);
    expect(orphansOf(report)[3]?.orphan.change).toEqual({
      kind: 'remove-provider-allocations',
      target: { db: 'placement' },
      consumerUuid: u('multi'),
      consumerGeneration: 9,
      providerId: 3,
      providerUuid: u('p3'),
      allocations: [{ resourceClassId: 1, resourceClass: 'MEMORY_MB', used: 64 }],
    });
  });

  it("counts a custom-class provider of the consumer as another provider (nova's GET /allocations/{consumer} lists it)", () => {
    const report = auditPlacementAllocations(
      snapshot({ providers: [provider(1, 'p1'), provider(2, 'bm')], allocations: [alloc(1, 'c', 'VCPU', 1), alloc(2, 'c', 'CUSTOM_BAREMETAL', 1)] }),
      DEFAULT,
    );
    expect(orphansOf(report).map(({ orphan }) => orphan.scope)).toEqual(['provider-share']);
  });
});

describe('rendering', () => {
  const report = auditPlacementAllocations(
    snapshot({
      nodes: [cn1],
      providers: [rp1, provider(2, 'stale')],
      allocations: [alloc(1, 'c1', 'VCPU', 1), alloc(1, 'c1', 'MEMORY_MB', 512), alloc(2, 'c2', 'DISK_GB', 20)],
    }),
    DEFAULT,
  );

  function resultWith(outcomes: readonly OrphanOutcome[], opts: { delete: boolean; stoppedAt?: string }): PlacementAuditResult {
    if (report.kind !== 'audited') throw new Error('expected an audit');
    let i = 0;
    const providers = report.providers.map((provider) => ({ provider, orphans: provider.orphans.map((orphan) => ({ orphan, outcome: outcomes[i++] ?? { status: 'found' as const } })) }));
    return { kind: 'audited', delete: opts.delete, allResourceClasses: false, providers, providersChecked: providers.length, stoppedAt: opts.stoppedAt, journalPath: undefined };
  }

  const related = (c: string): string => `Allocations were set against consumer UUID ${u(c)} but no existing instances or active migrations are related. `;

  it('prints nova-manage verbose lines exactly, trailing space included', () => {
    const result = resultWith([], { delete: false });
    expect(renderPlacementAuditLines(result, true)).toEqual([
      related('c1'),
      `Allocations for consumer UUID ${u('c1')} on Resource Provider ${u('cn1')} can be deleted: {'VCPU': 1, 'MEMORY_MB': 512}`,
      `The compute node for UUID ${u('stale')} can not be found`,
      related('c2'),
      `Allocations for consumer UUID ${u('c2')} on Resource Provider ${u('stale')} can be deleted: {'DISK_GB': 20}`,
      'Processed 2 allocations.',
    ]);
    expect(renderPlacementAuditLines(result, false)).toEqual([]);
    expect(placementAuditExitCode(result)).toBe(3);
  });

  it('prints "Deleted allocations" lines and exits 4 after --delete', () => {
    const result = resultWith([{ status: 'deleted', alreadyGone: false }, { status: 'deleted', alreadyGone: true }], { delete: true });
    expect(renderPlacementAuditLines(result, true).filter((l) => l.startsWith('Deleted'))).toEqual([
      `Deleted allocations for consumer UUID ${u('c1')} on Resource Provider ${u('cn1')}: {'VCPU': 1, 'MEMORY_MB': 512}`,
      `Deleted allocations for consumer UUID ${u('c2')} on Resource Provider ${u('stale')}: {'DISK_GB': 20}`,
    ]);
    expect(placementAuditExitCode(result)).toBe(4);
  });

  it('a failed delete prints nova\'s two lines even without --verbose, stops after that provider, and exits 1', () => {
    const result = resultWith([{ status: 'failed', reason: 'consumer generation is 2, planned 1' }], { delete: true, stoppedAt: u('cn1') });
    const stop = `The Resource Provider ${u('cn1')} had problems when deleting allocations. Stopping now. Please fix the problem by hand and run again.`;
    expect(renderPlacementAuditLines(result, false)).toEqual([`Not able to delete allocations for consumer UUID ${u('c1')}`, stop]);
    expect(renderPlacementAuditLines(result, true)).toEqual([related('c1'), `Not able to delete allocations for consumer UUID ${u('c1')}`, stop]);
    expect(placementAuditExitCode(result)).toBe(1);
  });

  it('says "allocation." for one and exits 0 with none', () => {
    const one = auditPlacementAllocations(snapshot({ nodes: [cn1], providers: [rp1], allocations: [alloc(1, 'solo', 'VCPU', 1)] }), DEFAULT);
    if (one.kind !== 'audited') throw new Error('expected an audit');
    const result = {
      kind: 'audited' as const,
      delete: false,
      allResourceClasses: false,
      providers: one.providers.map((provider) => ({ provider, orphans: provider.orphans.map((orphan) => ({ orphan, outcome: { status: 'found' as const } })) })),
      providersChecked: one.providers.length,
      stoppedAt: undefined,
      journalPath: undefined,
    } satisfies PlacementAuditResult;
    expect(renderPlacementAuditLines(result, true).at(-1)).toBe('Processed 1 allocation.');
    const clean: PlacementAuditResult = { ...result, providers: result.providers.map((p) => ({ ...p, orphans: [] })) };
    expect(renderPlacementAuditLines(clean, true)).toEqual([]);
    expect(placementAuditExitCode(clean)).toBe(0);
  });

  it('an unknown provider: nova\'s message and 127, in text and JSON', () => {
    const result: PlacementAuditResult = { kind: 'unknown-provider', providerUuid: 'abc' };
    expect(renderPlacementAuditLines(result, false)).toEqual(['Resource provider with UUID abc does not exist.']);
    expect(placementAuditExitCode(result)).toBe(127);
    expect(renderPlacementAuditJson(result)).toMatchObject({ error: { kind: 'not-found', exit_code: 127 } });
  });

  it('JSON lists every orphan with its resources and outcome', () => {
    const doc = renderPlacementAuditJson(resultWith([], { delete: false })) as unknown as { orphans: unknown[]; processed: number; compute_nodes_not_found: string[]; exit_code: number };
    expect(doc.processed).toBe(2);
    expect(doc.exit_code).toBe(3);
    expect(doc.compute_nodes_not_found).toEqual([u('stale')]);
    expect(doc.orphans[0]).toEqual({
      consumer_uuid: u('c1'),
      resource_provider_uuid: u('cn1'),
      root_provider_uuid: u('cn1'),
      compute_node_found: true,
      resources: { VCPU: 1, MEMORY_MB: 512 },
      scope: 'all',
      status: 'found',
    });
  });

  it.each([
    ['VCPU', "'VCPU'"],
    ["it's", `"it's"`],
    ['a\\b', "'a\\\\b'"],
    [`both'"`, `'both\\'"'`],
  ])('Python str repr of %s', (s, repr) => {
    expect(pythonStrRepr(s)).toBe(repr);
  });

  it('a class listed twice keeps its first position and its last value, as placement builds the dict', () => {
    expect(
      pythonResourcesRepr([
        { resourceClassId: 0, resourceClass: 'VCPU', used: 1 },
        { resourceClassId: 1, resourceClass: 'MEMORY_MB', used: 2 },
        { resourceClassId: 0, resourceClass: 'VCPU', used: 3 },
      ]),
    ).toBe("{'VCPU': 3, 'MEMORY_MB': 2}");
  });
});
