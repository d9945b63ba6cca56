// The circuit breaker for unattended runs: a plan that would
// remove or move an implausibly large share of a deployment applies nothing.
// A wrong input (an empty or foreign --ironic-nodes list, a cell restored from
// an old backup, a service_down_time typo) makes everything look broken, and
// the journal's undo comes after the scheduler and nova-compute have acted.
// SAP's nova nanny refuses to fix more than --fix-limit (25) inconsistencies
// for the same reason.
//
// Two limits, both from [nova_reconcile] and the command line:
//  - max_apply_units (default 1000): the units of the whole plan (before
//    --max-count: a cron loop of `--max-count 100` must not delete a whole
//    cell a hundred nodes at a time). The benchmark's 10k-node cloud with 1%
//    orphan hosts and 1% stale providers, already a pessimistic backlog, plans
//    100 units per command: 1000 is ten times that, and a backlog larger than
//    that deserves a person's look (--allow-large-plan).
//  - max_apply_fraction (default 0.5): the share of the objects of the kind
//    the plan removes or moves: the live compute nodes of each cell (the rows
//    of one ironic node, by hypervisor_hostname, counted once), and the
//    resource providers. The failure modes above make (nearly) every object
//    look broken; a healthy cloud's cleanup touches a few per cent. Half sits
//    far from both. The comparison is strict (5 of 10 passes, 6 of 10
//    trips), and a share of a handful is noise: a plan that touches at most
//    MIN_FRACTION_OBJECTS objects of a scope never trips the fraction (moving
//    the one node of a small lab, retiring 2 of 3 hosts). The damage such a
//    plan can do is bounded, and an empty or foreign ironic list is refused
//    before any plan (operations/read/cells.ts, min_ironic_fraction).
import { assertNever } from '../errors.js';
import type { CellNamer } from './cell-names.js';
import type { Change, Plan } from './plan.js';

export interface PlanLimits {
  /** 0: no limit. */
  readonly maxUnits: number;
  /** 1: no limit. */
  readonly maxFraction: number;
}

/** The objects a plan removes or moves, by kind and scope. */
export interface PlanObjects {
  /** cell uuid -> the compute nodes (hypervisor_hostname, lower case; `id:N` without one) soft-deleted or re-homed there. */
  readonly computeNodes: ReadonlyMap<string, ReadonlySet<string>>;
  /** Provider ids deleted or re-keyed. */
  readonly providers: ReadonlySet<number>;
}

/** What the objects are a share of: read from the databases (operations/plan-limits.ts). */
export interface ScopeTotals {
  /** cell uuid -> live compute nodes (distinct hypervisor_hostname). */
  readonly computeNodesByCell: ReadonlyMap<string, number>;
  /** Every resource provider; undefined when the plan removes none. */
  readonly providers: number | undefined;
}

export interface LimitTrip {
  readonly limit: 'max_apply_units' | 'max_apply_fraction';
  /** The configured value that was exceeded. */
  readonly max: number;
  /** Units of the plan; for a fraction, the units that touch that scope. */
  readonly units: number;
  /** Objects removed or moved (for max_apply_units: every kind together). */
  readonly objects: number;
  /** For a fraction: the objects of that kind in scope. */
  readonly total?: number;
  /** "compute nodes of cell <uuid>", "resource providers". */
  readonly scope: string;
  /** One line, without the override (the caller names it). */
  readonly message: string;
}

export const LIMIT_OVERRIDE = '--allow-large-plan';

/** max_apply_fraction is judged only above this many objects of one scope. */
export const MIN_FRACTION_OBJECTS = 5;

/** Which objects each change removes or moves; other changes (renames, instance moves) count only as units. */
function objectOf(change: Change): { kind: 'compute-node'; cellUuid: string; key: string } | { kind: 'provider'; id: number } | undefined {
  switch (change.kind) {
    case 'soft-delete-compute-node':
    case 'rehome-compute-node':
      return { kind: 'compute-node', cellUuid: change.target.cellUuid, key: change.hypervisorHostname === null ? `id:${change.id}` : change.hypervisorHostname.toLowerCase() };
    case 'delete-provider':
    case 'rekey-provider':
      return { kind: 'provider', id: change.providerId };
    case 'remove-provider-allocations':
    case 'move-allocations':
    case 'rename-provider':
    case 'move-instance':
    case 'release-host-in-cell':
    case 'delete-host-mapping':
    case 'remap-host-mapping':
    case 'mark-host-nodes-mapped':
    case 'put-allocations':
    case 'restore-compute-node':
      return undefined;
    default:
      return assertNever(change, 'change kind');
  }
}

export function planObjects(plan: Plan): PlanObjects & { readonly unitsByScope: ReadonlyMap<string, number> } {
  const computeNodes = new Map<string, Set<string>>();
  const providers = new Set<number>();
  const unitsByScope = new Map<string, number>();
  for (const unit of plan.units) {
    const scopes = new Set<string>();
    for (const { change } of unit.changes) {
      const o = objectOf(change);
      if (o === undefined) continue;
      if (o.kind === 'compute-node') {
        let set = computeNodes.get(o.cellUuid);
        if (set === undefined) computeNodes.set(o.cellUuid, (set = new Set()));
        set.add(o.key);
        scopes.add(`cell:${o.cellUuid}`);
      } else {
        providers.add(o.id);
        scopes.add('providers');
      }
    }
    for (const s of scopes) unitsByScope.set(s, (unitsByScope.get(s) ?? 0) + 1);
  }
  return { computeNodes, providers, unitsByScope };
}

/** Every limit the plan exceeds; empty when it is within all of them. A trip's scope names a cell by its uuid, its message as cell-names.ts says. */
export function checkPlanLimits(plan: Plan, totals: ScopeTotals, limits: PlanLimits, cellName: CellNamer): LimitTrip[] {
  const trips: LimitTrip[] = [];
  const objects = planObjects(plan);
  const nodeCount = [...objects.computeNodes.values()].reduce((n, s) => n + s.size, 0);
  const units = plan.units.length;
  if (limits.maxUnits > 0 && units > limits.maxUnits) {
    trips.push({
      limit: 'max_apply_units',
      max: limits.maxUnits,
      units,
      objects: nodeCount + objects.providers.size,
      scope: 'the plan',
      message: `${plan.command} plans ${units} unit(s) (removing or moving ${nodeCount} compute node(s) and ${objects.providers.size} resource provider(s)), more than max_apply_units ${limits.maxUnits}`,
    });
  }
  if (limits.maxFraction >= 1) return trips;
  const fraction = (scope: string, scopeKey: string, count: number, total: number | undefined, what: string, verb: string): void => {
    if (total === undefined || total === 0 || count <= MIN_FRACTION_OBJECTS || count / total <= limits.maxFraction) return;
    const scopeUnits = objects.unitsByScope.get(scopeKey) ?? 0;
    trips.push({
      limit: 'max_apply_fraction',
      max: limits.maxFraction,
      units: scopeUnits,
      objects: count,
      total,
      scope,
      message: `${plan.command} would ${verb} ${count} of the ${total} ${what} (${percent(count / total)}, more than max_apply_fraction ${limits.maxFraction}) in ${scopeUnits} unit(s)`,
    });
  };
  for (const [cellUuid, keys] of [...objects.computeNodes].sort(([a], [b]) => a.localeCompare(b)))
    fraction(`compute nodes of cell ${cellUuid}`, `cell:${cellUuid}`, keys.size, totals.computeNodesByCell.get(cellUuid), `live compute nodes of cell ${cellName(cellUuid)}`, 'remove or move');
  fraction('resource providers', 'providers', objects.providers.size, totals.providers, 'resource providers', 'delete or re-key');
  return trips;
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}
