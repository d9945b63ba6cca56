// The JSON contract: every --format json document carries
// schema_version and `changed`, uses snake_case keys, and is described by a
// JSON Schema in schemas/ (shipped in the package). schema_version changes
// when a key is removed, renamed or changes type; keys may be added within
// a version. A dry run's plan also says `would_change` (what --apply would
// do), which is what Ansible's check mode should read.

import { pushTo } from '../domain/text-and-maps.js';
import type { CommandSpec, JsonSchemaClaim } from './spec.js';

export const SCHEMA_VERSION = 1;

/**
 * The JSON OUTPUT list of the man page: each schema file with the commands
 * that print it, from their specs' jsonSchemas, in the commands' order. A
 * schema several commands share is listed once, after the last of them;
 * the error document every command shares comes last.
 */
export function jsonSchemaIndex(commands: readonly CommandSpec[]): Array<readonly [string, string]> {
  const printedBy = new Map<string, string[]>();
  for (const c of commands) for (const schema of c.jsonSchemas.filter(isName)) pushTo(printedBy, schema, c.path.join(' '));
  const rows: Array<readonly [string, string]> = [];
  for (const c of commands) {
    const path = c.path.join(' ');
    const names = c.jsonSchemas.filter(isName);
    const own = names.filter((schema) => printedBy.get(schema)?.length === 1);
    const instead = c.jsonSchemas.flatMap((claim) => (isName(claim) ? [] : [` (with ${claim.with}: ${schemaFile(claim.schema)})`]));
    if (own.length > 0) rows.push([path, own.map(schemaFile).join(', ') + instead.join('')]);
    for (const schema of names) {
      const by = printedBy.get(schema) ?? [];
      if (by.length > 1 && by.at(-1) === path) rows.push([`the ${schema} commands (${categoryRuns([...by].sort())})`, schemaFile(schema)]);
    }
  }
  return [...rows, ['any command that fails', schemaFile('error')]];
}

const isName = (claim: JsonSchemaClaim): claim is string => typeof claim === 'string';
const schemaFile = (schema: string): string => `schemas/${schema}.schema.json`;

/** Command paths, each category said once for a run of its actions: "compute_node move, restore, placement audit". */
function categoryRuns(paths: readonly string[]): string {
  return paths.map((p, i) => (i > 0 && p.split(' ')[0] === paths[i - 1]?.split(' ')[0] ? p.split(' ').slice(1).join(' ') : p)).join(', ');
}

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

/**
 * A document as printed: schema_version first (schemas/<command>.schema.json
 * describe them), and `changed`, so Ansible's changed_when has one key to read
 * whatever the command.
 */
export function renderJson(doc: object): string {
  return JSON.stringify(jsonDocument(doc), null, 2) + '\n';
}

export type { JsonDocument } from './results.js';
