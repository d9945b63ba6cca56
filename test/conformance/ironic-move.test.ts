// The rebalance repair on databases built by the real Nova 26.2.2 and
// Placement 8.0.0, with the states of seed bug 1714248 written by their own
// code (nova.objects, the Placement WSGI application): the 409 state and the
// renamed-provider state. After `compute_node rebalance --apply` each ironic
// node has one live compute node, on the live service; its provider carries
// the node's name and holds the instance's allocation, unchanged; the instance
// is on the live host; nothing else holds the name or the allocation; the
// duplicate is soft-deleted; and Nova's own lookups agree. A re-run exits 0.
//
// Zed's nova-manage has no ironic_compute_node_move, so that command is
// checked against master's documented behaviour (§4) on rows Zed wrote.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createRealDeployment, realNovaAvailable, realNovaSkipNotice, realNovaVersions, type RealDeployment } from './real-nova.js';

const run = promisify(execFile);
const N = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123';
const U2 = 'd6a3c1f0-8b7e-4e21-9c55-0a4f2b6e7d19';
const I = '5e0a7c3d-91b4-4f6a-8d2e-c7b1f0a93e58';

const STATE_SCRIPT = String.raw`# Writes the states of seed bug 1714248 with Nova's objects and the real
# Placement application (in-process, as placement.direct does), then reads
# Nova's own view back. argv: nova.conf, variant (409 | renamed), phase.
import sys, json
conf_path, variant, phase = sys.argv[1], sys.argv[2], sys.argv[3]
N = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
U2 = 'd6a3c1f0-8b7e-4e21-9c55-0a4f2b6e7d19'
I = '5e0a7c3d-91b4-4f6a-8d2e-c7b1f0a93e58'
RC = 'CUSTOM_BAREMETAL_GOLD'
P, U = '8d2f6a1c0b3e4f5a9c7d1e2b3a4f5c6d', '2b7e9c4a1d3f4e6b8a0c5d7e9f1a3b5c'

def nova_phase():
    from nova import config, context, objects
    objects.register_all()
    # Notifications go nowhere: there is no message bus here. The overlay sits
    # beside nova.conf, in the deployment's folder, removed with it.
    import os
    overlay = os.path.join(os.path.dirname(conf_path), 'no-bus.conf')
    with open(overlay, 'w') as f:
        f.write('[DEFAULT]\ntransport_url = fake:///\n[oslo_messaging_notifications]\ndriver = noop\n')
    config.parse_args(['nova-state', '--config-file', conf_path, '--config-file', overlay])
    ctxt = context.get_admin_context()

    def service(host):
        s = objects.Service(ctxt, host=host, binary='nova-compute', topic='compute', report_count=1)
        s.create()
        return s

    def node(uuid, host):
        cn = objects.ComputeNode(ctxt, uuid=uuid, host=host, hypervisor_hostname=N, hypervisor_type='ironic', hypervisor_version=1,
            vcpus=0, memory_mb=0, local_gb=0, vcpus_used=0, memory_mb_used=0, local_gb_used=0, free_ram_mb=0, free_disk_gb=0,
            current_workload=0, running_vms=0, cpu_info='', disk_available_least=0, supported_hv_specs=[], stats={},
            cpu_allocation_ratio=1.0, ram_allocation_ratio=1.0, disk_allocation_ratio=1.0)
        cn.create()
        return cn

    dead = service('ironic-compute-0')
    live = service('ironic-compute-1')
    node(N, 'ironic-compute-0')
    inst = objects.Instance(ctxt, uuid=I, project_id=P, user_id=U, host='ironic-compute-0', node=N, vm_state='active', power_state=1,
        memory_mb=262144, vcpus=32, root_gb=900, ephemeral_gb=0, instance_type_id=7, display_name='bm-db-1')
    inst.create()
    # ironic-compute-0 dies; the operator forces it down; ironic-compute-1 creates its own record of the node.
    dead.forced_down = True
    dead.save()
    node(U2, 'ironic-compute-1')

    print(json.dumps({'dead': dead.id, 'live': live.id}))

def placement_phase():
    from oslo_config import cfg
    from placement import conf as placement_conf, deploy
    import webob
    pconf = cfg.ConfigOpts()
    placement_conf.register_opts(pconf)
    pconf(['--config-file', conf_path], default_config_files=[])
    # What placement.direct.PlacementDirect does, without wsgi-intercept: the
    # real Placement WSGI application, called in-process, no auth.
    pconf.set_override('auth_strategy', 'noauth2', group='api')
    from placement import db_api
    db_api.configure(pconf)
    app = deploy.loadapp(pconf)

    class Response:
        def __init__(self, method, path, resp):
            self.method, self.path, self.status_code, self.text = method, path, resp.status_int, resp.text
        def json(self):
            return json.loads(self.text)

    class Client:
        def call(self, method, path, body=None, version='latest'):
            req = webob.Request.blank(path, method=method, headers={'x-auth-token': 'admin', 'OpenStack-API-Version': 'placement ' + version, 'Accept': 'application/json'})
            if body is not None:
                req.body = json.dumps(body).encode()
                req.content_type = 'application/json'
            return Response(method, path, req.get_response(app))
        def get(self, path): return self.call('GET', path)
        def post(self, path, json=None): return self.call('POST', path, json)
        def put(self, path, json=None, version='latest'): return self.call('PUT', path, json, version)

    client = Client()
    def ok(r, *codes):
        if r.status_code not in codes:
            raise SystemExit('%s %s: %s %s' % (r.method, r.path, r.status_code, r.text))
        return r
    def provider(uuid, reserved):
        ok(client.post('/resource_providers', json={'uuid': uuid, 'name': N}), 200)
        g = ok(client.get('/resource_providers/%s' % uuid), 200).json()['generation']
        g = ok(client.put('/resource_providers/%s/inventories' % uuid, json={'resource_provider_generation': g, 'inventories': {RC: {'total': 1, 'reserved': reserved, 'min_unit': 1, 'max_unit': 1, 'step_size': 1, 'allocation_ratio': 1.0}}}), 200).json()['resource_provider_generation']
        return ok(client.put('/resource_providers/%s/traits' % uuid, json={'resource_provider_generation': g, 'traits': ['COMPUTE_NODE']}), 200).json()['resource_provider_generation']
    ok(client.put('/resource_classes/%s' % RC), 201, 204)
    provider(N, 0)
    ok(client.put('/allocations/%s' % I, json={'allocations': {N: {'resources': {RC: 1}}}, 'project_id': P, 'user_id': U, 'consumer_generation': None}, version='1.28'), 204)
    # In use: the ironic driver reports reserved = 1 (placement only logs "over-capacity").
    g = ok(client.get('/resource_providers/%s' % N), 200).json()['generation']
    ok(client.put('/resource_providers/%s/inventories' % N, json={'resource_provider_generation': g, 'inventories': {RC: {'total': 1, 'reserved': 1, 'min_unit': 1, 'max_unit': 1, 'step_size': 1, 'allocation_ratio': 1.0}}}), 200)
    # ironic-compute-1's provider for U2: the name is taken (the 409 of seed bug 1714248).
    r = client.post('/resource_providers', json={'uuid': U2, 'name': N})
    assert r.status_code == 409, r.text
    if variant == 'renamed':
        ok(client.put('/resource_providers/%s' % N, json={'name': 'stale-' + N}), 200)
        provider(U2, 1)

def verify_phase():
    """Nova's and Placement's own view after the repair."""
    from nova import config, context, objects
    objects.register_all()
    config.parse_args(['nova-state', '--config-file', conf_path], init_rpc=False)
    ctxt = context.get_admin_context()
    nodes = objects.ComputeNodeList.get_by_hypervisor(ctxt, N)
    on_live = objects.InstanceList.get_by_host_and_node(ctxt, 'ironic-compute-1', N)
    print(json.dumps({'nodes': sorted([cn.uuid, cn.host] for cn in nodes), 'instances': [i.uuid for i in on_live]}))

{'nova': nova_phase, 'placement': placement_phase, 'verify': verify_phase}[phase]()
`;

const available = realNovaAvailable();
if (!available && process.env['CI'] !== 'true') console.warn(`\n*** ${realNovaSkipNotice}\n`);

(available || process.env['CI'] === 'true' ? describe : describe.skip)('ironic rebalance on the real Nova', () => {
  let d: RealDeployment;
  let db: Connection;
  let script: string;

  beforeAll(async () => {
    d = await createRealDeployment('rbl');
    script = join(d.dir, 'seed-bug-1714248.py');
    writeFileSync(script, STATE_SCRIPT);
    db = await createConnection({ host: '127.0.0.1', port: 3306, user: 'root', dateStrings: true, ...mysqlFromEnv() });
  });
  afterAll(async () => {
    await db?.end();
    await d?.drop();
  });
  beforeEach(async () => {
    await d.reset();
  });

  const python = async (variant: string, phase: string): Promise<string> => (await run(realNovaVersions()?.python ?? '/usr/bin/python3', [script, d.confPath, variant, phase], { encoding: 'utf8' })).stdout;
  const q = async <T,>(sql: string): Promise<T[]> => (await db.query<RowDataPacket[]>(sql))[0] as T[];
  const ours = (...args: string[]) => runBin(['--config-file', d.confPath, ...args, ...(args.includes('--apply') ? ['--journal', join(d.dir, `j-${Date.now()}.jsonl`)] : [])]);

  async function writeState(variant: '409' | 'renamed'): Promise<void> {
    await python(variant, 'nova');
    await python(variant, 'placement');
  }

  async function expectRepaired(): Promise<void> {
    const cell = d.db.cell1;
    const nodes = await q<{ uuid: string; host: string; deleted: number; id: number }>(`SELECT id, uuid, host, deleted FROM ${cell}.compute_nodes ORDER BY id`);
    expect(nodes.filter((n) => Number(n.deleted) === 0).map((n) => [n.uuid, n.host])).toEqual([[N, 'ironic-compute-1']]);
    const dup = nodes.find((n) => n.uuid === U2);
    expect(Number(dup?.deleted)).toBe(Number(dup?.id));
    const providers = await q<{ id: number; uuid: string; name: string }>(`SELECT id, uuid, name FROM ${d.db.placement}.resource_providers`);
    expect(providers.filter((p) => p.name === N).map((p) => p.uuid)).toEqual([N]);
    const allocations = await q<{ rp: string; used: number }>(
      `SELECT rp.uuid AS rp, a.used FROM ${d.db.placement}.allocations a JOIN ${d.db.placement}.resource_providers rp ON rp.id = a.resource_provider_id WHERE a.consumer_id = '${I}'`,
    );
    expect(allocations.map((a) => [a.rp, Number(a.used)])).toEqual([[N, 1]]);
    const instances = await q<{ host: string; node: string }>(`SELECT host, node FROM ${cell}.instances WHERE uuid = '${I}'`);
    expect(instances.map((i) => [i.host, i.node])).toEqual([['ironic-compute-1', N]]);
    // Nova's own lookups: the resource tracker's rebalance search finds one node, and the live host finds its instance.
    expect(JSON.parse(await python('-', 'verify'))).toEqual({ nodes: [[N, 'ironic-compute-1']], instances: [I] });
  }

  it.each(['409', 'renamed'] as const)('repairs the %s state written by Nova and Placement, and a re-run exits 0', async (variant) => {
    await writeState(variant);
    const dry = await ours('compute_node', 'rebalance');
    expect(dry.code, dry.stdout + dry.stderr).toBe(3);
    const applied = await ours('compute_node', 'rebalance', '--apply');
    expect(applied.code, applied.stdout + applied.stderr).toBe(4);
    await expectRepaired();
    const again = await ours('compute_node', 'rebalance', '--apply');
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });

  it("db ironic_compute_node_move follows master's preconditions on rows Zed wrote", async () => {
    await writeState('409');
    const move = () => ours('db', 'ironic_compute_node_move', '--ironic-node-uuid', N, '--destination-host', 'ironic-compute-1');
    // Zed never sets compute_nodes.service_id; master looks the source up by it.
    expect(await move()).toMatchObject({ code: 255, stdout: 'An error has occurred:\nService None could not be found.\n' });
    await db.query(`UPDATE ${d.db.cell1}.compute_nodes SET service_id = (SELECT id FROM ${d.db.cell1}.services WHERE host = 'ironic-compute-0') WHERE uuid = '${N}'`);
    await db.query(`UPDATE ${d.db.cell1}.compute_nodes SET deleted = id WHERE uuid = '${U2}'`);
    const ok = await move();
    expect([ok.code, ok.stdout], ok.stderr).toEqual([0, '']);
    const [cn] = await q<{ host: string; service_id: number }>(`SELECT host, service_id FROM ${d.db.cell1}.compute_nodes WHERE uuid = '${N}'`);
    const [live] = await q<{ id: number }>(`SELECT id FROM ${d.db.cell1}.services WHERE host = 'ironic-compute-1'`);
    expect([cn?.host, Number(cn?.service_id)]).toEqual(['ironic-compute-1', Number(live?.id)]);
    expect(await q(`SELECT host FROM ${d.db.cell1}.instances WHERE uuid = '${I}'`)).toEqual([{ host: 'ironic-compute-1' }]);
    expect(JSON.parse(await python('-', 'verify'))).toMatchObject({ instances: [I] });
  });
});

function mysqlFromEnv(): { host?: string; port?: number; user?: string; password?: string } {
  const raw = process.env['TEST_MYSQL_URL'];
  if (raw === undefined || raw === '') return {};
  const u = new URL(raw);
  return { host: u.hostname, port: u.port === '' ? 3306 : Number(u.port), user: decodeURIComponent(u.username || 'root'), password: decodeURIComponent(u.password) };
}
