// What `placement heal_allocations` prints: nova-manage's lines (verbose ones
// only with --verbose; errors always) on stdout, our reasons and the stated
// capacity exception on stderr, or one JSON document.
import type { JsonDocument } from './json-contract.js';
import type { HealRunResult } from '../operations/heal-allocations.js';

export function renderHealLines(result: HealRunResult, verbose: boolean): string[] {
  const lines: string[] = [];
  for (const o of result.steps) {
    if (!verbose) continue;
    if (o.step.kind === 'say') {
      lines.push(o.step.text);
      continue;
    }
    if (!('status' in o)) continue;
    const created = o.step.mode === 'create';
    if (o.status === 'would-heal') lines.push(`[dry-run] ${created ? 'Create' : 'Update'} allocations for instance ${o.step.instanceUuid}: ${o.step.payload}`);
    else if (o.status === 'healed') lines.push(`Successfully ${created ? 'created' : 'updated'} allocations for instance ${o.step.instanceUuid}.`);
  }
  if (result.end.text !== '' && (result.end.always || verbose)) lines.push(result.end.text);
  return lines;
}

/** stderr: why a write was or would be refused, and every write past capacity that the plan allows. */
export function renderHealNotes(result: HealRunResult): string[] {
  const lines: string[] = [];
  for (const o of result.steps) {
    if (o.step.kind !== 'heal') continue;
    if (o.step.capacityException !== null) lines.push(`note: instance ${o.step.instanceUuid}: ${o.step.capacityException}`);
    if (o.step.wouldFail !== null) lines.push(`warning: instance ${o.step.instanceUuid}: the write would be refused: ${o.step.wouldFail}`);
  }
  if (result.end.detail !== null) lines.push(`nova-reconcile: ${result.end.detail}`);
  return lines;
}

export function renderHealJson(result: HealRunResult): JsonDocument {
  return {
    dry_run: result.dryRun,
    changed: result.steps.some((o) => 'status' in o && o.status === 'healed'),
    // --dry-run: would a run without it heal something (Ansible's check mode reads this).
    ...(result.dryRun ? { would_change: result.steps.some((o) => 'status' in o && o.status === 'would-heal') } : {}),
    instances: result.steps.flatMap((o) =>
      o.step.kind === 'heal' && 'status' in o
        ? [
            {
              instance_uuid: o.step.instanceUuid,
              action: o.step.mode,
              status: o.status,
              ...(o.status === 'failed' ? { reason: o.reason } : {}),
              would_fail: o.step.wouldFail,
              capacity_exception: o.step.capacityException,
              allocations: JSON.parse(o.step.payload) as unknown,
              changes: o.step.unit.changes.map((pc) => ({ ...pc.change, reason: pc.reason })),
            },
          ]
        : [],
    ),
    messages: result.steps.flatMap((o) => (o.step.kind === 'say' ? [o.step.text] : [])),
    result: result.end.text,
    error: result.end.detail,
    exit_code: result.end.code,
    journal: result.journalPath ?? null,
  };
}
