// cell_v2 list_cells and list_hosts: read the API database, sort as
// nova-manage sorts (Python's code-point order), and hand rows to the renderer.
import type { CellMapping, Deployment } from '../db/deployment-databases.js';
import { listHostMappings } from '../db/api/host-mappings.js';

export async function listCells(deployment: Deployment): Promise<CellMapping[]> {
  const cells = await deployment.cellMappings();
  // CellMapping.name is optional; nova sorts with `name or ''`.
  return [...cells].sort((a, b) => compareCodePoints(a.name ?? '', b.name ?? ''));
}

export interface HostRow {
  readonly cellName: string | null;
  readonly cellUuid: string;
  readonly host: string;
}

export type ListHostsResult = { readonly kind: 'ok'; readonly hosts: readonly HostRow[] } | { readonly kind: 'cell-not-found'; readonly cellUuid: string };

export async function listHosts(deployment: Deployment, cellUuid: string | undefined): Promise<ListHostsResult> {
  const api = await deployment.api();
  let cellId: number | undefined;
  // An empty --cell_uuid is falsy in nova and lists every host.
  if (cellUuid !== undefined && cellUuid !== '') {
    const cell = await deployment.cellMapping(cellUuid);
    if (cell === undefined) return { kind: 'cell-not-found', cellUuid };
    cellId = cell.id;
  }
  const rows = await listHostMappings(api.knex, cellId);
  const hosts = rows.map((r) => ({ cellName: r.cell_name, cellUuid: r.cell_uuid, host: r.host }));
  return { kind: 'ok', hosts: hosts.sort((a, b) => compareCodePoints(a.host, b.host)) };
}

/** Python's str ordering: by code point (JS compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
