// Run the BUILT binary (bin/nova-reconcile -> dist/src/bundle/nova-reconcile.mjs) as a real
// process and capture stdout, stderr and the exit code. `npm test` builds first.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/nova-reconcile', import.meta.url));
const MAIN = fileURLToPath(new URL('../../dist/src/bundle/nova-reconcile.mjs', import.meta.url));

export interface CliResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
  readonly ms: number;
}

export function assertBuilt(): void {
  if (!existsSync(MAIN)) throw new Error('dist/src/bundle/nova-reconcile.mjs is missing: run `npm run build` (npm test does it first)');
}

export async function runBin(args: readonly string[], opts: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  assertBuilt();
  const started = Date.now();
  // A clean environment: no OS_* overrides leak in from the developer's shell.
  const baseEnv: Record<string, string | undefined> = { PATH: process.env['PATH'], HOME: opts.env?.['HOME'] ?? '/nonexistent-home' };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? process.cwd(), env: { ...baseEnv, ...opts.env } as NodeJS.ProcessEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code: code ?? (signal === 'SIGKILL' ? 137 : 255), ms: Date.now() - started });
    });
  });
}
