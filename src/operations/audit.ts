// `audit`: read a snapshot of every cell and placement, and list what is
// inconsistent. Read-only: nothing here opens a transaction. The allocations
// are not part of the snapshot: they are streamed afterwards, one consumer
// at a time, and only those on stale provider trees are kept, so memory
// does not grow with the allocations table.
import type { DeploymentRelease } from '../domain/nova-release.js';
import type { Deployment } from '../db/deployment-databases.js';
import { openAudit, type Finding, type FindingKind } from '../domain/audit/index.js';
import { checkScopeNames } from '../domain/plan-scope.js';
import type { AllocationRec, CellRec, IronicOrigin } from '../domain/model.js';
import type { IronicSource } from './read/ironic.js';
import { streamAllocations } from './read/placement.js';
import { AUDIT_READ } from './read/recipes.js';
import { readSnapshot } from './read/snapshot.js';
import { resolveCellArgument } from './scope.js';

export interface AuditRunOptions {
  /** Report only this cell's findings, by uuid or name (every cell is still read: see domain/audit/index.ts). */
  readonly cell?: string;
  /** Report only the findings about this host. */
  readonly host?: string;
  /** Report only findings of these kinds. */
  readonly kinds?: readonly FindingKind[];
  readonly ironic?: IronicSource;
  readonly progress?: (line: string) => void;
  /** Each check of the audit, after the reads (see domain/audit/index.ts). */
  readonly onStep?: (step: string, index: number, total: number) => void;
}

export interface AuditResult {
  readonly findings: readonly Finding[];
  readonly cells: readonly CellRec[];
  readonly ironicOrigin: IronicOrigin | undefined;
  /** What the databases' alembic heads say (audit's JSON shows it). */
  readonly release: DeploymentRelease;
}

export async function runAudit(deployment: Deployment, options: AuditRunOptions): Promise<AuditResult> {
  const cellUuid = options.cell === undefined ? undefined : await resolveCellArgument(deployment, options.cell);
  const snapshot = await readSnapshot(deployment, AUDIT_READ, {
    ...(options.ironic === undefined ? {} : { ironic: options.ironic }),
    ...(options.progress === undefined ? {} : { progress: options.progress }),
  });
  if (options.host !== undefined) checkScopeNames(snapshot, { host: options.host });
  const audit = openAudit(snapshot, {
    ...(cellUuid === undefined ? {} : { cellUuid }),
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.kinds === undefined ? {} : { kinds: options.kinds }),
    ...(options.ironic?.kind === 'file' ? { ironicNodesFile: options.ironic.file } : {}),
    ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
  });
  const kept: AllocationRec[] = [];
  await streamAllocations(
    deployment,
    (consumerUuid, rows) => {
      if (audit.consumer(consumerUuid, rows)) kept.push(...rows);
    },
    options.progress,
  );
  const findings = audit.finish(kept);
  return { findings, cells: snapshot.cells, ironicOrigin: snapshot.ironicOrigin, release: snapshot.release ?? deployment.openedRelease() };
}
