// A MariaDB deployment with hundreds of planned `compute_node rebalance`
// changes (seed bug 1714248 at scale), and the invariants the SIGKILL
// campaign checks after every kill of a rebalance apply.
//
// cell1 gets one forced-down ironic nova-compute (the dead host) and two live
// ones. Each generated ironic node is one of the states of
// src/sandbox/scenarios/ironic-failover.ts, in turn:
//  - failover: U1 on the dead host holds the provider (named after the node)
//    and the instance's allocation; a duplicate U2 on a live host has no
//    provider (the 409). Plan: retire U2, re-home U1 with its instance.
//  - renamed:  the same, but U1's provider was renamed and U2 has an empty
//    provider holding the name. Plan: delete U2's provider, rename U1's
//    back, retire U2, re-home U1 with its instance.
//  - move:     renamed, with U1's row soft-deleted. Plan: move the
//    allocation from U1's provider onto U2's (in-use ironic exception),
//    delete U1's provider, move the instance to U2's host.
//  - rekey:    failover, with U1's row soft-deleted. Plan: re-key U1's
//    provider to U2's uuid, move the instance to U2's host.
// Rows are generated with bulk inserts (src/sandbox/rows.ts).
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Knex } from 'knex';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import {
  ensureResourceClasses,
  ensureTrait,
  getOrCreateProject,
  getOrCreateUser,
  insertComputeNodes,
  insertInstances,
  insertInventories,
  insertResourceProviders,
  insertServices,
} from '../../src/sandbox/rows.js';
import { utcNowString } from '../../src/db/time.js';
import { allocationTotals, checkJournals, disableCircuitBreaker, type CampaignTarget } from './helpers.js';

export const REBALANCE = ['compute_node', 'rebalance'] as const;
const KINDS = ['failover', 'renamed', 'move', 'rekey'] as const;
type Kind = (typeof KINDS)[number];
const RC = 'CUSTOM_BAREMETAL_FAULT';
const CHUNK = 200;

export interface GeneratedNode {
  readonly kind: Kind;
  /** The ironic node uuid: hypervisor_hostname, U1's uuid. */
  readonly hh: string;
  readonly u1: string;
  readonly u2: string;
  readonly instance: string;
}

export interface RebalanceDeployment {
  readonly d: TestDeployment;
  readonly nodes: readonly GeneratedNode[];
  readonly deadHost: string;
  readonly liveHosts: readonly string[];
  /** Compute node uuids live (deleted = 0) when generated, with their host. */
  readonly initiallyLive: ReadonlyMap<string, string>;
  /** The rows undo must bring back exactly, as sorted text lines. */
  readonly initialImage: RebalanceImage;
  /** consumer -> resource class id -> total used, as generated. */
  readonly initialTotals: ReadonlyMap<string, ReadonlyMap<number, number>>;
}

export interface RebalanceImage {
  readonly allocations: readonly string[];
  readonly providers: readonly string[];
  readonly computeNodes: readonly string[];
  readonly instances: readonly string[];
}

async function bulk(k: Knex, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await k(table).insert(rows.slice(i, i + CHUNK));
}

function ago(seconds: number): string {
  return utcNowString(new Date(Date.now() - seconds * 1000));
}

/** `perKind` nodes of each of the four states: 4 × perKind ironic nodes, about 14 changes per 4 nodes. */
export async function createRebalanceDeployment(perKind: number, prefix = 'rbk'): Promise<RebalanceDeployment> {
  const d = await createTestDeployment('mysql', 'empty', prefix);
  // The campaign runs for many minutes; the live services must stay up
  // without a heartbeat writer racing the apply: service_down_time 1 day.
  writeFileSync(d.confPath, readFileSync(d.confPath, 'utf8').replace('[DEFAULT]\n', '[DEFAULT]\nservice_down_time = 86400\n'));
  disableCircuitBreaker(d);
  const cell = d.knex('cell1');
  const placement = d.knex('placement');
  const tag = randomUUID().slice(0, 6);
  const deadHost = `rb-dead-${tag}`;
  const liveHosts = [`rb-live-${tag}-0`, `rb-live-${tag}-1`];
  await insertServices(cell, [
    { uuid: randomUUID(), host: deadHost, forcedDown: true, lastSeenUp: ago(7200), createdAt: ago(90 * 86400) },
    ...liveHosts.map((host) => ({ uuid: randomUUID(), host, lastSeenUp: utcNowString(), createdAt: ago(90 * 86400) })),
  ]);

  const nodes: GeneratedNode[] = [];
  for (let i = 0; i < perKind * KINDS.length; i++) {
    const u1 = randomUUID();
    nodes.push({ kind: KINDS[i % KINDS.length] as Kind, hh: u1, u1, u2: randomUUID(), instance: randomUUID() });
  }
  const liveOf = (i: number): string => liveHosts[i % liveHosts.length] as string;

  // Compute nodes: U1 (a month old, dead host) and U2 (an hour old, a live host).
  const u1Ids = await insertComputeNodes(
    cell,
    nodes.map((n) => ({ uuid: n.u1, host: deadHost, hypervisorHostname: n.hh, hypervisorType: 'ironic' as const, mapped: 1, runningVms: 1, createdAt: ago(30 * 86400) })),
  );
  await insertComputeNodes(
    cell,
    nodes.map((n, i) => ({ uuid: n.u2, host: liveOf(i), hypervisorHostname: n.hh, hypervisorType: 'ironic' as const, mapped: 1, createdAt: ago(3600) })),
  );
  const u1Gone = u1Ids.filter((_, i) => nodes[i]?.kind === 'move' || nodes[i]?.kind === 'rekey');
  await cell('compute_nodes').whereIn('id', u1Gone).update({ deleted: cell.raw('id'), deleted_at: ago(1800) });

  // Instances on the dead host, on their node.
  const projectId = 'fa017c0ffee04c0ffee0c0ffee000001';
  const userId = 'fa017c0ffee04c0ffee0c0ffee000002';
  await insertInstances(
    cell,
    nodes.map((n) => ({ uuid: n.instance, host: deadHost, node: n.hh, vmState: 'active', projectId, userId, vcpus: 32, memoryMb: 262144, rootGb: 900, flavorId: 7, createdAt: ago(3 * 86400) })),
  );

  // Providers: U1's for every node (renamed for renamed/move), U2's (named after the node) for renamed/move.
  const u1Rps = await insertResourceProviders(
    placement,
    nodes.map((n) => ({ uuid: n.u1, name: n.kind === 'renamed' || n.kind === 'move' ? `stale-${n.hh}` : n.hh, generation: 4, createdAt: ago(30 * 86400) })),
  );
  const withU2 = nodes.filter((n) => n.kind === 'renamed' || n.kind === 'move');
  const u2Rps = await insertResourceProviders(
    placement,
    withU2.map((n) => ({ uuid: n.u2, name: n.hh, generation: 2, createdAt: ago(3600) })),
  );
  const allRps = [...u1Rps, ...u2Rps];
  // In use: reserved = total = 1, as Nova's ironic driver reports it.
  await insertInventories(
    placement,
    allRps.map((id) => ({ providerId: id, resourceClass: RC, total: 1, reserved: 1, minUnit: 1, maxUnit: 1, stepSize: 1, allocationRatio: 1.0 })),
  );
  const now = utcNowString();
  const trait = await ensureTrait(placement, 'COMPUTE_NODE');
  await bulk(placement, 'resource_provider_traits', allRps.map((id) => ({ trait_id: trait, resource_provider_id: id, created_at: now, updated_at: null })));
  const project = await getOrCreateProject(placement, projectId);
  const user = await getOrCreateUser(placement, userId);
  await bulk(placement, 'consumers', nodes.map((n) => ({ uuid: n.instance, project_id: project, user_id: user, generation: 1, created_at: now, updated_at: now, consumer_type_id: null })));
  const classes = await ensureResourceClasses(placement, [RC]);
  await bulk(
    placement,
    'allocations',
    nodes.map((n, i) => ({ resource_provider_id: u1Rps[i], consumer_id: n.instance, resource_class_id: classes.get(RC), used: 1, created_at: now, updated_at: null })),
  );

  const live = (await cell('compute_nodes').select('uuid', 'host').where('deleted', 0)) as Array<{ uuid: string; host: string }>;
  return {
    d,
    nodes,
    deadHost,
    liveHosts,
    initiallyLive: new Map(live.map((r) => [r.uuid, r.host])),
    initialImage: await rebalanceImage(d),
    initialTotals: await allocationTotals(placement),
  };
}

/** Allocations (by provider uuid), providers, compute nodes and instances as sorted lines. */
export async function rebalanceImage(d: TestDeployment): Promise<RebalanceImage> {
  const placement = d.knex('placement');
  const cell = d.knex('cell1');
  const lines = (rows: Array<Record<string, unknown>>): string[] => rows.map((r) => Object.values(r).map(String).join(' ')).sort();
  return {
    allocations: lines(
      await placement('allocations as a').join('resource_providers as rp', 'rp.id', 'a.resource_provider_id').select('a.consumer_id', 'rp.uuid', 'a.resource_class_id', 'a.used'),
    ),
    providers: lines(await placement('resource_providers').select('uuid', 'name')),
    computeNodes: lines(await cell('compute_nodes').select('uuid', 'host', 'hypervisor_hostname', 'deleted')),
    instances: lines(await cell('instances').select('uuid', 'host', 'node', 'deleted')),
  };
}

async function count(q: Knex.QueryBuilder): Promise<number> {
  const rows = (await q.count({ n: '*' })) as Array<{ n: number | string }>;
  return Number(rows[0]?.n ?? 0);
}

/** Every broken invariant after a kill of a rebalance apply, one line each; [] when all hold. */
export async function checkRebalanceInvariants(r: RebalanceDeployment, journals: readonly string[], killed: ReadonlySet<string> = new Set()): Promise<string[]> {
  const bad: string[] = [];
  const placement = r.d.knex('placement');
  const cell = r.d.knex('cell1');
  // 1. Per consumer and resource class the total is unchanged (nothing is removed by a rebalance) ...
  const now = await allocationTotals(placement);
  for (const [consumer, before] of r.initialTotals) {
    const after = now.get(consumer);
    const same = after !== undefined && after.size === before.size && [...before].every(([rc, used]) => after.get(rc) === used);
    if (!same) bad.push(`consumer ${consumer}: totals ${JSON.stringify([...(after ?? [])])} != ${JSON.stringify([...before])}`);
  }
  for (const consumer of now.keys()) if (!r.initialTotals.has(consumer)) bad.push(`consumer ${consumer} appeared`);
  // ... and it moved whole: one provider per consumer and class.
  const split = (await placement('allocations')
    .select('consumer_id', 'resource_class_id')
    .countDistinct({ n: 'resource_provider_id' })
    .groupBy('consumer_id', 'resource_class_id')
    .havingRaw('COUNT(DISTINCT resource_provider_id) > 1')) as Array<{ consumer_id: string }>;
  for (const s of split) bad.push(`consumer ${s.consumer_id}: a resource class split across providers`);
  // Consumer generations: a consumer row exists for every consumer with allocations.
  const withoutRow = await count(placement('allocations as a').leftJoin('consumers as c', 'c.uuid', 'a.consumer_id').whereNull('c.id'));
  if (withoutRow !== 0) bad.push(`${withoutRow} allocation(s) without a consumer row`);
  // 2. No allocation on a provider that is gone or has no inventory of its class.
  const dangling = await count(
    placement('allocations as a')
      .leftJoin('inventories as i', function () {
        this.on('i.resource_provider_id', 'a.resource_provider_id').andOn('i.resource_class_id', 'a.resource_class_id');
      })
      .whereNull('i.id'),
  );
  if (dangling !== 0) bad.push(`${dangling} allocation(s) without the inventory of their provider`);
  // No inventory, trait or aggregate link of a deleted provider.
  for (const t of ['inventories', 'resource_provider_traits', 'resource_provider_aggregates']) {
    const left = await count(placement(`${t} as x`).leftJoin('resource_providers as rp', 'rp.id', 'x.resource_provider_id').whereNull('rp.id'));
    if (left !== 0) bad.push(`${left} ${t} row(s) of a deleted provider`);
  }
  // 3. No half-applied unit in one database.
  const odd = await count(cell('compute_nodes').whereRaw('deleted <> 0 AND (deleted <> id OR deleted_at IS NULL)'));
  if (odd !== 0) bad.push(`${odd} compute node(s) soft-deleted against nova's convention`);
  const nodeRows = (await cell('compute_nodes').select('uuid', 'host', 'hypervisor_hostname', 'deleted')) as Array<{ uuid: string; host: string; hypervisor_hostname: string; deleted: number }>;
  const providers = new Set(((await placement('resource_providers').select('uuid')) as Array<{ uuid: string }>).map((p) => p.uuid));
  const liveByNode = new Map<string, Array<{ uuid: string; host: string }>>();
  for (const n of nodeRows) {
    const wasLive = r.initiallyLive.has(n.uuid);
    // Placement first: a node the plan retires has lost its provider before its row goes.
    if (wasLive && Number(n.deleted) !== 0 && providers.has(n.uuid)) bad.push(`compute node ${n.uuid} soft-deleted while its provider remains`);
    if (Number(n.deleted) === 0) {
      const list = liveByNode.get(n.hypervisor_hostname) ?? [];
      list.push({ uuid: n.uuid, host: n.host });
      liveByNode.set(n.hypervisor_hostname, list);
    }
  }
  const instances = new Map(
    ((await cell('instances').select('uuid', 'host', 'node').where('deleted', 0)) as Array<{ uuid: string; host: string; node: string }>).map((i) => [i.uuid, i]),
  );
  for (const node of r.nodes) {
    const live = liveByNode.get(node.hh) ?? [];
    if (live.length === 0) bad.push(`ironic node ${node.hh} (${node.kind}) has no live compute node left`);
    const inst = instances.get(node.instance);
    if (inst === undefined) {
      bad.push(`instance ${node.instance} is gone`);
      continue;
    }
    // A re-homed compute node took its instance along, in the same transaction.
    for (const row of live) {
      const initialHost = r.initiallyLive.get(row.uuid);
      if (initialHost !== undefined && initialHost !== row.host && inst.host !== row.host)
        bad.push(`compute node ${row.uuid} (${node.kind}) re-homed from ${initialHost} to ${row.host}, but its instance ${node.instance} is on ${inst.host}`);
    }
  }
  // 4. Every journal parses.
  bad.push(...checkJournals(journals, killed));
  return bad;
}

/** The repaired state, once a run exits 0: one live row per node on a live host, its provider named after the node holding the allocation, the instance with it. */
export async function checkRebalanceConverged(r: RebalanceDeployment): Promise<string[]> {
  const bad: string[] = [];
  const placement = r.d.knex('placement');
  const cell = r.d.knex('cell1');
  const live = (await cell('compute_nodes').select('uuid', 'host', 'hypervisor_hostname').where('deleted', 0)) as Array<{ uuid: string; host: string; hypervisor_hostname: string }>;
  const instances = new Map(((await cell('instances').select('uuid', 'host').where('deleted', 0)) as Array<{ uuid: string; host: string }>).map((i) => [i.uuid, i.host]));
  const rps = new Map(
    ((await placement('resource_providers').select('id', 'uuid', 'name')) as Array<{ id: number; uuid: string; name: string }>).map((p) => [p.uuid, p]),
  );
  const holder = new Map(
    ((await placement('allocations').select('consumer_id', 'resource_provider_id')) as Array<{ consumer_id: string; resource_provider_id: number }>).map((a) => [
      a.consumer_id,
      Number(a.resource_provider_id),
    ]),
  );
  for (const node of r.nodes) {
    const rows = live.filter((l) => l.hypervisor_hostname === node.hh);
    const row = rows[0];
    if (rows.length !== 1 || row === undefined) {
      bad.push(`ironic node ${node.hh} (${node.kind}): ${rows.length} live compute nodes`);
      continue;
    }
    if (!r.liveHosts.includes(row.host)) bad.push(`ironic node ${node.hh} (${node.kind}): on ${row.host}, not a live host`);
    const rp = rps.get(row.uuid);
    if (rp === undefined || rp.name !== node.hh) bad.push(`ironic node ${node.hh} (${node.kind}): provider ${row.uuid} ${rp === undefined ? 'missing' : `named ${rp.name}`}`);
    else if (holder.get(node.instance) !== Number(rp.id)) bad.push(`ironic node ${node.hh} (${node.kind}): the allocation of ${node.instance} is not on provider ${row.uuid}`);
    if (instances.get(node.instance) !== row.host) bad.push(`ironic node ${node.hh} (${node.kind}): instance on ${instances.get(node.instance) ?? '-'}, node on ${row.host}`);
  }
  for (const uuid of [...rps.keys()]) if (!live.some((l) => l.uuid === uuid)) bad.push(`provider ${uuid} has no live compute node`);
  return bad;
}

export function rebalanceTarget(r: RebalanceDeployment): CampaignTarget {
  return {
    d: r.d,
    commands: [REBALANCE],
    check: (journals, killed) => checkRebalanceInvariants(r, journals, killed),
    checkConverged: () => checkRebalanceConverged(r),
    async checkRestored() {
      const now = await rebalanceImage(r.d);
      const bad: string[] = [];
      for (const k of Object.keys(now) as Array<keyof RebalanceImage>) {
        const a = now[k];
        const b = r.initialImage[k];
        if (a.length !== b.length || a.some((line, i) => line !== b[i])) {
          const missing = b.filter((l) => !a.includes(l)).slice(0, 3);
          bad.push(`undo did not restore ${k}: ${a.length} rows, ${b.length} generated; e.g. missing ${JSON.stringify(missing)}`);
        }
      }
      return bad;
    },
  };
}
