// The audit judged one part of the cloud at a time (operations/read/
// audit-by-cell.ts): each cell's snapshot holds the cell's rows, its host
// mappings, the providers its nodes name and, beside them, the few providers
// no node names that its consumers hold allocations on; the last snapshot
// holds what no cell owns (those providers, the host mappings no cell holds,
// the consumers on no cell's provider). Each snapshot is audited whole, by
// openAudit, and each keeps the findings about what it owns:
//  - a cell, every finding but those about a provider of the last part
//    (whose other consumers it did not read);
//  - the last part, the findings about its providers and mappings, and the
//    orphaned allocations of its own consumers (a cell's consumer is judged
//    there, with every instance and node it may be on).
import type { Finding, FindingKind } from '../finding.js';

/** Findings about one resource provider (objects.provider_id). */
const PROVIDER_KINDS: ReadonlySet<FindingKind> = new Set(['provider-without-node', 'stale-allocation', 'provider-name-conflict', 'provider-uuid-mismatch']);

/** Findings about a host mapping no cell holds. */
const MAPPING_KINDS: ReadonlySet<FindingKind> = new Set(['stale-mapping', 'mapping-host-has-instances']);

/** A cell's findings: all but those about providers it does not own. */
export function cellFindings(findings: readonly Finding[], ownsProvider: (providerId: number) => boolean): Finding[] {
  return findings.filter((f) => !PROVIDER_KINDS.has(f.kind) || ownsProvider(Number(f.objects['provider_id'])));
}

/** The last part's findings: about its providers and mappings, and its own consumers' orphaned allocations. */
export function lastPartFindings(findings: readonly Finding[], ownsConsumer: (consumerUuid: string) => boolean): Finding[] {
  return findings.filter((f) => PROVIDER_KINDS.has(f.kind) || MAPPING_KINDS.has(f.kind) || (f.kind === 'orphaned-allocation' && ownsConsumer(String(f.objects['consumer_uuid']))));
}
