// Argument values that name several things: uuid options and comma-separated
// host lists, checked before any database is opened.
import { isUuid } from '../domain/ironic-nodes.js';
import { ReconcileError } from '../errors.js';

/** Reject a malformed uuid argument before any database is read (exit 127). */
export function parseUuidArguments(values: readonly string[], option: string): string[] {
  const bad = values.filter((v) => !isUuid(v));
  if (bad.length > 0)
    throw new ReconcileError('usage', `${option} ${bad.map((b) => JSON.stringify(b)).join(', ')}: not a valid UUID`, { hint: 'give the uuid as 8-4-4-4-12 hex digits' });
  return values.map((v) => v.toLowerCase());
}

/** "a, B ,c" → ["a", "B", "c"] (empty entries dropped). */
export function parseHostList(value: string): string[] {
  return value
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
}
