// Typed readers of the options commander parsed (CommandOptions: camelCase
// keys, a few nova-manage spellings with underscores such as cell_uuid). Each
// command's `parse` turns the record into its own options type with these;
// nothing under commands/ indexes the record itself
// (test/unit/architecture.test.ts).
import { ReconcileError } from '../errors.js';
import type { CommandOptions } from './spec.js';

/** A value option (`--host <host>`): its text, or undefined when it was not given. */
export function stringOption(raw: CommandOptions, key: string): string | undefined {
  const value = raw[key];
  return typeof value === 'string' ? value : undefined;
}

/** A flag (`--apply`): true only when it was given. */
export function flagOption(raw: CommandOptions, key: string): boolean {
  return raw[key] === true;
}

/**
 * A repeatable option (`--node <uuid>`, collected into a list by
 * dispatch/program.ts) or a single value: its values in the order given, or
 * undefined when it was not given.
 */
export function listOption(raw: CommandOptions, key: string): string[] | undefined {
  const value = raw[key];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.map(String) : undefined;
}

/** Whether an option was given at all: a flag that is set or a value that is there. */
export function givenOption(raw: CommandOptions, key: string): boolean {
  return raw[key] !== undefined && raw[key] !== false;
}

/** An option commander makes mandatory (`required: true` in the spec): its text. */
export function requiredOption(raw: CommandOptions, key: string, flag: string): string {
  const value = stringOption(raw, key);
  if (value === undefined) throw new ReconcileError('usage', `required option '${flag}' not specified`);
  return value;
}
