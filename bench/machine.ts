// What the figures were measured on: they mean little without it.
import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import type { Knex } from 'knex';
import type { NovaInstall } from './processes.js';

/** @param novaNotLooked true with --nova-manage never: nova-manage was not looked for, so its absence says nothing. */
export async function describeMachine(admin: Knex, nova: NovaInstall | undefined, repoRoot: string, novaNotLooked = false): Promise<string[]> {
  const version = (await admin.raw('SELECT VERSION() AS v')) as unknown as [{ v: string }[], unknown];
  const model = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return [
    `CPU: ${availableParallelism()} (nproc), ${model}`,
    `Memory: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `MariaDB: ${version[0][0]?.v ?? 'unknown'}`,
    `Node: ${process.version}`,
    `nova-manage: ${nova !== undefined ? `Nova ${nova.version} (${nova.python})` : novaNotLooked ? 'not looked for (--nova-manage never)' : 'not installed (python3-nova not importable)'}`,
    `nova-reconcile: ${gitDescription(repoRoot)}`,
    `Load average at the start: ${formatLoad()} (other work on the machine inflates every figure, nova-manage's most)`,
  ];
}

export function formatLoad(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
}

/** A warning when the machine is already busy: the figures will be inflated. */
export function busyWarning(): string | undefined {
  const [oneMinute = 0] = loadavg();
  const cpus = availableParallelism();
  return oneMinute > cpus * 0.75
    ? `the machine is busy (load average ${oneMinute.toFixed(2)} on ${cpus} CPUs): timings will be inflated; a quiet machine gives truer figures`
    : undefined;
}

function gitDescription(repoRoot: string): string {
  try {
    const head = execFileSync('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['-C', repoRoot, 'status', '--porcelain', '--', 'src', 'migrations'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return `commit ${head}${dirty === '' ? '' : ' plus uncommitted changes in src/ or migrations/'} (built dist/)`;
  } catch {
    return 'not a git checkout';
  }
}
