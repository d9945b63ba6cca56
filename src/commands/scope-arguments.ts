// The scope options as given on the command line, checked for their form
// before any database is opened (exit 127, one line).
import type { CommandOptions } from '../cli/spec.js';
import { isUuid } from '../domain/ironic-nodes.js';
import { ReconcileError } from '../errors.js';
import type { ScopeArguments } from '../operations/scope.js';

export function scopeArguments(o: CommandOptions): ScopeArguments {
  const cell = typeof o['cell'] === 'string' ? nonEmpty(o['cell'], '--cell') : undefined;
  const host = typeof o['host'] === 'string' ? nonEmpty(o['host'], '--host') : undefined;
  const nodes = Array.isArray(o['node']) ? o['node'].map((n) => nonEmpty(String(n), '--node')) : undefined;
  const raw = o['resource_provider'];
  const providers = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.map(String) : undefined;
  const bad = (providers ?? []).find((p) => !isUuid(p));
  if (bad !== undefined) throw new ReconcileError('usage', `--resource_provider ${JSON.stringify(bad)}: not a valid UUID`, { hint: 'give the uuid as 8-4-4-4-12 hex digits' });
  return {
    ...(cell === undefined ? {} : { cell }),
    ...(host === undefined ? {} : { host }),
    ...(nodes === undefined ? {} : { nodes }),
    ...(providers === undefined ? {} : { providers: providers.map((p) => p.toLowerCase()) }),
  };
}

function nonEmpty(value: string, option: string): string {
  if (value.trim() === '') throw new ReconcileError('usage', `${option} needs a value, got ${JSON.stringify(value)}`);
  return value;
}
