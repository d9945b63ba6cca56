// --ironic-nodes FILE and --ironic-source api|file, shared by every command
// that judges ironic nodes. The default follows what the operator gave: the
// file when --ironic-nodes is there, else the Ironic API when nova.conf's
// [ironic] says how to reach it (auth_type or endpoint_override), else no
// ironic truth at all.
import { stringOption } from '../../cli/options.js';
import type { CommandContext, CommandOptions, OptionSpec } from '../../cli/spec.js';
import type { IronicOrigin, Snapshot } from '../../domain/model.js';
import type { Deployment } from '../../operations/open-deployment.js';
import { ReconcileError } from '../../errors.js';
import { readIronicTruth, type IronicSource } from '../../operations/read/ironic.js';
import type { PlanReadRecipe, ReadRecipe } from '../../operations/read/recipe.js';
import { readForPlan, readSnapshot, type PlanInput, type ReadInput } from '../../operations/read/snapshot.js';
import { progressReporter } from './read-options.js';

export const IRONIC_NODES_OPTION: OptionSpec = {
  flags: '--ironic-nodes <file>',
  description:
    'JSON of `openstack baremetal node list -f json`, or one node uuid per line (implies --ironic-source file). A list that is empty, or holds fewer than [nova_reconcile] min_ironic_fraction (0.5) of the live ironic compute nodes the cells know, is refused (exit 2)',
};

export const IRONIC_SOURCE_OPTION: OptionSpec = {
  flags: '--ironic-source <source>',
  description:
    "where the ironic node list comes from: api (the Ironic API, reached as nova-compute does from nova.conf [ironic]: keystoneauth's auth_type password, v3applicationcredential or none with endpoint_override; region_name, valid_interfaces, cafile, insecure, timeout; api_max_retries, api_retry_interval) or file (--ironic-nodes). Default: file with --ironic-nodes, else api when [ironic] is configured. A listing that fails or stops part-way exits 2 and changes nothing",
  choices: ['api', 'file'],
};

export const IRONIC_OPTIONS: readonly OptionSpec[] = [IRONIC_NODES_OPTION, IRONIC_SOURCE_OPTION];

/** --ironic-nodes and --ironic-source as given (parseIronicOptions). */
export interface IronicOptions {
  readonly file: string | undefined;
  readonly wanted: 'api' | 'file' | undefined;
}

/** The form of the ironic options: their contradictions are usage errors, found before anything is read. */
export function parseIronicOptions(raw: CommandOptions): IronicOptions {
  const file = stringOption(raw, 'ironicNodes');
  const source = stringOption(raw, 'ironicSource');
  const wanted = source === 'api' || source === 'file' ? source : undefined;
  if (wanted === 'file' && file === undefined) throw new ReconcileError('usage', '--ironic-source file needs --ironic-nodes FILE', { hint: 'give --ironic-nodes FILE, or --ironic-source api' });
  if (wanted === 'api' && file !== undefined) throw new ReconcileError('usage', '--ironic-source api and --ironic-nodes exclude each other', { hint: 'drop one of them' });
  return { file, wanted };
}

/**
 * The ironic truth these options ask for. The Ironic API is read now, before
 * any database is opened and before the apply lock is taken, so that an
 * Ironic that fails leaves nothing behind. Undefined when there is none.
 */
export async function readIronicOptions(ctx: CommandContext, options: IronicOptions, progress?: (line: string) => void): Promise<IronicSource | undefined> {
  const source = ironicSourceOf(ctx, options);
  // A file is read where it always was (after a --plan-in check, inside the snapshot read): only the network is read ahead.
  if (source === undefined || source.kind !== 'api') return source;
  const { nodes, origin } = await readIronicTruth(source, progress ?? (() => undefined));
  return { kind: 'read', nodes, origin };
}

/** Where the ironic truth these options ask for comes from (nova.conf [ironic] decides the default); undefined when there is none. */
export function ironicSourceOf(ctx: CommandContext, { file, wanted }: IronicOptions): IronicSource | undefined {
  if (file !== undefined) return { kind: 'file', file };
  const settings = ctx.loadConfig().ironic;
  if (settings === undefined) {
    if (wanted === 'api')
      throw new ReconcileError('config', '--ironic-source api needs nova.conf [ironic] auth_type (password, v3applicationcredential) or endpoint_override', {
        hint: "use the nova.conf of a nova-compute ironic host, or give --ironic-nodes FILE",
      });
    return undefined;
  }
  return { kind: 'api', settings };
}

/**
 * One stderr line naming the node list the run judged by, and its size,
 * when it came from the Ironic API (a file is named by the operator on the
 * command line; its runs stay quiet on stderr, as cron jobs expect).
 */
export function describeIronicOrigin(origin: IronicOrigin | undefined): string | undefined {
  return origin?.kind !== 'api' ? undefined : `ironic nodes: ${origin.nodes} from ${origin.label} (complete listing)`;
}

/** For JSON documents: {kind, location, nodes}. */
export function ironicOriginJson(origin: IronicOrigin | undefined): object {
  return origin === undefined ? {} : { ironic_source: { kind: origin.kind, location: origin.location, nodes: origin.nodes } };
}

/**
 * A plan command's read with ironic truth: the recipe's snapshot with the
 * node list `run` has already read; an API list is named on stderr
 * (describeIronicOrigin) and its origin goes into the JSON document.
 */
export function ironicSnapshotReader(ctx: CommandContext, ironic: IronicSource | undefined, recipe: ReadRecipe): OriginNamingReader<Snapshot> {
  return namingOrigin(ctx, (d) => readSnapshot(d, recipe, readInput(ctx, ironic)), (snapshot) => snapshot);
}

/** ironicSnapshotReader for a plan read in two steps (readForPlan): the snapshot with its index. */
export function ironicPlanReader(ctx: CommandContext, ironic: IronicSource | undefined, recipe: PlanReadRecipe): OriginNamingReader<PlanInput> {
  return namingOrigin(ctx, (d) => readForPlan(d, recipe, readInput(ctx, ironic)), (input) => input.snapshot);
}

/** The read's ironic truth, and its progress on the status line when there is one. */
function readInput(ctx: CommandContext, ironic: IronicSource | undefined): ReadInput {
  const progress = progressReporter(ctx, false);
  return { ...(ironic === undefined ? {} : { ironic }), ...(progress === undefined ? {} : { progress }) };
}

interface OriginNamingReader<T> {
  read(d: Deployment): Promise<T>;
  jsonExtras(): object;
}

function namingOrigin<T>(ctx: CommandContext, read: (d: Deployment) => Promise<T>, snapshotOf: (value: T) => Snapshot): OriginNamingReader<T> {
  let origin: IronicOrigin | undefined;
  return {
    async read(d) {
      const value = await read(d);
      origin = snapshotOf(value).ironicOrigin;
      const line = describeIronicOrigin(origin);
      if (line !== undefined) ctx.reporter.warn(line);
      return value;
    },
    jsonExtras: () => ironicOriginJson(origin),
  };
}
