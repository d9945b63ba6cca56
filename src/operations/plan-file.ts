// Plan files: `--plan-out FILE` on a dry run writes the plan an
// operator reviews; `--plan-in FILE --apply` applies exactly its units
// (src/domain/plan-review.ts). Versioned JSON, written with mode 0600. It
// holds no secret: the deployment is named as the journal names it (the API
// database's redacted display form and the cell uuids), and units hold ids,
// uuids, host names and the values the compare-and-swap expects.
import { renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Deployment } from '../db/deployment-databases.js';
import { utcNowString } from '../db/time.js';
import type { Plan, Refusal, Unit } from '../domain/plan.js';
import { ReconcileError } from '../errors.js';
import { describeFileError, readTextFile } from '../files.js';
import { readDeploymentIdentity } from './deployment-identity.js';
import type { DeploymentIdentity } from './journal.js';

export const PLAN_FORMAT = 'nova-reconcile-plan/1';

/** A plan of 30,000 units is about 60 MB. */
const PLAN_MAX_BYTES = 256 * 1024 * 1024;

/** The options that shape a plan, as given (--ironic-nodes, --node, --include-down, ...). */
export type PlanOptions = Readonly<Record<string, string | boolean | readonly string[]>>;

export interface PlanFile {
  readonly format: typeof PLAN_FORMAT;
  readonly command: string;
  readonly createdAt: string;
  readonly deployment: DeploymentIdentity;
  readonly options: PlanOptions;
  readonly units: readonly Unit[];
  readonly refused: readonly Refusal[];
  /** Units the dry run left out (--max-count): not in this file, never applied from it. */
  readonly deferredUnits: number;
}

/** A dry run's plan as a file: stamped with the time and the deployment it was planned on. */
export async function writePlanOf(path: string, d: Deployment, plan: Plan, options: PlanOptions, deferredUnits: number): Promise<void> {
  writePlanFile(path, { format: PLAN_FORMAT, command: plan.command, createdAt: utcNowString(), deployment: await readDeploymentIdentity(d), options, units: plan.units, refused: plan.refused, deferredUnits });
}

export function writePlanFile(path: string, doc: PlanFile): void {
  // Written beside the target and renamed: a reviewer never reads half a plan.
  const tmp = join(dirname(path), `.${Math.random().toString(16).slice(2, 10)}.plan.tmp`);
  try {
    writeFileSync(tmp, JSON.stringify(doc, null, 1) + '\n', { mode: 0o600, flag: 'wx' });
    renameSync(tmp, path);
  } catch (err) {
    throw new ReconcileError('input', `--plan-out ${path}: cannot write the plan (${describeFileError(err)})`, { cause: err });
  }
}

export function readPlanFile(path: string): PlanFile {
  let text: string;
  try {
    text = readTextFile(path, PLAN_MAX_BYTES);
  } catch (err) {
    throw new ReconcileError('input', `--plan-in ${path}: cannot read the file (${describeFileError(err)})`, { cause: err });
  }
  const bad = (problem: string): ReconcileError => new ReconcileError('input', `--plan-in ${path}: ${problem}`, { hint: 'give a file written by a dry run with --plan-out' });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw bad('not a nova-reconcile plan (not JSON)');
  }
  if (!isObject(doc) || doc['format'] !== PLAN_FORMAT) throw bad(`not a nova-reconcile plan (no "format": "${PLAN_FORMAT}")`);
  const dep = doc['deployment'];
  if (typeof doc['command'] !== 'string' || !isObject(dep) || typeof dep['api'] !== 'string' || !Array.isArray(dep['cells']) || !isObject(doc['options']))
    throw bad('the plan is incomplete (command, deployment or options missing)');
  if (!Array.isArray(doc['units']) || !Array.isArray(doc['refused'])) throw bad('the plan is incomplete (units or refused missing)');
  doc['units'].forEach((u: unknown, i: number) => {
    if (!isObject(u) || typeof u['id'] !== 'string' || typeof u['title'] !== 'string' || !Array.isArray(u['changes']))
      throw bad(`unit ${i + 1} is malformed`);
    for (const pc of u['changes'] as unknown[])
      if (!isObject(pc) || !isObject(pc['change']) || typeof pc['change']['kind'] !== 'string' || !isObject(pc['change']['target']))
        throw bad(`unit ${i + 1} (${u['id']}) has a malformed change`);
  });
  return doc as unknown as PlanFile;
}

/**
 * A plan file is applied only by the command that wrote it, on the
 * deployment it was planned on, with the same plan-shaping options:
 * anything else is refused with one line (exit 127).
 */
export function checkPlanFile(path: string, doc: PlanFile, command: string | undefined, identity: DeploymentIdentity, options: PlanOptions): void {
  if (command !== undefined && doc.command !== command) throw new ReconcileError('input', `--plan-in ${path}: the plan is of \`${doc.command}\`, not of \`${command}\``);
  if (doc.deployment.api !== identity.api || !sameSet(doc.deployment.cells, identity.cells))
    throw new ReconcileError(
      'input',
      `--plan-in ${path}: the plan is of another deployment (API database ${doc.deployment.api} with ${doc.deployment.cells.length} cell(s); this one is ${identity.api} with ${identity.cells.length} cell(s))`,
    );
  const was = describeOptions(doc.options);
  const now = describeOptions(options);
  if (was !== now) throw new ReconcileError('usage', `--plan-in ${path}: the plan was made with ${was === '' ? 'no options' : was}; give the same options (now: ${now === '' ? 'none' : now})`);
}

/** The plan-shaping options of a command line: everything but how to run, print and apply. */
export function planOptionsOf(o: Readonly<Record<string, unknown>>, runOptions: ReadonlySet<string>): PlanOptions {
  const out: Record<string, string | boolean | readonly string[]> = {};
  for (const [k, v] of Object.entries(o).sort(([a], [b]) => a.localeCompare(b))) {
    if (runOptions.has(k) || v === undefined || v === false) continue;
    out[k] = Array.isArray(v) ? v.map(String) : typeof v === 'boolean' ? v : String(v);
  }
  return out;
}

function describeOptions(o: PlanOptions): string {
  return Object.entries(o)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}${v === true ? '' : ` ${Array.isArray(v) ? v.join(',') : String(v)}`}`)
    .join(' ');
}

function sameSet(a: readonly unknown[], b: readonly string[]): boolean {
  const sa = new Set(a.map(String));
  return sa.size === new Set(b).size && b.every((x) => sa.has(x));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function planFromFile(doc: PlanFile): Plan {
  return { command: doc.command, units: doc.units, refused: doc.refused };
}
