// nova.conf syntax as oslo_config/iniparser.py (BaseParser) and
// cfg.ConfigParser define it, which is not Python's configparser:
//
// - `key = value` or `key: value`, whichever delimiter comes first; key and
//   value stripped; one pair of matching surrounding quotes removed;
// - a line starting with a space or tab continues the previous value (joined
//   with "\n"); a blank line or any other line ends it;
// - `#` and `;` start a comment only at the beginning of a line, so
//   `key = a # b` has the value "a # b";
// - section names are kept as written (normalisation is the loader's job), and
//   every occurrence of a key is kept in order: for single-valued options the
//   last one wins.
//
// Errors name the file and line but never quote the line: it may hold a password.

import { ReconcileError } from '../errors.js';

export interface IniEntry {
  /** The section header exactly as written between the brackets. */
  readonly section: string;
  readonly key: string;
  readonly value: string;
  /** 1-based line of the key. */
  readonly line: number;
}

export interface ParsedIni {
  readonly path: string;
  /** Section names in order of first appearance, as written (a section may be empty). */
  readonly sections: readonly string[];
  /** Every assignment in file order. */
  readonly entries: readonly IniEntry[];
}

/** Parses nova.conf-style text; throws ReconcileError('config') "<path>:<line>: ...". */
export function parseIni(text: string, path: string): ParsedIni {
  const sections: string[] = [];
  const entries: IniEntry[] = [];
  let section: string | undefined;
  let pending: { key: string; values: string[]; line: number } | undefined;

  const fail = (line: number, what: string): never => {
    throw new ReconcileError('config', `${path}:${line}: ${what}`, { hint: `fix line ${line} of ${path}` });
  };
  const flush = (): void => {
    if (pending === undefined) return;
    // cfg.ConfigParser.assignment: the section check happens when the value is complete.
    if (section === undefined) fail(pending.line, 'a key appears before any [section] header (section must be started before assignment)');
    entries.push({ section: section ?? '', key: pending.key, value: pending.values.join('\n'), line: pending.line });
    pending = undefined;
  };

  // Python's universal newlines; a UTF-8 byte order mark is tolerated.
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();

  lines.forEach((raw, index) => {
    const lineno = index + 1;
    const line = raw.trimEnd();
    if (line === '') {
      flush();
      return;
    }
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (pending === undefined) fail(lineno, 'unexpected continuation line (it starts with whitespace but no key precedes it)');
      pending?.values.push(line.trimStart());
      return;
    }
    flush();
    if (line.startsWith('[')) {
      if (!line.endsWith(']')) fail(lineno, 'invalid section header (must end with "]")');
      if (line.length <= 2) fail(lineno, 'empty section name');
      section = line.slice(1, -1);
      if (!sections.includes(section)) sections.push(section);
      return;
    }
    if (line.startsWith('#') || line.startsWith(';')) return;
    pending = splitKeyValue(line, lineno, fail);
  });
  flush();

  return Object.freeze({ path, sections: Object.freeze(sections), entries: Object.freeze(entries) });
}

function splitKeyValue(line: string, lineno: number, fail: (line: number, what: string) => never): { key: string; values: string[]; line: number } {
  const colon = line.indexOf(':');
  const equal = line.indexOf('=');
  if (colon < 0 && equal < 0) fail(lineno, 'no "=" or ":" in this line (expected key = value)');
  const at = colon < 0 || (equal >= 0 && equal < colon) ? equal : colon;
  const key = line.slice(0, at).trim();
  let value = line.slice(at + 1).trim();
  if (value !== '' && value[0] === value[value.length - 1] && (value[0] === '"' || value[0] === "'")) value = value.slice(1, -1);
  if (key === '') fail(lineno, 'key cannot be empty');
  return { key, values: [value], line: lineno };
}
