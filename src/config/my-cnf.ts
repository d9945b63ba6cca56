// A MySQL option file (my.cnf) as PyMySQL reads it for read_default_file:
// Python's configparser.RawConfigParser(allow_no_value=True) in strict mode,
// with PyMySQL's Parser tweaks (keys lower-cased with '_' spelled '-',
// matching surrounding quotes removed from values). Section names are
// case-sensitive there, unlike nova.conf.
//
// Not MySQL's own reader: `!include` lines are valueless options (ignored),
// and `loose-` prefixes are not understood, exactly as with PyMySQL.

import { ReconcileError } from '../errors.js';

export interface MyCnf {
  /** The value of `key` (dashes and underscores equivalent) in `group`, falling back to [DEFAULT]. */
  get(group: string, key: string): string | undefined;
}

/** Parses a MySQL option file; errors name `path` and the line, never its content. */
export function parseMyCnf(text: string, path: string): MyCnf {
  const sections = new Map<string, Map<string, string[] | null>>();
  const defaults = new Map<string, string[] | null>();
  const seen = new Set<string>();
  let current: Map<string, string[] | null> | undefined;
  let currentName = '';
  let option: string | undefined;
  let indentLevel = 0;

  const fail = (lineno: number, what: string): never => {
    throw new ReconcileError('config', `${path}:${lineno}: ${what}`, {
      hint: `fix the MySQL option file ${path} (named by read_default_file in the database URL)`,
    });
  };

  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  lines.forEach((line, index) => {
    const lineno = index + 1;
    const trimmed = line.trim();
    if (trimmed.startsWith('#') || trimmed.startsWith(';')) return;
    if (trimmed === '') {
      // empty_lines_in_values: a blank line becomes part of a multi-line value.
      const values = option === undefined ? undefined : current?.get(option);
      if (values) values.push('');
      return;
    }
    const indent = line.search(/\S/);
    const values = option === undefined ? undefined : current?.get(option);
    if (current !== undefined && option !== undefined && indent > indentLevel && values) {
      values.push(trimmed);
      return;
    }
    indentLevel = indent;
    const header = /^\[(.+)\]/.exec(trimmed);
    if (header !== null) {
      const name = header[1] ?? '';
      // strict mode: a repeated section is an error, except DEFAULT.
      if (name !== 'DEFAULT' && seen.has(name)) fail(lineno, `section [${name}] appears twice`);
      seen.add(name);
      currentName = name;
      if (name === 'DEFAULT') current = defaults;
      else {
        current = new Map();
        sections.set(name, current);
      }
      option = undefined;
      return;
    }
    if (current === undefined) fail(lineno, 'an option appears before any [section] header');
    const assignment = /^(.*?)\s*(?:([=:])\s*(.*))?$/.exec(trimmed);
    const rawKey = assignment?.[1] ?? '';
    if (rawKey === '') fail(lineno, 'an option has an empty name');
    const key = normalizeKey(rawKey);
    const seenKey = `${currentName}\u0000${key}`;
    if (seen.has(seenKey)) fail(lineno, `option ${key} appears twice in [${currentName}]`);
    seen.add(seenKey);
    option = key;
    current?.set(key, assignment?.[2] === undefined ? null : [(assignment[3] ?? '').trim()]);
  });

  const read = (section: Map<string, string[] | null> | undefined, key: string): string | undefined => {
    const values = section?.get(key);
    // A valueless option makes PyMySQL's _config() swallow a TypeError: unset.
    if (values === undefined || values === null) return undefined;
    return removeQuotes(values.join('\n').trimEnd());
  };

  return {
    get(group: string, key: string): string | undefined {
      const normalized = normalizeKey(key);
      const section = sections.get(group);
      if (section === undefined && group !== 'DEFAULT') return undefined;
      return read(section, normalized) ?? read(defaults, normalized);
    },
  };
}

// PyMySQL's Parser.optionxform.
function normalizeKey(key: string): string {
  return key.toLowerCase().replaceAll('_', '-');
}

// PyMySQL's Parser.__remove_quotes: one pair of matching ' or " quotes.
function removeQuotes(value: string): string {
  for (const quote of ["'", '"']) {
    if (value.length >= 2 && value.startsWith(quote) && value.endsWith(quote)) return value.slice(1, -1);
  }
  return value;
}
