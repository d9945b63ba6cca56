// oslo.config's default search (cfg.find_config_files / find_config_dirs)
// for project "nova" and prog "nova-manage": at most one nova.conf and one
// nova-manage.conf, each from the first of ~/.nova/, ~/, /etc/nova/, /etc/
// where it exists; the same for the nova.conf.d and nova-manage.conf.d
// directories. (The $SNAP locations are left out: Nova is not shipped as a snap.)

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigSource } from './types.js';

const BASENAMES = ['nova', 'nova-manage'] as const;

/** The directories searched, in order. */
export function defaultSearchRoots(home: string): readonly string[] {
  return [join(home, '.nova'), home, '/etc/nova', '/etc'];
}

export interface DefaultConfigSources {
  /** Used when no --config-file is given. */
  readonly files: readonly ConfigSource[];
  /** Used when no --config-dir is given; only those that exist. */
  readonly dirs: readonly ConfigSource[];
}

/** Finds the default files and directories; `exists` is os.path.exists. */
export function findDefaultConfigSources(roots: readonly string[], exists: (path: string) => boolean = existsSync): DefaultConfigSources {
  const first = (name: string): string | undefined => roots.map((root) => join(root, name)).find((path) => exists(path));
  const files = BASENAMES.map((base) => first(`${base}.conf`)).filter((p): p is string => p !== undefined);
  const dirs = BASENAMES.map((base) => first(`${base}.conf.d`)).filter((p): p is string => p !== undefined);
  return {
    files: files.map((path) => ({ kind: 'file', path })),
    dirs: dirs.map((path) => ({ kind: 'dir', path })),
  };
}
