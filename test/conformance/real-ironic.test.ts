// The Ironic API source against the real Ironic 21.4 (Debian 12's
// python3-ironic): ironic-api over its own MariaDB database built by the
// real ironic-dbsync, auth_strategy=noauth, nodes written by Ironic's object
// layer. Nova's side is a MariaDB test deployment (deleted-ironic-node).
// The second suite puts the real Keystone 22 in front: password, application
// credential, a wrong password; ironic-api runs there with
// auth_strategy = keystone, so keystonemiddleware validates every token the
// tool sends against that Keystone, as in a real deployment.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { runBin } from '../helpers/cli.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { describeRequired } from '../helpers/mysql.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { addIronicNode } from '../../src/sandbox/builders.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { DELETED_IRONIC_NODE } from '../../src/sandbox/scenarios/deleted-ironic-node.js';
import { createRealIronic, realIronicMissing, type RealIronic } from './real-ironic.js';
import { realKeystoneMissing, startRealKeystone, type RealKeystone } from './real-keystone.js';

const S = DELETED_IRONIC_NODE;
const MAINT = 'b0000000-0000-4000-8000-00000000000a';
const CLEANING = 'b0000000-0000-4000-8000-00000000000b';
const ENROLL = 'b0000000-0000-4000-8000-00000000000c';
const BULK = 2_000;

interface Doc {
  findings: Array<{ kind: string; objects: Record<string, unknown>; summary: string }>;
  ironic_source: { kind: string; location: string; nodes: number };
}

describeRequired('real Ironic', realIronicMissing(), 'the Ironic API source against the real ironic-api 21.4', () => {
  let ironic: RealIronic;
  let d: TestDeployment;

  beforeAll(async () => {
    ironic = await createRealIronic();
    d = await createTestDeployment('mysql', 'deleted-ironic-node', 'ri');
    // Nova knows three more ironic nodes of ironic-compute-0: in maintenance, cleaning and enroll in Ironic.
    const clock = scenarioClock();
    for (const nodeUuid of [MAINT, CLEANING, ENROLL]) await addIronicNode(d.knex('cell1'), d.knex('placement'), { nodeUuid, host: S.host, resourceClass: S.resourceClass, clock });
    ironic.write({
      create: [
        { uuid: S.healthyNodeUuid, provision_state: 'active', instance_uuid: S.server.uuid },
        { uuid: S.goneNodeUuid, provision_state: 'available' },
        { uuid: MAINT, provision_state: 'available', maintenance: true },
        { uuid: CLEANING, provision_state: 'clean wait' },
        { uuid: ENROLL, provision_state: 'enroll' },
      ],
      // Nodes Nova does not know: the listing must page through them all.
      bulk: { count: BULK, prefix: 'c0000000-0000-4000-8000-' },
    });
    // Deleted in Ironic: its compute node and provider remain in Nova.
    ironic.write({ delete: [S.goneNodeUuid] });
    appendFileSync(d.confPath, ['[ironic]', 'auth_type = none', `endpoint_override = ${ironic.url}`, 'api_max_retries = 1', 'api_retry_interval = 0', ''].join('\n'));
    await ironic.start();
  });
  afterAll(async () => {
    await ironic?.destroy();
    await d?.cleanup();
  });

  const audit = async (): Promise<Doc> => {
    const r = await runBin([...d.args, 'audit', '--format', 'json', '--verbose']);
    if (r.code !== 3) throw new Error(`audit exited ${r.code}: ${r.stdout} ${r.stderr}`);
    // 2,004 nodes in pages of Ironic's max_limit (1000): three pages.
    expect(r.stderr).toContain(`read ${BULK + 4} ironic node(s) from ${ironic.url} (3 page(s))`);
    return JSON.parse(r.stdout) as Doc;
  };

  it('a node deleted in Ironic is an orphan; maintenance, cleaning and enroll nodes are not; all 2,004 nodes are read', async () => {
    const doc = await audit();
    expect(doc.ironic_source).toEqual({ kind: 'api', location: ironic.url, nodes: BULK + 4 });
    const ironicFindings = doc.findings.filter((f) => f.kind.startsWith('orphan-node-ironic') || f.kind === 'ironic-node-unmanaged' || f.kind === 'suspect-orphan-node');
    expect(ironicFindings.map((f) => [f.kind, f.objects['node_uuid']])).toEqual([['orphan-node-ironic-deleted', S.goneNodeUuid]]);
  });

  it('a node moved to a conductor group no nova-compute serves is unmanaged, not deleted; cleanup_orphans removes it and the gone node only', async () => {
    ironic.write({ update: [{ uuid: CLEANING, conductor_group: 'cg-x' }] });
    // ironic-compute-0 serves the default group "" only.
    appendFileSync(d.confPath, ['[nova_reconcile]', `ironic_partitions = : ${S.host}`, ''].join('\n'));
    const doc = await audit();
    const unmanaged = doc.findings.filter((f) => f.kind === 'ironic-node-unmanaged');
    expect(unmanaged.map((f) => [f.objects['node_uuid'], f.objects['conductor_group']])).toEqual([[CLEANING, 'cg-x']]);
    expect(unmanaged[0]?.summary).toContain('unmanaged, not deleted');

    const applied = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--format', 'json']);
    expect(applied.code, applied.stderr).toBe(4);
    const live = (await d.knex('cell1')('compute_nodes').where('deleted', 0).whereNotNull('hypervisor_hostname').select('hypervisor_hostname')) as Array<{ hypervisor_hostname: string }>;
    const names = live.map((n) => n.hypervisor_hostname);
    expect(names).not.toContain(S.goneNodeUuid);
    expect(names).not.toContain(CLEANING);
    for (const kept of [S.healthyNodeUuid, MAINT, ENROLL]) expect(names).toContain(kept);
  });

  it('ironic-api stopped mid-listing: exit 2, one line, nothing changed', async () => {
    // A proxy in front of ironic-api stops the real ironic-api when the second page is asked for.
    let pages = 0;
    const upstream = new URL(ironic.url);
    const proxy: Server = createServer((req, res) => {
      void (async () => {
        if ((req.url ?? '').startsWith('/v1/nodes') && ++pages === 2) await ironic.stop();
        const fwd = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        });
        fwd.on('error', () => res.socket?.destroy());
        req.pipe(fwd);
      })();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      appendFileSync(d.confPath, ['[ironic]', `endpoint_override = ${proxyUrl}`, ''].join('\n'));
      // Something to do, so that a listing taken as complete would change rows.
      ironic.write({ delete: [MAINT] });
      const before = await snapshotDeployment(d);
      const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`^nova-reconcile: error: cannot list the ironic nodes from the Ironic API at ${proxyUrl}: .* after 1000 node\\(s\\); without the complete list no node is judged, and nothing was changed`));
      expect(await snapshotDeployment(d)).toEqual(before);
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});

describeRequired('real Keystone', realIronicMissing() ?? realKeystoneMissing(), 'the Ironic API source behind the real Keystone 22', () => {
  let ironic: RealIronic;
  let keystone: RealKeystone;
  let d: TestDeployment;
  const password = (pw: string): string[] => [
    '[ironic]',
    'auth_type = password',
    `auth_url = ${keystone.authUrl}`,
    'username = admin',
    `password = ${pw}`,
    'project_name = admin',
    'user_domain_name = Default',
    'project_domain_name = Default',
    'region_name = RegionOne',
    'valid_interfaces = internal,public',
    'api_max_retries = 0',
    '',
  ];

  beforeAll(async () => {
    keystone = await startRealKeystone();
    // ironic-api validates every token with keystonemiddleware (the admin user as its service user).
    ironic = await createRealIronic({ authUrl: keystone.authUrl, username: 'admin', password: keystone.adminPassword, projectName: 'admin' });
    await keystone.registerIronic(ironic.url);
    d = await createTestDeployment('mysql', 'deleted-ironic-node', 'rk');
    ironic.write({ create: [{ uuid: S.healthyNodeUuid, provision_state: 'active', instance_uuid: S.server.uuid }] });
    await ironic.start();
  });
  afterAll(async () => {
    await ironic?.destroy();
    await keystone?.destroy();
    await d?.cleanup();
  });

  it('password: the token and the baremetal endpoint of the real catalog (internal before public)', async () => {
    // ironic-api refuses a request without a token: what it answers the tool below, it answers a validated token.
    const anonymous = await fetch(`${ironic.url}/v1/nodes`, { headers: { 'X-OpenStack-Ironic-API-Version': '1.46' } });
    expect(anonymous.status).toBe(401);
    writeFileSync(d.confPath, readFileSync(d.confPath, 'utf8') + password(keystone.adminPassword).join('\n'));
    const r = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(r.code, r.stdout).toBe(3);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.ironic_source).toEqual({ kind: 'api', location: ironic.url, nodes: 1 });
    expect(doc.findings.filter((f) => f.kind === 'orphan-node-ironic-deleted').map((f) => f.objects['node_uuid'])).toEqual([S.goneNodeUuid]);
    expect(r.stdout + r.stderr).not.toContain(keystone.adminPassword);
  });

  it('a wrong password is one line, exit 2, no secret, nothing changed', async () => {
    const conf = readFileSync(d.confPath, 'utf8');
    writeFileSync(d.confPath, conf + password('Wr0ng-s3cret').join('\n'));
    const before = await snapshotDeployment(d);
    const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']);
    writeFileSync(d.confPath, conf);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `nova-reconcile: error: Keystone at ${new URL(keystone.authUrl).origin} refused the [ironic] credentials (HTTP 401, auth_type password); nothing was changed (check [ironic] username, password, project and domains (or the application credential) in nova.conf)\n`,
    );
    expect(r.stderr).not.toContain('Wr0ng-s3cret');
    expect(r.stderr).not.toContain(keystone.adminPassword);
    expect(await snapshotDeployment(d)).toEqual(before);
  });

  it('an application credential', async () => {
    const cred = await keystone.createApplicationCredential();
    writeFileSync(
      d.confPath,
      readFileSync(d.confPath, 'utf8') +
        ['[ironic]', 'auth_type = v3applicationcredential', `auth_url = ${keystone.authUrl}`, `application_credential_id = ${cred.id}`, `application_credential_secret = ${cred.secret}`, ''].join('\n'),
    );
    const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--format', 'json']);
    expect(r.code, r.stdout).toBe(3);
    expect((JSON.parse(r.stdout) as Doc).ironic_source).toEqual({ kind: 'api', location: ironic.url, nodes: 1 });
    expect(r.stdout + r.stderr).not.toContain(cred.secret);
  });
});
