// The audit's output: a table (kind, cell, object, summary, suggestion) or
// one JSON document `{ "findings": [...], "counts": { kind: n } }`.
import type { JsonDocument } from './json-contract.js';
import { cellNamer } from '../domain/cell-names.js';
import type { CellRec } from '../domain/model.js';
import { countFindings, type Finding } from '../domain/audit/index.js';
import { assertNever } from '../errors.js';
import type { RunContext } from './context.js';
import { paletteFor } from './colour.js';
import { renderListing, selectColumns, type Listing } from './listing.js';

export const FINDING_COLUMNS = ['kind', 'cell', 'object', 'summary', 'suggestion'] as const;

/** The cell column names a cell as every text does (domain/cell-names.ts): its own name, else its uuid. */
export function findingsListing(findings: readonly Finding[], cells: readonly CellRec[]): Listing {
  const cellName = cellNamer(cells);
  return { headers: FINDING_COLUMNS, rows: findings.map((f) => [f.kind, f.cellUuid === undefined ? null : cellName(f.cellUuid), subjectOf(f), f.summary, f.suggestion]) };
}

/**
 * The audit as text: the table (kinds coloured by severity on a terminal) and
 * a count line; -f value and csv give the rows alone, for scripts.
 */
export function renderFindings(
  findings: readonly Finding[],
  cells: readonly CellRec[],
  format: 'table' | 'value' | 'csv',
  columns: readonly string[] | undefined,
  ctx: Pick<RunContext, 'stdoutColumns' | 'stdoutIsTty' | 'env'>,
): string {
  const listing = selectColumns(findingsListing(findings, cells), columns);
  if (format !== 'table') return renderListing(listing, format, ctx);
  if (findings.length === 0) return 'No findings: the API, cell and placement databases agree.\n';
  const palette = paletteFor(ctx);
  const counts = Object.entries(countFindings(findings)).filter(([, n]) => n > 0);
  const table = renderListing(listing, 'table', ctx, (column, text) => (column === 'kind' ? palette.kind(text) : text));
  // On a terminal the count line wraps between counts, as the table does.
  const width = ctx.stdoutColumns === undefined || ctx.stdoutColumns < 20 ? Infinity : ctx.stdoutColumns;
  let line = `${findings.length} finding(s): `;
  let shown = line.length;
  counts.forEach(([kind, n], i) => {
    const part = `${n} ${kind}${i < counts.length - 1 ? ',' : ''}`;
    if (i > 0 && shown + 1 + part.length > width) {
      line += '\n  ';
      shown = 2;
    } else if (i > 0) {
      line += ' ';
      shown += 1;
    }
    line += part.replace(kind, palette.kind(kind));
    shown += part.length;
  });
  return `${table}${line}\n`;
}

export function findingsJson(findings: readonly Finding[], cells: readonly CellRec[]): JsonDocument {
  const names = cellNames(cells);
  return {
    changed: false,
    findings: findings.map((f) => ({
      kind: f.kind,
      cell_uuid: f.cellUuid ?? null,
      cell_name: f.cellUuid === undefined ? null : (names.get(f.cellUuid) ?? null),
      summary: f.summary,
      objects: f.objects,
      suggestion: f.suggestion,
    })),
    counts: countFindings(findings),
  };
}

function cellNames(cells: readonly CellRec[]): Map<string, string> {
  return new Map(cells.filter((c) => c.name !== null && c.name !== '').map((c) => [c.uuid, c.name as string]));
}

/** The one object a row is about, for the table's "object" column. */
function subjectOf(f: Finding): string {
  const o = f.objects;
  const text = (key: string): string => {
    const v = o[key];
    return v === undefined || v === null ? '-' : Array.isArray(v) ? v.join(',') : String(v);
  };
  switch (f.kind) {
    case 'unmapped-service':
    case 'unmapped-node':
    case 'wrong-cell-mapping':
    case 'stale-mapping':
    case 'mapping-host-has-instances':
      return `host ${text('host')}`;
    case 'orphan-node-service-deleted':
    case 'orphan-node-ironic-deleted':
    case 'ironic-node-unmanaged':
    case 'suspect-orphan-node':
    case 'node-without-provider':
    case 'node-of-dead-service':
      return `node ${o['node_uuid'] === null ? `id ${text('node_id')}` : text('node_uuid')}`;
    case 'duplicate-compute-node':
      return `node name ${text('hypervisor_hostname')}`;
    case 'provider-without-node':
    case 'provider-name-conflict':
      return `provider ${text('provider_uuid')}`;
    case 'stale-allocation':
      return `consumer ${text('consumer_uuid')}`;
    case 'allocation-on-other-node':
    case 'instance-without-allocation':
      return `instance ${text('instance_uuid')}`;
    case 'orphaned-allocation':
      return `consumer ${text('consumer_uuid')}`;
    case 'soft-deleted-node-with-provider':
      return `node ${text('node_uuid')}`;
    case 'node-uuid-row-deleted':
      return `node name ${text('hypervisor_hostname')}`;
    case 'provider-uuid-mismatch':
      return `provider ${text('provider_uuid')}`;
    case 'instance-compute-id-mismatch':
      return `instance ${text('instance_uuid')}`;
    default:
      return assertNever(f.kind, 'finding kind');
  }
}
