// nova.conf loading with oslo.config's semantics,
// producing the frozen NovaConfig every other layer reads.
//
// Order of application, as cfg.ConfigOpts._parse_config_files does it:
// the default files when no --config-file is given, then the default
// *.conf.d directories when no --config-dir is given (the two are decided
// independently), then the command-line sources in their order. Later wins.

import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import { ReconcileError } from '../errors.js';
import { defaultSearchRoots, findDefaultConfigSources } from './default-config-sources.js';
import type { ParsedIni } from './ini-parser.js';
import { createOptionLookup, type OptionLookup } from './option-lookup.js';
import { readFraction, readInteger, readList } from './option-values.js';
import { readIronicSettings } from './ironic-settings.js';
import { parsePartitions, type PartitionSetting } from './ironic-partitions.js';
import { readConfigSources } from './read-config-sources.js';
import type { ConfigSource, NovaConfig, ReconcileSettings } from './types.js';

export interface LoadConfigArgs {
  /** --config-file / --config-dir in command-line order. */
  readonly sources: readonly ConfigSource[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The user's home directory, for ~ and the default search path. */
  readonly home: string;
  /** Replaces ~/.nova, ~, /etc/nova, /etc in the default search (tests). */
  readonly searchRoots?: readonly string[];
  /** Decides the default journal_dir; defaults to an access(W_OK) check. */
  readonly isWritableDir?: (path: string) => boolean;
  /** --allow-unknown-schema (a global option). */
  readonly allowUnknownSchema?: boolean;
}

/** Circuit-breaker defaults; why these values: src/domain/plan-limits.ts and docs/RELIABILITY.md. */
export const DEFAULT_MAX_APPLY_UNITS = 1000;
/**
 * [nova_reconcile] apply_batch_units: units written in one transaction per
 * database (src/operations/apply-batches.ts). 64 of the cleanup's units take
 * about 0.1 s on MariaDB, the time their rows stay locked.
 */
export const DEFAULT_APPLY_BATCH_UNITS = 64;
export const DEFAULT_MAX_APPLY_FRACTION = 0.5;
export const DEFAULT_MIN_IRONIC_FRACTION = 0.5;

/** The system-wide journal location, used when its parent exists and is writable. */
export const SYSTEM_STATE_DIR = '/var/lib/nova-reconcile';

/** Loads and validates the configuration; every invalid value is reported in one ReconcileError('config'). */
export function loadConfig(args: LoadConfigArgs): NovaConfig {
  const files = readAllSources(args);
  const lookup = createOptionLookup(files, args.env);
  const problems: string[] = [];
  const get = (group: string, key: string): string | undefined => lookup.find(group, key)?.value;

  const reportInterval = readInteger(lookup, { group: 'DEFAULT', key: 'report_interval', default: 10 }, problems);
  const configuredDownTime = readInteger(lookup, { group: 'DEFAULT', key: 'service_down_time', default: 60 }, problems);
  const reconcile = readReconcileSettings(lookup, args, problems);
  // [ironic] and ironic_partitions are checked as strictly, but only a
  // command that uses them fails on them: a nova.conf whose [ironic] names
  // an auth plugin we do not read (v3oidcpassword, say) still runs
  // discover_hosts, as it does with nova-manage, which reads [ironic] only
  // where it talks to Ironic.
  const ironicProblems: string[] = [];
  const ironic = readIronicSettings(lookup, ironicProblems);
  const ironicPartitions = readPartitions(lookup, ironicProblems);
  const ironicShard = readShard(lookup, ironicProblems);

  if (problems.length > 0) throw configError(problems);

  const config: NovaConfig = Object.freeze({
    files: Object.freeze(files.map((file) => file.path)),
    get,
    apiDatabaseConnection: get('api_database', 'connection'),
    databaseConnection: get('database', 'connection'),
    transportUrl: get('DEFAULT', 'transport_url'),
    placementDatabaseConnection: get('placement_database', 'connection'),
    ironicDatabaseConnection: get('ironic_database', 'connection'),
    ironic,
    serviceDownTime: effectiveServiceDownTime(configuredDownTime, reportInterval),
    reportInterval,
    reconcile:
      ironicPartitions === undefined && ironicShard === undefined
        ? reconcile
        : Object.freeze({ ...reconcile, ...(ironicPartitions === undefined ? {} : { ironicPartitions }), ...(ironicShard === undefined ? {} : { ironicShard }) }),
  });
  return ironicProblems.length === 0 ? config : failingOnIronic(config, configError(ironicProblems));
}

/**
 * Reads the Ironic settings, so that a bad one stops a command that will
 * need them now (before it opens a database or takes the apply lock) rather
 * than where it first reads them.
 */
export function checkIronicSettings(config: NovaConfig): void {
  void config.ironic;
  void config.reconcile.ironicPartitions;
  void config.reconcile.ironicShard;
}

function configError(problems: readonly string[]): ReconcileError {
  const message = problems.length === 1 ? (problems[0] ?? '') : `${problems.length} invalid configuration values: ${problems.join('; ')}`;
  return new ReconcileError('config', message, { hint: 'fix the values named above' });
}

/**
 * The configuration with its Ironic settings (`ironic`, and `reconcile`'s
 * `ironicPartitions` and `ironicShard`) replaced by getters that throw
 * `error`: whatever reads them (the snapshot reader, the Ironic node list)
 * stops there, before any change, with the error loadConfig would have
 * thrown; everything else reads the configuration as usual.
 */
function failingOnIronic(config: NovaConfig, error: ReconcileError): NovaConfig {
  const fail = { get: (): never => { throw error; }, enumerable: true };
  const reconcile = Object.freeze(Object.defineProperties({ ...config.reconcile }, { ironicPartitions: fail, ironicShard: fail }));
  const { ironic: _ironic, ...rest } = config;
  return Object.freeze(Object.defineProperties({ ...rest, reconcile }, { ironic: fail }) as NovaConfig);
}

/**
 * [nova_reconcile] ironic_partitions, plus the partition of this nova.conf's
 * own [ironic] conductor_group (partition_key before 28.0.0) and peer_list (a nova-compute's file). The two must
 * agree where both name a group.
 */
function readPartitions(lookup: OptionLookup, problems: string[]): readonly PartitionSetting[] | undefined {
  const found = lookup.find('nova_reconcile', 'ironic_partitions');
  const parsed = found === undefined ? { partitions: [], problems: [] } : parsePartitions(found.value);
  for (const p of parsed.problems) problems.push(`invalid value for [nova_reconcile] ironic_partitions in ${found?.origin ?? '?'}: ${p}`);
  const partitions = [...parsed.partitions];
  // Read whether or not [ironic] says how to reach Ironic: a nova-compute's file always has them together.
  const partitionKey = lookup.find('ironic', 'conductor_group')?.value.trim();
  const peerList = readList(lookup, 'ironic', 'peer_list');
  if (partitionKey !== undefined && partitionKey !== '') {
    const group = partitionKey.toLowerCase();
    if (peerList === undefined || peerList.length === 0) problems.push('[ironic] conductor_group (partition_key) needs peer_list (Nova refuses to start without it)');
    else {
      const hosts = [...new Set(peerList.map((h) => h.toLowerCase()))];
      const given = partitions.find((p) => p.group === group);
      if (given === undefined) partitions.push({ group, hosts });
      else if ([...given.hosts].sort().join(',') !== [...hosts].sort().join(','))
        problems.push(`[nova_reconcile] ironic_partitions gives conductor group "${group}" other hosts than [ironic] peer_list`);
    }
  }
  return partitions.length === 0 ? undefined : Object.freeze(partitions.map((p) => Object.freeze(p)));
}

/**
 * [ironic] shard (Nova 2024.1): a nova-compute with a shard forces its ring
 * to itself ({CONF.host}), so it owns every node of its shard. Which host
 * that is comes from [DEFAULT] host; Nova's default, the machine's hostname,
 * is this machine's and would be a guess, so without it the host stays
 * unknown (rebalance then refuses that shard's nodes). Never an error here:
 * the nova-manage commands read the same file.
 */
function readShard(lookup: OptionLookup, problems: string[]): { shard: string; host: string | undefined } | undefined {
  const shard = lookup.find('ironic', 'shard')?.value.trim();
  if (shard === undefined || shard === '') return undefined;
  if (!/^[a-zA-Z0-9_.-]+$/.test(shard)) {
    problems.push(`invalid value for [ironic] shard: "${shard.slice(0, 40)}" is not [a-zA-Z0-9_.-]+`);
    return undefined;
  }
  const host = lookup.find('DEFAULT', 'host')?.value.trim();
  return Object.freeze({ shard, host: host === undefined || host === '' ? undefined : host.toLowerCase() });
}

/**
 * nova/servicegroup/api.py: when service_down_time <= report_interval, Nova
 * overrides it in-process to int(report_interval * 2.5) and logs a warning (nova-facts §7).
 */
export function effectiveServiceDownTime(serviceDownTime: number, reportInterval: number): number {
  return serviceDownTime <= reportInterval ? Math.trunc(reportInterval * 2.5) : serviceDownTime;
}

function readAllSources(args: LoadConfigArgs): readonly ParsedIni[] {
  const hasFile = args.sources.some((s) => s.kind === 'file');
  const hasDir = args.sources.some((s) => s.kind === 'dir');
  const defaults = hasFile && hasDir ? { files: [], dirs: [] } : findDefaultConfigSources(args.searchRoots ?? defaultSearchRoots(args.home));
  return [
    // Finding nothing is not an error: whoever needs [api_database] connection reports it.
    ...(hasFile ? [] : readConfigSources(defaults.files, args.home)),
    ...(hasDir ? [] : readConfigSources(defaults.dirs, args.home, { optional: true })),
    ...readConfigSources(args.sources, args.home),
  ];
}

function readReconcileSettings(lookup: OptionLookup, args: LoadConfigArgs, problems: string[]): ReconcileSettings {
  const group = 'nova_reconcile';
  const journalDir = lookup.find(group, 'journal_dir')?.value;
  const lockDatabase = lookup.find(group, 'lock_database')?.value;
  if (lockDatabase !== undefined && lockDatabase !== '' && !/^[A-Za-z0-9_$-]{1,64}$/.test(lockDatabase))
    problems.push(`[${group}] lock_database = ${JSON.stringify(lockDatabase)} is not a database name (letters, digits, _ $ -, at most 64)`);
  return Object.freeze({
    journalDir: journalDir === undefined || journalDir === '' ? defaultJournalDir(args) : expandHome(journalDir, args.home),
    // Upper bounds keep every wait inside a Node timer (at most 2^31-1 ms, about 24 days): a larger
    // value would silently become 1 ms, with a TimeoutOverflowWarning on stderr.
    lockTimeout: readInteger(lookup, { group, key: 'lock_timeout', default: 10, min: 0, max: 86_400 }, problems),
    lockDatabase: lockDatabase === undefined || lockDatabase === '' ? undefined : lockDatabase,
    allowUnknownSchema: args.allowUnknownSchema === true,
    cellConcurrency: readInteger(lookup, { group, key: 'cell_concurrency', default: 4, min: 1, max: 64 }, problems),
    applyConcurrency: readInteger(lookup, { group, key: 'apply_concurrency', default: 4, min: 1, max: 16 }, problems),
    applyBatchUnits: readInteger(lookup, { group, key: 'apply_batch_units', default: DEFAULT_APPLY_BATCH_UNITS, min: 1, max: 1_000 }, problems),
    connectTimeout: readInteger(lookup, { group, key: 'connect_timeout', default: 10, min: 1, max: 3_600 }, problems),
    ironicPartitions: undefined,
    ironicRingMembers: readList(lookup, group, 'ironic_ring_members'),
    // The circuit breaker's defaults and why: src/domain/plan-limits.ts.
    maxApplyUnits: readInteger(lookup, { group, key: 'max_apply_units', default: DEFAULT_MAX_APPLY_UNITS, min: 0 }, problems),
    maxApplyFraction: readFraction(lookup, { group, key: 'max_apply_fraction', default: DEFAULT_MAX_APPLY_FRACTION }, problems),
    minIronicFraction: readFraction(lookup, { group, key: 'min_ironic_fraction', default: DEFAULT_MIN_IRONIC_FRACTION }, problems),
    sandboxCreatedAt: readSandboxCreatedAt(lookup.find(group, 'sandbox_created_at')?.value, problems),
  });
}

/** 'YYYY-MM-DD HH:MM:SS', naive UTC as Nova writes timestamps. */
function readSandboxCreatedAt(value: string | undefined, problems: string[]): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(value.trim());
  const ms = m === null ? NaN : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (Number.isNaN(ms)) {
    problems.push(`[nova_reconcile] sandbox_created_at = ${JSON.stringify(value)} is not a naive UTC time 'YYYY-MM-DD HH:MM:SS'`);
    return undefined;
  }
  return ms;
}

/** /var/lib/nova-reconcile/journal where that is writable (a packaged install), else ~/.nova-reconcile/journal. */
function defaultJournalDir(args: LoadConfigArgs): string {
  const writable = args.isWritableDir ?? isWritableDirectory;
  return writable(SYSTEM_STATE_DIR) ? join(SYSTEM_STATE_DIR, 'journal') : join(args.home, '.nova-reconcile', 'journal');
}

function isWritableDirectory(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  return path.startsWith('~/') ? join(home, path.slice(2)) : path;
}
