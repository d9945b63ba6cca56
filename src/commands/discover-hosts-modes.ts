// The two additions to cell_v2 discover_hosts that are not nova-manage's:
// --expect/--wait (repeat discovery until the expected hosts are mapped) and
// --remap (a plan that moves a mapping to the cell that now holds the host).
// Without their options discover_hosts never reaches this file.
import { RECONCILE_EXIT } from '../cli/exit-codes.js';
import { firstFailure, mergeDiscoverPasses, renderDiscoverJson, renderDiscoverVerbose, renderDiscoverWarnings } from '../cli/render-discover.js';
import type { CommandContext, CommandOptions } from '../cli/spec.js';
import { parseHostList } from '../cli/argument-lists.js';
import { ReconcileError } from '../errors.js';
import { describeFileError, errnoOf, readTextFile } from '../files.js';
import type { DiscoverOptions } from '../operations/discover-hosts.js';
import { discoverUntilMapped } from '../operations/discover-until-mapped.js';
import { planHostMappingRemap } from '../operations/host-mapping-plans.js';
import { SCHEDULER_CACHE_NOTE } from './cell-v2-prune-host-mappings.js';
import { printJson, useDeployment } from './deployment.js';
import { runPlanCommand } from './plan-command.js';

const given = (o: CommandOptions, key: string): boolean => o[key] !== undefined && o[key] !== false;

/** Which mode the options ask for; contradictions are usage errors (exit 2, as argparse's). */
export function discoverMode(o: CommandOptions): 'plain' | 'expect' | 'remap' {
  const expecting = given(o, 'expect') || given(o, 'expectFile');
  if (given(o, 'remap')) {
    const clash = ['expect', 'expectFile', 'wait', 'interval', 'strict', 'dryRun', 'byService', 'verbose'].filter((k) => given(o, k));
    if (clash.length > 0) throw usage(`--remap cannot be combined with ${clash.map(flag).join(', ')}`);
    return 'remap';
  }
  const planOnly = ['apply', 'journal'].filter((k) => given(o, k));
  if (planOnly.length > 0) throw usage(`${planOnly.map(flag).join(', ')} only go with --remap`);
  if (!expecting) {
    const waitOnly = ['wait', 'interval'].filter((k) => given(o, k));
    if (waitOnly.length > 0) throw usage(`${waitOnly.map(flag).join(', ')} need --expect or --expect-file`);
    return 'plain';
  }
  return 'expect';
}

export async function runRemap(ctx: CommandContext, o: CommandOptions): Promise<number> {
  const cellUuid = typeof o['cell_uuid'] === 'string' && o['cell_uuid'] !== '' ? o['cell_uuid'] : undefined;
  const code = await runPlanCommand(ctx, o, (d) => planHostMappingRemap(d, cellUuid));
  if (o['apply'] === true && (code === RECONCILE_EXIT.applied || code === RECONCILE_EXIT.partial)) ctx.stderr.write(SCHEDULER_CACHE_NOTE + '\n');
  return code;
}

export async function runExpect(ctx: CommandContext, o: CommandOptions, discover: DiscoverOptions): Promise<number> {
  const expect = expectedHosts(o);
  const waitSeconds = seconds(o['wait'], '--wait', 0, true);
  const intervalSeconds = seconds(o['interval'], '--interval', 10, false);
  if (discover.dryRun && waitSeconds > 0) throw usage('--dry-run maps nothing, so --wait would only wait: give one or the other');
  const json = o['format'] === 'json';
  const progress = ctx.stderrIsTty && !json;
  let drawn = false;
  const result = await useDeployment(ctx, (d) =>
    discoverUntilMapped(d, {
      expect,
      waitSeconds,
      intervalSeconds,
      discover: { ...discover, reportUnmappedServices: json },
      onPass: (pass, index, missing, waited) => {
        if (progress && drawn) ctx.stderr.write('\r\x1b[K');
        drawn = false;
        if (!json && o['verbose'] === true && (index === 0 || pass.cells.some((c) => c.kind === 'discovered' && c.created.length > 0)))
          for (const line of renderDiscoverVerbose(pass)) ctx.stdout.write(line + '\n');
        if (progress && missing.length > 0 && waited < waitSeconds) {
          ctx.stderr.write(`waiting for ${missing.length} expected host(s) to be mapped (${Math.floor(waited)} s of ${waitSeconds} s): ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);
          drawn = true;
        }
      },
    }),
  );
  if (progress && drawn) ctx.stderr.write('\r\x1b[K');
  const merged = mergeDiscoverPasses(result.passes);
  for (const w of new Set(result.passes.flatMap(renderDiscoverWarnings))) ctx.stderr.write(w + '\n');
  const failure = firstFailure(merged);
  if (json)
    printJson(ctx, { ...renderDiscoverJson(merged), expected: expect, mapped: result.mapped, missing: result.missing, waited_s: result.waitedSeconds, passes: result.passes.length });
  if (failure !== undefined) {
    if (json) return 255;
    throw failure.error;
  }
  if (result.missing.length > 0) {
    ctx.stderr.write(`ERROR: ${result.missing.length} expected host(s) not mapped after ${result.waitedSeconds} s: ${result.missing.join(', ')}\n`);
    return 1;
  }
  if (o['strict'] === true) return merged.cells.some((c) => c.kind === 'discovered' && c.created.length > 0) ? 0 : 1;
  return 0;
}

function expectedHosts(o: CommandOptions): string[] {
  const hosts: string[] = [];
  for (const value of Array.isArray(o['expect']) ? o['expect'] : []) hosts.push(...parseHostList(String(value)));
  if (typeof o['expectFile'] === 'string') hosts.push(...readExpectFile(o['expectFile']));
  if (hosts.length === 0) throw usage('--expect/--expect-file name no host');
  return [...new Set(hosts)];
}

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

function seconds(value: unknown, option: string, fallback: number, zeroOk: boolean): number {
  if (value === undefined) return fallback;
  const text = String(value);
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
