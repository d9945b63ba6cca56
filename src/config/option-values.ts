// Typed option values (oslo_config.types.Integer, List), collecting every
// problem so that one run reports all of them (STYLE rule 8).

import { parsePythonInt } from './python-url.js';
import type { FoundValue, OptionLookup } from './option-lookup.js';

export interface IntegerRule {
  readonly group: string;
  readonly key: string;
  readonly default: number;
  readonly min?: number;
  readonly max?: number;
}

/** An IntOpt: Python int() of the stripped text, then the bounds. The default when unset or invalid. */
export function readInteger(lookup: OptionLookup, rule: IntegerRule, problems: string[]): number {
  const found = lookup.find(rule.group, rule.key);
  if (found === undefined) return rule.default;
  const where = describe(rule, found);
  const value = parsePythonInt(found.value);
  if (value === undefined) {
    // oslo's Integer turns an empty value into None, which Nova then trips over.
    problems.push(`${where}: "${clip(found.value)}" is not an integer`);
    return rule.default;
  }
  if ((rule.min !== undefined && value < rule.min) || (rule.max !== undefined && value > rule.max)) {
    problems.push(`${where}: ${value} is out of range (${rangeText(rule)})`);
    return rule.default;
  }
  return value;
}

export interface FractionRule {
  readonly group: string;
  readonly key: string;
  readonly default: number;
}

/** A FloatOpt bounded to 0..1 (a share): a decimal number; the default when unset or invalid. */
export function readFraction(lookup: OptionLookup, rule: FractionRule, problems: string[]): number {
  const found = lookup.find(rule.group, rule.key);
  if (found === undefined) return rule.default;
  const value = parseFraction(found.value);
  if (value === undefined) {
    problems.push(`${describe(rule, found)}: "${clip(found.value)}" is not a number between 0 and 1`);
    return rule.default;
  }
  return value;
}

/** "0.5", ".25", "1", "0": a decimal in 0..1; undefined otherwise. */
export function parseFraction(text: string): number | undefined {
  const t = text.trim();
  if (!/^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/.test(t)) return undefined;
  const value = Number(t);
  return value >= 0 && value <= 1 ? value : undefined;
}

/** A ListOpt: comma-separated, items stripped, empty items dropped; undefined when unset. */
export function readList(lookup: OptionLookup, group: string, key: string): readonly string[] | undefined {
  const found = lookup.find(group, key);
  if (found === undefined) return undefined;
  return Object.freeze(found.value.split(',').map((item) => item.trim()).filter((item) => item !== ''));
}

function describe(rule: { readonly group: string; readonly key: string }, found: FoundValue): string {
  return `invalid value for [${rule.group}] ${rule.key} in ${found.origin}`;
}

function rangeText(rule: IntegerRule): string {
  if (rule.min !== undefined && rule.max !== undefined) return `${rule.min}..${rule.max}`;
  if (rule.min !== undefined) return `at least ${rule.min}`;
  return `at most ${rule.max ?? ''}`;
}

function clip(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > 40 ? `${oneLine.slice(0, 40)}...` : oneLine;
}
