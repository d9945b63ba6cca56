// The read-only audit: every inconsistency between the API, cell and
// placement databases, one finding per problem, each with the objects
// involved and the command that fixes it. Orphan nodes and stale providers
// are recognised by the very predicates the cleanups plan with
// (orphan-nodes.ts, stale-providers.ts), so the audit never reports what a
// cleanup would not touch, nor the other way round.
//
// The audit needs a snapshot of every cell: a provider or a host mapping
// whose node lives in an unread cell would look stale. Scoping to one cell
// (AuditOptions.cellUuid) filters the findings, not the reading.
import { cellNamer } from '../cell-names.js';
import type { AllocationRec, CellRec, Snapshot } from '../model.js';
import { allocationChecks, type AllocationChecks } from './consumer-allocations.js';
import { findDeletedNodesWithProvider } from './deleted-node-provider.js';
import { findNewerNovaProblems } from './newer-nova.js';
import { hostKey, indexSnapshot, withAllocations } from '../snapshot-index.js';
import { compareText, groupBy } from '../text-and-maps.js';
import { add, type Audit, type AuditOptions } from './context.js';
import { findDuplicateNodes, findNodesOfDeadServices, findOrphanNodes } from './compute-nodes.js';
import { findMappingProblems } from './host-mappings.js';
import { findNameConflicts, findNodesWithoutProvider, findStaleProviders } from './providers.js';

export { FINDING_KINDS, type Finding, type FindingKind, type FindingValue, type StaleAllocationClass } from '../finding.js';
import { FINDING_KINDS, type Finding, type FindingKind } from '../finding.js';
export { SUSPECT_ORPHAN_AGE } from './compute-nodes.js';
export type { AuditOptions } from './context.js';

/**
 * An audit whose allocations arrive one consumer at a time (the audit
 * command streams them from placement and never holds the table).
 * `snapshot` is everything else; its placement allocations are not looked
 * at. Call `consumer` once per consumer with all of its allocations, then
 * `finish` once, with the allocations `consumer` asked to keep.
 */
export interface StreamedAudit {
  /** True when the allocations must be passed to finish (they touch a stale provider tree, or a duplicate node's). */
  consumer(consumerUuid: string, allocations: readonly AllocationRec[]): boolean;
  finish(kept: readonly AllocationRec[]): Finding[];
}

export function openAudit(snapshot: Snapshot, options: AuditOptions = {}): StreamedAudit {
  const step = options.onStep ?? (() => undefined);
  const out: Finding[] = [];
  const report = (finding: Finding): void => {
    out.push(finding);
  };
  // Set once the snapshot is indexed; the placement gaps need what it saw.
  let allocations: AllocationChecks | undefined;
  const placementChecks: ReadonlyArray<readonly [string, (a: Audit) => void]> =
    snapshot.placement === undefined
      ? []
      : [
          ['compute nodes without a provider', findNodesWithoutProvider],
          ['stale providers', findStaleProviders],
          ['provider name conflicts', findNameConflicts],
          ['placement gaps', (a) => {
            for (const f of [...(allocations?.instancesWithoutAllocation() ?? []), ...findDeletedNodesWithProvider(a.ix)]) add(a, f);
          }],
          ['what breaks newer Novas', (a) => {
            for (const f of findNewerNovaProblems(a.ix)) add(a, f);
          }],
        ];
  const checks: ReadonlyArray<readonly [string, (a: Audit) => void]> = [
    ['host mappings', findMappingProblems],
    ['orphan compute nodes', findOrphanNodes],
    ['duplicate compute nodes', findDuplicateNodes],
    ...placementChecks,
    ['nodes of dead services', findNodesOfDeadServices],
  ];
  step('indexing the snapshot', 0, checks.length);
  const ix = indexSnapshot(snapshot);
  allocations = snapshot.placement === undefined ? undefined : allocationChecks(ix, report);
  return {
    consumer(consumerUuid, rows) {
      return allocations?.consumer(consumerUuid, rows) ?? false;
    },
    finish(kept) {
      // The kept allocations are every allocation on a stale provider tree, and every allocation of the consumers on one.
      const a: Audit = { s: snapshot, ix: allocations === undefined ? ix : withAllocations(ix, kept), options, orphans: new Set(), out, cellName: cellNamer(snapshot.cells) };
      checks.forEach(([name, check], i) => {
        step(`checking ${name}`, i, checks.length);
        check(a);
      });
      step('done', checks.length, checks.length);
      return selectFindings(out, options, snapshot.cells);
    },
  };
}

/** The findings of the audit's scope (--cell, --host, --kind), in the audit's order: every finding is computed on the whole deployment, the scope only selects (as for the plan commands). */
export function selectFindings(findings: readonly Finding[], options: Pick<AuditOptions, 'cellUuid' | 'host' | 'kinds'>, cells: readonly CellRec[]): Finding[] {
  const host = options.host === undefined ? undefined : hostKey(options.host);
  const scoped = findings.filter(
    (f) =>
      (options.cellUuid === undefined || f.cellUuid === options.cellUuid) &&
      (options.kinds === undefined || options.kinds.includes(f.kind)) &&
      (host === undefined || (typeof f.objects['host'] === 'string' && hostKey(f.objects['host']) === host)),
  );
  return sortFindings(scoped, cells.map((c) => c.uuid));
}

/** The audit of a snapshot held whole: its allocations go through the same per-consumer checks. */
export function auditSnapshot(snapshot: Snapshot, options: AuditOptions = {}): Finding[] {
  const audit = openAudit(snapshot, options);
  const kept: AllocationRec[] = [];
  for (const [consumerUuid, rows] of groupBy(snapshot.placement?.allocations ?? [], (x) => x.consumerUuid)) if (audit.consumer(consumerUuid, rows)) kept.push(...rows);
  return audit.finish(kept);
}

/** Findings per kind, every kind present (0 when clean). */
export function countFindings(findings: readonly Finding[]): Record<FindingKind, number> {
  const counts = Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<FindingKind, number>;
  for (const f of findings) counts[f.kind] += 1;
  return counts;
}

/** By kind (FINDING_KINDS order), then cell (cell_mappings order; no cell last), then summary. */
function sortFindings(findings: readonly Finding[], cellOrder: readonly string[]): Finding[] {
  const kindRank = new Map<FindingKind, number>(FINDING_KINDS.map((k, i) => [k, i]));
  const cellRank = (f: Finding): number => {
    const i = f.cellUuid === undefined ? -1 : cellOrder.indexOf(f.cellUuid);
    return i < 0 ? cellOrder.length : i;
  };
  return [...findings].sort(
    (x, y) => (kindRank.get(x.kind) ?? 0) - (kindRank.get(y.kind) ?? 0) || cellRank(x) - cellRank(y) || compareText(x.cellUuid ?? '', y.cellUuid ?? '') || compareText(x.summary, y.summary),
  );
}
