// Run the built binary and send it a signal once its journal holds a number
// of lines: an interrupt in the middle of the writes, whatever the speed of
// the machine.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { BIN, assertBuilt } from './cli.js';

export interface Interrupted {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the command and sends `sig` once its journal holds `atLines` lines. */
export function runAndSignal(argv: readonly string[], journal: string, atLines: number, sig: NodeJS.Signals): Promise<Interrupted> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    let sent = false;
    const poll = setInterval(() => {
      if (sent || !existsSync(journal)) return;
      const lines = readFileSync(journal, 'utf8').split('\n').length - 1;
      if (lines >= atLines) {
        sent = child.kill(sig);
        clearInterval(poll);
      }
    }, 2);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
