// The real nova-manage with its Placement client on an in-process
// Placement 8.0.0. Nova's placement commands talk to the Placement REST API,
// which this machine does not run; so the report client's keystoneauth
// adapter is swapped for one that calls Placement's own WSGI application
// (placement.deploy.loadapp) in-process over the same placement database.
// Everything else is the real thing: nova-manage's argument parsing, its
// cell and instance queries, the placement handlers and their SQL. Used by
// the placement audit and heal_allocations conformance tests.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { realNovaVersions, type RealDeployment, type ToolResult } from './real-nova.js';

/**
 * nova-manage with its placement client on an in-process Placement. Eventlet
 * monkey patching (nova.cmd) must come before placement's engine exists, or
 * its locks are the unpatched ones.
 */
const NOVA_ON_PLACEMENT_MAIN =
  readFileSync(new URL('./placement_in_process.py', import.meta.url), 'utf8') +
  String.raw`
import sys
import nova.cmd
sys.argv[0] = 'nova-manage'
conf_path = sys.argv[sys.argv.index('--config-file') + 1]
in_process_report_client(conf_path)
from nova.cmd.manage import main
sys.exit(main())
`;

/** `nova-manage --config-file <the deployment's nova.conf> ...args` with the in-process Placement. */
export function runNovaManageOnPlacement(d: RealDeployment, args: readonly string[]): Promise<ToolResult> {
  const python = realNovaVersions()?.python ?? '/usr/bin/python3';
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', NOVA_ON_PLACEMENT_MAIN, '--config-file', d.confPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code: code ?? 255 });
    });
  });
}
