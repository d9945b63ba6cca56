// The scope options shared by the plan commands (--cell, --host, --node,
// --resource_provider). A scope narrows what is planned; it never changes
// what a unit is. So a planner plans the whole deployment, exactly as without
// a scope (units share planning state: a generation one unit bumps is the
// one the next unit expects), and only then keeps the units and refusals
// whose subject is in scope. A scoped plan's unit is therefore the very unit
// of the unscoped plan.
//
// One consequence: a unit in scope that was planned on top of an earlier
// unit left out by the scope (they share a row: a consumer, a provider)
// expects the values that earlier unit would have written. Applied alone it
// could only be skipped, so it is refused instead, with the reason.
import { ReconcileError } from '../errors.js';
import { isUuid } from './ironic-nodes.js';
import type { CellRec, Snapshot } from './model.js';
import type { Plan, Refusal, Unit } from './plan.js';
import { hostKey } from './snapshot-index.js';

/** A scope as the commands resolve it (cells by uuid; hosts, nodes and providers as given). */
export interface PlanScope {
  /** The cell's uuid, as cell_mappings spells it (resolved from a uuid or a name). */
  readonly cellUuid?: string;
  /** Compared as Nova's utf8mb3_general_ci columns compare (case- and trailing-space-insensitive). */
  readonly host?: string;
  /** Compute node uuids or hypervisor_hostnames; a unit matches when it is about any of them. */
  readonly nodes?: readonly string[];
  /** Resource provider uuids. */
  readonly providers?: readonly string[];
}

/** What a unit or a refusal is about, for scope selection. */
export interface ScopeSubject {
  readonly cells: ReadonlyArray<string | null>;
  readonly hosts: ReadonlyArray<string | null>;
  readonly nodes: ReadonlyArray<{ readonly uuid: string | null; readonly hypervisorHostname: string | null }>;
  readonly providers: readonly string[];
}

export const NO_SUBJECT: ScopeSubject = { cells: [], hosts: [], nodes: [], providers: [] };

export function isUnscoped(scope: PlanScope | undefined): boolean {
  return scope === undefined || (scope.cellUuid === undefined && scope.host === undefined && scope.nodes === undefined && scope.providers === undefined);
}

/** Every given option must match (they narrow together); a subject without, say, a cell never matches --cell. */
export function inScope(scope: PlanScope, subject: ScopeSubject): boolean {
  if (scope.cellUuid !== undefined) {
    const want = scope.cellUuid.toLowerCase();
    if (!subject.cells.some((c) => c !== null && c.toLowerCase() === want)) return false;
  }
  if (scope.host !== undefined) {
    const want = hostKey(scope.host);
    if (!subject.hosts.some((h) => h !== null && hostKey(h) === want)) return false;
  }
  if (scope.nodes !== undefined) {
    const want = new Set(scope.nodes.map(nodeKeyOf));
    if (!subject.nodes.some((n) => (n.uuid !== null && want.has(nodeKeyOf(n.uuid))) || (n.hypervisorHostname !== null && want.has(nodeKeyOf(n.hypervisorHostname))))) return false;
  }
  if (scope.providers !== undefined) {
    const want = new Set(scope.providers.map((p) => p.toLowerCase()));
    if (!subject.providers.some((p) => want.has(p.toLowerCase()))) return false;
  }
  return true;
}

/** hypervisor_hostname and uuid columns compare as the database does: case- and trailing-space-insensitive. */
function nodeKeyOf(value: string): string {
  return hostKey(value);
}

export interface ScopedUnit {
  readonly unit: Unit;
  readonly subject: ScopeSubject;
  /** The unit's footprint (Unit.footprint, or computed for units that have none). */
  readonly keys: readonly string[];
}

export interface ScopedRefusal {
  readonly refusal: Refusal;
  readonly subject: ScopeSubject;
}

/**
 * The plan of the units and refusals in scope, in the order of the unscoped
 * plan. Without a scope it is the unscoped plan itself.
 */
export function selectInScope(command: string, units: readonly ScopedUnit[], refused: readonly ScopedRefusal[], scope: PlanScope | undefined): Plan {
  if (scope === undefined || isUnscoped(scope)) return { command, units: units.map((u) => u.unit), refused: refused.map((r) => r.refusal) };
  const keptUnits: Unit[] = [];
  const dependsOn: Refusal[] = [];
  // Keys written by earlier units that the scope leaves out, with the first such unit's id.
  const leftOut = new Map<string, string>();
  for (const u of units) {
    if (!inScope(scope, u.subject)) {
      for (const k of u.keys) if (!leftOut.has(k)) leftOut.set(k, u.unit.id);
      continue;
    }
    const earlier = u.keys.map((k) => leftOut.get(k)).find((id) => id !== undefined);
    if (earlier === undefined) keptUnits.push(u.unit);
    else
      dependsOn.push({
        subject: u.unit.title,
        reason: `it was planned after unit ${earlier}, which this scope leaves out and which changes rows this unit expects (a shared provider or consumer); applied alone it could only be skipped`,
        suggestion: 'widen the scope to include both, or run without scope options',
      });
  }
  return { command, units: keptUnits, refused: [...refused.filter((r) => inScope(scope, r.subject)).map((r) => r.refusal), ...dependsOn] };
}

/**
 * --cell takes a uuid or a name. A uuid is matched first; a name must name
 * exactly one cell (cell names are not unique in cell_mappings).
 */
export function resolveCell(cells: ReadonlyArray<Pick<CellRec, 'uuid' | 'name'>>, value: string, option = '--cell'): string {
  const lower = value.toLowerCase();
  const byUuid = cells.find((c) => c.uuid.toLowerCase() === lower);
  if (byUuid !== undefined) return byUuid.uuid;
  const byName = cells.filter((c) => c.name !== null && c.name === value);
  if (byName.length === 1) return (byName[0] as { uuid: string }).uuid;
  if (byName.length > 1)
    throw new ReconcileError('input', `${option} ${JSON.stringify(value)}: ${byName.length} cells have this name (${byName.map((c) => c.uuid).join(', ')})`, { hint: `give the cell's uuid with ${option}` });
  const hint = { hint: 'run `nova-reconcile cell_v2 list_cells` to see the cells' };
  if (isUuid(value)) throw new ReconcileError('not-found', `cell ${lower} has no mapping`, hint);
  throw new ReconcileError('not-found', `${option} ${JSON.stringify(value)}: no cell has this uuid or name`, hint);
}

/**
 * --host and --node must name something the deployment knows: a typo would
 * otherwise select nothing and exit 0, as if the host were healthy.
 */
/** --host names nothing: no service, compute node, host mapping or instance has it. */
export function unknownHost(host: string): ReconcileError {
  return new ReconcileError('not-found', `--host ${JSON.stringify(host)}: no service, compute node, host mapping or instance has this host`, {
    hint: 'list the nodes with `nova-reconcile compute_node list`',
  });
}

export function checkScopeNames(snapshot: Snapshot, scope: PlanScope): void {
  // A read of the orphan candidates only, or without services and host mappings (Snapshot.nodeScope), cannot tell a name from a typo.
  if (snapshot.nodeScope === 'orphan-candidates') {
    // It holds too few rows to search: the read looked the names up (Snapshot.scopeNames).
    const names = snapshot.scopeNames;
    const hostAsked = scope.host === undefined || names?.host?.key === hostKey(scope.host);
    const nodesAsked = (scope.nodes ?? []).every((n) => names?.nodes?.has(nodeKeyOf(n)) === true);
    if (scope.providers !== undefined || !hostAsked || !nodesAsked)
      throw new ReconcileError('internal', `this command's read of the compute nodes that may be orphans did not look up its --host, --node or --resource_provider (a planner bug: nothing was changed)`);
  }
  if (snapshot.nodeScope === 'stale-provider-candidates' && (scope.host !== undefined || scope.nodes !== undefined || scope.providers !== undefined))
    throw new ReconcileError('internal', `this command's read of the resource providers that may be stale cannot check --host, --node or --resource_provider (a planner bug: nothing was changed)`);
  if (snapshot.nodeScope === 'no-services' && scope.host !== undefined)
    throw new ReconcileError('internal', `this command's read without services and host mappings cannot check --host (a planner bug: nothing was changed)`);
  if (scope.host !== undefined) {
    const want = hostKey(scope.host);
    // A scoped instance read (Snapshot.instanceScope) must have read this host's instances in every cell.
    const held = snapshot.instanceScope === undefined || snapshot.cells.every((c) => c.isCell0 || (snapshot.instanceScope?.hostsByCell.get(c.uuid)?.has(want) ?? false));
    if (!held) throw new ReconcileError('internal', `--host ${JSON.stringify(scope.host)}: this command's instance read left the host out (a planner bug: nothing was changed)`);
    const known =
      (snapshot.nodeScope === 'orphan-candidates' && snapshot.scopeNames?.host?.known === true) ||
      snapshot.services.some((s) => hostKey(s.host) === want) ||
      snapshot.computeNodes.some((n) => hostKey(n.host) === want) ||
      snapshot.hostMappings.some((m) => hostKey(m.host) === want) ||
      snapshot.instances.some((i) => hostKey(i.host) === want);
    if (!known) throw unknownHost(scope.host);
  }
  for (const raw of scope.nodes ?? []) {
    const want = nodeKeyOf(raw);
    const probed = snapshot.nodeScope === 'orphan-candidates' && snapshot.scopeNames?.nodes?.get(want) === true;
    if (!probed && !snapshot.computeNodes.some((n) => (n.uuid !== null && nodeKeyOf(n.uuid) === want) || (n.hypervisorHostname !== null && nodeKeyOf(n.hypervisorHostname) === want)))
      throw new ReconcileError('not-found', `--node ${JSON.stringify(raw)}: no compute node, live or soft-deleted, has this uuid or hypervisor_hostname`, {
        hint: 'list the nodes with `nova-reconcile compute_node list`',
      });
  }
  for (const raw of scope.providers ?? []) {
    if (snapshot.placement !== undefined && !snapshot.placement.providers.some((p) => p.uuid.toLowerCase() === raw.toLowerCase()))
      throw new ReconcileError('not-found', `--resource_provider ${raw}: no resource provider has this uuid`, { hint: 'list the providers with `openstack resource provider list`' });
  }
}
