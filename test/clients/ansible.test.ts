// The Ansible collection (contrib/ansible) and the Ansible tasks of docs/operations/automation.md, run
// by the real ansible-core against localhost, on MariaDB clouds with unmapped
// hosts and orphan compute nodes.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { libvirtScenario, LIBVIRT_HOSTS } from '../../src/sandbox/scenarios/libvirt.js';
import { DELETED_IRONIC_NODE, deletedIronicNodeIronicList } from '../../src/sandbox/scenarios/deleted-ironic-node.js';
import { assertBuilt, runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createTestDeployment, hostMappings, type TestDeployment } from '../helpers/test-deployment.js';
import { automationSection, CLIENT_PATH, CONTRIB, describeWithTools, fencedBlocks, runClient, scratch, type Run } from './clients.js';

const FQCN = 'openstack_ops.nova_reconcile.nova_reconcile';
const UNMAPPED = LIBVIRT_HOSTS.map((h) => h.host);
const ORPHANS = [DELETED_IRONIC_NODE.goneNodeUuid, DELETED_IRONIC_NODE.libvirt.nodeUuid];

/** What the plays change: the host mappings and the orphans still live. */
async function state(d: TestDeployment): Promise<{ mapped: string[]; liveOrphans: string[] }> {
  const mapped = (await hostMappings(d)).map(([host]) => host);
  const rows: Array<{ uuid: string }> = await d.knex('cell1')('compute_nodes').select('uuid').where('deleted', 0).whereIn('uuid', ORPHANS).orderBy('uuid');
  return { mapped, liveOrphans: rows.map((r) => r.uuid) };
}

/**
 * A cloud with unmapped hosts (the libvirt scenario's five) and two orphans
 * (deleted-ironic-node's), and a folder `dir` for its plays holding the
 * ironic node list (nodes.json) that `openstack baremetal node list` would give.
 */
async function brokenCloud(prefix: string, dir: string): Promise<{ d: TestDeployment; nodesJson: string }> {
  mkdirSync(dir);
  const nodesJson = join(dir, 'nodes.json');
  writeFileSync(nodesJson, deletedIronicNodeIronicList());
  const d = await createTestDeployment('mysql', 'deleted-ironic-node', prefix);
  await libvirtScenario.populate(d.dbs);
  return { d, nodesJson };
}

/** PLAY RECAP counts for localhost. */
function recap(run: Run): Record<string, number> {
  const line = run.stdout.split('\n').find((l) => /^localhost\s+:/.test(l));
  if (line === undefined) throw new Error(`no PLAY RECAP in:\n${run.stdout}\n${run.stderr}`);
  return Object.fromEntries([...line.matchAll(/(\w+)=(\d+)/g)].map((m) => [m[1] ?? '', Number(m[2])]));
}

describeWithTools(['ansible-playbook', 'ansible-galaxy', 'ansible-doc', 'python3'], 'Ansible (ansible-core)', () => {
  let tmp: ReturnType<typeof scratch>;
  let env: Record<string, string>;
  const collections = () => join(tmp.dir, 'collections');

  beforeAll(() => {
    assertBuilt();
    tmp = scratch('ansible');
    const home = join(tmp.dir, 'home');
    mkdirSync(join(home, 'tmp'), { recursive: true });
    env = {
      PATH: CLIENT_PATH,
      HOME: home,
      LANG: 'C.UTF-8',
      PYTHONDONTWRITEBYTECODE: '1',
      ANSIBLE_HOME: join(home, '.ansible'),
      ANSIBLE_LOCAL_TEMP: join(home, 'tmp'),
      ANSIBLE_REMOTE_TEMP: join(home, 'tmp'),
      ANSIBLE_COLLECTIONS_PATH: collections(),
      ANSIBLE_NOCOLOR: '1',
      ANSIBLE_LOCALHOST_WARNING: 'false',
      ANSIBLE_PYTHON_INTERPRETER: '/usr/bin/python3',
    };
  });
  afterAll(() => tmp?.remove());

  const ansible = (cmd: string, args: readonly string[]) => runClient(cmd, args, { env, cwd: tmp.dir, timeoutMs: 180_000 });

  it('ansible-galaxy installs the collection from the checkout', () => {
    const r = ansible('ansible-galaxy', ['collection', 'install', join(CONTRIB, 'ansible'), '-p', collections()]);
    expect(r.stderr).not.toMatch(/ERROR/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('openstack_ops.nova_reconcile:0.1.0 was installed successfully');
    const list = ansible('ansible-galaxy', ['collection', 'list', '-p', collections()]);
    expect(list.stdout).toMatch(/openstack_ops\.nova_reconcile\s+0\.1\.0/);
  });

  it('ansible-doc renders the module, documenting exactly the options it takes, with their types and defaults', () => {
    const doc = ansible('ansible-doc', [FQCN]);
    expect(doc.stderr).toBe('');
    expect(doc.code).toBe(0);
    expect(doc.stdout).toContain('OPTIONS (= is mandatory):');
    expect(doc.stdout).toContain('= command');
    const json = ansible('ansible-doc', ['--json', FQCN]);
    expect(json.code).toBe(0);
    const rendered = (JSON.parse(json.stdout) as Record<string, { doc: { options: Record<string, { type?: string; default?: unknown; choices?: unknown; elements?: string; required?: boolean }> }; examples: string; return: object }>)[FQCN];
    expect(rendered).toBeDefined();
    expect(rendered?.examples).toContain(`${FQCN}:`);
    expect(Object.keys(rendered?.return ?? {})).toEqual(expect.arrayContaining(['document', 'changed', 'rc', 'diff']));
    // The module's own argument spec, read from the file Ansible runs.
    const spec = runClient('python3', ['-c', `import importlib.util, json, sys
s = importlib.util.spec_from_file_location('m', sys.argv[1]); m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
print(json.dumps(m.ARGUMENT_SPEC))`, join(CONTRIB, 'ansible/plugins/modules/nova_reconcile.py')], { env });
    expect(spec.stderr).toBe('');
    const argumentSpec = JSON.parse(spec.stdout) as Record<string, { type: string; default?: unknown; choices?: unknown; elements?: string; required?: boolean }>;
    const documented = rendered?.doc.options ?? {};
    expect(Object.keys(documented).sort()).toEqual(Object.keys(argumentSpec).sort());
    for (const [name, o] of Object.entries(argumentSpec)) {
      const d = documented[name];
      expect({ name, type: d?.type, default: d?.default ?? null, elements: d?.elements ?? null, required: d?.required ?? false }).toEqual({
        name,
        type: o.type,
        default: o.default ?? null,
        elements: o.elements ?? null,
        required: o.required ?? false,
      });
      if (o.choices !== undefined) expect([...(d?.choices as string[])].sort()).toEqual([...(o.choices as string[])].sort());
    }
  });

  describeMysql('the collection, as docs/operations/automation.md shows it, on MariaDB', () => {
    let d: TestDeployment;
    let play: string;
    let breakerPlay: string;
    let before: Awaited<ReturnType<typeof state>>;

    beforeAll(async () => {
      const dir = join(tmp.dir, 'collection-play');
      const cloud = await brokenCloud('ansmod', dir);
      d = cloud.d;
      const nodesJson = cloud.nodesJson;
      // The documented collection tasks, verbatim, with the deployment's nova.conf as config_file.
      const tasks = readmeTasks().filter((t) => t.includes(`${FQCN}:`));
      expect(tasks).toHaveLength(2);
      play = join(dir, 'play.yml');
      writeFileSync(play, playbook(tasks, { ironic_nodes_json: nodesJson }, { config_file: d.confPath }));
      breakerPlay = join(dir, 'breaker.yml');
      writeFileSync(
        breakerPlay,
        playbook(
          [`- name: Clean up orphan compute nodes, at most 1 unit\n  ${FQCN}:\n    command: compute_node cleanup_orphans\n    ironic_nodes: ${nodesJson}\n    max_apply_units: 1\n`],
          {},
          { config_file: d.confPath },
        ),
      );
      before = await state(d);
      expect(before).toEqual({ mapped: [DELETED_IRONIC_NODE.host, DELETED_IRONIC_NODE.libvirt.host].sort(), liveOrphans: [...ORPHANS].sort() });
    }, 120_000);
    afterAll(async () => d?.cleanup());

    it('--check --diff reports changed, shows the plan, and writes nothing', async () => {
      const r = ansible('ansible-playbook', ['-i', 'localhost,', '-c', 'local', play, '--check', '--diff']);
      expect(r.stderr).toBe('');
      expect(recap(r)).toMatchObject({ ok: 2, changed: 2, failed: 0 });
      for (const host of UNMAPPED) expect(r.stdout).toMatch(new RegExp(`^\\+ host mapping ${host} -> cell [0-9a-f-]{36}$`, 'm'));
      expect(r.stdout).toContain(`+ orphan compute node ${DELETED_IRONIC_NODE.goneNodeUuid} (ironic-compute-0/`);
      expect(r.stdout).toContain(`+ orphan compute node ${DELETED_IRONIC_NODE.libvirt.nodeUuid} (compute-9/`);
      expect(r.stdout).toContain('    cell: soft-delete compute node');
      expect(await state(d)).toEqual(before);
    });

    it('check mode with expect and wait makes one pass: hosts it would map count, one not registered yet is a warning', async () => {
      const expectPlay = join(tmp.dir, 'collection-play', 'expect.yml');
      writeFileSync(
        expectPlay,
        playbook([`- name: Map the new computes\n  ${FQCN}:\n    command: cell_v2 discover_hosts\n    by_service: true\n    expect: [compute-1, compute-5, compute-not-yet]\n    wait: 600\n`], {}, { config_file: d.confPath }),
      );
      const started = Date.now();
      const r = ansible('ansible-playbook', ['-i', 'localhost,', '-c', 'local', expectPlay, '--check']);
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(recap(r)).toMatchObject({ ok: 1, changed: 1, failed: 0 });
      const warnings = r.stderr.replace(/\s+/g, ' ');
      expect(warnings).toContain('[WARNING]: expected hosts not registered yet (a real run waits for them): compute-not-yet');
      expect(warnings).not.toContain('compute-1');
      expect(await state(d)).toEqual(before);
    });

    it('a run over a circuit-breaker limit fails with the tool\'s message and applies nothing', async () => {
      const r = ansible('ansible-playbook', ['-i', 'localhost,', '-c', 'local', breakerPlay]);
      expect(r.code).toBe(2);
      expect(recap(r)).toMatchObject({ failed: 1, changed: 0 });
      expect(r.stdout).toContain(
        '"msg": "circuit breaker tripped: compute_node cleanup_orphans plans 2 unit(s) (removing or moving 2 compute node(s) and 2 resource provider(s)), more than max_apply_units 1; nothing was applied (override: --allow-large-plan)"',
      );
      expect(await state(d)).toEqual(before);
    });

    it('the real run reports changed and applies; --diff shows what it did', async () => {
      const r = ansible('ansible-playbook', ['-i', 'localhost,', '-c', 'local', play, '--diff']);
      expect(r.stderr).toBe('');
      expect(recap(r)).toMatchObject({ ok: 2, changed: 2, failed: 0 });
      expect(r.stdout).toMatch(/^\+ host mapping compute-1 -> cell /m);
      expect(await state(d)).toEqual({ mapped: [...before.mapped, ...UNMAPPED].sort(), liveOrphans: [] });
    });

    it('a second run reports ok', async () => {
      const r = ansible('ansible-playbook', ['-i', 'localhost,', '-c', 'local', play, '--diff']);
      expect(r.stderr).toBe('');
      expect(recap(r)).toMatchObject({ ok: 2, changed: 0, failed: 0 });
      expect(r.stdout).not.toContain('+ host mapping');
    });
  });

  describeMysql('read-only commands and errors, on MariaDB', () => {
    let d: TestDeployment;
    let play: string;

    beforeAll(async () => {
      const dir = join(tmp.dir, 'read-play');
      d = (await brokenCloud('ansread', dir)).d;
      play = join(dir, 'play.yml');
      const task = (name: string, body: string) => `- name: ${name}\n  ${FQCN}:\n${body}  register: ${name}\n  ignore_errors: true\n`;
      writeFileSync(
        play,
        playbook(
          [
            task('audit', `    command: audit\n    config_file: ${d.confPath}\n`),
            task('list_hosts', `    command: cell_v2 list_hosts\n    config_file: ${d.confPath}\n`),
            task('misplaced', `    command: audit\n    by_service: true\n    config_file: ${d.confPath}\n`),
            task('no_conf', `    command: cell_v2 discover_hosts\n    config_file: ${join(dir, 'missing.conf')}\n`),
            `- ansible.builtin.debug:\n    msg: "RESULTS {{ {'audit': [audit.rc, audit.changed, audit.failed, audit.document.counts | length > 0], 'list_hosts': [list_hosts.rc, list_hosts.changed, list_hosts.failed], 'misplaced': [misplaced.failed, misplaced.msg], 'no_conf': [no_conf.rc, no_conf.failed, no_conf.msg]} | to_json }} END"\n`,
          ],
          {},
        ),
      );
    }, 120_000);
    afterAll(async () => d?.cleanup());

    it('audit with findings (exit 3) is ok and never changed; a wrong option or a missing nova.conf fails with one line', () => {
      const r = ansible('ansible-playbook', ['-i', 'localhost,', '-c', 'local', play]);
      expect(recap(r)).toMatchObject({ changed: 0, failed: 0, ignored: 2 });
      const json = /RESULTS (.*) END/.exec(r.stdout)?.[1] ?? '';
      expect(JSON.parse(json.replace(/\\"/g, '"'))).toEqual({
        audit: [3, false, false, true],
        list_hosts: [0, false, false],
        misplaced: [true, 'audit does not take: by_service'],
        no_conf: [1, true, `config file ${join(tmp.dir, 'read-play', 'missing.conf')} not found (check the --config-file paths)`],
      });
    });

    it('plan_in: check mode plans afresh (nova-reconcile takes --plan-in only with --apply), the real run applies the reviewed plan', async () => {
      const dir = join(tmp.dir, 'read-play');
      const planFile = join(dir, 'plan.json');
      const reviewed = await runBin([...d.args, 'compute_node', 'cleanup_orphans', '--ironic-nodes', join(dir, 'nodes.json'), '--plan-out', planFile]);
      expect(reviewed.code).toBe(3);
      const planPlay = join(dir, 'plan-in.yml');
      writeFileSync(
        planPlay,
        playbook([`- name: Apply the reviewed plan\n  ${FQCN}:\n    command: compute_node cleanup_orphans\n    ironic_nodes: ${join(dir, 'nodes.json')}\n    plan_in: ${planFile}\n`], {}, { config_file: d.confPath }),
      );
      const check = ansible('ansible-playbook', ['-i', 'localhost,', '-c', 'local', planPlay, '--check']);
      expect(recap(check)).toMatchObject({ changed: 1, failed: 0 });
      expect((await state(d)).liveOrphans).toEqual([...ORPHANS].sort());
      const real = ansible('ansible-playbook', ['-i', 'localhost,', '-c', 'local', planPlay]);
      expect(recap(real)).toMatchObject({ changed: 1, failed: 0 });
      expect((await state(d)).liveOrphans).toEqual([]);
    });
  });

  describeMysql("the documented command: tasks, verbatim, on MariaDB", () => {
    let d: TestDeployment;
    let play: string;
    let inventory: string;
    let before: Awaited<ReturnType<typeof state>>;

    beforeAll(async () => {
      const dir = join(tmp.dir, 'raw-play');
      const cloud = await brokenCloud('ansraw', dir);
      d = cloud.d;
      const nodesJson = cloud.nodesJson;
      const tasks = readmeTasks().filter((t) => /^\s+command: >/m.test(t));
      expect(tasks).toHaveLength(3);
      play = join(dir, 'play.yml');
      writeFileSync(play, playbook(tasks, { ironic_nodes_json: nodesJson }));
      // The compute group of the documented --expect task: the cloud's hosts. No config_file: the
      // tasks find nova.conf as nova-manage does, here in ~/.nova/.
      inventory = join(dir, 'inventory.ini');
      writeFileSync(inventory, ['localhost ansible_connection=local', '[compute]', ...UNMAPPED, DELETED_IRONIC_NODE.host, ''].join('\n'));
      mkdirSync(join(env['HOME'] ?? '', '.nova'), { recursive: true });
      writeFileSync(join(env['HOME'] ?? '', '.nova', 'nova.conf'), readFileSync(d.confPath, 'utf8'));
      before = await state(d);
    }, 120_000);
    afterAll(async () => d?.cleanup());

    it('--check: the dry runs report changed (the --expect task is skipped) and write nothing', async () => {
      const r = ansible('ansible-playbook', ['-i', inventory, play, '--check']);
      expect(r.stderr).toBe('');
      expect(recap(r)).toMatchObject({ changed: 2, skipped: 1, failed: 0 });
      expect(await state(d)).toEqual(before);
    });

    it('the real run maps and cleans up; the --expect task finds every compute mapped', async () => {
      const r = ansible('ansible-playbook', ['-i', inventory, play]);
      expect(r.stderr).toBe('');
      expect(recap(r)).toMatchObject({ ok: 3, changed: 2, failed: 0 });
      expect(await state(d)).toEqual({ mapped: [...before.mapped, ...UNMAPPED].sort(), liveOrphans: [] });
    });

    it('a second run reports ok', () => {
      const r = ansible('ansible-playbook', ['-i', inventory, play]);
      expect(r.stderr).toBe('');
      expect(recap(r)).toMatchObject({ ok: 3, changed: 0, failed: 0 });
    });

    it('the --expect task fails naming a compute that never registered', () => {
      const withGhost = join(tmp.dir, 'raw-play', 'inventory-ghost.ini');
      writeFileSync(withGhost, ['localhost ansible_connection=local', '[compute]', ...UNMAPPED, 'compute-never-registered', ''].join('\n'));
      const fast = join(tmp.dir, 'raw-play', 'expect-fast.yml');
      // The documented task with --wait 600 shortened: one pass is enough to see the failure.
      const task = readmeTasks().find((t) => t.includes('--expect')) ?? '';
      writeFileSync(fast, playbook([task.replace('--wait 600 --interval 10', '--wait 0')], {}));
      const r = ansible('ansible-playbook', ['-i', withGhost, fast]);
      expect(recap(r)).toMatchObject({ failed: 1 });
      expect(r.stdout).toContain('compute-never-registered');
    });
  });
});

/** The documented Ansible tasks: the yaml blocks of the automation section that are task lists. */
function readmeTasks(): string[] {
  return fencedBlocks(automationSection())
    .filter((b) => b.lang === 'yaml' && b.body.startsWith('- name:'))
    .flatMap((b) => b.body.split(/\n(?=- name:)/).map((t) => (t.endsWith('\n') ? t : `${t}\n`)));
}

/** One play on localhost holding these tasks (indented into it), with vars and module defaults. */
function playbook(tasks: readonly string[], vars: Record<string, string>, defaults?: Record<string, string>): string {
  const indent = (text: string) =>
    text
      .split('\n')
      .map((l) => (l === '' ? l : `    ${l}`))
      .join('\n');
  return [
    '- hosts: localhost',
    '  connection: local',
    '  gather_facts: false',
    ...(Object.keys(vars).length > 0 ? ['  vars:', ...Object.entries(vars).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`)] : []),
    ...(defaults !== undefined ? ['  module_defaults:', `    ${FQCN}:`, ...Object.entries(defaults).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`)] : []),
    '  tasks:',
    ...tasks.map(indent),
    '',
  ].join('\n');
}

