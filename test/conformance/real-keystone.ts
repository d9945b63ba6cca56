// Conformance-tier harness around the real Keystone 22 (Zed; Debian 12's
// python3-keystone): its own scratch MariaDB database (keystone-manage
// db_sync), fernet keys, `keystone-manage bootstrap`, served on 127.0.0.1 by
// wsgiref (single-threaded is enough for one client), started only while the
// tests that need it run.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabases, type ScratchDatabases } from '../helpers/mysql.js';
import { freePort } from '../helpers/ports.js';

const PYTHON = process.env['NRC_NOVA_PYTHON'] ?? '/usr/bin/python3';

export function realKeystoneMissing(): string | undefined {
  const r = spawnSync(PYTHON, ['-c', 'import keystone.cmd.manage, keystone.server.wsgi'], { encoding: 'utf8' });
  return r.status === 0 ? undefined : `${PYTHON} cannot import keystone (run scripts/install-real-ironic.sh)`;
}

export interface RealKeystone {
  /** http://127.0.0.1:PORT/v3 */
  readonly authUrl: string;
  readonly adminPassword: string;
  /** Registers Ironic in the catalog: service type baremetal, internal endpoint `url`, public endpoint elsewhere. */
  registerIronic(url: string): Promise<void>;
  /** An application credential of the admin user. */
  createApplicationCredential(): Promise<{ id: string; secret: string }>;
  destroy(): Promise<void>;
}

export async function startRealKeystone(): Promise<RealKeystone> {
  const dir = mkdtempSync(join(tmpdir(), 'nrc-keystone-'));
  const dbs: ScratchDatabases = await createScratchDatabases('keystone', ['keystone'], { keystone: 'utf8mb3' });
  const port = await freePort();
  const conf = join(dir, 'keystone.conf');
  for (const d of ['fernet-keys', 'credential-keys']) mkdirSync(join(dir, d), { mode: 0o700 });
  writeFileSync(
    conf,
    [
      '[DEFAULT]',
      'use_stderr = false',
      `log_file = ${join(dir, 'keystone.log')}`,
      '[database]',
      `connection = ${dbs.url('keystone')}`,
      '[fernet_tokens]',
      `key_repository = ${join(dir, 'fernet-keys')}`,
      '[fernet_receipts]',
      `key_repository = ${join(dir, 'fernet-keys')}`,
      '[credential]',
      `key_repository = ${join(dir, 'credential-keys')}`,
      '',
    ].join('\n'),
  );
  const adminPassword = 'Adm1n-keystone-s3cret';
  const authUrl = `http://127.0.0.1:${port}/v3`;
  const manage = (...args: string[]): void => {
    execFileSync(PYTHON, ['-c', `import sys; sys.argv=['keystone-manage','--config-file',${JSON.stringify(conf)}]+${JSON.stringify(args)}; from keystone.cmd.manage import main; main()`], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 300_000,
    });
  };
  let proc: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    const p = proc;
    proc = undefined;
    if (p === undefined || p.exitCode !== null || p.pid === undefined) return;
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    try {
      process.kill(-p.pid, 'SIGTERM');
    } catch {
      return;
    }
    await exited;
  };
  try {
    manage('db_sync');
    const user = String(process.getuid?.() ?? 0);
    const group = String(process.getgid?.() ?? 0);
    manage('fernet_setup', '--keystone-user', user, '--keystone-group', group);
    manage('credential_setup', '--keystone-user', user, '--keystone-group', group);
    manage('bootstrap', '--bootstrap-password', adminPassword, '--bootstrap-admin-url', authUrl, '--bootstrap-public-url', authUrl, '--bootstrap-internal-url', authUrl, '--bootstrap-region-id', 'RegionOne');
    proc = spawn(
      PYTHON,
      ['-c', `from keystone.server.wsgi import initialize_public_application as f; app = f(); from wsgiref.simple_server import make_server, WSGIRequestHandler; WSGIRequestHandler.log_message = lambda *a: None; make_server('127.0.0.1', ${port}, app).serve_forever()`],
      { detached: true, stdio: 'ignore', env: { ...process.env, OS_KEYSTONE_CONFIG_FILES: conf } },
    );
    let up = false;
    for (let i = 0; i < 300 && !up; i++) {
      try {
        up = (await fetch(`${authUrl}`, { signal: AbortSignal.timeout(1_000) })).status === 200;
      } catch {
        if (proc.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (!up) throw new Error(`keystone did not start on ${authUrl} (see ${join(dir, 'keystone.log')})`);
  } catch (err) {
    await stop();
    await dbs.drop();
    throw err;
  }

  const adminToken = async (): Promise<{ token: string; userId: string }> => {
    const res = await fetch(`${authUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: { methods: ['password'], password: { user: { name: 'admin', domain: { name: 'Default' }, password: adminPassword } } },
          scope: { project: { name: 'admin', domain: { name: 'Default' } } },
        },
      }),
    });
    const doc = (await res.json()) as { token: { user: { id: string } } };
    return { token: res.headers.get('x-subject-token') ?? '', userId: doc.token.user.id };
  };
  const post = async (path: string, body: unknown): Promise<Record<string, Record<string, string>>> => {
    const { token } = await adminToken();
    const res = await fetch(`${authUrl}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Auth-Token': token }, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`keystone POST ${path}: HTTP ${res.status}`);
    return (await res.json()) as Record<string, Record<string, string>>;
  };
  return {
    authUrl,
    adminPassword,
    async registerIronic(url) {
      const service = (await post('/services', { service: { type: 'baremetal', name: 'ironic' } }))['service'] as Record<string, string>;
      await post('/endpoints', { endpoint: { service_id: service['id'], interface: 'internal', region_id: 'RegionOne', url } });
      // The public one points nowhere: valid_interfaces' order must pick internal first.
      await post('/endpoints', { endpoint: { service_id: service['id'], interface: 'public', region_id: 'RegionOne', url: 'http://192.0.2.1:6385' } });
    },
    async createApplicationCredential() {
      const { userId } = await adminToken();
      const cred = (await post(`/users/${userId}/application_credentials`, { application_credential: { name: `nrc-${Date.now()}` } }))['application_credential'] as Record<string, string>;
      return { id: cred['id'] as string, secret: cred['secret'] as string };
    },
    async destroy() {
      await stop();
      await dbs.drop();
      if (process.env['NRC_KEEP_IRONIC'] === '1') console.warn(`real Keystone files kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}
