// What the audit reports: one finding per problem, of a known kind, with the
// objects involved and what to do next. A type of its own so that the audit's
// parts (the files of audit/) share it without importing each other.

/** Every kind, in the order findings are listed. */
export const FINDING_KINDS = [
  'unmapped-service',
  'unmapped-node',
  'wrong-cell-mapping',
  'stale-mapping',
  'mapping-host-has-instances',
  'orphan-node-service-deleted',
  'orphan-node-ironic-deleted',
  'ironic-node-unmanaged',
  'suspect-orphan-node',
  'duplicate-compute-node',
  'node-without-provider',
  'provider-without-node',
  'provider-name-conflict',
  'stale-allocation',
  'allocation-on-other-node',
  'node-of-dead-service',
  'instance-without-allocation',
  'orphaned-allocation',
  'soft-deleted-node-with-provider',
  // Nova 27.0.0+ only (audit/newer-nova.ts).
  'node-uuid-row-deleted',
  'provider-uuid-mismatch',
  'instance-compute-id-mismatch',
] as const;

export type FindingKind = (typeof FINDING_KINDS)[number];

/** How the allocations of one consumer on a stale provider came to be there. */
export type StaleAllocationClass = 'evacuation-leftover' | 'live-instance-on-node' | 'active-migration' | 'orphaned';

export type FindingValue = string | number | boolean | null | readonly string[];

export interface Finding {
  readonly kind: FindingKind;
  /** The cell the problem is in; absent for placement-only problems with no known cell. */
  readonly cellUuid?: string;
  /** One line. */
  readonly summary: string;
  /** Ids, uuids and hosts involved (snake_case keys, as printed in JSON). */
  readonly objects: Readonly<Record<string, FindingValue>>;
  /** The command to run (or the step to take) next. */
  readonly suggestion: string;
}
