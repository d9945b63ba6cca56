// `audit --format prometheus` and `audit --metrics-file PATH`: the audit as
// Prometheus text exposition format (version 0.0.4), for node_exporter's
// textfile collector. Every kind is listed for every cell, 0 included, so an
// alert on `> 0` sees a kind go back to clean instead of a series vanishing.
// A failed audit writes success 0 with its duration and time and no
// findings (they are unknown), so "the audit stopped working" can alert too.
import { FINDING_KINDS, type Finding } from '../domain/audit/index.js';
import type { CellRec } from '../domain/model.js';

export interface AuditMetrics {
  /** undefined when the audit failed. */
  readonly findings: readonly Finding[] | undefined;
  readonly cells: readonly CellRec[];
  readonly durationSeconds: number;
  /** When the audit ended, epoch milliseconds. */
  readonly endedAtMs: number;
}

/** The label of findings that belong to no cell (placement-only problems). */
export const NO_CELL = '';

export function renderAuditMetrics(m: AuditMetrics): string {
  const lines: string[] = [];
  const gauge = (name: string, help: string, samples: ReadonlyArray<readonly [string, number]>): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${formatValue(value)}`);
  };
  if (m.findings !== undefined) {
    const cells = m.cells.filter((c) => !c.isCell0);
    const counts = new Map<string, number>();
    for (const f of m.findings) counts.set(`${f.kind}\u0000${f.cellUuid ?? NO_CELL}`, (counts.get(`${f.kind}\u0000${f.cellUuid ?? NO_CELL}`) ?? 0) + 1);
    const samples: Array<readonly [string, number]> = [];
    for (const kind of FINDING_KINDS) {
      for (const cell of cells) samples.push([labelSet({ kind, cell: cell.name ?? cell.uuid, cell_uuid: cell.uuid }), counts.get(`${kind}\u0000${cell.uuid}`) ?? 0]);
      samples.push([labelSet({ kind, cell: NO_CELL, cell_uuid: NO_CELL }), counts.get(`${kind}\u0000${NO_CELL}`) ?? 0]);
    }
    gauge('nova_reconcile_audit_findings', 'Findings of the last nova-reconcile audit, by kind and cell (cell "" for placement problems of no known cell).', samples);
  }
  gauge('nova_reconcile_audit_success', 'Whether the last nova-reconcile audit could read every database and run (1) or failed (0).', [['', m.findings === undefined ? 0 : 1]]);
  gauge('nova_reconcile_audit_duration_seconds', 'How long the last nova-reconcile audit ran.', [['', m.durationSeconds]]);
  gauge('nova_reconcile_audit_last_run_timestamp_seconds', 'When the last nova-reconcile audit ended, in seconds since the epoch.', [['', m.endedAtMs / 1000]]);
  return lines.join('\n') + '\n';
}

function labelSet(labels: Readonly<Record<string, string>>): string {
  return `{${Object.entries(labels)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',')}}`;
}

/** The exposition format escapes backslash, double quote and newline in label values. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatValue(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}
