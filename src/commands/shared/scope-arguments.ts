// The scope options as given on the command line, checked for their form
// before any database is opened (exit 127, one line).
import { listOption, stringOption } from '../../cli/options.js';
import type { CommandOptions } from '../../cli/spec.js';
import { isUuid } from '../../domain/ironic-nodes.js';
import { ReconcileError } from '../../errors.js';
import type { ScopeArguments } from '../../operations/scope.js';

export function scopeArguments(raw: CommandOptions): ScopeArguments {
  const cellGiven = stringOption(raw, 'cell');
  const cell = cellGiven === undefined ? undefined : nonEmpty(cellGiven, '--cell');
  const hostGiven = stringOption(raw, 'host');
  const host = hostGiven === undefined ? undefined : nonEmpty(hostGiven, '--host');
  const nodes = listOption(raw, 'node')?.map((n) => nonEmpty(n, '--node'));
  const providers = listOption(raw, 'resource_provider');
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
