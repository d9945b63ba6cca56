// nova-manage placement audit's output, its exit
// codes, and our JSON document. The lines are nova's byte for byte, the
// trailing space of "...are related. " included; the allocations are printed
// as the Python dict nova prints (its repr of the provider's share).
import { signalExitCode } from './context.js';
import type { JsonDocument } from './json-contract.js';
import type { AllocationPart } from '../domain/plan.js';
import type { OrphanOutcome, PlacementAuditResult, ProviderAudit } from '../operations/placement-audit.js';

export const PLACEMENT_AUDIT_EXIT = { clean: 0, deleteFailed: 1, found: 3, deleted: 4, unknownProvider: 127 } as const;

export function placementAuditExitCode(result: PlacementAuditResult): number {
  if (result.kind === 'unknown-provider') return PLACEMENT_AUDIT_EXIT.unknownProvider;
  if (result.interrupted !== undefined) return signalExitCode(result.interrupted.reason);
  if (result.stoppedAt !== undefined) return PLACEMENT_AUDIT_EXIT.deleteFailed;
  if (processedCount(result.providers) === 0) return PLACEMENT_AUDIT_EXIT.clean;
  return result.delete ? PLACEMENT_AUDIT_EXIT.deleted : PLACEMENT_AUDIT_EXIT.found;
}

/** stdout lines: without verbose, only what nova print()s unconditionally (an unknown provider, failed deletes). */
export function renderPlacementAuditLines(result: PlacementAuditResult, verbose: boolean): string[] {
  if (result.kind === 'unknown-provider') return [`Resource provider with UUID ${result.providerUuid} does not exist.`];
  const lines: string[] = [];
  const say = (line: string): void => {
    if (verbose) lines.push(line);
  };
  for (const { provider, orphans } of result.providers) {
    if (!provider.computeNodeFound) say(`The compute node for UUID ${provider.rootUuid} can not be found`);
    for (const { orphan, outcome } of orphans) {
      const c = orphan.consumerUuid;
      say(`Allocations were set against consumer UUID ${c} but no existing instances or active migrations are related. `);
      const dict = pythonResourcesRepr(orphan.resources);
      if (outcome.status === 'failed') lines.push(`Not able to delete allocations for consumer UUID ${c}`);
      else if (outcome.status === 'deleted') say(`Deleted allocations for consumer UUID ${c} on Resource Provider ${provider.uuid}: ${dict}`);
      else say(`Allocations for consumer UUID ${c} on Resource Provider ${provider.uuid} can be deleted: ${dict}`);
    }
    // A deliberate difference from nova-manage: these are never deleted (src/domain/audit/nova-orphaned-allocations.ts).
    for (const k of provider.kept)
      say(`Allocations for consumer UUID ${k.consumerUuid} on Resource Provider ${provider.uuid} are kept, not deleted: ${k.reason}: ${pythonResourcesRepr(k.resources)}`);
    if (result.stoppedAt === provider.uuid) {
      lines.push(`The Resource Provider ${provider.uuid} had problems when deleting allocations. Stopping now. Please fix the problem by hand and run again.`);
      return lines;
    }
  }
  const n = processedCount(result.providers);
  if (n > 0) say(`Processed ${n} allocation${n > 1 ? 's.' : '.'}`);
  return lines;
}

/** stderr lines: why each failed delete failed (nova only says that it did). */
export function renderPlacementAuditFailures(result: PlacementAuditResult): string[] {
  if (result.kind !== 'audited') return [];
  return result.providers.flatMap(({ provider, orphans }) =>
    orphans.flatMap(({ orphan, outcome }) =>
      outcome.status === 'failed' ? [`nova-reconcile: allocations of consumer ${orphan.consumerUuid} on provider ${provider.uuid} were not deleted: ${outcome.reason}`] : [],
    ),
  );
}

export function renderPlacementAuditJson(result: PlacementAuditResult): JsonDocument {
  const exit_code = placementAuditExitCode(result);
  if (result.kind === 'unknown-provider') {
    return { command: 'placement audit', changed: false, error: { kind: 'not-found', message: `Resource provider with UUID ${result.providerUuid} does not exist.`, exit_code } };
  }
  const orphans = result.providers.flatMap(({ provider, orphans: list }) =>
    list.map(({ orphan, outcome }) => ({
      consumer_uuid: orphan.consumerUuid,
      resource_provider_uuid: provider.uuid,
      root_provider_uuid: provider.rootUuid,
      compute_node_found: provider.computeNodeFound,
      resources: Object.fromEntries(orphan.resources.map((r) => [r.resourceClass, r.used] as const)),
      scope: orphan.scope,
      ...outcomeJson(outcome),
    })),
  );
  return {
    command: 'placement audit',
    delete: result.delete,
    all_resource_classes: result.allResourceClasses,
    changed: orphans.some((o) => o.status === 'deleted'),
    // Without --delete: would --delete remove something.
    ...(result.delete ? {} : { would_change: orphans.length > 0 }),
    providers_checked: result.providersChecked,
    compute_nodes_not_found: [...new Set(result.providers.filter((p) => !p.provider.computeNodeFound).map((p) => p.provider.rootUuid))],
    processed: processedCount(result.providers),
    orphans,
    kept: result.providers.flatMap(({ provider }) =>
      provider.kept.map((k) => ({
        consumer_uuid: k.consumerUuid,
        resource_provider_uuid: provider.uuid,
        root_provider_uuid: provider.rootUuid,
        resources: Object.fromEntries(k.resources.map((r) => [r.resourceClass, r.used] as const)),
        status: 'kept',
        reason: k.reason,
      })),
    ),
    stopped_at: result.stoppedAt ?? null,
    journal: result.journalPath ?? null,
    exit_code,
  };
}

function outcomeJson(outcome: OrphanOutcome): { status: string; reason?: string } {
  switch (outcome.status) {
    case 'found':
      return { status: 'found' };
    case 'deleted':
      return outcome.alreadyGone ? { status: 'deleted', reason: 'already gone' } : { status: 'deleted' };
    case 'failed':
      return { status: 'failed', reason: outcome.reason };
  }
}

/** nova's num_processed: orphans found, or deleted; a failed delete is not counted. */
function processedCount(providers: readonly ProviderAudit[]): number {
  return providers.reduce((n, p) => n + p.orphans.filter((o) => o.outcome.status !== 'failed').length, 0);
}

/**
 * The repr of the `resources` dict nova prints, e.g. {'VCPU': 1, 'MEMORY_MB': 512}.
 * Placement builds it row by row, so a class listed twice keeps its first
 * position and its last value.
 */
export function pythonResourcesRepr(resources: readonly AllocationPart[]): string {
  const dict = new Map<string, number>();
  for (const r of resources) dict.set(r.resourceClass, r.used);
  return `{${[...dict].map(([rc, used]) => `${pythonStrRepr(rc)}: ${used}`).join(', ')}}`;
}

/** Python's str repr for the printable ASCII that class names are made of. */
export function pythonStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s.replace(/\\/g, '\\\\').replace(quote === "'" ? /'/g : /"/g, `\\${quote}`);
  return `${quote}${body}${quote}`;
}
