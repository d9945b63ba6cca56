// How a plan and an apply result look: readable text (stdout) or one JSON
// document. Every change line names its database and why it exists.
import type { JsonDocument } from './json-contract.js';
import type { Change, Plan, PlannedChange } from '../domain/plan.js';
import { describeTarget } from '../domain/plan.js';
import type { CellNamer } from '../domain/cell-names.js';
import { assertNever } from '../errors.js';
import type { ApplyResult } from '../operations/apply-plan.js';
import type { Palette } from './colour.js';
import type { Listing } from './listing.js';

const PLAIN: Pick<Palette, 'verb' | 'warn'> = { verb: (t) => t, warn: (t) => t };

/** A change for people; `cellName` names the cells it mentions (domain/cell-names.ts). */
export function describeChange(c: Change, cellName: CellNamer): string {
  switch (c.kind) {
    case 'soft-delete-compute-node':
      return `soft-delete compute node ${c.id} (${c.uuid ?? '-'}, host ${c.host})`;
    case 'delete-provider':
      return `delete resource provider ${c.uuid} (${c.name ?? '-'}) with its inventories, traits and aggregate links`;
    case 'remove-provider-allocations':
      return `remove the allocations of consumer ${c.consumerUuid} from provider ${c.providerUuid} (${c.allocations.map((a) => `${a.resourceClass}=${a.used}`).join(', ')})`;
    case 'rekey-provider':
      return `re-key resource provider ${c.fromUuid} to ${c.toUuid}`;
    case 'move-allocations':
      return (
        `move the allocations of consumer ${c.consumerUuid} (${c.allocations.map((a) => `${a.resourceClass}=${a.used}`).join(', ')}) ` +
        `from provider ${c.fromProviderUuid} to ${c.toProviderUuid}` +
        (c.capacityException === null ? '' : ` [over capacity, allowed: ${c.capacityException}]`)
      );
    case 'rename-provider':
      return `rename resource provider ${c.uuid} from ${c.fromName ?? '-'} to ${c.toName}`;
    case 'rehome-compute-node':
      return (
        `re-home compute node ${c.id} (${c.uuid ?? '-'}, ${c.hypervisorHostname}) from host ${c.fromHost} to ${c.toHost} (service ${c.toServiceId})` +
        (c.instance === null ? '' : `, with instance ${c.instance.uuid}`)
      );
    case 'move-instance':
      if (c.fromHost === c.toHost) return `link instance ${c.uuid} (node ${c.node}, host ${c.toHost}) to compute node ${String(c.computeNodeId)}: compute_id = ${String(c.computeNodeId)}`;
      return `move instance ${c.uuid} (node ${c.node}) from host ${c.fromHost} to ${c.toHost}${c.computeNodeId === undefined ? '' : ` (compute_id = ${c.computeNodeId})`}`;
    case 'release-host-in-cell':
      return (
        `check that nothing live has host ${c.host} in this cell` +
        (c.deletedNodeIds.length === 0 ? '' : `, and set mapped = 0 on its ${c.deletedNodeIds.length} soft-deleted compute node(s) (id ${c.deletedNodeIds.join(', ')})`)
      );
    case 'delete-host-mapping':
      return `delete the host mapping of ${c.host} (id ${c.id}) to cell ${cellName(c.cellUuid)}`;
    case 'remap-host-mapping':
      return `move the host mapping of ${c.host} (id ${c.id}) from cell ${cellName(c.fromCellUuid)} to cell ${cellName(c.toCellUuid)}`;
    case 'mark-host-nodes-mapped':
      return `set mapped = 1 on ${c.nodeIds.length} live compute node(s) of host ${c.host} (id ${c.nodeIds.join(', ')})`;
    case 'put-allocations':
      return (
        `${c.replaces.length === 0 ? 'create' : 'replace'} the allocations of consumer ${c.consumerUuid} ` +
        `(${c.allocations.map((a) => `${a.resourceClass}=${a.used} on ${a.providerUuid}`).join(', ')}; project ${c.projectExternalId}, user ${c.userExternalId})` +
        (c.capacityException === null ? '' : ` [over capacity, allowed: ${c.capacityException}]`)
      );
    case 'restore-compute-node':
      return `restore soft-deleted compute node ${c.id} (${c.uuid}, host ${c.host ?? '-'}, node ${c.hypervisorHostname ?? '-'}): deleted = 0, deleted_at = NULL`;
    default:
      return assertNever(c, 'change');
  }
}

export function renderPlanText(plan: Plan, cellName: CellNamer, palette: Pick<Palette, 'verb' | 'warn'> = PLAIN): string {
  const lines: string[] = [];
  const changes = plan.units.reduce((n, u) => n + u.changes.length, 0);
  if (plan.units.length === 0 && plan.refused.length === 0) return `${plan.command}: nothing to do.\n`;
  lines.push(`${plan.command}: ${plan.units.length} unit(s), ${changes} change(s), ${plan.refused.length} refused.`, '');
  plan.units.forEach((u, i) => {
    lines.push(`${String(i + 1).padStart(3)}. ${u.title}`);
    for (const pc of u.changes) lines.push(changeLine(pc, cellName, palette));
  });
  if (plan.refused.length > 0) {
    lines.push('', palette.warn('Refused (left alone):'));
    for (const r of plan.refused) lines.push(`  - ${r.subject}: ${r.reason}${r.suggestion === undefined ? '' : ` (see: ${r.suggestion})`}`);
  }
  return lines.join('\n') + '\n';
}

function changeLine(pc: PlannedChange, cellName: CellNamer, palette: Pick<Palette, 'verb'>): string {
  const text = describeChange(pc.change, cellName);
  // Only the verb is coloured ("soft-delete", "move", "create"), so the line still reads as one sentence.
  const space = text.indexOf(' ');
  const styled = space < 0 ? palette.verb(text) : palette.verb(text.slice(0, space)) + text.slice(space);
  return `       - [${describeTarget(pc.change.target, cellName)}] ${styled}: ${pc.reason}`;
}

/** A plan's rows for -f value/csv and -c: one per change, then one per refusal. */
export const PLAN_COLUMNS = ['unit', 'unit_id', 'database', 'action', 'description', 'reason'] as const;

export function planListing(plan: Plan, cellName: CellNamer): Listing {
  const rows: Array<Array<string | number | null>> = [];
  plan.units.forEach((u, i) => {
    for (const pc of u.changes) rows.push([i + 1, u.id, describeTarget(pc.change.target, cellName), pc.change.kind, describeChange(pc.change, cellName), pc.reason]);
  });
  for (const r of plan.refused) rows.push([null, null, null, 'refused', r.subject, r.reason + (r.suggestion === undefined ? '' : ` (see: ${r.suggestion})`)]);
  return { headers: PLAN_COLUMNS, rows };
}

export function renderApplyText(result: ApplyResult, cellName: CellNamer, palette: Pick<Palette, 'verb' | 'warn'> = PLAIN): string {
  const applied = result.outcomes.filter((o) => o.status === 'applied');
  const skipped = result.outcomes.filter((o) => o.status === 'skipped');
  const done = result.outcomes.filter((o) => o.status === 'already-done');
  const lines = [`applied ${applied.length} unit(s), ${done.length > 0 ? `already done ${done.length}, ` : ''}skipped ${skipped.length}, refused ${result.refused.length}.`];
  for (const o of result.outcomes) {
    if (o.status === 'applied') lines.push(`  applied: ${o.unit.title}`);
    else if (o.status === 'already-done') lines.push(`  already done: ${o.unit.title} (its target state already held; nothing was written for it)`);
    else if (o.changesApplied === 0) lines.push(`  ${palette.warn('SKIPPED')}: ${o.unit.title}: ${o.reason} (nothing of it was applied)`);
    else lines.push(`  ${palette.warn('SKIPPED')}: ${o.unit.title}: ${o.reason} (${o.changesApplied} of ${o.unit.changes.length} change(s) had been applied; re-run to finish)`);
    // Each unit's objects, as the dry run listed them: an apply that followed a different plan shows it.
    for (const pc of o.unit.changes) lines.push(changeLine(pc, cellName, palette));
  }
  for (const r of result.refused) lines.push(`  ${palette.warn('refused')}: ${r.subject}: ${r.reason}${r.suggestion === undefined ? '' : ` (see: ${r.suggestion})`}`);
  // The journal's path is on stderr (once, before the first write), not here: `>>log 2>&1` shows it once.
  return lines.join('\n') + '\n';
}

/** The plan part of a plan command's document (keys become snake_case in renderJson). */
export function planJson(plan: Plan, cellName: CellNamer): object {
  return {
    command: plan.command,
    units: plan.units.map((u) => ({ id: u.id, title: u.title, changes: u.changes.map((pc) => ({ ...pc.change, reason: pc.reason, description: describeChange(pc.change, cellName) })) })),
    refused: plan.refused,
  };
}

/** Whether an apply wrote anything: a unit applied, or a skipped one after some of its changes. */
export function applyChanged(result: ApplyResult): boolean {
  return result.outcomes.some((o) => o.status === 'applied' || (o.status === 'skipped' && o.changesApplied > 0));
}

export function applyJson(plan: Plan, result: ApplyResult, cellName: CellNamer): JsonDocument {
  return {
    ...planJson(plan, cellName),
    dry_run: false,
    changed: applyChanged(result),
    applied: result.outcomes.filter((o) => o.status === 'applied').map((o) => o.unit.id),
    already_done: result.outcomes.filter((o) => o.status === 'already-done').map((o) => o.unit.id),
    skipped: result.outcomes.flatMap((o) => (o.status === 'skipped' ? [{ id: o.unit.id, reason: o.reason, changes_applied: o.changesApplied }] : [])),
    journal: result.journalPath ?? null,
  };
}
