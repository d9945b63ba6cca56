// The clients tier (npm run test:clients): the real ansible-core, Puppet,
// systemd and Prometheus of Debian 12 (scripts/install-clients.sh) run the
// files in contrib/ and the automation examples of docs/operations/. Shared here: the
// tools' presence, a scratch folder per test file, and running a client.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeRequired } from '../helpers/mysql.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const BIN_DIR = join(REPO, 'bin');
export const CONTRIB = join(REPO, 'contrib');

/** PATH with the checkout's bin/ first: `nova-reconcile` as an installed one is found. */
export const CLIENT_PATH = `${BIN_DIR}:/usr/local/bin:/usr/bin:/bin`;

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run a client to its end; stdin is closed, and the child gets only `env` (plus nothing inherited). */
export function runClient(cmd: string, args: readonly string[], opts: { env: Record<string, string>; cwd?: string; timeoutMs?: number; input?: string }): Run {
  const r = spawnSync(cmd, [...args], {
    cwd: opts.cwd ?? REPO,
    env: opts.env,
    encoding: 'utf8',
    input: opts.input ?? '',
    timeout: opts.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error !== undefined) throw r.error;
  return { code: r.status ?? 128, stdout: String(r.stdout), stderr: String(r.stderr) };
}

function missingTools(tools: readonly string[]): string | undefined {
  const missing = tools.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`], { encoding: 'utf8' }).status !== 0);
  return missing.length === 0 ? undefined : `${missing.join(', ')} not installed (run scripts/install-clients.sh)`;
}

/** A suite that needs these programs: a failure in CI when one is missing, else skipped loudly. */
export function describeWithTools(tools: readonly string[], name: string, fn: () => void): void {
  describeRequired('clients', missingTools(tools), name, fn);
}

/** A scratch folder under the system's temporary folder, removed by the returned function. */
export function scratch(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `nova-reconcile-clients-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO, path), 'utf8');
}

/** The fenced code blocks of a Markdown text, with their info string. */
export function fencedBlocks(markdown: string): Array<{ lang: string; body: string }> {
  const blocks: Array<{ lang: string; body: string }> = [];
  const re = /^```([^\n`]*)\n([\s\S]*?)^```$/gm;
  for (const m of markdown.matchAll(re)) blocks.push({ lang: (m[1] ?? '').trim(), body: m[2] ?? '' });
  return blocks;
}

/** The automation pages: docs/operations/automation.md, then monitoring.md (Prometheus). */
export function automationSection(): string {
  return AUTOMATION_PAGES.map(readRepoFile).join('\n');
}

export const AUTOMATION_PAGES = ['docs/operations/automation.md', 'docs/operations/monitoring.md'] as const;
