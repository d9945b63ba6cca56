// Fault injection helpers: a deployment with a plan of hundreds of changes,
// a run of the built binary that is SIGKILLed once its journal reaches a
// chosen line, and the invariants checked after every kill.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import type { Knex } from 'knex';
import { BIN, assertBuilt } from '../helpers/cli.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { ensureResourceClasses, ensureTrait, getOrCreateProject, getOrCreateUser, insertComputeNodes, insertInventories, insertResourceProviders, insertServices } from '../../src/sandbox/rows.js';
import { readJournal } from '../../src/operations/journal.js';

export const COMMANDS = {
  orphans: ['compute_node', 'cleanup_orphans'],
  providers: ['placement', 'cleanup_providers'],
} as const;

export interface FaultDeployment {
  readonly d: TestDeployment;
  /** Consumers the plans may remove whole (neither an instance nor a migration). */
  readonly orphanConsumers: ReadonlySet<string>;
  /** The uuids of the orphan compute nodes (and of their providers). */
  readonly orphanNodes: ReadonlySet<string>;
  /** consumer -> resource class -> total used, before any run. */
  readonly initial: ReadonlyMap<string, ReadonlyMap<number, number>>;
}

const CHUNK = 200;

async function bulk(k: Knex, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await k(table).insert(rows.slice(i, i + CHUNK));
}

/**
 * The libvirt scenario, plus `orphans` compute nodes in cell1 whose service
 * is gone, each with a COMPUTE_NODE provider, inventory and one orphaned
 * consumer's allocations; plus `stale` providers whose compute node never
 * existed (a deleted node's uuid), each with inventory and an orphaned consumer.
 */
/**
 * The campaigns kill applies of deliberately large plans (nearly every node
 * of the cell is an orphan): the circuit breaker (issue 23, tested in
 * test/cli/circuit-breaker.test.ts) is turned off in [nova_reconcile], the
 * last section of the test deployment's nova.conf.
 */
export function disableCircuitBreaker(d: TestDeployment): void {
  appendFileSync(d.confPath, 'max_apply_units = 0\nmax_apply_fraction = 1\n');
}

export async function createFaultDeployment(orphans: number, stale: number, prefix = 'flt'): Promise<FaultDeployment> {
  const d = await createTestDeployment('mysql', 'libvirt', prefix);
  disableCircuitBreaker(d);
  const cell = d.knex('cell1');
  const placement = d.knex('placement');
  const tag = randomUUID().slice(0, 6);
  const now = '2026-01-01 00:00:00';
  const nodes = Array.from({ length: orphans }, (_, i) => ({ host: `orphan-${tag}-${i}`, uuid: randomUUID() }));
  const serviceIds = await insertServices(
    cell,
    nodes.map((n) => ({ uuid: randomUUID(), host: n.host, lastSeenUp: now })),
  );
  await insertComputeNodes(
    cell,
    nodes.map((n) => ({ uuid: n.uuid, host: n.host, hypervisorHostname: `${n.host}.example.org`, hypervisorType: 'QEMU' as const, vcpus: 8, memoryMb: 16384, localGb: 100 })),
  );
  await cell('services').whereIn('id', serviceIds).update({ deleted: cell.raw('id'), deleted_at: now });
  // Stale providers: a soft-deleted compute node's uuid, no live node.
  const staleNodes = Array.from({ length: stale }, (_, i) => ({ host: `stale-${tag}-${i}`, uuid: randomUUID() }));
  const staleIds = await insertComputeNodes(
    cell,
    staleNodes.map((n) => ({ uuid: n.uuid, host: n.host, hypervisorHostname: `${n.host}.example.org`, hypervisorType: 'QEMU' as const })),
  );
  await cell('compute_nodes').whereIn('id', staleIds).update({ deleted: cell.raw('id'), deleted_at: now });

  const all = [...nodes, ...staleNodes];
  const providerIds = await insertResourceProviders(
    placement,
    all.map((n) => ({ uuid: n.uuid, name: `${n.host}.example.org`, generation: 3 })),
  );
  await insertInventories(
    placement,
    providerIds.flatMap((id) => [
      { providerId: id, resourceClass: 'VCPU', total: 8, allocationRatio: 16 },
      { providerId: id, resourceClass: 'MEMORY_MB', total: 16384, reserved: 512, allocationRatio: 1.5 },
      { providerId: id, resourceClass: 'DISK_GB', total: 100 },
    ]),
  );
  const trait = await ensureTrait(placement, 'COMPUTE_NODE');
  await bulk(placement, 'resource_provider_traits', providerIds.map((id) => ({ trait_id: trait, resource_provider_id: id, created_at: now, updated_at: null })));
  const project = await getOrCreateProject(placement, 'fault-project');
  const user = await getOrCreateUser(placement, 'fault-user');
  const consumers = providerIds.map(() => randomUUID());
  await bulk(placement, 'consumers', consumers.map((uuid) => ({ uuid, project_id: project, user_id: user, generation: 1, created_at: now, updated_at: now, consumer_type_id: null })));
  const classes = await ensureResourceClasses(placement, ['VCPU', 'MEMORY_MB']);
  await bulk(
    placement,
    'allocations',
    providerIds.flatMap((id, i) => [
      { resource_provider_id: id, consumer_id: consumers[i], resource_class_id: classes.get('VCPU'), used: 2, created_at: now, updated_at: null },
      { resource_provider_id: id, consumer_id: consumers[i], resource_class_id: classes.get('MEMORY_MB'), used: 2048, created_at: now, updated_at: null },
    ]),
  );
  return { d, orphanConsumers: new Set(consumers), orphanNodes: new Set(nodes.map((n) => n.uuid)), initial: await allocationTotals(placement) };
}

export async function allocationTotals(placement: Knex): Promise<Map<string, Map<number, number>>> {
  const rows = (await placement('allocations').select('consumer_id', 'resource_class_id').sum({ used: 'used' }).groupBy('consumer_id', 'resource_class_id')) as Array<{
    consumer_id: string;
    resource_class_id: number;
    used: string | number;
  }>;
  const out = new Map<string, Map<number, number>>();
  for (const r of rows) {
    const m = out.get(r.consumer_id) ?? new Map<number, number>();
    m.set(Number(r.resource_class_id), Number(r.used));
    out.set(r.consumer_id, m);
  }
  return out;
}

/**
 * Invariant 4 of every campaign: each journal parses, and no committed change
 * lacks its row images. Only the journal of a SIGKILLed run (in `killed`) may
 * end in a cut line (RELIABILITY.md, "Truncated journals"): that line never
 * committed, and `undo --allow-truncated` drops it. Any other damage, or a
 * cut line in a journal whose run was not killed, is a violation. The
 * campaign counts the cut journals (CampaignStats.cutJournals) in its
 * figures; it does not bound them: the kills land while the process waits
 * on a database far more often than inside a write, so how the writer splits
 * its writes barely shows (RELIABILITY.md says what was measured).
 */
export function checkJournals(journals: readonly string[], killed: ReadonlySet<string>): string[] {
  const bad: string[] = [];
  for (const j of journals) {
    if (!existsSync(j)) continue;
    try {
      const r = readJournal(j, { allowTruncatedTail: killed.has(j) });
      for (const c of r.changes) if (c.rows.length === 0 && r.committed.has(c.seq)) bad.push(`${j}: committed change ${c.seq} without row images`);
    } catch (err) {
      bad.push(`${j}: ${(err as Error).message}`);
    }
  }
  return bad;
}

/** Every broken invariant, as one line each; [] when all hold. */
export async function checkInvariants(f: FaultDeployment, journals: readonly string[], killed: ReadonlySet<string> = new Set()): Promise<string[]> {
  const bad: string[] = [];
  const placement = f.d.knex('placement');
  const cell = f.d.knex('cell1');
  // 1. No allocation lost or duplicated: per consumer and class, the total is
  //    unchanged, or (only for orphaned consumers) gone whole.
  const now = await allocationTotals(placement);
  for (const [consumer, before] of f.initial) {
    const after = now.get(consumer);
    if (after === undefined) {
      if (!f.orphanConsumers.has(consumer)) bad.push(`consumer ${consumer} lost its allocations`);
      continue;
    }
    const same = after.size === before.size && [...before].every(([rc, used]) => after.get(rc) === used);
    if (!same) bad.push(`consumer ${consumer}: totals ${JSON.stringify([...after])} != ${JSON.stringify([...before])}`);
  }
  for (const consumer of now.keys()) if (!f.initial.has(consumer)) bad.push(`consumer ${consumer} appeared`);
  // A consumer row goes with its last allocation, in the same transaction.
  const consumerRows = new Set(((await placement('consumers').select('uuid')) as Array<{ uuid: string }>).map((r) => r.uuid));
  for (const c of f.orphanConsumers) if (consumerRows.has(c) !== now.has(c)) bad.push(`orphan consumer ${c}: row ${consumerRows.has(c)} but allocations ${now.has(c)}`);
  // 2. No allocation on a provider that is gone or has no inventory of its class.
  const dangling = (await placement('allocations as a')
    .leftJoin('inventories as i', function () {
      this.on('i.resource_provider_id', 'a.resource_provider_id').andOn('i.resource_class_id', 'a.resource_class_id');
    })
    .whereNull('i.id')
    .count({ n: '*' })) as Array<{ n: number | string }>;
  if (Number(dangling[0]?.n) !== 0) bad.push(`${dangling[0]?.n} allocation(s) without the inventory of their provider`);
  // 3. No half-deleted provider: no inventory, trait or aggregate link left by a deleted provider.
  for (const t of ['inventories', 'resource_provider_traits', 'resource_provider_aggregates']) {
    const left = (await placement(`${t} as x`).leftJoin('resource_providers as rp', 'rp.id', 'x.resource_provider_id').whereNull('rp.id').count({ n: '*' })) as Array<{ n: number | string }>;
    if (Number(left[0]?.n) !== 0) bad.push(`${left[0]?.n} ${t} row(s) of a deleted provider`);
  }
  // Cell convention: a soft-deleted node has deleted = id and deleted_at set.
  const odd = (await cell('compute_nodes').whereRaw('deleted <> 0 AND (deleted <> id OR deleted_at IS NULL)').count({ n: '*' })) as Array<{ n: number | string }>;
  if (Number(odd[0]?.n) !== 0) bad.push(`${odd[0]?.n} compute node(s) soft-deleted against nova's convention`);
  // Placement is released before the compute node row goes away.
  const deletedNodes = ((await cell('compute_nodes').select('uuid').whereNot('deleted', 0).whereIn('uuid', [...f.orphanNodes])) as Array<{ uuid: string }>).map((r) => r.uuid);
  if (deletedNodes.length > 0) {
    const still = (await placement('resource_providers').whereIn('uuid', deletedNodes).count({ n: '*' })) as Array<{ n: number | string }>;
    if (Number(still[0]?.n) !== 0) bad.push(`${still[0]?.n} orphan compute node(s) soft-deleted while their provider remains`);
  }
  // 4. Every journal parses.
  bad.push(...checkJournals(journals, killed));
  return bad;
}

export interface KilledRun {
  /** true if the process was killed before it exited by itself. */
  readonly killed: boolean;
  readonly code: number | null;
  readonly stderr: string;
  readonly journalBytes: number;
}

/**
 * Run `argv` and SIGKILL it once its journal holds `atLines` lines (or after
 * `maxMs`, or never if it exits first).
 */
export function runAndKill(argv: readonly string[], journal: string, atLines: number, maxMs = 30_000): Promise<KilledRun> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let killed = false;
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const started = Date.now();
    const poll = setInterval(() => {
      let lines = 0;
      if (existsSync(journal)) {
        const text = readFileSync(journal, 'utf8');
        for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines++;
      }
      if (lines >= atLines || Date.now() - started > maxMs) {
        killed = child.exitCode === null && child.kill('SIGKILL');
        clearInterval(poll);
      }
    }, 2);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      resolve({ killed: killed && code === null, code, stderr, journalBytes: existsSync(journal) ? statSync(journal).size : 0 });
    });
  });
}

export interface CampaignStats {
  kills: number;
  exitedBeforeKill: number;
  invariantChecks: number;
  rounds: number;
  changesPlanned: number;
  undone: number;
  /** Undos SIGKILLed part-way (each then re-run to the end). */
  undoKills: number;
  violations: string[];
  /** Kills per command name. */
  killsByCommand: Record<string, number>;
  /** Killed runs whose journal ends in a cut line (checkJournals), reported in the figures. */
  cutJournals: number;
}

async function runQuiet(argv: readonly string[]): Promise<{ code: number; out: string }> {
  const r = await runAndKill(argv, '/nonexistent/never', Number.POSITIVE_INFINITY, 120_000);
  return { code: r.code ?? 137, out: r.stderr };
}

function plannedChanges(stdout: string): number {
  const m = /(\d+) change\(s\)/.exec(stdout);
  return m === null ? 0 : Number(m[1]);
}

/** What a kill campaign drives, and how it judges the state after each kill. */
export interface CampaignTarget {
  readonly d: TestDeployment;
  /** The mutating commands, driven one after the other in each round. */
  readonly commands: ReadonlyArray<readonly string[]>;
  /** Every broken invariant after a kill or a re-run; [] when all hold. `killed`: the journals of SIGKILLed runs (checkJournals). */
  check(journals: readonly string[], killed: ReadonlySet<string>): Promise<string[]>;
  /** Once a round's journals are undone: what is not back as generated; [] when restored. */
  checkRestored(): Promise<string[]>;
  /** Once every command's re-runs converged (third run exit 0): what is not repaired. */
  checkConverged?(): Promise<string[]>;
}

/** The orphan/stale-provider deployment as a campaign target (cleanup_orphans, then cleanup_providers). */
export function faultTarget(f: FaultDeployment): CampaignTarget {
  return {
    d: f.d,
    commands: [COMMANDS.orphans, COMMANDS.providers],
    check: (journals, killed) => checkInvariants(f, journals, killed),
    async checkRestored() {
      const totals = await allocationTotals(f.d.knex('placement'));
      const restored = totals.size === f.initial.size && [...f.initial].every(([c, m]) => [...m].every(([rc, used]) => totals.get(c)?.get(rc) === used));
      return restored ? [] : [`undo did not restore every allocation (${totals.size} consumers, ${f.initial.size} before)`];
    },
  };
}

/**
 * Kill campaigns on one deployment. Per round and command: `killsPerCommand`
 * SIGKILLs at random journal depths, the invariants after each, then a re-run
 * that finishes the plan (exit 4) and a third run that exits 0. The round ends
 * by undoing every journal newest first, which must restore what was
 * generated, so the next round starts from the same plan (same size).
 */
export async function killCampaign(
  t: CampaignTarget,
  opts: { rounds: number; killsPerCommand: number; journalDir: string; log?: (s: string) => void; dryRunStdout: (argv: readonly string[]) => Promise<{ code: number; stdout: string }> },
): Promise<CampaignStats> {
  const stats: CampaignStats = { kills: 0, exitedBeforeKill: 0, invariantChecks: 0, rounds: 0, changesPlanned: 0, undone: 0, undoKills: 0, violations: [], killsByCommand: {}, cutJournals: 0 };
  const firstPlan = new Map<string, number>();
  let n = 0;
  for (let round = 0; round < opts.rounds; round++) {
    const journals: string[] = [];
    const killed = new Set<string>();
    for (const cmd of t.commands) {
      const name = cmd.join(' ');
      const base = [...t.d.args, ...cmd];
      const dry = await opts.dryRunStdout(base);
      const total = plannedChanges(dry.stdout);
      stats.changesPlanned += total;
      // After the previous round's undo the plan must be the same again.
      const first = firstPlan.get(name);
      if (first === undefined) {
        firstPlan.set(name, total);
        opts.log?.(`${name}: ${/^.*change\(s\).*$/m.exec(dry.stdout)?.[0] ?? `exit ${dry.code}`}`);
      }
      else if (first !== total) stats.violations.push(`round ${round} ${name}: plans ${total} change(s) after the undo, ${first} in round 0`);
      for (let k = 0; k < opts.killsPerCommand; k++) {
        // What is left of the plan after the previous kills.
        const left = k === 0 ? total : plannedChanges((await opts.dryRunStdout(base)).stdout);
        if (left === 0) break;
        const journal = `${opts.journalDir}/run-${++n}.jsonl`;
        journals.push(journal);
        // A journal line per change and per commit, plus the header.
        const atLines = 1 + Math.floor(Math.random() * Math.max(1, left * 2));
        const r = await runAndKill([...base, '--apply', '--journal', journal], journal, atLines);
        if (r.killed) {
          stats.kills++;
          killed.add(journal);
          if (existsSync(journal) && !readFileSync(journal, 'utf8').endsWith('\n')) stats.cutJournals++;
          stats.killsByCommand[name] = (stats.killsByCommand[name] ?? 0) + 1;
        } else {
          stats.exitedBeforeKill++;
          if (r.code !== 4 && r.code !== 0) stats.violations.push(`${name} exited ${r.code} unkilled: ${r.stderr.trim()}`);
        }
        stats.invariantChecks++;
        for (const v of await t.check(journals, killed)) stats.violations.push(`round ${round} kill ${k} (${name} at line ${atLines}): ${v}`);
      }
      const again = await opts.dryRunStdout(base);
      const finish = `${opts.journalDir}/run-${++n}.jsonl`;
      journals.push(finish);
      const second = await runQuiet([...base, '--apply', '--journal', finish]);
      if (again.code === 3 && second.code !== 4) stats.violations.push(`round ${round} ${name}: the re-run exited ${second.code}, not 4: ${second.out.trim()}`);
      if (again.code === 0 && second.code !== 0) stats.violations.push(`round ${round} ${name}: nothing left, yet the re-run exited ${second.code}`);
      if (again.code !== 0 && again.code !== 3) stats.violations.push(`round ${round} ${name}: the dry run after the kills exited ${again.code}: ${again.stdout.trim()}`);
      const third = await runQuiet([...base, '--apply']);
      if (third.code !== 0) stats.violations.push(`round ${round} ${name}: the third run exited ${third.code}, not 0: ${third.out.trim()}`);
      for (const v of await t.check(journals, killed)) stats.violations.push(`round ${round} after the re-runs: ${v}`);
    }
    for (const v of (await t.checkConverged?.()) ?? []) stats.violations.push(`round ${round} converged state: ${v}`);
    // Undo everything, newest journal first: what was generated comes back.
    for (const j of [...journals].reverse()) {
      if (!existsSync(j)) continue;
      // First an undo SIGKILLed part-way: it restores the databases side by
      // side, and must leave every unit in a state its apply passed through
      // (the invariants); the undo below finishes it.
      const changes = readFileSync(j, 'utf8').split('\n').filter((l) => l.includes('"type":"change"')).length;
      if (changes > 0) {
        const killedUndo = `${j}.undo-killed`;
        const at = 1 + Math.floor(Math.random() * changes * 2);
        const k = await runAndKill([...t.d.args, 'undo', j, '--apply', '--allow-truncated', '--journal', killedUndo], killedUndo, at);
        if (k.killed) stats.undoKills++;
        else if (k.code !== 0 && k.code !== 4) stats.violations.push(`round ${round}: undo ${j} (to be killed at line ${at}) exited ${k.code}: ${k.stderr.trim()}`);
        stats.invariantChecks++;
        for (const v of await t.check(journals, killed)) stats.violations.push(`round ${round}: undo of ${j} killed at line ${at}: ${v}`);
      }
      const u = await runQuiet([...t.d.args, 'undo', j, '--apply', '--allow-truncated', '--journal', `${j}.undo`]);
      if (u.code !== 0 && u.code !== 4) stats.violations.push(`round ${round}: undo ${j} exited ${u.code}: ${u.out.trim()}`);
      else stats.undone++;
    }
    for (const v of await t.checkRestored()) stats.violations.push(`round ${round}: ${v}`);
    stats.rounds++;
    opts.log?.(`round ${round}: ${stats.kills} kills so far, ${stats.violations.length} violation(s)`);
  }
  return stats;
}
