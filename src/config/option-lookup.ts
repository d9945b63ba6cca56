// oslo.config's value lookup (ConfigOpts._do_get, _Namespace._get_file_value):
//
// 1. the environment variable OS_<GROUP>__<OPTION> (the current name only);
// 2. the files, newest first: the last file that sets the option *or one of
//    its deprecated names* wins (the current name first within a file), and
//    within a file the last occurrence wins;
// 3. `$name` / `${group.name}` substitution (string.Template.safe_substitute
//    with oslo's idpattern), `$$` and `\$` for a literal dollar.
//
// Group names are case-insensitive except DEFAULT, which must be upper-case:
// `[default]` is a group called "default" (cfg._normalize_group_name). Keys
// are case-sensitive.

import { ReconcileError } from '../errors.js';
import type { ParsedIni } from './ini-parser.js';

export interface OptionName {
  readonly group: string;
  readonly key: string;
}

export interface FoundValue {
  readonly value: string;
  /** A file path, or "environment variable OS_X__Y". */
  readonly origin: string;
}

// Deprecated names that oslo.db registers for [database] connection and that
// Nova (Zed, nova/conf/database.py) deep-copies for [api_database]
// connection, so `[DEFAULT] sql_connection` sets both (nova-facts §10).
//
// [ironic] conductor_group is the name since Nova 28.0.0 (2023.2) of
// partition_key (deprecated_name). endpoint_override is keystoneauth's name
// for Nova's old api_endpoint, and auth_type for auth_plugin. When a file
// sets both names, the current one wins, as in oslo.config.
const DEPRECATED_NAMES: ReadonlyMap<string, readonly OptionName[]> = new Map<string, readonly OptionName[]>([
  ...['database', 'api_database'].map((group): [string, OptionName[]] => [
    `${group}\u0000connection`,
    [
      { group: 'DEFAULT', key: 'sql_connection' },
      { group: 'database', key: 'sql_connection' },
      { group: 'sql', key: 'connection' },
    ],
  ]),
  ['ironic\u0000conductor_group', [{ group: 'ironic', key: 'partition_key' }]],
  ['ironic\u0000endpoint_override', [{ group: 'ironic', key: 'api_endpoint' }]],
  ['ironic\u0000auth_type', [{ group: 'ironic', key: 'auth_plugin' }]],
]);

/** oslo.config's _normalize_group_name. */
export function normalizeGroup(group: string): string {
  return group === 'DEFAULT' ? group : group.toLowerCase();
}

/** EnvironmentConfigurationSource.get_name. */
export function envVarName(group: string, key: string): string {
  return `OS_${group.toUpperCase()}__${key.toUpperCase()}`;
}

type FileLayer = { readonly path: string; readonly groups: ReadonlyMap<string, ReadonlyMap<string, string>> };

export interface OptionLookup {
  /** The effective value with oslo.config precedence and substitution, or undefined when unset. */
  find(group: string, key: string): FoundValue | undefined;
}

/** Builds the lookup over `files` (in the order they were applied) and `env`. */
export function createOptionLookup(files: readonly ParsedIni[], env: Readonly<Record<string, string | undefined>>): OptionLookup {
  // Newest first, each reduced to its last value per (normalised group, key).
  const layers: FileLayer[] = files
    .map((file) => {
      const groups = new Map<string, Map<string, string>>();
      for (const entry of file.entries) {
        const group = normalizeGroup(entry.section);
        let keys = groups.get(group);
        if (keys === undefined) {
          keys = new Map();
          groups.set(group, keys);
        }
        keys.set(entry.key, entry.value);
      }
      return { path: file.path, groups };
    })
    .reverse();

  const findRaw = (group: string, key: string): FoundValue | undefined => {
    const envName = envVarName(group, key);
    const fromEnv = env[envName];
    if (fromEnv !== undefined) return { value: fromEnv, origin: `environment variable ${envName}` };
    const names = [{ group, key }, ...(DEPRECATED_NAMES.get(`${group}\u0000${key}`) ?? [])];
    for (const layer of layers) {
      for (const name of names) {
        const value = layer.groups.get(name.group)?.get(name.key);
        if (value !== undefined) return { value, origin: layer.path };
      }
    }
    return undefined;
  };

  const find = (group: string, key: string, visiting: ReadonlySet<string>): FoundValue | undefined => {
    const normalized = normalizeGroup(group);
    const raw = findRaw(normalized, key);
    if (raw === undefined || !raw.value.includes('$')) return raw;
    const here = `${normalized}\u0000${key}`;
    const next = new Set(visiting).add(here);
    return { value: substitute(raw.value, { group: normalized, key }, raw.origin, next, find), origin: raw.origin };
  };

  return { find: (group, key) => find(group, key, new Set()) };
}

type Finder = (group: string, key: string, visiting: ReadonlySet<string>) => FoundValue | undefined;

// string.Template's pattern with oslo's idpattern `[_a-z][\._a-z0-9]*` and
// re.IGNORECASE: $$ | $name | ${name} | $ followed by anything else (left alone).
const TEMPLATE = /\$(?:(\$)|([_a-z][._a-z0-9]*)|\{([_a-z][._a-z0-9]*)\}|)/gi;

function substitute(value: string, at: OptionName, origin: string, visiting: ReadonlySet<string>, find: Finder): string {
  // cfg.ConfigOpts._substitute: "\$" means the same as "$$".
  const text = value.replaceAll('\\$', '$$$$');
  return text.replace(TEMPLATE, (whole: string, dollar: string | undefined, named: string | undefined, braced: string | undefined) => {
    if (dollar !== undefined) return '$';
    const ref = named ?? braced;
    if (ref === undefined) return whole;
    return resolveReference(ref, at, origin, visiting, find);
  });
}

// ConfigOpts.StrSubWrapper.__getitem__: "group.option" names another group;
// otherwise the option's own group, then [DEFAULT].
function resolveReference(ref: string, at: OptionName, origin: string, visiting: ReadonlySet<string>, find: Finder): string {
  const dot = ref.indexOf('.');
  const candidates: OptionName[] = dot >= 0
    ? [{ group: normalizeGroup(ref.slice(0, dot)), key: ref.slice(dot + 1) }, { group: 'DEFAULT', key: ref }]
    : [{ group: at.group, key: ref }, { group: 'DEFAULT', key: ref }];
  for (const candidate of candidates) {
    if (visiting.has(`${candidate.group}\u0000${candidate.key}`)) {
      throw new ReconcileError('config', `[${at.group}] ${at.key} in ${origin} refers to $${ref}, which refers back to it`, {
        hint: 'write a literal dollar sign as $$',
      });
    }
    const found = find(candidate.group, candidate.key, visiting);
    if (found !== undefined) return found.value;
  }
  // oslo.config substitutes a registered option's default here, or fails with
  // NoSuchOptError; we know neither the registry nor the defaults.
  throw new ReconcileError('config', `[${at.group}] ${at.key} in ${origin} refers to $${ref}, which is not set in any config file or environment variable`, {
    hint: `set ${dot >= 0 ? `[${ref.slice(0, dot)}] ${ref.slice(dot + 1)}` : `[DEFAULT] ${ref}`} explicitly, or write a literal dollar sign as $$`,
  });
}
