// The repository as a user gets it: HEAD exported with `git archive` into a
// fresh temporary folder that holds nothing else, so that anything a build or
// a test would read from beside the checkout (../shared, a developer's home)
// is simply not there. Also: running npm in it with only its own options.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout these tests run in. */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cmd: string, args: readonly string[], opts: SpawnSyncOptions & { timeoutMs?: number } = {}): Run {
  const r = spawnSync(cmd, [...args], { encoding: 'utf8', timeout: opts.timeoutMs ?? 300_000, maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error !== undefined) throw r.error;
  return { code: r.status ?? (r.signal === null ? 255 : 128), stdout: String(r.stdout), stderr: String(r.stderr) };
}

/**
 * `npm test` exports npm_config_*, npm_lifecycle_* and npm_package_* to its
 * children; a child npm would take them as its own options (a prefix, an
 * omit list...). Strip them so the child sees what an operator's shell has.
 */
export function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return { ...env, ...extra };
}

export interface Export {
  /** The temporary folder: it holds only `repo`. */
  readonly root: string;
  readonly repo: string;
}

/** HEAD of the checkout, exported into <tmp>/nova-reconcile. */
export function exportHead(prefix: string): Export {
  const root = mkdtempSync(join(tmpdir(), `nova-reconcile-${prefix}-`));
  const repo = join(root, 'nova-reconcile');
  mkdirSync(repo);
  const archive = spawnSync('git', ['-C', REPO, 'archive', '--format=tar', 'HEAD'], { maxBuffer: 512 * 1024 * 1024 });
  if (archive.status !== 0) throw new Error(`git archive HEAD failed in ${REPO}: ${String(archive.stderr)}`);
  const untar = spawnSync('tar', ['-x', '-C', repo], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar -x failed: ${String(untar.stderr)}`);
  return { root, repo };
}

/**
 * The export gets the checkout's installed dependencies through a symlink
 * inside itself (a fresh `npm ci` would compile better-sqlite3 for minutes);
 * nothing beside the export is involved.
 */
export function linkNodeModules(repo: string): void {
  symlinkSync(realpathSync(join(REPO, 'node_modules')), join(repo, 'node_modules'));
}
