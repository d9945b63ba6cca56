// `audit`: read a snapshot of every cell and placement, and list what is
// inconsistent. Read-only: nothing here opens a transaction.
import type { Deployment } from '../db/deployment.js';
import { auditSnapshot, type Finding } from '../domain/audit.js';
import type { CellRec, IronicOrigin } from '../domain/model.js';
import { readSnapshot, unknownCell, type IronicSource } from './read-snapshot.js';

export interface AuditRunOptions {
  /** Report only this cell's findings (every cell is still read: see domain/audit.ts). */
  readonly cellUuid?: string;
  readonly ironic?: IronicSource;
  readonly progress?: (line: string) => void;
}

export interface AuditResult {
  readonly findings: readonly Finding[];
  readonly cells: readonly CellRec[];
  readonly ironicOrigin: IronicOrigin | undefined;
}

export async function runAudit(deployment: Deployment, options: AuditRunOptions): Promise<AuditResult> {
  if (options.cellUuid !== undefined && (await deployment.cellMapping(options.cellUuid)) === undefined) throw unknownCell(options.cellUuid);
  const snapshot = await readSnapshot(deployment, {
    placement: true,
    ...(options.ironic === undefined ? {} : { ironic: options.ironic }),
    ...(options.progress === undefined ? {} : { progress: options.progress }),
  });
  const findings = auditSnapshot(snapshot, {
    ...(options.cellUuid === undefined ? {} : { cellUuid: options.cellUuid }),
    ...(options.ironic?.kind === 'file' ? { ironicNodesFile: options.ironic.file } : {}),
  });
  return { findings, cells: snapshot.cells, ironicOrigin: snapshot.ironicOrigin };
}
