// The Ironic API as the source of ironic truth, through the built binary,
// against a tiny local HTTP server that answers as Keystone and Ironic do
// (test/helpers/fake-ironic.ts): pagination, fields and microversion, the
// Keystone catalog, and every error path (401, no endpoint, 5xx, a timeout,
// a listing cut part-way) exiting 2 with one line and nothing changed. The
// conformance tier runs the same client against the real ironic-api.
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runBin, type CliResult } from '../helpers/cli.js';
import { snapshotDeployment } from '../helpers/db-checksum.js';
import { resetPages, startFakeIronic, type FakeIronic } from '../helpers/fake-ironic.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { DELETED_IRONIC_NODE } from '../../src/sandbox/scenarios/deleted-ironic-node.js';

const S = DELETED_IRONIC_NODE;
const EXTRA = ['0a000000-0000-4000-8000-000000000001', '0a000000-0000-4000-8000-000000000002', '0a000000-0000-4000-8000-000000000003', '0a000000-0000-4000-8000-000000000004'];

interface Finding {
  kind: string;
  objects: Record<string, unknown>;
  suggestion: string;
}

function kinds(r: CliResult): Array<[string, unknown]> {
  return (JSON.parse(r.stdout) as { findings: Finding[] }).findings.map((f) => [f.kind, f.objects['node_uuid']]);
}

/** The healthy node with its server, and nodes Nova does not know, in maintenance, cleaning and enroll. */
function ironicNodes(): FakeIronic['nodes'] {
  return [
    { uuid: S.healthyNodeUuid, instance_uuid: S.server.uuid, provision_state: 'active' },
    { uuid: EXTRA[0] as string, maintenance: true, provision_state: 'available' },
    { uuid: EXTRA[1] as string, provision_state: 'clean wait' },
    { uuid: EXTRA[2] as string, provision_state: 'enroll' },
    { uuid: EXTRA[3] as string, provision_state: 'available', conductor_group: 'cg-x' },
  ];
}

function configure(d: TestDeployment, lines: readonly string[]): void {
  appendFileSync(d.confPath, ['[ironic]', ...lines, ''].join('\n'));
}

function noSecrets(r: CliResult, fake: FakeIronic): void {
  for (const secret of [fake.keystone.password, fake.keystone.appCredSecret, fake.keystone.token]) {
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  }
}

let fake: FakeIronic;
beforeAll(async () => {
  fake = await startFakeIronic();
});
afterAll(async () => {
  await fake.close();
});
function resetFake(): void {
  fake.nodes = ironicNodes();
  fake.fault = { kind: 'none' };
  fake.pageSize = 2;
  fake.maxVersion = '1.81';
  fake.keystone.catalogHasIronic = true;
  fake.requests.length = 0;
  resetPages(fake);
}

describeEachDialect('the Ironic API as the source of ironic truth', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    resetFake();
    d = await createTestDeployment(dialect, 'deleted-ironic-node', 'ia');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('auth_type = none with endpoint_override: audit pages through the list and names it; cleanup_orphans removes only the gone node', async () => {
    configure(d, ['auth_type = none', `endpoint_override = ${fake.url}/baremetal/`]);
    const r = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(r.code).toBe(3);
    expect(kinds(r)).toEqual([
      ['orphan-node-service-deleted', S.libvirt.nodeUuid],
      ['orphan-node-ironic-deleted', S.goneNodeUuid],
    ]);
    const doc = JSON.parse(r.stdout) as { ironic_source: unknown; findings: Finding[] };
    expect(doc.ironic_source).toEqual({ kind: 'api', location: `${fake.url}/baremetal`, nodes: 5 });
    expect(r.stderr).toBe(`ironic nodes: 5 from the Ironic API at ${fake.url}/baremetal (complete listing)\n`);
    // No --ironic-nodes in the suggestion: the command reads [ironic] itself.
    expect(doc.findings[1]?.suggestion).toBe(`nova-reconcile --config-file ${d.confPath} compute_node cleanup_orphans`);
    // Three pages of two, each asking only for the fields used, at 1.46.
    const pages = fake.requests.filter((q) => q.path.startsWith('/baremetal/v1/nodes'));
    expect(pages).toHaveLength(3);
    for (const p of pages) {
      expect(p.headers['x-openstack-ironic-api-version']).toBe('1.46');
      expect(new URL(p.path, fake.url).searchParams.get('fields')).toBe('uuid,instance_uuid,maintenance,provision_state,conductor_group');
      expect(p.headers['x-auth-token']).toBeUndefined();
    }
    const sorted = fake.nodes.map((n) => n.uuid).sort();
    expect(pages.map((p) => new URL(p.path, fake.url).searchParams.get('marker'))).toEqual([null, sorted[1], sorted[3]]);

    const before = await snapshotDeployment(d);
    const dry = await runBin([...d.args, 'compute_node', 'cleanup_orphans']);
    expect(dry.code).toBe(3);
    expect(dry.stderr).toContain(`ironic nodes: 5 from the Ironic API at ${fake.url}/baremetal (complete listing)`);
    expect(await snapshotDeployment(d)).toEqual(before);
    const applied = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--format', 'json']);
    expect(applied.code).toBe(4);
    expect((JSON.parse(applied.stdout) as { ironic_source: unknown }).ironic_source).toEqual({ kind: 'api', location: `${fake.url}/baremetal`, nodes: 5 });
    const live = (await d.knex('cell1')('compute_nodes').where('deleted', 0).select('uuid')) as Array<{ uuid: string }>;
    expect(live.map((n) => n.uuid).sort()).toEqual([S.healthyNodeUuid].sort());
    expect((await runBin([...d.args, 'compute_node', 'cleanup_orphans'])).code).toBe(0);
  });

  it('a listing cut part-way exits 2 with one line, even with --apply, and changes nothing', async () => {
    configure(d, ['auth_type = none', `endpoint_override = ${fake.url}/baremetal`, 'api_max_retries = 0']);
    fake.fault = { kind: 'cut', onPage: 2 };
    const before = await snapshotDeployment(d);
    const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^nova-reconcile: error: cannot list the ironic nodes from the Ironic API at http:\/\/127\.0\.0\.1:\d+: the connection to http:\/\/127\.0\.0\.1:\d+ was (reset|cut during the response) after 2 node\(s\); without the complete list no node is judged, and nothing was changed/);
    expect(await snapshotDeployment(d)).toEqual(before);
  });
});

describe('the Ironic API: Keystone and error paths (SQLite)', () => {
  let d: TestDeployment;
  beforeEach(async () => {
    resetFake();
    d = await createTestDeployment('sqlite', 'deleted-ironic-node', 'ia');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  const password = (pw: string): string[] => [
    'auth_type = password',
    `auth_url = ${fake.url}/identity/v3`,
    'username = ironic',
    `password = ${pw}`,
    'project_name = service',
    'user_domain_name = Default',
    'project_domain_name = Default',
    'region_name = RegionOne',
    'valid_interfaces = internal,public',
  ];

  it('password: a token from Keystone, the endpoint from its catalog (service type, interface order, region)', async () => {
    configure(d, password(fake.keystone.password));
    const r = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(r.code).toBe(3);
    expect(kinds(r)).toContainEqual(['orphan-node-ironic-deleted', S.goneNodeUuid]);
    const tokenReq = fake.requests.find((q) => q.path === '/identity/v3/auth/tokens');
    expect(JSON.parse(tokenReq?.body ?? '{}')).toEqual({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'ironic', domain: { name: 'Default' }, password: fake.keystone.password } } },
        scope: { project: { name: 'service', domain: { name: 'Default' } } },
      },
    });
    const pages = fake.requests.filter((q) => q.path.startsWith('/baremetal/v1/nodes'));
    expect(pages.length).toBe(3);
    for (const p of pages) expect(p.headers['x-auth-token']).toBe(fake.keystone.token);
    noSecrets(r, fake);
  });

  it('v3applicationcredential', async () => {
    configure(d, ['auth_type = v3applicationcredential', `auth_url = ${fake.url}/identity`, `application_credential_id = ${fake.keystone.appCredId}`, `application_credential_secret = ${fake.keystone.appCredSecret}`]);
    const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--format', 'json']);
    expect(r.code).toBe(3);
    expect((JSON.parse(r.stdout) as { ironic_source: unknown }).ironic_source).toEqual({ kind: 'api', location: `${fake.url}/baremetal`, nodes: 5 });
    noSecrets(r, fake);
  });

  it('a wrong password: Keystone 401 is one line, exit 2, no secret, nothing changed', async () => {
    configure(d, password('wrong-Pw-s3cret'));
    const before = await snapshotDeployment(d);
    for (const format of ['table', 'json']) {
      const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply', '--format', format]);
      expect(r.code).toBe(2);
      const text = format === 'json' ? (JSON.parse(r.stdout) as { error: { message: string } }).error.message : r.stderr;
      expect(text).toContain(`Keystone at ${fake.url} refused the [ironic] credentials (HTTP 401, auth_type password); nothing was changed`);
      if (format === 'table') expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stdout + r.stderr).not.toContain('wrong-Pw-s3cret');
      noSecrets(r, fake);
    }
    expect(await snapshotDeployment(d)).toEqual(before);
  });

  it('no Ironic endpoint in the catalog (or not in the region): one line, exit 2', async () => {
    fake.keystone.catalogHasIronic = false;
    configure(d, password(fake.keystone.password));
    const r = await runBin([...d.args, 'audit']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `nova-reconcile: error: the catalog of Keystone at ${fake.url} has no Ironic endpoint (service type baremetal, interface internal or public, region RegionOne); nothing was changed (check [ironic] region_name, valid_interfaces and the user's project, or set [ironic] endpoint_override)\n`,
    );
    noSecrets(r, fake);
  });

  it('Ironic 500 exits 2 and changes nothing; a 503 is retried api_max_retries times', async () => {
    configure(d, ['auth_type = none', `endpoint_override = ${fake.url}/baremetal`, 'api_max_retries = 2', 'api_retry_interval = 0']);
    fake.fault = { kind: 'status', status: 500, onPage: 2 };
    const before = await snapshotDeployment(d);
    const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--apply']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^nova-reconcile: error: cannot list the ironic nodes from the Ironic API at http:\/\/127\.0\.0\.1:\d+: HTTP 500 after 2 node\(s\); without the complete list no node is judged, and nothing was changed \(/);
    expect(await snapshotDeployment(d)).toEqual(before);

    resetPages(fake);
    fake.fault = { kind: 'status', status: 503, times: 2 };
    const retried = await runBin([...d.args, 'audit']);
    expect(retried.code).toBe(3);
    expect(retried.stderr).toContain('ironic nodes: 5 from the Ironic API');

    resetPages(fake);
    fake.fault = { kind: 'status', status: 503, times: 3 };
    const exhausted = await runBin([...d.args, 'audit']);
    expect(exhausted.code).toBe(2);
    expect(exhausted.stderr).toContain('HTTP 503');
  });

  it('a hanging Ironic times out after [ironic] timeout: exit 2', async () => {
    configure(d, ['auth_type = none', `endpoint_override = ${fake.url}/baremetal`, 'timeout = 1']);
    fake.fault = { kind: 'hang', onPage: 1 };
    const r = await runBin([...d.args, 'compute_node', 'list']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^nova-reconcile: error: cannot list the ironic nodes from the Ironic API at http:\/\/127\.0\.0\.1:\d+: no complete answer from http:\/\/127\.0\.0\.1:\d+ within 1 s;/);
    expect(r.ms).toBeLessThan(20_000);
  });

  it('a read-only command stopped while it waits (Ctrl-C, SIGTERM) exits 130 / 143 at once, prints nothing on stdout, changes nothing', async () => {
    configure(d, ['auth_type = none', `endpoint_override = ${fake.url}/baremetal`, 'timeout = 30']);
    const before = await snapshotDeployment(d);
    for (const [command, signal, code] of [
      [['audit'], 'SIGINT', 130],
      [['compute_node', 'list'], 'SIGTERM', 143],
    ] as const) {
      resetPages(fake);
      fake.fault = { kind: 'hang', onPage: 1 };
      const child = spawn(process.execPath, [BIN, ...d.args, ...command], { env: { PATH: process.env['PATH'], HOME: '/nonexistent-home' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const closed = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      // It waits on the hanging Ironic: give it time to get there, then stop it.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(child.exitCode, `${command.join(' ')} ended before the signal: ${stderr}`).toBeNull();
      const started = Date.now();
      child.kill(signal);
      const exit = await closed;
      expect(exit, `${command.join(' ')}: ${stderr}`).toBe(code);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(stdout).toBe('');
    }
    expect(await snapshotDeployment(d)).toEqual(before);
  });

  it('connection refused (Ironic down) after the retries: exit 2', async () => {
    configure(d, ['auth_type = none', 'endpoint_override = http://127.0.0.1:9', 'api_max_retries = 1', 'api_retry_interval = 0']);
    const r = await runBin([...d.args, 'audit']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'nova-reconcile: error: cannot list the ironic nodes from the Ironic API at http://127.0.0.1:9: connection refused by http://127.0.0.1:9; without the complete list no node is judged, and nothing was changed (check that ironic-api is up ([ironic] api_max_retries and api_retry_interval set how long to retry), or give --ironic-source file --ironic-nodes FILE)\n',
    );
  });

  it('--ironic-source: file wins with --ironic-nodes; api without [ironic] exits 2; misuse exits 127', async () => {
    const file = join(d.dir, 'nodes.txt');
    writeFileSync(file, `${S.healthyNodeUuid}\n`);
    configure(d, ['auth_type = none', 'endpoint_override = http://127.0.0.1:9']);
    const fromFile = await runBin([...d.args, 'audit', '--ironic-nodes', file]);
    expect(fromFile.code).toBe(3);
    expect(fromFile.stderr).toBe('');
    const json = await runBin([...d.args, 'audit', '--ironic-nodes', file, '--format', 'json']);
    expect((JSON.parse(json.stdout) as { ironic_source: unknown }).ironic_source).toEqual({ kind: 'file', location: file, nodes: 1 });
    const noFile = await runBin([...d.args, 'audit', '--ironic-source', 'file']);
    expect(noFile.code).toBe(127);
    expect(noFile.stderr).toContain('--ironic-source file needs --ironic-nodes FILE');
    const both = await runBin([...d.args, 'audit', '--ironic-source', 'api', '--ironic-nodes', file]);
    expect(both.code).toBe(127);
  });

  it('[ironic] shard (Nova 2024.1): at 1.82 the shard field is read, and the listing stays whole, so nodes of other shards are not gone', async () => {
    // This compute serves shard s1; the healthy node is in s2. Nova's nova-compute
    // lists only its shard, but a node of another shard still exists in Ironic.
    configure(d, ['auth_type = none', `endpoint_override = ${fake.url}/baremetal`, 'shard = s1']);
    fake.maxVersion = '1.82';
    fake.nodes = ironicNodes().map((n, i) => ({ ...n, shard: i === 0 ? 's2' : 's1' }));
    const r = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(r.code, r.stderr).toBe(3);
    expect(kinds(r)).toEqual([
      ['orphan-node-service-deleted', S.libvirt.nodeUuid],
      ['orphan-node-ironic-deleted', S.goneNodeUuid],
    ]);
    const pages = fake.requests.filter((q) => q.path.startsWith('/baremetal/v1/nodes'));
    expect(pages.length).toBeGreaterThan(0);
    for (const p of pages) {
      expect(p.headers['x-openstack-ironic-api-version']).toBe('1.82');
      const q = new URL(p.path, fake.url).searchParams;
      expect(q.get('fields')).toBe('uuid,instance_uuid,maintenance,provision_state,conductor_group,shard');
      expect(q.get('shard')).toBeNull();
    }
    expect((JSON.parse(r.stdout) as { ironic_source: { nodes: number } }).ironic_source.nodes).toBe(5);
  });

  it('--ironic-source api without [ironic] in nova.conf exits 2 with one line', async () => {
    const r = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--ironic-source', 'api']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--ironic-source api needs nova.conf [ironic] auth_type');
  });
});
