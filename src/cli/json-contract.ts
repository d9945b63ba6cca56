// The JSON contract (issue 18): every --format json document carries
// schema_version and `changed`, uses snake_case keys, and is described by a
// JSON Schema in schemas/ (shipped in the package). schema_version changes
// when a key is removed, renamed or changes type; keys may be added within
// a version. A dry run's plan also says `would_change` (what --apply would
// do), which is what Ansible's check mode should read.

export const SCHEMA_VERSION = 1;

/** The schema file describing each command's document, and the error document every command shares. */
export const JSON_SCHEMAS: ReadonlyArray<readonly [string, string]> = [
  ['cell_v2 list_cells', 'schemas/cell_v2-list_cells.schema.json'],
  ['cell_v2 list_hosts', 'schemas/cell_v2-list_hosts.schema.json'],
  ['cell_v2 delete_host', 'schemas/cell_v2-delete_host.schema.json'],
  ['cell_v2 discover_hosts', 'schemas/cell_v2-discover_hosts.schema.json (with --remap: schemas/plan.schema.json)'],
  ['db ironic_compute_node_move', 'schemas/db-ironic_compute_node_move.schema.json'],
  ['placement audit', 'schemas/placement-audit.schema.json'],
  ['placement heal_allocations', 'schemas/placement-heal_allocations.schema.json'],
  ['audit', 'schemas/audit.schema.json'],
  ['compute_node list', 'schemas/compute_node-list.schema.json'],
  ['the plan commands (cell_v2 prune_host_mappings, compute_node cleanup_orphans, move, rebalance, restore, placement cleanup_providers)', 'schemas/plan.schema.json'],
  ['undo', 'schemas/undo.schema.json'],
  ['sandbox create', 'schemas/sandbox-create.schema.json'],
  ['any command that fails', 'schemas/error.schema.json'],
];

/** schema_version first, then the document with its keys in snake_case. */
export function jsonDocument(doc: object): object {
  return { schema_version: SCHEMA_VERSION, ...(snakeKeys(doc) as object) };
}

/**
 * Keys in snake_case at the rendering edge: the domain's objects (plan
 * changes: providerId, hypervisorHostname) keep their TypeScript names, the
 * documents do not. Values are untouched: a host called "myHost" stays so.
 */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[snakeCase(k)] = snakeKeys(v);
  return out;
}

export function snakeCase(key: string): string {
  // Only identifiers in camelCase: data used as keys (resource classes such as
  // CUSTOM_GOLD, finding kinds, uuids) is left as it is.
  if (!/^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/.test(key)) return key;
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z])([A-Z][a-z])/g, '$1_$2').toLowerCase();
}

/** What printJson takes: any document, as long as it says whether it changed something. */
export type JsonDocument = { readonly changed: boolean } & Readonly<Record<string, unknown>>;
