// Conformance-tier harness around the real Ironic 21.4 (Debian 12's
// python3-ironic, installed by scripts/install-real-ironic.sh): its own
// scratch MariaDB database built by the real ironic-dbsync, nodes written by
// Ironic's object layer (ironic-nodes.py), and ironic-api served on
// 127.0.0.1 with auth_strategy=noauth (or keystone, validating tokens against
// a real Keystone: createRealIronic(keystone)), started only for the tests that need
// it and stopped after (the machine is shared).
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createScratchDatabases, type ScratchDatabases } from '../helpers/mysql.js';
import { freePort } from '../helpers/ports.js';

const PYTHON = process.env['NRC_NOVA_PYTHON'] ?? '/usr/bin/python3';
const NODES_SCRIPT = fileURLToPath(new URL('./ironic-nodes.py', import.meta.url));

/** Why the real Ironic cannot run here, or undefined when it can. */
export function realIronicMissing(): string | undefined {
  const r = spawnSync(PYTHON, ['-c', 'import ironic.cmd.api, ironic.cmd.dbsync, ironic.objects, pymysql'], { encoding: 'utf8' });
  return r.status === 0 ? undefined : `${PYTHON} cannot import ironic (run scripts/install-real-ironic.sh)`;
}

export interface IronicNodeSpec {
  readonly uuid: string;
  readonly provision_state?: string;
  readonly maintenance?: boolean;
  readonly conductor_group?: string;
  readonly instance_uuid?: string;
}

export interface RealIronic {
  /** http://127.0.0.1:PORT, the API root. */
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  write(commands: { create?: IronicNodeSpec[]; bulk?: { count: number; prefix: string }; delete?: string[]; update?: Array<Record<string, unknown>> }): void;
  destroy(): Promise<void>;
}

/** A Keystone that ironic-api validates tokens against (keystonemiddleware's auth_token, as a real deployment runs it). */
export interface IronicKeystone {
  /** http://HOST:PORT/v3 */
  readonly authUrl: string;
  /** Ironic's own service user, with which the middleware validates the tokens it is sent. */
  readonly username: string;
  readonly password: string;
  readonly projectName: string;
}

export async function createRealIronic(keystone?: IronicKeystone): Promise<RealIronic> {
  const dir = mkdtempSync(join(tmpdir(), 'nrc-ironic-'));
  const dbs: ScratchDatabases = await createScratchDatabases('ironic', ['ironic'], { ironic: 'utf8mb3' });
  const port = await freePort();
  const conf = join(dir, 'ironic.conf');
  const auth =
    keystone === undefined
      ? ['[DEFAULT]', 'auth_strategy = noauth']
      : [
          '[keystone_authtoken]',
          `www_authenticate_uri = ${keystone.authUrl}`,
          `auth_url = ${keystone.authUrl}`,
          'auth_type = password',
          `username = ${keystone.username}`,
          `password = ${keystone.password}`,
          `project_name = ${keystone.projectName}`,
          'user_domain_name = Default',
          'project_domain_name = Default',
          '[DEFAULT]',
          'auth_strategy = keystone',
        ];
  writeFileSync(
    conf,
    [
      ...auth,
      'rpc_transport = json-rpc',
      'enabled_hardware_types = fake-hardware',
      'enabled_power_interfaces = fake',
      'enabled_management_interfaces = fake',
      'use_stderr = false',
      `log_file = ${join(dir, 'ironic.log')}`,
      '[database]',
      `connection = ${dbs.url('ironic').replace(/^mysql:/, 'mysql+pymysql:')}`,
      '[api]',
      'host_ip = 127.0.0.1',
      `port = ${port}`,
      'api_workers = 1',
      '',
    ].join('\n'),
  );
  execFileSync(PYTHON, ['-c', `import sys; sys.argv=['ironic-dbsync','--config-file',${JSON.stringify(conf)},'create_schema']; from ironic.cmd.dbsync import main; main()`], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 180_000 });
  let proc: ChildProcess | undefined;
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    const p = proc;
    proc = undefined;
    if (p === undefined || p.exitCode !== null || p.pid === undefined) return;
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    // The process group: ironic-api forks its workers.
    try {
      process.kill(-p.pid, 'SIGTERM');
    } catch {
      return;
    }
    const killer = setTimeout(() => {
      try {
        if (p.pid !== undefined) process.kill(-p.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 5_000);
    await exited;
    clearTimeout(killer);
    // Workers may outlive the parent for a moment: wait until the port is closed.
    for (let i = 0; i < 50 && (await answers(url)); i++) await new Promise((r) => setTimeout(r, 100));
  };
  return {
    url,
    port,
    async start() {
      if (proc !== undefined) return;
      proc = spawn(PYTHON, ['-c', `import sys; sys.argv=['ironic-api','--config-file',${JSON.stringify(conf)}]; from ironic.cmd.api import main; main()`], { detached: true, stdio: 'ignore' });
      for (let i = 0; i < 300; i++) {
        if (await answers(url)) return;
        if (proc.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await stop();
      throw new Error(`ironic-api did not start on ${url} (see ${join(dir, 'ironic.log')})`);
    },
    stop,
    write(commands) {
      execFileSync(PYTHON, [NODES_SCRIPT, conf], { input: JSON.stringify(commands), stdio: ['pipe', 'ignore', 'pipe'], timeout: 300_000 });
    },
    async destroy() {
      await stop();
      await dbs.drop();
      // NRC_KEEP_IRONIC=1 keeps ironic.conf and ironic.log for a look after a failure.
      if (process.env['NRC_KEEP_IRONIC'] === '1') console.warn(`real Ironic files kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}
