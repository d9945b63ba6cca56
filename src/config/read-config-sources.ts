// Reads --config-file and --config-dir sources in command-line order, as
// oslo.config's ConfigFileAction / _ConfigDirOpt.ConfigDirAction do while
// argparse walks argv: a directory's `*.conf` files (sorted by name, dotfiles
// excluded as glob excludes them) are parsed at the directory's position.
//
// Missing files are collected and reported together at the end, like
// ConfigFilesNotFoundError; any other problem stops at once.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ReconcileError } from '../errors.js';
import { describeFileError, readTextFile } from '../files.js';
import { parseIni, type ParsedIni } from './ini-parser.js';
import type { ConfigSource } from './types.js';

export interface ReadOptions {
  /** A missing default directory is skipped; a missing --config-dir is an error. */
  readonly optional?: boolean;
}

/** Parses every file of `sources`, in order. */
export function readConfigSources(sources: readonly ConfigSource[], home: string, options: ReadOptions = {}): readonly ParsedIni[] {
  const parsed: ParsedIni[] = [];
  const missing: string[] = [];
  for (const source of sources) {
    const path = expandHome(source.path, home);
    if (source.kind === 'file') {
      const file = readConfigFile(path, missing);
      if (file !== undefined) parsed.push(file);
      continue;
    }
    for (const filePath of listConfigDir(path, options.optional === true)) {
      const file = readConfigFile(filePath, missing);
      if (file !== undefined) parsed.push(file);
    }
  }
  if (missing.length > 0) {
    const message = missing.length === 1 ? `config file ${missing[0]} not found` : `config files ${missing.join(', ')} not found`;
    throw new ReconcileError('config', message, { hint: 'check the --config-file paths' });
  }
  return parsed;
}

function readConfigFile(path: string, missing: string[]): ParsedIni | undefined {
  let text: string;
  try {
    text = readTextFile(path);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      missing.push(path);
      return undefined;
    }
    if (code === 'EISDIR') {
      throw new ReconcileError('config', `config file ${path} is a directory`, { hint: `use --config-dir ${path} to read the *.conf files in it`, cause: err });
    }
    throw new ReconcileError('config', `cannot read config file ${path}: ${describeIoError(err)}`, {
      hint: code === 'EFBIG' ? `${path} is not a nova.conf` : `check the permissions of ${path}`,
      cause: err,
    });
  }
  return parseIni(text, path);
}

function listConfigDir(dir: string, optional: boolean): readonly string[] {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) {
      // oslo.config globs "<file>/*.conf" and finds nothing; for an explicit
      // --config-dir that silence hides a typo, so say so.
      if (optional) return [];
      throw new ReconcileError('config', `config directory ${dir} is not a directory`, { hint: `use --config-file ${dir} for a single file` });
    }
    names = readdirSync(dir);
  } catch (err) {
    if (err instanceof ReconcileError) throw err;
    if (optional && errorCode(err) === 'ENOENT') return [];
    if (errorCode(err) === 'ENOENT') {
      // oslo.config: ConfigDirNotFoundError "Failed to read config file directory".
      throw new ReconcileError('config', `config directory ${dir} not found`, { hint: 'check the --config-dir path', cause: err });
    }
    throw new ReconcileError('config', `cannot read config directory ${dir}: ${describeIoError(err)}`, { hint: `check the permissions of ${dir}`, cause: err });
  }
  return names
    .filter((name) => name.endsWith('.conf') && !name.startsWith('.'))
    .sort()
    .map((name) => join(dir, name));
}

// os.path.expanduser for "~" and "~/..." (oslo.config expands both options).
function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const code = (err as { code: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function describeIoError(err: unknown): string {
  return describeFileError(err);
}
