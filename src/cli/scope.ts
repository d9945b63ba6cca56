// The scope options, written once. Every plan command that takes one takes
// it with this spelling and this meaning; --help, the man page (SCOPE
// OPTIONS) and the README describe them once, as a shared block, and each
// command only lists which of them it takes.
import type { OptionSpec } from './spec.js';

export const SCOPE_CELL: OptionSpec = {
  flags: '--cell <cell>',
  description: "only this cell: its uuid or its name (a name that several cells share is refused, exit 127: give the uuid)",
  scope: true,
};

export const SCOPE_HOST: OptionSpec = {
  flags: '--host <host>',
  description: "only this host, compared as the database compares it: case- and trailing-space-insensitive. A host no service, compute node, host mapping or instance has is refused (exit 127)",
  scope: true,
};

export const SCOPE_NODE: OptionSpec = {
  flags: '--node <node>',
  description: 'only this compute node: its uuid or its hypervisor_hostname (an ironic node uuid); repeatable. A node no compute node, live or soft-deleted, has is refused (exit 127)',
  repeatable: true,
  scope: true,
};

export const SCOPE_RESOURCE_PROVIDER: OptionSpec = {
  flags: '--resource_provider <uuid>',
  description: 'only this resource provider (or a provider tree with it), by uuid. An unknown provider is refused (exit 127)',
  scope: true,
};

export const MAX_COUNT_OPTION: OptionSpec = {
  flags: '--max-count <n>',
  description:
    'act on at most N units, the first N of the (scoped) plan. With --apply and units left over it applies N, says "K more unit(s) left for a later run" (JSON: deferred_units), and exits 4 as any apply does (5 if a unit was skipped); re-run until it exits 0. Default: all',
  scope: true,
};

/** The shared block's introduction, for --help, the man page and the README. */
export const SCOPE_INTRO =
  'A scope narrows what is planned; it never changes what a unit is. The whole deployment is planned, then the units and refusals ' +
  'in scope are kept, so a scoped unit is the very unit of the unscoped plan, touching the same rows. Options given together narrow ' +
  'together. A unit in scope that was planned on top of a unit the scope leaves out (they share a provider or consumer) is refused ' +
  'with that reason: applied alone it could only be skipped. A scoped run followed by an unscoped one ends where one unscoped run ends.';

/** Every scope option, in the order the shared block lists them. */
export const SCOPE_OPTIONS: readonly OptionSpec[] = [SCOPE_CELL, SCOPE_HOST, SCOPE_NODE, SCOPE_RESOURCE_PROVIDER, MAX_COUNT_OPTION];

export function optionName(o: OptionSpec): string {
  return o.flags.split(' ')[0] ?? o.flags;
}
