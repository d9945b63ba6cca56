// The property campaign (issue 22): for each random history, build the cloud,
// then hold every command to the promises of DESIGN.md:
//   - a dry run changes nothing;
//   - an apply never reduces a live instance's allocations, never touches a
//     provider that is not a compute-node provider, never leaves an
//     allocation without its inventory, and never ends in an internal error;
//   - `undo --apply` of its journal gives the rows back exactly;
//   - after an apply, a second dry run plans nothing (refusals aside).
// Commands run in-process through runCli (the same entry point as the
// binary, without the process start), against one deployment that is
// emptied between histories.
import { appendFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Knex } from 'knex';
import { runCli } from '../../src/dispatch/program.js';
import { createTestDeployment, type DbName, type TestDeployment, type TestDialect } from '../helpers/test-deployment.js';
import { CloudModel, describeHistory, historyArb, type CloudEvent } from './cloud-history.js';

export interface CampaignStats {
  histories: number;
  events: number;
  unitsApplied: number;
  propertiesChecked: number;
  undos: number;
}

export interface Campaign {
  readonly deployment: TestDeployment;
  readonly stats: CampaignStats;
  /** Runs one history and checks every property; throws a PropertyViolation on the first broken one. */
  check(events: readonly CloudEvent[]): Promise<void>;
  close(): Promise<void>;
}

export class PropertyViolation extends Error {}

const DATA_DBS: readonly DbName[] = ['api', 'cell1', 'cell2', 'placement'];
/** Rows that the schema set-up owns and a history never writes. */
const KEEP: Readonly<Record<string, (k: Knex) => Knex.QueryBuilder | null>> = {
  cell_mappings: () => null,
  knex_migrations: () => null,
  knex_migrations_lock: () => null,
  // Standard classes (ids below 10000) are part of the schema; custom ones are data.
  resource_classes: (k) => k('resource_classes').where('id', '>=', 10000).del(),
};

type Dump = Record<string, string[]>;

export async function openCampaign(dialect: TestDialect, prefix: string): Promise<Campaign> {
  const deployment = await createTestDeployment(dialect, 'empty', prefix);
  // The circuit breaker judges plausibility against a real cloud's size; a
  // history's cloud is a handful of nodes, where one unit is a large share.
  // The properties are about what an apply does, so its limits are off here.
  appendFileSync(deployment.confPath, 'max_apply_units = 0\nmax_apply_fraction = 1\nmin_ironic_fraction = 0\n');
  const stats: CampaignStats = { histories: 0, events: 0, unitsApplied: 0, propertiesChecked: 0, undos: 0 };
  const tables = new Map<DbName, string[]>();
  for (const name of DATA_DBS) tables.set(name, await listTables(deployment.knex(name), dialect));
  const journalDir = join(deployment.dir, 'journals');
  const ironicFile = join(deployment.dir, 'ironic-nodes.json');
  let runSeq = 0;

  const dump = async (): Promise<Dump> => {
    const out: Dump = {};
    for (const name of DATA_DBS) {
      const k = deployment.knex(name);
      for (const t of tables.get(name) ?? []) {
        const rows = (await k(t).select('*')) as Array<Record<string, unknown>>;
        out[`${name}.${t}`] = rows.map((r) => JSON.stringify(Object.keys(r).sort().map((c) => [c, normalise(r[c])]))).sort();
      }
    }
    return out;
  };

  const reset = async (): Promise<void> => {
    for (const name of DATA_DBS) {
      // The tables are emptied in name order, so a child may come after its
      // parent (instances before migrations): on MariaDB the foreign keys are
      // switched off for the session that empties them, as a dump reload does.
      await deployment.knex(name).transaction(async (k) => {
        if (dialect === 'mysql') await k.raw('SET FOREIGN_KEY_CHECKS = 0');
        // placement has rp self-references.
        if (name === 'placement') await k('resource_providers').update({ root_provider_id: null, parent_provider_id: null });
        for (const t of tables.get(name) ?? []) {
          const keep = KEEP[t];
          if (keep !== undefined) await keep(k);
          else await k(t).del();
        }
        if (dialect === 'mysql') await k.raw('SET FOREIGN_KEY_CHECKS = 1');
      });
    }
    rmSync(journalDir, { recursive: true, force: true });
    mkdirSync(journalDir, { recursive: true });
  };

  const run = async (args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    let stdout = '';
    let stderr = '';
    const code = await runCli([...deployment.args, ...args], {
      stdout: { write: (s) => void (stdout += s) },
      stderr: { write: (s) => void (stderr += s) },
      env: { PATH: process.env['PATH'] },
      home: deployment.dir,
      cwd: deployment.dir,
      stderrIsTty: false,
      stdoutIsTty: false,
      stdoutColumns: undefined,
      maxRssKb: () => 0,
    });
    return { code, stdout, stderr };
  };

  const check = async (events: readonly CloudEvent[]): Promise<void> => {
    await reset();
    const dbs = deployment.dbs;
    const model = new CloudModel({ api: dbs.api, cells: dbs.cells, placement: dbs.placement, cellIds: { cell1: dbs.cellIds.cell1, cell2: dbs.cellIds.cell2 } });
    for (const e of events) await model.apply(e);
    stats.histories += 1;
    stats.events += events.length;
    const nodes = model.ironicNodeList();
    const ironicArgs = nodes === null || nodes.length === 0 ? [] : ['--ironic-nodes', ironicFile];
    if (nodes !== null) writeFileSync(ironicFile, JSON.stringify(nodes));
    const fail = (what: string, detail: string): never => {
      throw new PropertyViolation(`${what}\n${detail}\nhistory:\n${describeHistory(events)}`);
    };

    // 1. Dry runs change nothing.
    const dryRuns: ReadonlyArray<readonly string[]> = [
      ['audit', '--format', 'json', ...ironicArgs],
      ['compute_node', 'list', '--format', 'json'],
      ['compute_node', 'cleanup_orphans', '--format', 'json', ...ironicArgs],
      ['placement', 'cleanup_providers', '--format', 'json'],
      ['compute_node', 'rebalance', '--format', 'json'],
      ['placement', 'audit', '--verbose'],
      ['placement', 'audit', '--verbose', '--all-resource-classes'],
      ['cell_v2', 'discover_hosts', '--dry-run', '--by-service'],
      ['cell_v2', 'discover_hosts', '--dry-run'],
    ];
    let before = await dump();
    for (const args of dryRuns) {
      const r = await run(args);
      if (r.code === 255 || r.code === 127) fail(`${args.join(' ')}: exit ${r.code}`, r.stdout + r.stderr);
      const after = await dump();
      const diff = firstDifference(before, after);
      if (diff !== null) fail(`${args.join(' ')} (a dry run) changed rows`, diff);
      stats.propertiesChecked += 1;
    }

    // 2. Each plan command: apply, invariants, undo exact, apply again, idempotent.
    const applies: ReadonlyArray<{ args: readonly string[]; dry: readonly string[] }> = [
      { args: ['compute_node', 'rebalance', '--format', 'json'], dry: ['compute_node', 'rebalance', '--format', 'json'] },
      { args: ['placement', 'cleanup_providers', '--format', 'json'], dry: ['placement', 'cleanup_providers', '--format', 'json'] },
      { args: ['compute_node', 'cleanup_orphans', '--format', 'json', ...ironicArgs], dry: ['compute_node', 'cleanup_orphans', '--format', 'json', ...ironicArgs] },
      { args: ['placement', 'audit', '--delete', '--verbose'], dry: ['placement', 'audit', '--verbose'] },
    ];
    for (const { args, dry } of applies) {
      const name = args.slice(0, 2).join(' ');
      const isAudit = args[1] === 'audit';
      const applyOnce = async (): Promise<{ journal: string; out: string }> => {
        runSeq += 1;
        const journal = join(journalDir, `run-${runSeq}.jsonl`);
        const r = await run([...args, ...(isAudit ? [] : ['--apply']), '--journal', journal]);
        const ok = isAudit ? [0, 3, 4] : [0, 3, 4, 5];
        if (!ok.includes(r.code)) fail(`${name} --apply: exit ${r.code}`, r.stdout + r.stderr);
        stats.unitsApplied += countApplied(r.stdout, isAudit);
        return { journal, out: r.stdout + r.stderr };
      };
      before = await dump();
      const first = await applyOnce();
      const after = await dump();
      const broken = checkInvariants(before, after);
      if (broken !== null) fail(`${args.join(' ')}${isAudit ? '' : ' --apply'} broke an invariant: ${broken}`, first.out);
      stats.propertiesChecked += 1;
      if (existsSync(first.journal)) {
        const u = await run(['undo', first.journal, '--apply', '--journal', join(journalDir, `undo-${runSeq}.jsonl`)]);
        if (u.code !== 0 && u.code !== 4) fail(`undo of ${name}: exit ${u.code}`, u.stdout + u.stderr + '\n' + first.out);
        const restored = await dump();
        const diff = firstDifference(before, restored);
        if (diff !== null) fail(`undo of ${name} did not give the rows back`, diff + '\n' + first.out);
        stats.undos += 1;
        stats.propertiesChecked += 1;
        await applyOnce();
      }
      const again = await run(dry);
      if (isAudit) {
        if (again.code !== 0 && !/cannot be deleted|not deleted|kept/i.test(again.stdout)) fail(`${name} after --delete still finds orphans (exit ${again.code})`, again.stdout);
      } else {
        const doc = JSON.parse(again.stdout) as { units?: unknown[] };
        if ((doc.units ?? []).length > 0) fail(`${name} is not idempotent: a second run plans ${(doc.units ?? []).length} unit(s)`, again.stdout);
      }
      stats.propertiesChecked += 1;
    }
  };

  return {
    deployment,
    stats,
    check,
    close: () => deployment.cleanup(),
  };
}

export interface CampaignOptions {
  readonly seed: number;
  readonly runs: number;
  readonly maxEvents: number;
  /** fast-check's replay path of a reported failure (with its seed). */
  readonly path?: string;
  /** Stop drawing (and shrinking) after this long; a failure found is still reported, with the shortest history so far. */
  readonly timeLimitMs?: number;
}

/** Runs `runs` random histories (or replays seed + path); fast-check shrinks a failure to its shortest history and prints seed and path. */
export async function runCampaign(campaign: Campaign, opts: CampaignOptions): Promise<void> {
  await fc.assert(
    fc.asyncProperty(historyArb(opts.maxEvents), async (events) => {
      await campaign.check(events);
    }),
    {
      seed: opts.seed,
      numRuns: opts.runs,
      ...(opts.path === undefined ? {} : { path: opts.path }),
      ...(opts.timeLimitMs === undefined ? {} : { interruptAfterTimeLimit: opts.timeLimitMs, markInterruptAsFailure: false }),
    },
  );
}

function countApplied(stdout: string, isAudit: boolean): number {
  if (isAudit) return (stdout.match(/^Deleted allocations/gm) ?? []).length;
  try {
    const doc = JSON.parse(stdout) as { applied?: unknown[] };
    return (doc.applied ?? []).length;
  } catch {
    return 0;
  }
}

function normalise(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'bigint') return Number(v);
  if (Buffer.isBuffer(v)) return v.toString('hex');
  return v;
}

async function listTables(k: Knex, dialect: TestDialect): Promise<string[]> {
  if (dialect === 'sqlite') {
    const rows = (await k.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")) as Array<{ name: string }>;
    return rows.map((r) => r.name);
  }
  const rows = (await k.raw('SHOW TABLES')) as [Array<Record<string, string>>, unknown];
  return rows[0].map((r) => Object.values(r)[0] ?? '').filter((n) => n !== '').sort();
}

function firstDifference(a: Dump, b: Dump): string | null {
  for (const table of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[table] ?? [];
    const y = b[table] ?? [];
    const gone = x.filter((r) => !y.includes(r));
    const added = y.filter((r) => !x.includes(r));
    if (gone.length > 0 || added.length > 0) return `${table}: -${gone.slice(0, 3).join(' -')} +${added.slice(0, 3).join(' +')}`;
  }
  return null;
}

type Row = Record<string, unknown>;
const rowsOf = (d: Dump, table: string): Row[] => (d[table] ?? []).map((s) => Object.fromEntries(JSON.parse(s) as Array<[string, unknown]>));

/** The allocation invariants of an apply, from the rows before and after; null when they hold. */
export function checkInvariants(before: Dump, after: Dump): string | null {
  const liveInstances = new Set<string>();
  for (const cell of ['cell1', 'cell2']) for (const i of rowsOf(after, `${cell}.instances`)) if (Number(i['deleted']) === 0) liveInstances.add(String(i['uuid']));
  const totals = (d: Dump): Map<string, number> => {
    const m = new Map<string, number>();
    for (const a of rowsOf(d, 'placement.allocations')) {
      const key = `${String(a['consumer_id'])}:${String(a['resource_class_id'])}`;
      m.set(key, (m.get(key) ?? 0) + Number(a['used']));
    }
    return m;
  };
  // An evacuated instance's share on its old host may go (§5.2); everything else of a live instance stays.
  const evacuated = new Set<string>();
  for (const cell of ['cell1', 'cell2'])
    for (const m of rowsOf(before, `${cell}.migrations`)) if (m['migration_type'] === 'evacuation' && Number(m['deleted']) === 0) evacuated.add(String(m['instance_uuid']));
  const was = totals(before);
  const now = totals(after);
  for (const [key, used] of was) {
    const consumer = key.split(':')[0] ?? '';
    if (!liveInstances.has(consumer)) continue;
    const left = now.get(key) ?? 0;
    if (left === 0 || (left < used && !evacuated.has(consumer))) return `live instance ${consumer} lost allocations (${key}: ${used} -> ${left})`;
  }
  // Providers that are not compute-node providers keep their inventories and
  // allocations. Their generation (and updated_at) may move: a write of a
  // consumer's allocations bumps every provider left in its set, as Placement
  // does (a live instance's share on a sharing provider, once its old host's
  // allocations are removed).
  const traitId = rowsOf(before, 'placement.traits').find((t) => t['name'] === 'COMPUTE_NODE')?.['id'];
  const computeProviders = new Set(rowsOf(before, 'placement.resource_provider_traits').filter((l) => l['trait_id'] === traitId).map((l) => l['resource_provider_id']));
  for (const rp of rowsOf(before, 'placement.resource_providers')) {
    if (computeProviders.has(rp['id'])) continue;
    const same = (table: string, col: string): boolean =>
      JSON.stringify((before[table] ?? []).filter((s) => rowsOf({ t: [s] }, 't')[0]?.[col] === rp['id'])) ===
      JSON.stringify((after[table] ?? []).filter((s) => rowsOf({ t: [s] }, 't')[0]?.[col] === rp['id']));
    const identity = (d: Dump): string =>
      JSON.stringify(rowsOf(d, 'placement.resource_providers').filter((r) => r['id'] === rp['id']).map(({ generation: _g, updated_at: _u, ...rest }) => rest));
    if (identity(before) !== identity(after) || !same('placement.inventories', 'resource_provider_id') || !same('placement.allocations', 'resource_provider_id'))
      return `provider ${String(rp['uuid'])} (${String(rp['name'])}) is not a compute-node provider and was changed`;
  }
  // Every allocation has its inventory.
  const inventory = new Set(rowsOf(after, 'placement.inventories').map((i) => `${String(i['resource_provider_id'])}:${String(i['resource_class_id'])}`));
  for (const a of rowsOf(after, 'placement.allocations')) {
    const key = `${String(a['resource_provider_id'])}:${String(a['resource_class_id'])}`;
    if (!inventory.has(key)) return `allocation of ${String(a['consumer_id'])} on provider ${String(a['resource_provider_id'])} has no inventory of class ${String(a['resource_class_id'])}`;
  }
  return null;
}
