// `audit` through the built binary, on SQLite and MariaDB: each scenario's
// findings, the JSON document, scoping, and every way it refuses to run.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { DELETED_IRONIC_NODE, deletedIronicNodeIronicList } from '../../src/sandbox/scenarios/deleted-ironic-node.js';
import { LIBVIRT_HOSTS } from '../../src/sandbox/scenarios/libvirt.js';
import { STALE_PROVIDER } from '../../src/sandbox/scenarios/stale-provider.js';
import { IRONIC_FAILOVER } from '../../src/sandbox/scenarios/ironic-failover.js';
import { FINDING_KINDS } from '../../src/domain/audit/index.js';
import { scenarioClock } from '../../src/sandbox/clock.js';

interface JsonFinding {
  kind: string;
  cell_uuid: string | null;
  cell_name: string | null;
  summary: string;
  objects: Record<string, unknown>;
  suggestion: string;
}

interface AuditDoc {
  findings: JsonFinding[];
  counts: Record<string, number>;
}

async function auditJson(d: TestDeployment, ...extra: string[]): Promise<{ code: number; doc: AuditDoc; stderr: string }> {
  const r = await runBin([...d.args, 'audit', '--format', 'json', ...extra]);
  if (!r.stdout.startsWith('{')) throw new Error(`audit printed no JSON (exit ${r.code}): ${r.stderr}`);
  return { code: r.code, doc: JSON.parse(r.stdout) as AuditDoc, stderr: r.stderr };
}

function summary(doc: AuditDoc): Array<[string, unknown]> {
  return doc.findings.map((f) => [f.kind, f.objects['consumer_uuid'] ?? f.objects['node_uuid'] ?? f.objects['provider_uuid'] ?? f.objects['host']]);
}

describeEachDialect('audit on libvirt', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'au');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('before discover_hosts: one unmapped-service per host, exit 3; after it: clean, exit 0', async () => {
    const before = await auditJson(d);
    expect(before.code).toBe(3);
    expect(before.doc.findings.map((f) => [f.kind, f.objects['host'], f.cell_name])).toEqual(
      LIBVIRT_HOSTS.map((h) => ['unmapped-service', h.host, h.cell]),
    );
    expect(before.doc.counts['unmapped-service']).toBe(5);

    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    const after = await runBin([...d.args, 'audit']);
    expect(after).toMatchObject({ code: 0, stderr: '' });
    expect(after.stdout).toBe('No findings: the API, cell and placement databases agree.\n');
  });

  it('a service that stopped reporting makes its node a node-of-dead-service', async () => {
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    await d.knex('cell2')('services').update({ last_seen_up: scenarioClock().ago(3600) }).where('host', 'compute-5');
    const r = await auditJson(d);
    expect(r.code).toBe(3);
    expect(r.doc.findings.map((f) => [f.kind, f.cell_uuid, f.objects['host']])).toEqual([['node-of-dead-service', CELL.cell2, 'compute-5']]);
  });

  it('prints progress on stderr only with --verbose (stderr is not a terminal here)', async () => {
    const quiet = await runBin([...d.args, 'audit']);
    expect(quiet.stderr).toBe('');
    const loud = await runBin([...d.args, 'audit', '--verbose']);
    expect(loud.code).toBe(3);
    expect(loud.stderr).toContain("reading cell 'cell1' (");
    expect(loud.stderr).toContain('reading the placement database (');
    expect(loud.stderr).not.toMatch(/\/\/[^/\s]*:[^@\s]*@/);
  });

  it('the table has one row per finding and a count line', async () => {
    const r = await runBin([...d.args, 'audit']);
    expect(r.code).toBe(3);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^\| kind +\| cell +\| object +\| summary +\| suggestion +\|$/);
    expect(lines.filter((l) => l.startsWith('| unmapped-service'))).toHaveLength(5);
    expect(lines.at(-1)).toBe('5 finding(s): 5 unmapped-service');
  });
});

describeEachDialect('audit on deleted-ironic-node', (dialect) => {
  const S = DELETED_IRONIC_NODE;
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'deleted-ironic-node', 'au');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('without ironic truth: the deleted ironic node is only a suspect; compute-9 is an orphan', async () => {
    const r = await auditJson(d);
    expect(r.code).toBe(3);
    expect(summary(r.doc)).toEqual([
      ['orphan-node-service-deleted', S.libvirt.nodeUuid],
      ['suspect-orphan-node', S.goneNodeUuid],
    ]);
    expect(r.doc.findings[0]).toMatchObject({ cell_uuid: CELL.cell1, cell_name: 'cell1', objects: { host: 'compute-9', service: 'deleted' } });
  });

  it('with --ironic-nodes (JSON of openstack baremetal node list): orphan-node-ironic-deleted, no suspects', async () => {
    const file = join(d.dir, 'nodes.json');
    writeFileSync(file, deletedIronicNodeIronicList());
    const r = await auditJson(d, '--ironic-nodes', file);
    expect(r.code).toBe(3);
    expect(summary(r.doc)).toEqual([
      ['orphan-node-service-deleted', S.libvirt.nodeUuid],
      ['orphan-node-ironic-deleted', S.goneNodeUuid],
    ]);
    // Suggested commands keep the --config-file given (issue 13 item 8).
    expect(r.doc.findings[1]?.suggestion).toBe(`nova-reconcile --config-file ${d.confPath} compute_node cleanup_orphans --ironic-nodes ${file}`);
  });

  it('accepts one uuid per line too', async () => {
    const file = join(d.dir, 'nodes.txt');
    writeFileSync(file, `# ironic nodes\n${S.healthyNodeUuid}\n`);
    const r = await auditJson(d, '--ironic-nodes', file);
    expect(r.doc.findings.map((f) => f.kind)).toEqual(['orphan-node-service-deleted', 'orphan-node-ironic-deleted']);
  });

  it('the JSON document: findings with kind, cell, summary, objects, suggestion; counts for every kind', async () => {
    const { doc } = await auditJson(d);
    expect(Object.keys(doc)).toEqual(['schema_version', 'changed', 'findings', 'counts', 'release']);
    expect(Object.keys(doc.counts)).toEqual([...FINDING_KINDS]);
    expect(doc.counts).toMatchObject({ 'orphan-node-service-deleted': 1, 'suspect-orphan-node': 1, 'stale-allocation': 0 });
    for (const f of doc.findings) {
      expect(Object.keys(f)).toEqual(['kind', 'cell_uuid', 'cell_name', 'summary', 'objects', 'suggestion']);
      expect(f.summary).not.toContain('\n');
    }
  });

  it.each([
    ['malformed JSON', '[{"UUID": ', 'not valid JSON', 127],
    // Implausible ground truth, not bad input (issue 23): exit 2.
    ['an empty file', '', 'the file is empty', 2],
    // The line is not echoed: a password file given by mistake must not leak.
    ['a non-uuid line', 'bm-gold-2\n', 'line 1: the line is not a valid UUID (9 characters', 127],
    ['an entry without uuid', '[{"Name": "bm-gold-2"}]', 'entry 1 has no UUID', 127],
  ])('a bad --ironic-nodes file (%s) exits 127, or 2 when empty, with one line and reads nothing', async (_name, content, problem, code) => {
    const file = join(d.dir, 'bad-nodes');
    writeFileSync(file, content);
    const r = await runBin([...d.args, 'audit', '--ironic-nodes', file]);
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`nova-reconcile: error: --ironic-nodes ${file}: ${problem}`);
  });

  it('a missing --ironic-nodes file exits 127', async () => {
    const r = await runBin([...d.args, 'audit', '--ironic-nodes', join(d.dir, 'nope.json')]);
    expect(r.code).toBe(127);
    expect(r.stderr).toContain('cannot read the file (no such file)');
  });
});

describeEachDialect('audit on stale-provider', (dialect) => {
  const S = STALE_PROVIDER;
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'stale-provider', 'au');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('reports both stale providers, the name conflicts, the blocked nodes and the classified allocations', async () => {
    const r = await auditJson(d);
    expect(r.code).toBe(3);
    expect(summary(r.doc)).toEqual([
      ['node-without-provider', S.empty.liveNodeUuid],
      ['node-without-provider', S.withAllocations.liveNodeUuid],
      ['provider-without-node', S.empty.staleUuid],
      ['provider-without-node', S.withAllocations.staleUuid],
      ['provider-name-conflict', S.empty.liveNodeUuid],
      ['provider-name-conflict', S.withAllocations.liveNodeUuid],
      ['stale-allocation', S.server.uuid],
      ['stale-allocation', S.orphan.uuid],
    ]);
    const conflict = r.doc.findings.find((f) => f.kind === 'provider-name-conflict' && f.cell_uuid === CELL.cell1);
    expect(conflict?.objects).toMatchObject({ provider_uuid: S.empty.staleUuid, provider_name: 'compute-7.sandbox.example.org', provider_is_stale: true });
    // The blockers are stale, so freeing the names is cleanup_providers' work.
    const blocked = r.doc.findings.filter((f) => f.kind === 'node-without-provider' || f.kind === 'provider-name-conflict');
    expect(new Set(blocked.map((f) => f.suggestion))).toEqual(new Set([`nova-reconcile --config-file ${d.confPath} placement cleanup_providers`]));
    const classes = r.doc.findings.filter((f) => f.kind === 'stale-allocation').map((f) => [f.objects['consumer_uuid'], f.objects['class'], f.objects['resources']]);
    expect(classes).toEqual([
      [S.server.uuid, 'live-instance-on-node', 'VCPU=4, MEMORY_MB=8192, DISK_GB=40'],
      [S.orphan.uuid, 'orphaned', 'VCPU=1, MEMORY_MB=2048, DISK_GB=20'],
    ]);
  });

  it('--cell (uuid or name) reports only that cell; an unknown --cell exits 127', async () => {
    const r = await auditJson(d, '--cell', CELL.cell1);
    expect(r.code).toBe(3);
    expect(new Set(r.doc.findings.map((f) => f.cell_uuid))).toEqual(new Set([CELL.cell1]));
    expect(r.doc.findings).toHaveLength(3);
    expect((await auditJson(d, '--cell', 'cell1')).doc).toEqual(r.doc);

    const bad = await runBin([...d.args, 'audit', '--cell', 'cell9']);
    expect(bad).toMatchObject({ code: 127, stdout: '' });
    expect(bad.stderr).toBe(`nova-reconcile: error: --cell "cell9": no cell has this uuid or name (run \`nova-reconcile --config-file ${d.confPath} cell_v2 list_cells\` to see the cells)\n`);
    const unknown = await runBin([...d.args, 'audit', '--cell', '11111111-2222-3333-4444-555555555555']);
    expect(unknown.code).toBe(127);
    expect(unknown.stderr).toContain('cell 11111111-2222-3333-4444-555555555555 has no mapping');
  });
});

describeEachDialect('audit refuses to run on partial knowledge', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'au');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('without [placement_database] connection: exit 2, one line', async () => {
    const conf = join(d.dir, 'no-placement.conf');
    writeFileSync(conf, ['[api_database]', `connection = ${d.url('api')}`, '[database]', `connection = ${d.url('cell1')}`, ''].join('\n'));
    const r = await runBin(['--config-file', conf, 'audit']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('no [placement_database] connection is set');
  });

  it('a cell that cannot be read fails the whole audit, naming the cell', async () => {
    const broken = d.dialect === 'sqlite' ? 'sqlite:////nonexistent/nova_cell2.sqlite' : d.url('cell2').replace(/\/[^/]+$/, '/nr_no_such_database');
    await d.knex('api')('cell_mappings').update({ database_connection: broken }).where('uuid', CELL.cell2);
    const r = await runBin([...d.args, 'audit', '--format', 'json']);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout) as { error: { kind: string; message: string } };
    expect(doc.error.kind).toBe('connection');
    expect(doc.error.message).toContain(`cannot read cell 'cell2' (${CELL.cell2})`);
    expect(doc).not.toHaveProperty('findings');
  });
});

describeEachDialect('audit on ironic-failover (the 409 of a rebalance)', (dialect) => {
  let d: TestDeployment;
  beforeEach(async () => {
    d = await createTestDeployment(dialect, 'ironic-failover', 'au');
  });
  afterEach(async () => {
    await d.cleanup();
  });

  it('the name is held by a live duplicate: every suggestion is compute_node rebalance, and following it leaves a clean audit', async () => {
    const r = await auditJson(d);
    expect(r.code).toBe(3);
    const blocked = r.doc.findings.find((f) => f.kind === 'node-without-provider');
    expect(blocked?.objects['blocking_provider_uuid']).toBe(IRONIC_FAILOVER.nodeUuid);
    expect(r.doc.findings.map((f) => f.suggestion.replace(/ --include-down$/, ''))).toEqual(r.doc.findings.map(() => `nova-reconcile --config-file ${d.confPath} compute_node rebalance`));
    // cleanup_providers has nothing to do here (it would not free the name) ...
    const cleanup = await runBin([...d.args, 'placement', 'cleanup_providers']);
    expect(cleanup.code, cleanup.stderr).toBe(0);
    // ... rebalance does.
    const apply = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
    expect(apply.code, apply.stdout + apply.stderr).toBe(4);
    const after = await auditJson(d);
    expect([after.code, after.doc.findings]).toEqual([0, []]);
  });
});

describe('audit --help', () => {
  it('documents the kinds and exit codes', async () => {
    const r = await runBin(['audit', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('stale-allocation');
    expect(r.stdout).toMatch(/ 3 {2}findings were reported/);
  });
});
