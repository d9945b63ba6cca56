// The read-only audit: every inconsistency between the API, cell and
// placement databases, one finding per problem, each with the objects
// involved and the command that fixes it. Orphan nodes and stale providers
// are recognised by the very predicates the cleanups plan with
// (orphan-nodes.ts, stale-providers.ts), so the audit never reports what a
// cleanup would not touch, nor the other way round.
//
// The audit needs a snapshot of every cell: a provider or a host mapping
// whose node lives in an unread cell would look stale. Scoping to one cell
// (AuditOptions.cellUuid) filters the findings, not the reading.
import type { AllocationRec, ComputeNodeRec, HostMappingRec, InstanceRec, ProviderRec, ServiceRec, Snapshot } from './model.js';
import { isServiceUp, parseNaiveUtc } from './liveness.js';
import { ironicTruthArgs, orphanReason, orphanWithInstancesFix, unmanagedGroupOf, unmanagedWithInstancesFix } from './orphan-nodes.js';
import { allocationChecks, type AllocationChecks } from './audit-allocations.js';
import { findDeletedNodesWithProvider } from './audit-placement.js';
import { findNewerNovaProblems } from './audit-newer-nova.js';
import { comesBack } from './returning-node.js';
import { duplicateRowFacts, liveInstanceFacts } from './audit-facts.js';
import { isStaleComputeProvider, isTraitlessComputeProvider } from './stale-providers.js';
import { hostKey, indexSnapshot, instancesOn, providerTree, serviceKey, withAllocations, type SnapshotIndex } from './snapshot-index.js';
import { compareText, groupBy, pushTo, shellWord } from './text-and-maps.js';

export { FINDING_KINDS, type Finding, type FindingKind, type FindingValue, type StaleAllocationClass } from './finding.js';
import { FINDING_KINDS, type Finding, type FindingKind, type FindingValue, type StaleAllocationClass } from './finding.js';

/**
 * Seconds by which an ironic node's last save may trail its service's last
 * heartbeat before it is listed as a suspect. An idle ironic node is not
 * re-saved, so this is a hint to check ironic, never
 * a reason to delete.
 */
export const SUSPECT_ORPHAN_AGE = 24 * 60 * 60;

export interface AuditOptions {
  /** Only report findings of this cell. */
  readonly cellUuid?: string;
  /** Only report findings whose objects name this host (hostKey: case- and trailing-space-insensitive). */
  readonly host?: string;
  /** Only report findings of these kinds. */
  readonly kinds?: readonly FindingKind[];
  /** The --ironic-nodes file as given, quoted in suggestions. */
  readonly ironicNodesFile?: string;
  readonly suspectOrphanAge?: number;
  /** Called before each check (a progress line: the checks of a large deployment take a while). */
  readonly onStep?: (step: string, index: number, total: number) => void;
}

interface Audit {
  readonly s: Snapshot;
  readonly ix: SnapshotIndex;
  readonly options: AuditOptions;
  /** Live nodes that are orphans (their other problems are the orphan cleanup's). */
  readonly orphans: Set<ComputeNodeRec>;
  readonly out: Finding[];
}

/**
 * An audit whose allocations arrive one consumer at a time (issue 20: the
 * audit command streams them from placement and never holds the table).
 * `snapshot` is everything else; its placement allocations are not looked
 * at. Call `consumer` once per consumer with all of its allocations, then
 * `finish` once, with the allocations `consumer` asked to keep.
 */
export interface StreamedAudit {
  /** True when the allocations must be passed to finish (they touch a stale provider tree, or a duplicate node's). */
  consumer(consumerUuid: string, allocations: readonly AllocationRec[]): boolean;
  finish(kept: readonly AllocationRec[]): Finding[];
}

export function openAudit(snapshot: Snapshot, options: AuditOptions = {}): StreamedAudit {
  const step = options.onStep ?? (() => undefined);
  const out: Finding[] = [];
  const report = (finding: Finding): void => {
    out.push(finding);
  };
  // Set once the snapshot is indexed; the placement gaps need what it saw.
  let allocations: AllocationChecks | undefined;
  const placementChecks: ReadonlyArray<readonly [string, (a: Audit) => void]> =
    snapshot.placement === undefined
      ? []
      : [
          ['compute nodes without a provider', findNodesWithoutProvider],
          ['stale providers', findStaleProviders],
          ['provider name conflicts', findNameConflicts],
          ['placement gaps', (a) => {
            for (const f of [...(allocations?.instancesWithoutAllocation() ?? []), ...findDeletedNodesWithProvider(a.ix)]) add(a, f);
          }],
          ['what breaks newer Novas', (a) => {
            for (const f of findNewerNovaProblems(a.ix)) add(a, f);
          }],
        ];
  const checks: ReadonlyArray<readonly [string, (a: Audit) => void]> = [
    ['host mappings', findMappingProblems],
    ['orphan compute nodes', findOrphanNodes],
    ['duplicate compute nodes', findDuplicateNodes],
    ...placementChecks,
    ['nodes of dead services', findNodesOfDeadServices],
  ];
  step('indexing the snapshot', 0, checks.length);
  const ix = indexSnapshot(snapshot);
  allocations = snapshot.placement === undefined ? undefined : allocationChecks(ix, report);
  return {
    consumer(consumerUuid, rows) {
      return allocations?.consumer(consumerUuid, rows) ?? false;
    },
    finish(kept) {
      // The kept allocations are every allocation on a stale provider tree, and every allocation of the consumers on one.
      const a: Audit = { s: snapshot, ix: allocations === undefined ? ix : withAllocations(ix, kept), options, orphans: new Set(), out };
      checks.forEach(([name, check], i) => {
        step(`checking ${name}`, i, checks.length);
        check(a);
      });
      step('done', checks.length, checks.length);
      // Every finding is computed on the whole deployment; the scope only selects (as for the plan commands).
      const host = options.host === undefined ? undefined : hostKey(options.host);
      const scoped = out.filter(
        (f) =>
          (options.cellUuid === undefined || f.cellUuid === options.cellUuid) &&
          (options.kinds === undefined || options.kinds.includes(f.kind)) &&
          (host === undefined || (typeof f.objects['host'] === 'string' && hostKey(f.objects['host']) === host)),
      );
      return sortFindings(scoped, snapshot.cells.map((c) => c.uuid));
    },
  };
}

/** The audit of a snapshot held whole: its allocations go through the same per-consumer checks. */
export function auditSnapshot(snapshot: Snapshot, options: AuditOptions = {}): Finding[] {
  const audit = openAudit(snapshot, options);
  const kept: AllocationRec[] = [];
  for (const [consumerUuid, rows] of groupBy(snapshot.placement?.allocations ?? [], (x) => x.consumerUuid)) if (audit.consumer(consumerUuid, rows)) kept.push(...rows);
  return audit.finish(kept);
}

/** Findings per kind, every kind present (0 when clean). */
export function countFindings(findings: readonly Finding[]): Record<FindingKind, number> {
  const counts = Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<FindingKind, number>;
  for (const f of findings) counts[f.kind] += 1;
  return counts;
}

/** By kind (FINDING_KINDS order), then cell (cell_mappings order; no cell last), then summary. */
function sortFindings(findings: readonly Finding[], cellOrder: readonly string[]): Finding[] {
  const kindRank = new Map<FindingKind, number>(FINDING_KINDS.map((k, i) => [k, i]));
  const cellRank = (f: Finding): number => {
    const i = f.cellUuid === undefined ? -1 : cellOrder.indexOf(f.cellUuid);
    return i < 0 ? cellOrder.length : i;
  };
  return [...findings].sort(
    (x, y) => (kindRank.get(x.kind) ?? 0) - (kindRank.get(y.kind) ?? 0) || cellRank(x) - cellRank(y) || compareText(x.cellUuid ?? '', y.cellUuid ?? '') || compareText(x.summary, y.summary),
  );
}

function add(a: Audit, finding: Finding): void {
  a.out.push(finding);
}

function cellOf(cellUuid: string | undefined): { cellUuid?: string } {
  return cellUuid === undefined ? {} : { cellUuid };
}

function nodeLabel(n: ComputeNodeRec): string {
  // An ironic node's hypervisor_hostname is its uuid: say it once.
  const name = n.hypervisorHostname === null || n.hypervisorHostname === n.uuid ? '' : ` (${n.hypervisorHostname})`;
  return `compute node ${n.uuid ?? `id ${n.id}`}${name} on host ${n.host ?? '-'}`;
}

function nodeObjects(n: ComputeNodeRec): Record<string, FindingValue> {
  return { node_id: n.id, node_uuid: n.uuid, host: n.host, hypervisor_hostname: n.hypervisorHostname, hypervisor_type: n.hypervisorType };
}

function instancesOfNode(a: Audit, n: ComputeNodeRec): readonly InstanceRec[] {
  return instancesOn(a.ix, n.cellUuid, n.host, n.hypervisorHostname);
}


function liveComputeServices(s: Snapshot): ServiceRec[] {
  return s.services.filter((svc) => !svc.deleted && svc.binary === 'nova-compute' && svc.host !== null);
}

// ---------------------------------------------------------------------------
// Host mappings. Hosts compare as the API column's collation compares them:
// case- and trailing-space-insensitive.

function findMappingProblems(a: Audit): void {
  const mappingByHost = new Map<string, HostMappingRec>();
  for (const m of a.s.hostMappings) {
    const key = hostKey(m.host);
    if (!mappingByHost.has(key)) mappingByHost.set(key, m);
  }
  // The cells that hold each host (a live nova-compute service or a live node
  // there): almost always one, held as a string; a list only for a host that
  // several cells hold. At 100,000 hosts a list per host was 5 MB more at the
  // audit's peak (bench/README.md, "Memory").
  const holders = new Map<string, string | string[]>();
  const hold = (key: string, cellUuid: string): void => {
    const cells = holders.get(key);
    if (cells === undefined) holders.set(key, cellUuid);
    else if (typeof cells === 'string') {
      if (cells !== cellUuid) holders.set(key, [cells, cellUuid]);
    } else if (!cells.includes(cellUuid)) cells.push(cellUuid);
  };
  const services = liveComputeServices(a.s);
  for (const svc of services) hold(hostKey(svc.host), svc.cellUuid);
  for (const n of a.ix.liveNodes) if (n.host !== null) hold(hostKey(n.host), n.cellUuid);

  for (const svc of services) {
    if (mappingByHost.has(hostKey(svc.host))) continue;
    add(a, {
      kind: 'unmapped-service',
      cellUuid: svc.cellUuid,
      summary: `nova-compute service on host ${svc.host ?? '-'} has no host mapping: the scheduler cannot place servers on it`,
      objects: { host: svc.host, service_id: svc.id, service_uuid: svc.uuid },
      suggestion: `nova-reconcile cell_v2 discover_hosts --by-service --cell_uuid ${svc.cellUuid}`,
    });
  }

  // A host with a live service is reported once, above; its nodes are the same problem.
  const unmappedNodeHosts = new Map<string, ComputeNodeRec[]>();
  for (const n of a.ix.liveNodes) {
    if (n.host === null || mappingByHost.has(hostKey(n.host))) continue;
    if (a.ix.liveComputeService.has(n.cellUuid, n.host)) continue;
    pushTo(unmappedNodeHosts, serviceKey(n.cellUuid, n.host), n);
  }
  // Only hosts without a live service are left here: mapping a dead host
  // would not help. Its ironic nodes go to the ring's live owner (a mapped
  // host), its other nodes are orphans.
  const ironicArgs = ironicTruthArgs(a.s.ironicOrigin, a.options.ironicNodesFile);
  for (const nodes of unmappedNodeHosts.values()) {
    const n = nodes[0] as ComputeNodeRec;
    const adoptable = nodes.some((x) => x.hypervisorType === 'ironic' && orphanReason(a.ix, x) === undefined);
    add(a, {
      kind: 'unmapped-node',
      cellUuid: n.cellUuid,
      summary: `host ${n.host ?? '-'} has ${nodes.length} live compute node(s) but no host mapping and no live nova-compute service`,
      objects: { host: n.host, node_uuids: nodes.map((x) => x.uuid ?? `id ${x.id}`) },
      suggestion: adoptable
        ? 'nova-reconcile compute_node rebalance'
        : `nova-reconcile compute_node cleanup_orphans${nodes.some((x) => x.hypervisorType === 'ironic') ? ironicArgs : ''}`,
    });
  }

  for (const [key, held] of holders) {
    const m = mappingByHost.get(key);
    const cells = typeof held === 'string' ? [held] : held;
    // A host held by the cell it is mapped to is fine, even if another cell also claims it.
    if (m === undefined || cells.includes(m.cellUuid)) continue;
    for (const cellUuid of cells) {
      add(a, {
        kind: 'wrong-cell-mapping',
        cellUuid,
        summary: `host ${m.host} is in cell ${cellUuid} but mapped to cell ${m.cellUuid}: discover_hosts never re-points it`,
        objects: { host: m.host, mapping_id: m.id, mapped_cell_uuid: m.cellUuid },
        // --remap moves the mapping in one compare-and-swap when the host's live service is there; delete_host + discover leaves it unmapped in between.
        suggestion: hasLiveComputeService(a, cellUuid, key)
          ? `nova-reconcile cell_v2 discover_hosts --remap --cell_uuid ${cellUuid}`
          : `nova-reconcile cell_v2 delete_host --cell_uuid ${m.cellUuid} --host ${shellWord(m.host)} && nova-reconcile cell_v2 discover_hosts --by-service --cell_uuid ${cellUuid}`,
      });
    }
  }

  // A mapping whose host still runs servers is not stale, whatever else is gone.
  // Only the instances of hosts that no cell holds are looked at (almost always none).
  const unheld = new Set<string>();
  for (const m of a.s.hostMappings) if (!holders.has(hostKey(m.host))) unheld.add(hostKey(m.host));
  const instancesByHost = new Map<string, InstanceRec[]>();
  if (unheld.size > 0)
    for (const i of a.s.instances) {
      if (i.host === null) continue;
      const key = hostKey(i.host);
      if (unheld.has(key)) pushTo(instancesByHost, key, i);
    }
  for (const m of a.s.hostMappings) {
    if (holders.has(hostKey(m.host))) continue;
    const instances = instancesByHost.get(hostKey(m.host)) ?? [];
    if (instances.length > 0) {
      add(a, {
        kind: 'mapping-host-has-instances',
        cellUuid: m.cellUuid,
        summary: `host ${m.host} has no live nova-compute service and no live compute node, but ${instances.length} live instance(s) are on it: the mapping is not stale`,
        objects: { host: m.host, mapping_id: m.id, instance_uuids: instances.map((i) => i.uuid) },
        suggestion: `bring nova-compute on ${m.host} back, or evacuate its instances; then nova-reconcile cell_v2 prune_host_mappings --host ${shellWord(m.host)}`,
      });
      continue;
    }
    add(a, {
      kind: 'stale-mapping',
      cellUuid: m.cellUuid,
      summary: `host mapping of ${m.host} has no live nova-compute service, compute node or instance in any cell`,
      objects: { host: m.host, mapping_id: m.id },
      suggestion: `nova-reconcile cell_v2 prune_host_mappings --host ${shellWord(m.host)}`,
    });
  }
}

/** A live nova-compute service (with a host) of this cell on this host key, as liveComputeServices lists them. */
function hasLiveComputeService(a: Audit, cellUuid: string, key: string): boolean {
  return (a.ix.liveComputeService.get(cellUuid, key)?.host ?? null) !== null;
}

// ---------------------------------------------------------------------------
// Orphan compute nodes (seed bug 2013).

function findOrphanNodes(a: Audit): void {
  const suspectAge = a.options.suspectOrphanAge ?? SUSPECT_ORPHAN_AGE;
  const ironicArgs = ironicTruthArgs(a.s.ironicOrigin, a.options.ironicNodesFile);
  for (const n of a.ix.liveNodes) {
    const reason = orphanReason(a.ix, n);
    if (reason !== undefined) {
      a.orphans.add(n);
      const instances = instancesOfNode(a, n);
      const blocked = instances.length > 0;
      const withInstances = blocked ? `; live instance(s) ${instances.map((i) => i.uuid).join(', ')} must move first` : '';
      const service = a.ix.liveComputeService.get(n.cellUuid, n.host);
      const unserved = unmanagedGroupOf(a.ix, n);
      if (unserved !== undefined) {
        // Not deleted: Ironic lists it, but no nova-compute serves its conductor group.
        add(a, {
          kind: 'ironic-node-unmanaged',
          cellUuid: n.cellUuid,
          summary: `${nodeLabel(n)} is unmanaged, not deleted: ${reason}${withInstances}`,
          objects: { ...nodeObjects(n), conductor_group: unserved, service: service === undefined ? 'missing' : 'live', instances: instances.length },
          suggestion: blocked ? unmanagedWithInstancesFix(n, unserved) : `nova-reconcile compute_node cleanup_orphans${ironicArgs}`,
        });
      } else if (service === undefined) {
        const deleted = a.ix.deletedComputeService.get(n.cellUuid, n.host);
        add(a, {
          kind: 'orphan-node-service-deleted',
          cellUuid: n.cellUuid,
          summary: `${nodeLabel(n)} is an orphan: ${reason}${withInstances}`,
          objects: { ...nodeObjects(n), service: deleted === undefined ? 'missing' : 'deleted', service_id: deleted?.id ?? null, instances: instances.length },
          suggestion: blocked
            ? orphanWithInstancesFix(n, instances.map((i) => i.uuid), ironicArgs)
            : n.hypervisorType === 'ironic'
              ? `nova-reconcile compute_node cleanup_orphans${ironicArgs}`
              : 'nova-reconcile compute_node cleanup_orphans',
        });
      } else {
        add(a, {
          kind: 'orphan-node-ironic-deleted',
          cellUuid: n.cellUuid,
          summary: `${nodeLabel(n)} is an orphan: ${reason}, though its service still heartbeats${withInstances}`,
          objects: { ...nodeObjects(n), service_id: service.id, instances: instances.length },
          suggestion: blocked ? orphanWithInstancesFix(n, instances.map((i) => i.uuid), ironicArgs) : `nova-reconcile compute_node cleanup_orphans${ironicArgs}`,
        });
      }
      continue;
    }
    if (n.hypervisorType !== 'ironic' || a.ix.ironicNodeUuids !== undefined) continue;
    const service = a.ix.liveComputeService.get(n.cellUuid, n.host);
    const beat = parseNaiveUtc(service?.lastSeenUp);
    const saved = parseNaiveUtc(n.updatedAt ?? n.createdAt);
    if (service === undefined || beat === undefined || saved === undefined || beat - saved <= suspectAge * 1000) continue;
    const instances = instancesOfNode(a, n);
    add(a, {
      kind: 'suspect-orphan-node',
      cellUuid: n.cellUuid,
      summary: `ironic ${nodeLabel(n)} was last saved ${describeAge((beat - saved) / 1000)} before its service's last heartbeat: its ironic node may be gone (an idle node looks the same)`,
      objects: { ...nodeObjects(n), node_updated_at: n.updatedAt ?? n.createdAt, service_last_seen_up: service.lastSeenUp, instances: instances.length },
      suggestion: 'openstack baremetal node list -f json > nodes.json && nova-reconcile audit --ironic-nodes nodes.json',
    });
  }
}

function describeAge(seconds: number): string {
  const hours = seconds / 3600;
  return hours >= 48 ? `${Math.round(hours / 24)} days` : `${Math.round(hours)} hours`;
}

// ---------------------------------------------------------------------------
// Duplicate live compute nodes for one hypervisor_hostname in a cell: after an
// ironic rebalance that raced (bug 1853009) two hosts claim one ironic node.

function findDuplicateNodes(a: Audit): void {
  // The index's groups by lower-cased name, split by cell: no map of every node is made here.
  for (const named of a.ix.liveNodesByHypervisorHostname.values()) {
    if (named.length < 2) continue;
    for (const nodes of groupBy(named, (n) => n.cellUuid).values()) {
      if (nodes.length < 2) continue;
      const sorted = [...nodes].sort((x, y) => x.id - y.id);
      const first = sorted[0] as ComputeNodeRec;
      const facts = duplicateRowFacts(a.ix, sorted);
      add(a, {
        kind: 'duplicate-compute-node',
        cellUuid: first.cellUuid,
        summary: `${sorted.length} live compute nodes claim ${first.hypervisorHostname ?? '-'} (hosts ${sorted.map((n) => n.host ?? '-').join(', ')})${facts.summary}`,
        objects: {
          hypervisor_hostname: first.hypervisorHostname,
          node_uuids: sorted.map((n) => n.uuid ?? `id ${n.id}`),
          hosts: sorted.map((n) => n.host ?? '-'),
          ...facts.objects,
        },
        suggestion: 'nova-reconcile compute_node rebalance',
      });
    }
  }
}

// ---------------------------------------------------------------------------
// Placement.

function findNodesWithoutProvider(a: Audit): void {
  for (const n of a.ix.liveNodes) {
    // An orphan's missing provider is part of the orphan finding.
    if (a.orphans.has(n)) continue;
    if (n.uuid !== null && a.ix.providerByUuid.has(n.uuid)) continue;
    const holder = n.hypervisorHostname === null ? undefined : a.ix.providerByName.get(n.hypervisorHostname.toLowerCase());
    const blocker = holder !== undefined && holder.uuid !== n.uuid ? holder : undefined;
    add(a, {
      kind: 'node-without-provider',
      cellUuid: n.cellUuid,
      summary:
        blocker === undefined
          ? `${nodeLabel(n)} has no resource provider: the scheduler cannot use it`
          : `${nodeLabel(n)} has no resource provider: provider ${blocker.uuid} holds its name (409 on create)`,
      objects: { ...nodeObjects(n), blocking_provider_uuid: blocker?.uuid ?? null },
      suggestion:
        blocker !== undefined
          ? nameBlockerFix(a.ix, blocker)
          : a.ix.liveComputeService.has(n.cellUuid, n.host)
            ? `restart nova-compute on ${n.host ?? '-'}: it creates the provider in its next update_available_resource`
            : // An ironic node of a gone service (not an orphan): its new owner creates the provider.
              'nova-reconcile compute_node rebalance',
    });
  }
}

function findStaleProviders(a: Audit): void {
  for (const rp of a.s.placement?.providers ?? []) {
    if (!isStaleComputeProvider(a.ix, rp)) continue;
    const deleted = a.ix.deletedNodeByUuid.get(rp.uuid);
    const tree = providerTree(a.ix, rp);
    const allocations = tree.flatMap((p) => a.ix.allocationsOnProvider.get(p.id) ?? []);
    const consumers = [...new Set(allocations.map((x) => x.consumerUuid))].sort();
    const why =
      deleted !== undefined
        ? `its compute node (id ${deleted.id}, host ${deleted.host ?? '-'}) was deleted`
        : isTraitlessComputeProvider(a.ix, rp)
          ? 'it has no COMPUTE_NODE trait (made before Train, bug 1661258) but only compute-node inventory, and no compute node in any cell has its uuid or name'
          : 'it carries COMPUTE_NODE but no compute node has its uuid';
    const returning = deleted !== undefined && comesBack(a.ix, deleted);
    add(a, {
      kind: 'provider-without-node',
      ...cellOf(deleted?.cellUuid),
      summary: `resource provider ${rp.uuid} (${rp.name ?? '-'}) has no live compute node: ${why}${consumers.length > 0 ? `; ${consumers.length} consumer(s) still hold allocations on it` : ''}`,
      objects: {
        provider_id: rp.id,
        provider_uuid: rp.uuid,
        provider_name: rp.name,
        deleted_node_id: deleted?.id ?? null,
        host: deleted?.host ?? null,
        children: tree.length - 1,
        consumers: consumers.length,
      },
      suggestion: returning ? keepForReturningNode(deleted) : 'nova-reconcile placement cleanup_providers',
    });
    findStaleAllocations(a, rp, deleted, tree, returning);
  }
}

function keepForReturningNode(deleted: ComputeNodeRec): string {
  const uuid = deleted.uuid ?? '-';
  return `keep this provider: compute node ${uuid} was soft-deleted but its ironic node exists, and nova-compute restores the row under the same uuid (bug 1839560); to bring it back now: nova-reconcile compute_node restore --uuid ${uuid}`;
}

function findStaleAllocations(a: Audit, root: ProviderRec, owner: ComputeNodeRec | undefined, tree: readonly ProviderRec[], returning: boolean): void {
  const byConsumer = new Map<string, AllocationRec[]>();
  for (const p of tree) for (const x of a.ix.allocationsOnProvider.get(p.id) ?? []) pushTo(byConsumer, x.consumerUuid, x);
  const treeIds = new Set(tree.map((p) => p.id));
  // The live node re-created on the same host under the same name (a new uuid), if any.
  const successor =
    owner === undefined || owner.hypervisorHostname === null
      ? undefined
      : (a.ix.liveNodesByHypervisorHostname.get(owner.hypervisorHostname.toLowerCase()) ?? []).find(
          (n) => n.cellUuid === owner.cellUuid && hostKey(n.host) === hostKey(owner.host) && n.hypervisorHostname === owner.hypervisorHostname,
        );
  for (const [consumerUuid, allocations] of byConsumer) {
    const instance = a.ix.instanceByUuid.get(consumerUuid);
    const cls = classifyStaleConsumer(a.ix, consumerUuid, instance, root, owner);
    const elsewhere = (a.ix.allocationsOfConsumer.get(consumerUuid) ?? []).filter((x) => !treeIds.has(x.providerId));
    add(a, {
      kind: 'stale-allocation',
      ...cellOf(owner?.cellUuid ?? instance?.cellUuid),
      summary: `${describeConsumer(cls, consumerUuid, instance)} holds ${formatResources(allocations)} on stale provider ${root.uuid} (${root.name ?? '-'})`,
      objects: {
        class: cls,
        consumer_uuid: consumerUuid,
        provider_id: root.id,
        provider_uuid: root.uuid,
        resources: formatResources(allocations),
        instance_host: instance?.host ?? null,
        instance_node: instance?.node ?? null,
        allocations_elsewhere: elsewhere.length,
        live_node_uuid: cls === 'live-instance-on-node' ? (successor?.uuid ?? null) : null,
      },
      suggestion:
        returning && owner !== undefined
          ? cls === 'orphaned'
            ? // Only once the node is back: on a provider without a live node, nova's audit calls every allocation orphaned (§3.1).
              `nova-reconcile compute_node restore --uuid ${owner.uuid ?? '-'} && nova-reconcile placement audit --all-resource-classes --resource_provider ${root.uuid} --delete`
            : keepForReturningNode(owner)
          : suggestForStaleAllocation(cls, consumerUuid, successor, a.ix),
    });
  }
}

function classifyStaleConsumer(
  ix: SnapshotIndex,
  consumerUuid: string,
  instance: InstanceRec | undefined,
  root: ProviderRec,
  owner: ComputeNodeRec | undefined,
): StaleAllocationClass {
  if (instance !== undefined) {
    // Same test as the provider cleanup (provider-removal.ts); without the
    // deleted node's row, the provider's name is the node's hypervisor_hostname.
    const onThisNode =
      owner !== undefined
        ? instance.cellUuid === owner.cellUuid && hostKey(instance.host) === hostKey(owner.host) && instance.node === owner.hypervisorHostname
        : instance.node !== null && root.name !== null && instance.node.toLowerCase() === root.name.toLowerCase();
    return onThisNode ? 'live-instance-on-node' : 'evacuation-leftover';
  }
  return ix.activeMigrationUuids.has(consumerUuid) ? 'active-migration' : 'orphaned';
}

function describeConsumer(cls: StaleAllocationClass, consumerUuid: string, instance: InstanceRec | undefined): string {
  switch (cls) {
    case 'evacuation-leftover':
      return `live instance ${consumerUuid}, now on ${instance?.host ?? '-'},`;
    case 'live-instance-on-node':
      return `live instance ${consumerUuid} on this node (${instance?.host ?? '-'})`;
    case 'active-migration':
      return `active migration ${consumerUuid}`;
    case 'orphaned':
      return `orphaned consumer ${consumerUuid} (neither an instance nor an active migration)`;
  }
}

function suggestForStaleAllocation(cls: StaleAllocationClass, consumerUuid: string, successor: ComputeNodeRec | undefined, ix: SnapshotIndex): string {
  switch (cls) {
    case 'evacuation-leftover':
    case 'orphaned':
      return 'nova-reconcile placement cleanup_providers';
    case 'live-instance-on-node':
      // A node re-created under a new uuid gets the old provider (and this allocation) re-keyed to it.
      return successor?.uuid !== undefined && successor.uuid !== null && !ix.providerByUuid.has(successor.uuid)
        ? 'nova-reconcile placement cleanup_providers'
        : 'nova-reconcile compute_node rebalance';
    case 'active-migration':
      return `let migration ${consumerUuid} finish (or confirm/revert it), then nova-reconcile placement cleanup_providers`;
  }
}

function formatResources(allocations: readonly AllocationRec[]): string {
  const sums = new Map<string, number>();
  for (const x of allocations) sums.set(x.resourceClass, (sums.get(x.resourceClass) ?? 0) + x.used);
  return [...sums].map(([rc, used]) => `${rc}=${used}`).join(', ');
}

/**
 * Who frees a provider name that blocks a node: cleanup_providers re-keys or
 * deletes a stale provider; one that belongs to a live node (the ironic
 * rebalance's duplicate) is compute_node rebalance's to resolve.
 */
function nameBlockerFix(ix: SnapshotIndex, blocker: ProviderRec): string {
  return isStaleComputeProvider(ix, blocker) ? 'nova-reconcile placement cleanup_providers' : 'nova-reconcile compute_node rebalance';
}

function findNameConflicts(a: Audit): void {
  for (const rp of a.s.placement?.providers ?? []) {
    if (rp.name === null) continue;
    for (const n of a.ix.liveNodesByHypervisorHostname.get(rp.name.toLowerCase()) ?? []) {
      if (n.uuid === null || n.uuid === rp.uuid) continue;
      const stale = isStaleComputeProvider(a.ix, rp);
      add(a, {
        kind: 'provider-name-conflict',
        cellUuid: n.cellUuid,
        summary: `resource provider ${rp.uuid} holds the name ${rp.name} of ${nodeLabel(n)}, so nova-compute cannot create that node's provider (409)`,
        objects: { provider_id: rp.id, provider_uuid: rp.uuid, provider_name: rp.name, node_uuid: n.uuid, host: n.host, provider_is_stale: stale },
        suggestion: nameBlockerFix(a.ix, rp),
      });
    }
  }
}

// ---------------------------------------------------------------------------
// Nodes whose service is forced down or stopped reporting.

function findNodesOfDeadServices(a: Audit): void {
  for (const n of a.ix.liveNodes) {
    if (a.orphans.has(n)) continue;
    const svc = a.ix.liveComputeService.get(n.cellUuid, n.host);
    if (svc === undefined) {
      // Not an orphan (orphanReason): an ironic node whose service is gone
      // and whose ironic node may exist. Nova's ring owner adopts it (§5.4,
      // §6), and so does the rebalance; cleanup_orphans leaves it alone.
      if (n.hypervisorType !== 'ironic') continue;
      const deleted = a.ix.deletedComputeService.get(n.cellUuid, n.host);
      add(a, {
        kind: 'node-of-dead-service',
        cellUuid: n.cellUuid,
        summary: `ironic ${nodeLabel(n)} belongs to a nova-compute service that ${deleted === undefined ? 'does not exist' : 'was deleted'}: the hash ring's live owner takes it over`,
        objects: { ...nodeObjects(n), service: deleted === undefined ? 'missing' : 'deleted', service_id: deleted?.id ?? null, instances: instancesOfNode(a, n).length },
        suggestion: 'nova-reconcile compute_node rebalance',
      });
      continue;
    }
    if (isServiceUp(svc, a.s.takenAt, a.s.serviceDownTime)) continue;
    const state = svc.forcedDown ? 'forced down' : `down (last heartbeat ${svc.lastSeenUp ?? 'never'})`;
    const ironic = n.hypervisorType === 'ironic';
    const keep = liveInstanceFacts(instancesOfNode(a, n));
    add(a, {
      kind: 'node-of-dead-service',
      cellUuid: n.cellUuid,
      summary: `${nodeLabel(n)} belongs to a nova-compute service that is ${state}${keep.summary}`,
      objects: { ...nodeObjects(n), service_id: svc.id, forced_down: svc.forcedDown, service_last_seen_up: svc.lastSeenUp, instances: instancesOfNode(a, n).length, ...keep.objects },
      suggestion: ironic
        ? 'nova-reconcile compute_node rebalance --include-down'
        : `start nova-compute on ${n.host ?? '-'}; if the host is gone for good: openstack compute service delete ${svc.uuid ?? svc.id}`,
    });
  }
}
