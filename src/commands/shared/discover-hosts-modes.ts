// The two additions to cell_v2 discover_hosts that are not nova-manage's:
// --expect/--wait (repeat discovery until the expected hosts are mapped) and
// --remap (a plan that moves a mapping to the cell that now holds the host).
// Without their options discover_hosts only takes its options' form from
// this file (parseDiscoverHosts).
import { flagOption, givenOption, listOption, stringOption } from '../../cli/options.js';
import { firstFailure, mergeDiscoverPasses, renderDiscoverJson, renderDiscoverVerbose, renderDiscoverWarnings } from '../../cli/render-discover.js';
import type { CommandContext, CommandOptions } from '../../cli/spec.js';
import { parseHostList } from '../../cli/argument-lists.js';
import { ReconcileError } from '../../errors.js';
import { describeFileError, errnoOf, readTextFile } from '../../files.js';
import type { DiscoverOptions, DiscoverResult } from '../../operations/discover-hosts.js';
import { discoverUntilMapped } from '../../operations/discover-until-mapped.js';
import { planHostMappingRemap } from '../../operations/host-mapping-plans.js';
import { SCHEDULER_CACHE_NOTE } from './host-mapping-notes.js';
import { useDeployment } from './deployment.js';
import { jsonResult, lines, report, type CommandResult } from '../../cli/results.js';
import { parsePlanRun, runPlanCommand, type PlanRunOptions } from './plan-command.js';

/** nova-manage's discover_hosts, and --expect's additions to it. */
export interface DiscoverRunOptions {
  readonly cellUuid: string | undefined;
  readonly byService: boolean;
  readonly dryRun: boolean;
  readonly verbose: boolean;
  readonly strict: boolean;
  readonly json: boolean;
}

/**
 * The operator log of one discovery pass: a line per host mapping created,
 * and at DEBUG how each cell's hosts without a mapping were found.
 */
export function logDiscoveryPass(ctx: CommandContext, pass: DiscoverResult): void {
  for (const c of pass.cells) {
    if (c.kind !== 'discovered') continue;
    ctx.log?.debug(`cell ${c.cell.uuid}: hosts without a host mapping: ${c.hostMappingRead}`);
    if (!pass.dryRun) for (const host of c.created) ctx.log?.info(`created host mapping for compute host '${host}' in cell ${c.cell.uuid}`);
  }
}

/** --expect and --expect-file as given (the file is read by runExpect), --wait and --interval in seconds. */
export interface ExpectOptions {
  readonly hosts: readonly string[];
  readonly file: string | undefined;
  readonly waitSeconds: number;
  readonly intervalSeconds: number;
}

export type DiscoverHostsOptions =
  | ({ readonly mode: 'plain' } & DiscoverRunOptions)
  | ({ readonly mode: 'expect'; readonly expect: ExpectOptions } & DiscoverRunOptions)
  | { readonly mode: 'remap'; readonly cellUuid: string | undefined; readonly run: PlanRunOptions };

/** The mode the options ask for, and its options; contradictions are usage errors (exit 2, as argparse's). */
export function parseDiscoverHosts(raw: CommandOptions): DiscoverHostsOptions {
  const mode = discoverMode(raw);
  if (mode === 'remap') {
    const cellUuid = stringOption(raw, 'cell_uuid');
    return { mode, cellUuid: cellUuid === '' ? undefined : cellUuid, run: parsePlanRun(raw) };
  }
  const options: DiscoverRunOptions = {
    cellUuid: stringOption(raw, 'cell_uuid'),
    byService: flagOption(raw, 'byService'),
    dryRun: flagOption(raw, 'dryRun'),
    verbose: flagOption(raw, 'verbose'),
    strict: flagOption(raw, 'strict'),
    json: stringOption(raw, 'format') === 'json',
  };
  return mode === 'plain' ? { mode, ...options } : { mode, ...options, expect: parseExpect(raw, options.dryRun) };
}

function discoverMode(raw: CommandOptions): 'plain' | 'expect' | 'remap' {
  const given = (key: string): boolean => givenOption(raw, key);
  const expecting = given('expect') || given('expectFile');
  if (given('remap')) {
    const clash = ['expect', 'expectFile', 'wait', 'interval', 'strict', 'byService', 'verbose'].filter(given);
    if (clash.length > 0) throw usage(`--remap cannot be combined with ${clash.map(flag).join(', ')}`);
    return 'remap';
  }
  const planOnly = ['apply', 'journal'].filter(given);
  if (planOnly.length > 0) throw usage(`${planOnly.map(flag).join(', ')} only go with --remap`);
  if (!expecting) {
    const waitOnly = ['wait', 'interval'].filter(given);
    if (waitOnly.length > 0) throw usage(`${waitOnly.map(flag).join(', ')} need --expect or --expect-file`);
    return 'plain';
  }
  return 'expect';
}

function parseExpect(raw: CommandOptions, dryRun: boolean): ExpectOptions {
  const hosts = (listOption(raw, 'expect') ?? []).flatMap(parseHostList);
  const file = stringOption(raw, 'expectFile');
  if (file === undefined && hosts.length === 0) throw NO_HOST();
  const waitSeconds = seconds(stringOption(raw, 'wait'), '--wait', 0, true);
  const intervalSeconds = seconds(stringOption(raw, 'interval'), '--interval', 10, false);
  if (dryRun && waitSeconds > 0) throw usage('--dry-run maps nothing, so --wait would only wait: give one or the other');
  return { hosts, file, waitSeconds, intervalSeconds };
}

export async function runRemap(ctx: CommandContext, { cellUuid, run }: { readonly cellUuid: string | undefined; readonly run: PlanRunOptions }): Promise<CommandResult> {
  return runPlanCommand(ctx, run, (d) => planHostMappingRemap(d, cellUuid), { ironicSettings: false, appliedNote: SCHEDULER_CACHE_NOTE });
}

export async function runExpect(ctx: CommandContext, o: DiscoverRunOptions & { readonly expect: ExpectOptions }, discover: DiscoverOptions): Promise<CommandResult> {
  const expect = expectedHosts(o.expect);
  const { waitSeconds, intervalSeconds } = o.expect;
  const json = o.json;
  // The waiting line, on a terminal only.
  const progress = ctx.stderrIsTty && !json;
  // --verbose's lines of the passes that created mappings, printed once the wait is over.
  const verbose: string[] = [];
  const result = await useDeployment(ctx, (d) =>
    discoverUntilMapped(d, {
      expect,
      waitSeconds,
      intervalSeconds,
      discover: { ...discover, reportUnmappedServices: json },
      onPass: (pass, index, missing, waited) => {
        logDiscoveryPass(ctx, pass);
        if (progress) ctx.reporter.clear();
        if (!json && o.verbose && (index === 0 || pass.cells.some((c) => c.kind === 'discovered' && c.created.length > 0)))
          verbose.push(...renderDiscoverVerbose(pass));
        if (progress && missing.length > 0 && waited < waitSeconds)
          ctx.reporter.phase(`waiting for ${missing.length} expected host(s) to be mapped (${Math.floor(waited)} s of ${waitSeconds} s): ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);
      },
    }),
  );
  if (progress) ctx.reporter.clear();
  const merged = mergeDiscoverPasses(result.passes);
  for (const w of new Set(result.passes.flatMap(renderDiscoverWarnings))) ctx.reporter.warn(w);
  const failure = firstFailure(merged);
  // 1 when an expected host is still unmapped, or --strict and nothing was created.
  const unmet = result.missing.length > 0 || (o.strict && !merged.cells.some((c) => c.kind === 'discovered' && c.created.length > 0));
  const exitCode = failure !== undefined ? 255 : unmet ? 1 : 0;
  const after = failure === undefined && result.missing.length > 0 ? `ERROR: ${result.missing.length} expected host(s) not mapped after ${result.waitedSeconds} s: ${result.missing.join(', ')}\n` : undefined;
  if (json) {
    // `ok` is false whenever the run exits non-zero, not only when a cell failed.
    return jsonResult({ ...renderDiscoverJson(merged), ok: failure === undefined && !unmet, expected: expect, mapped: result.mapped, missing: result.missing, waited_s: result.waitedSeconds, passes: result.passes.length }, exitCode, after);
  }
  const text = lines(verbose);
  return failure === undefined ? report(text, exitCode, after) : { kind: 'failed', text, error: failure.error };
}

/** --expect's hosts and the --expect-file's, once each. */
function expectedHosts({ hosts: given, file }: ExpectOptions): string[] {
  const hosts = [...given];
  if (file !== undefined) hosts.push(...readExpectFile(file));
  if (hosts.length === 0) throw NO_HOST();
  return [...new Set(hosts)];
}

const NO_HOST = (): ReconcileError => usage('--expect/--expect-file name no host');

/** One host per line (or comma-separated); blank lines and # comments are ignored. */
function readExpectFile(path: string): string[] {
  let text: string;
  try {
    text = readTextFile(path, 16 * 1024 * 1024);
  } catch (err) {
    throw usage(`--expect-file ${path}: cannot read the file (${errnoOf(err) === 'ENOENT' ? 'no such file' : describeFileError(err)})`);
  }
  return text.split('\n').flatMap((line) => parseHostList(line.replace(/#.*/, '')));
}

function seconds(text: string | undefined, option: string, fallback: number, zeroOk: boolean): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text) || (!zeroOk && n === 0) || n > 86400) throw usage(`${option} must be a number of seconds${zeroOk ? '' : ' above 0'} (at most 86400), got '${text}'`);
  return n;
}

function flag(key: string): string {
  return '--' + key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

function usage(message: string): ReconcileError {
  return new ReconcileError('usage', message, { hint: 'see `nova-reconcile cell_v2 discover_hosts --help`' });
}
