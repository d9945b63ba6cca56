// `audit`: read a snapshot of every cell and placement, and list what is
// inconsistent. Read-only: nothing here opens a transaction.
import type { Deployment } from '../db/deployment.js';
import { auditSnapshot, type Finding } from '../domain/audit.js';
import type { CellRec } from '../domain/model.js';
import { readSnapshot, unknownCell } from './read-snapshot.js';

export interface AuditRunOptions {
  /** Report only this cell's findings (every cell is still read: see domain/audit.ts). */
  readonly cellUuid?: string;
  readonly ironicNodesFile?: string;
  readonly progress?: (line: string) => void;
  /** Each check of the audit, after the reads (see domain/audit.ts). */
  readonly onStep?: (step: string, index: number, total: number) => void;
}

export interface AuditResult {
  readonly findings: readonly Finding[];
  readonly cells: readonly CellRec[];
}

export async function runAudit(deployment: Deployment, options: AuditRunOptions): Promise<AuditResult> {
  if (options.cellUuid !== undefined && (await deployment.cellMapping(options.cellUuid)) === undefined) throw unknownCell(options.cellUuid);
  const snapshot = await readSnapshot(deployment, {
    placement: true,
    ...(options.ironicNodesFile === undefined ? {} : { ironic: { file: options.ironicNodesFile } }),
    ...(options.progress === undefined ? {} : { progress: options.progress }),
  });
  const findings = auditSnapshot(snapshot, {
    ...(options.cellUuid === undefined ? {} : { cellUuid: options.cellUuid }),
    ...(options.ironicNodesFile === undefined ? {} : { ironicNodesFile: options.ironicNodesFile }),
    ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
  });
  return { findings, cells: snapshot.cells };
}
