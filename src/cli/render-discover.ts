// nova-manage's discover_hosts output: the verbose status lines (nova-facts §1.5), the
// duplicate message, and our JSON document. Warnings go to stderr.
import type { JsonDocument } from './json-contract.js';
import type { CellDiscovery, DiscoverResult } from '../operations/discover-hosts.js';
import { ReconcileError } from '../errors.js';
import { describeError } from './describe-error.js';

export function renderDiscoverVerbose(result: DiscoverResult): string[] {
  const lines: string[] = [];
  if (result.listedAll) lines.push(`Found ${result.cellMappingCount} cell mappings.`);
  for (const c of result.cells) {
    if (c.kind === 'skipped-cell0') {
      lines.push('Skipping cell0 since it does not contain hosts.');
      continue;
    }
    lines.push(c.cell.name ? `Getting computes from cell '${c.cell.name}': ${c.cell.uuid}` : `Getting computes from cell: ${c.cell.uuid}`);
    if (c.kind === 'failed') break;
    const verb = result.dryRun ? 'Would create' : 'Creating';
    for (const e of c.events) {
      if (e.uuid !== null) {
        lines.push(`Checking host mapping for compute host '${e.host}': ${e.uuid}`);
        if (e.created) lines.push(`${verb} host mapping for compute host '${e.host}': ${e.uuid}`);
      } else if (e.created) {
        lines.push(`${verb} host mapping for service ${e.host}`);
      }
    }
    lines.push(`Found ${c.created.length} unmapped computes in cell: ${c.cell.uuid}`);
  }
  return lines;
}

/** The cells up to and including the first failure, as nova stops there. */
export function firstFailure(result: DiscoverResult): Extract<CellDiscovery, { kind: 'failed' }> | undefined {
  return result.cells.find((c): c is Extract<CellDiscovery, { kind: 'failed' }> => c.kind === 'failed');
}

export function renderDiscoverWarnings(result: DiscoverResult): string[] {
  const out: string[] = [];
  for (const c of result.cells) {
    if (c.kind !== 'discovered') continue;
    for (const m of c.mappedElsewhere) {
      out.push(
        `WARNING: host '${m.host}' has a compute service or node in cell ${c.cell.uuid} but is mapped to cell ${m.cellUuid}; ` +
          'not re-mapping it (run `nova-reconcile audit` for details)',
      );
    }
    if (c.nodesWithoutHost > 0) out.push(`WARNING: ${c.nodesWithoutHost} compute node(s) in cell ${c.cell.uuid} have no host and were skipped`);
  }
  return out;
}

export function renderDiscoverJson(result: DiscoverResult): JsonDocument {
  const created: Array<{ host: string; cell_uuid: string }> = [];
  const cells = result.cells.map((c) => {
    const base = { uuid: c.cell.uuid, name: c.cell.name };
    switch (c.kind) {
      case 'skipped-cell0':
        return { ...base, status: 'skipped', reason: 'cell0 does not contain hosts' };
      case 'failed':
        return { ...base, status: 'failed', error: describeError(c.error) };
      case 'discovered':
        for (const h of c.created) created.push({ host: h, cell_uuid: c.cell.uuid });
        return {
          ...base,
          status: 'ok',
          created: c.created,
          mapped_concurrently: c.mappedConcurrently,
          mapped_elsewhere: c.mappedElsewhere.map((m) => ({ host: m.host, mapped_cell_uuid: m.cellUuid })),
          nodes_marked_mapped: c.nodesMarked,
          nodes_without_host: c.nodesWithoutHost,
          ...(c.unmappedServices === undefined ? {} : { unmapped_services: c.unmappedServices }),
        };
    }
  });
  const unmappedServices = result.cells.flatMap((c) => (c.kind === 'discovered' ? (c.unmappedServices ?? []).map((host) => ({ host, cell_uuid: c.cell.uuid })) : []));
  const failure = firstFailure(result);
  return {
    command: 'cell_v2 discover_hosts',
    dry_run: result.dryRun,
    changed: !result.dryRun && result.cells.some((c) => c.kind === 'discovered' && (c.created.length > 0 || c.nodesMarked > 0)),
    // --dry-run: a run without it would map the hosts listed under created, or set mapped = 1 on
    // nodes (what `changed` counts), Ansible's check mode reads this.
    ...(result.dryRun ? { would_change: result.cells.some((c) => c.kind === 'discovered' && (c.created.length > 0 || c.nodesMarked > 0)) } : {}),
    ok: failure === undefined,
    created,
    cells,
    // e.g. an ironic nova-compute service with no compute node yet, which only --by-service maps (bug 1755602).
    unmapped_services: unmappedServices,
    warnings: unmappedServices.map(
      (u) => `nova-compute service on host ${u.host} in cell ${u.cell_uuid} has no host mapping and was not mapped by this run${result.dryRun ? ' (dry run)' : ''}; see --by-service`,
    ),
    // The same `error` object as every other failed command's JSON (report-error.ts), so automation needs one check.
    ...(failure === undefined
      ? {}
      : { error: { kind: failure.error instanceof ReconcileError ? failure.error.kind : 'internal', message: describeError(failure.error), exit_code: 255 } }),
  };
}

/**
 * The passes of a --expect/--wait run as one result: per cell (by uuid),
 * everything each pass created, marked and saw concurrently; the rest is the
 * last pass's view.
 */
export function mergeDiscoverPasses(passes: readonly DiscoverResult[]): DiscoverResult {
  const last = passes[passes.length - 1];
  if (last === undefined) throw new ReconcileError('internal', 'no discovery pass to report');
  const cells = last.cells.map((c): CellDiscovery => {
    if (c.kind !== 'discovered') return c;
    const earlier = passes.slice(0, -1).flatMap((p) => p.cells.filter((x): x is Extract<CellDiscovery, { kind: 'discovered' }> => x.kind === 'discovered' && x.cell.uuid === c.cell.uuid));
    const all = [...earlier, c];
    return {
      ...c,
      events: all.flatMap((x) => x.events),
      created: all.flatMap((x) => x.created),
      mappedConcurrently: all.flatMap((x) => x.mappedConcurrently),
      nodesMarked: all.reduce((n, x) => n + x.nodesMarked, 0),
    };
  });
  return { ...last, cells };
}
