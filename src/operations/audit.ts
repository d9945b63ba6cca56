// `audit`: read a snapshot of every cell and placement, and list what is
// inconsistent. Read-only: nothing here opens a transaction. The allocations
// are not part of the snapshot: they are streamed afterwards, one consumer
// at a time, and only those on stale provider trees are kept, so memory
// does not grow with the allocations table.
import type { DeploymentRelease } from '../domain/nova-release.js';
import type { Deployment } from '../db/deployment-databases.js';
import { openAudit, type AuditOptions, type Finding, type FindingKind } from '../domain/audit/index.js';
import { checkScopeNames } from '../domain/plan-scope.js';
import type { AllocationRec, CellRec, IronicOrigin } from '../domain/model.js';
import { auditByCell, type CommonFields } from './read/audit-by-cell.js';
import { toCellRec } from './read/cells.js';
import { ironicSettingsOf, readIronicTruth, type IronicSource } from './read/ironic.js';
import { streamAllocations } from './read/placement.js';
import { AUDIT_READ } from './read/recipes.js';
import { boundHeapGrowth, readSnapshot } from './read/snapshot.js';
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
  /** Read every cell at once even where the audit could walk them one at a time (to compare the two). */
  readonly readWhole?: boolean;
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
  const checks: AuditOptions = {
    ...(cellUuid === undefined ? {} : { cellUuid }),
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.kinds === undefined ? {} : { kinds: options.kinds }),
    ...(options.ironic?.kind === 'file' ? { ironicNodesFile: options.ironic.file } : {}),
    ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
  };
  const byCell = await runAuditByCell(deployment, options, checks);
  return 'findings' in byCell ? byCell : runWholeAudit(deployment, { ...options, ...(byCell.ironic === undefined ? {} : { ironic: byCell.ironic }) }, checks);
}

/**
 * A cloud of two cells or more, one cell at a time (read/audit-by-cell.ts);
 * else, or where its cells cannot be judged apart, the ironic truth read
 * (so that the whole read does not list Ironic again).
 */
async function runAuditByCell(deployment: Deployment, options: AuditRunOptions, checks: AuditOptions): Promise<AuditResult | { readonly ironic: IronicSource | undefined }> {
  if (options.readWhole === true) return { ironic: options.ironic };
  boundHeapGrowth();
  const progress = options.progress ?? (() => undefined);
  // In the whole read's order: the ironic truth, then the cells.
  const ironic = options.ironic === undefined ? undefined : await readIronicTruth(options.ironic, progress);
  const read: IronicSource | undefined = ironic === undefined ? undefined : { kind: 'read', nodes: ironic.nodes, origin: ironic.origin };
  const mappings = await deployment.cellMappings();
  const cells = mappings.filter((m) => !m.isCell0);
  if (cells.length < 2) return { ironic: read };
  const common: CommonFields = {
    takenAt: deployment.config.reconcile.sandboxCreatedAt ?? Date.now(),
    serviceDownTime: deployment.config.serviceDownTime,
    cells: mappings.map(toCellRec),
    ironicNodes: ironic?.nodes,
    ...(ironic === undefined ? {} : { ironicOrigin: ironic.origin }),
    ...ironicSettingsOf(deployment.config.reconcile),
  };
  const outcome = await auditByCell({ deployment, cells, common, ironicLabel: ironic?.origin.label, options: checks, progress });
  if ('whole' in outcome) {
    progress(`${outcome.whole}: reading every cell at once…`);
    return { ironic: read };
  }
  return { findings: outcome.findings, cells: common.cells, ironicOrigin: ironic?.origin, release: outcome.release };
}

/** Every cell read at once, as the audit always did: one snapshot, the allocations streamed. */
async function runWholeAudit(deployment: Deployment, options: AuditRunOptions, checks: AuditOptions): Promise<AuditResult> {
  const snapshot = await readSnapshot(deployment, AUDIT_READ, {
    ...(options.ironic === undefined ? {} : { ironic: options.ironic }),
    ...(options.progress === undefined ? {} : { progress: options.progress }),
  });
  if (options.host !== undefined) checkScopeNames(snapshot, { host: options.host });
  const audit = openAudit(snapshot, checks);
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
