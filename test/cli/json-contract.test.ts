// The JSON contract (issue 18): every command that has --format json prints
// one document that validates against its schema in schemas/ (ajv, strict),
// in success and in error, with schema_version and `changed`; dry runs say
// `would_change`. Run on the built binary against SQLite deployments built
// by the sandbox scenarios; the set of commands covered is checked against
// the registry, so a new command with --format json cannot be forgotten.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin, type CliResult } from '../helpers/cli.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { COMMANDS } from '../../src/dispatch/registry.js';
import { jsonSchemaIndex } from '../../src/cli/json-contract.js';
import { SANDBOX_CELL_UUIDS as CELL } from '../../src/sandbox/create-sandbox.js';
import { DELETED_IRONIC_NODE, deletedIronicNodeIronicList } from '../../src/sandbox/scenarios/deleted-ironic-node.js';
import { IRONIC_FAILOVER } from '../../src/sandbox/scenarios/ironic-failover.js';
import { STALE_PROVIDER } from '../../src/sandbox/scenarios/stale-provider.js';

const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
const validators = new Map<string, ValidateFunction>();
for (const file of readdirSync(SCHEMA_DIR)) {
  validators.set(file.replace(/\.schema\.json$/, ''), ajv.compile(JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')) as object));
}

type Doc = Record<string, unknown>;

/** Commands whose documents were validated here, by name. */
const covered = new Set<string>();
/** The schemas each command's documents were validated against (its spec's jsonSchemas must name them). */
const printed = new Map<string, Set<string>>();

function validate(schema: string, r: CliResult, command: string): Doc {
  const v = validators.get(schema);
  if (v === undefined) throw new Error(`no schema ${schema}`);
  let doc: Doc;
  try {
    doc = JSON.parse(r.stdout) as Doc;
  } catch {
    throw new Error(`${command}: stdout is not one JSON document (exit ${r.code}): ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 300)}`);
  }
  if (!v(doc)) throw new Error(`${command}: the document does not match schemas/${schema}.schema.json: ${ajv.errorsText(v.errors)}\n${r.stdout.slice(0, 1500)}`);
  expect(doc['schema_version']).toBe(1);
  expect(typeof doc['changed']).toBe('boolean');
  covered.add(command);
  if (schema !== 'error') printed.set(command, (printed.get(command) ?? new Set()).add(schema));
  return doc;
}

/** Every key of every object in snake_case (data such as resource classes and finding kinds aside). */
function camelKeys(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => camelKeys(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [...(/^[a-z]+[A-Z]/.test(k) ? [`${path}.${k}`] : []), ...camelKeys(v, `${path}.${k}`)]);
}

describe('every --format json document validates against its schema [sqlite]', () => {
  const deployments: TestDeployment[] = [];
  const json = async (d: TestDeployment, ...argv: string[]): Promise<CliResult> => runBin([...d.args, ...argv, '--format', 'json']);
  afterAll(async () => {
    for (const d of deployments) await d.cleanup();
  });

  describe('libvirt', () => {
    let d: TestDeployment;
    beforeAll(async () => {
      d = await createTestDeployment('sqlite', 'libvirt', 'jc');
      deployments.push(d);
    });

    it('discover_hosts --dry-run says would_change while it lists hosts, then false once they are mapped', async () => {
      const dry = await json(d, 'cell_v2', 'discover_hosts', '--dry-run');
      expect(dry.code).toBe(0);
      const plan = validate('cell_v2-discover_hosts', dry, 'cell_v2 discover_hosts');
      expect(plan).toMatchObject({ dry_run: true, changed: false, would_change: true });
      expect((plan['created'] as unknown[]).length).toBeGreaterThan(0);
      const listedBefore = validate('cell_v2-list_hosts', await json(d, 'cell_v2', 'list_hosts'), 'cell_v2 list_hosts');
      expect(listedBefore['hosts']).toEqual([]);

      const real = await json(d, 'cell_v2', 'discover_hosts');
      expect(validate('cell_v2-discover_hosts', real, 'cell_v2 discover_hosts')).toMatchObject({ dry_run: false, changed: true });
      expect(validate('cell_v2-discover_hosts', await json(d, 'cell_v2', 'discover_hosts', '--dry-run'), 'cell_v2 discover_hosts')).toMatchObject({ would_change: false, created: [] });
      expect(validate('cell_v2-discover_hosts', await json(d, 'cell_v2', 'discover_hosts'), 'cell_v2 discover_hosts')).toMatchObject({ changed: false });
    });

    it('discover_hosts --expect: ok is false whenever the run exits non-zero (a host never mapped; --strict with nothing new), true on exit 0', async () => {
      const missing = await json(d, 'cell_v2', 'discover_hosts', '--expect', 'compute-1,never-1', '--wait', '1', '--interval', '1');
      expect(missing.code).toBe(1);
      expect(validate('cell_v2-discover_hosts', missing, 'cell_v2 discover_hosts')).toMatchObject({ ok: false, missing: ['never-1'], mapped: ['compute-1'] });
      const strict = await json(d, 'cell_v2', 'discover_hosts', '--expect', 'compute-1', '--strict');
      expect(strict.code).toBe(1);
      expect(validate('cell_v2-discover_hosts', strict, 'cell_v2 discover_hosts')).toMatchObject({ ok: false, missing: [] });
      const met = await json(d, 'cell_v2', 'discover_hosts', '--expect', 'compute-1');
      expect(met.code).toBe(0);
      expect(validate('cell_v2-discover_hosts', met, 'cell_v2 discover_hosts')).toMatchObject({ ok: true, missing: [] });
      // The schema itself refuses a document that names a missing host and says ok.
      const v = validators.get('cell_v2-discover_hosts');
      expect(v?.({ ...(JSON.parse(missing.stdout) as Doc), ok: true })).toBe(false);
    });

    it('listings: list_cells, list_hosts (and its unknown cell), compute_node list with a boolean mapped', async () => {
      validate('cell_v2-list_cells', await json(d, 'cell_v2', 'list_cells'), 'cell_v2 list_cells');
      const hosts = validate('cell_v2-list_hosts', await json(d, 'cell_v2', 'list_hosts'), 'cell_v2 list_hosts');
      expect((hosts['hosts'] as unknown[]).length).toBe(5);
      const missing = await json(d, 'cell_v2', 'list_hosts', '--cell_uuid', 'nope');
      expect(missing.code).toBe(1);
      expect(validate('cell_v2-list_hosts', missing, 'cell_v2 list_hosts')).toMatchObject({ changed: false, error: { exit_code: 1 } });
      const nodes = validate('compute_node-list', await json(d, 'compute_node', 'list'), 'compute_node list');
      const list = nodes['compute_nodes'] as Doc[];
      expect(list.length).toBe(5);
      for (const n of list) expect(n['mapped']).toBe(true);
    });

    it('audit, placement audit, heal_allocations, prune_host_mappings (a plan) and discover_hosts --remap', async () => {
      const audit = await json(d, 'audit');
      expect([0, 3]).toContain(audit.code);
      expect(validate('audit', audit, 'audit')).toMatchObject({ changed: false });
      const pa = await json(d, 'placement', 'audit');
      expect(validate('placement-audit', pa, 'placement audit')).toMatchObject({ delete: false, changed: false });
      const unknownRp = await json(d, 'placement', 'audit', '--resource_provider', 'c0ffee00-0000-4000-8000-000000000000');
      expect(validate('placement-audit', unknownRp, 'placement audit')).toMatchObject({ changed: false, error: { kind: 'not-found' } });
      const heal = await json(d, 'placement', 'heal_allocations', '--dry-run');
      expect(validate('placement-heal_allocations', heal, 'placement heal_allocations')).toMatchObject({ dry_run: true, changed: false });
      const prune = await json(d, 'cell_v2', 'prune_host_mappings');
      expect(validate('plan', prune, 'cell_v2 prune_host_mappings')).toMatchObject({ dry_run: true, changed: false, would_change: false });
      const remap = await json(d, 'cell_v2', 'discover_hosts', '--remap');
      expect(validate('plan', remap, 'cell_v2 discover_hosts')).toMatchObject({ dry_run: true, would_change: false });
    });

    it('delete_host says changed when it deleted, and not on each refusal', async () => {
      const gone = await json(d, 'cell_v2', 'delete_host', '--cell_uuid', CELL.cell2, '--host', 'compute-5');
      expect(gone.code).toBe(0);
      expect(validate('cell_v2-delete_host', gone, 'cell_v2 delete_host')).toMatchObject({ changed: true, result: 'deleted', nodes_unmapped: 1 });
      const again = await json(d, 'cell_v2', 'delete_host', '--cell_uuid', CELL.cell2, '--host', 'compute-5');
      expect(again.code).toBe(2);
      expect(validate('cell_v2-delete_host', again, 'cell_v2 delete_host')).toMatchObject({ changed: false, result: 'host-not-found' });
      const wrong = await json(d, 'cell_v2', 'delete_host', '--cell_uuid', CELL.cell2, '--host', 'compute-1');
      expect(validate('cell_v2-delete_host', wrong, 'cell_v2 delete_host')).toMatchObject({ changed: false, result: 'wrong-cell', mapped_cell_uuid: CELL.cell1 });
    });

    it('sandbox create, and its refusal as an error document', async () => {
      const dir = join(d.dir, 'sb');
      const r = await runBin(['sandbox', 'create', dir, '--scenario', 'empty', '--format', 'json']);
      expect(r.code).toBe(0);
      validate('sandbox-create', r, 'sandbox create');
      mkdirSync(join(d.dir, 'busy'));
      writeFileSync(join(d.dir, 'busy', 'x'), 'x');
      const busy = await runBin(['sandbox', 'create', join(d.dir, 'busy'), '--format', 'json']);
      expect(busy.code).not.toBe(0);
      expect(validate('error', busy, 'sandbox create')).toMatchObject({ changed: false, error: { exit_code: busy.code } });
    });

    it('errors of every kind are error documents: usage, configuration, a bad option value', async () => {
      const usage = await json(d, 'audit', '--kind', 'nope');
      expect(usage.code).toBe(127);
      expect(validate('error', usage, 'audit')).toMatchObject({ changed: false, error: { kind: 'usage', exit_code: 127 } });
      // --cell takes a name too (issue 21): one no cell has is not-found, same exit code.
      const unknownCell = await json(d, 'audit', '--cell', 'nope');
      expect(unknownCell.code).toBe(127);
      expect(validate('error', unknownCell, 'audit')).toMatchObject({ changed: false, error: { kind: 'not-found', exit_code: 127 } });
      const noConf = await runBin(['--config-file', join(d.dir, 'missing.conf'), 'compute_node', 'list', '--format', 'json']);
      expect(validate('error', noConf, 'compute_node list')).toMatchObject({ changed: false, error: { exit_code: noConf.code } });
      const planOut = await json(d, 'compute_node', 'cleanup_orphans', '--apply', '--plan-out', join(d.dir, 'p.json'));
      expect(validate('error', planOut, 'compute_node cleanup_orphans')).toMatchObject({ error: { kind: 'usage' } });
      const compatible = await runBin(['--config-file', join(d.dir, 'missing.conf'), 'cell_v2', 'list_hosts', '--format', 'json']);
      validate('error', compatible, 'cell_v2 list_hosts');
    });
  });

  describe('deleted-ironic-node: a plan applied and undone', () => {
    let d: TestDeployment;
    let nodesFile: string;
    beforeAll(async () => {
      d = await createTestDeployment('sqlite', 'deleted-ironic-node', 'jc');
      deployments.push(d);
      nodesFile = join(d.dir, 'nodes.json');
      writeFileSync(nodesFile, deletedIronicNodeIronicList());
    });

    it('cleanup_orphans: dry run (would_change), apply (changed), restore, undo dry run and apply', async () => {
      const dry = await json(d, 'compute_node', 'cleanup_orphans', '--ironic-nodes', nodesFile);
      expect(dry.code).toBe(3);
      const plan = validate('plan', dry, 'compute_node cleanup_orphans');
      expect(plan).toMatchObject({ dry_run: true, changed: false, would_change: true });
      expect(camelKeys(plan)).toEqual([]);
      const journal = join(d.dir, 'cleanup.jsonl');
      const applied = await json(d, 'compute_node', 'cleanup_orphans', '--ironic-nodes', nodesFile, '--apply', '--journal', journal);
      expect(applied.code).toBe(4);
      const doc = validate('plan', applied, 'compute_node cleanup_orphans');
      expect(doc).toMatchObject({ dry_run: false, changed: true, journal });
      expect(doc).not.toHaveProperty('would_change');

      const restore = await json(d, 'compute_node', 'restore', '--uuid', DELETED_IRONIC_NODE.goneNodeUuid);
      expect(validate('plan', restore, 'compute_node restore')).toMatchObject({ dry_run: true, changed: false });

      const undoDry = await json(d, 'undo', journal);
      expect(validate('undo', undoDry, 'undo')).toMatchObject({ dry_run: true, changed: false, would_change: true });
      const undone = await json(d, 'undo', journal, '--apply');
      expect(undone.code).toBe(4);
      expect(validate('undo', undone, 'undo')).toMatchObject({ dry_run: false, changed: true });
    });
  });

  describe('ironic-failover: rebalance, move and db ironic_compute_node_move', () => {
    let d: TestDeployment;
    beforeAll(async () => {
      d = await createTestDeployment('sqlite', 'ironic-failover', 'jc');
      deployments.push(d);
    });

    it('rebalance and move plans; camelCase change fields become snake_case', async () => {
      const rb = await json(d, 'compute_node', 'rebalance');
      const plan = validate('plan', rb, 'compute_node rebalance');
      expect(plan).toMatchObject({ would_change: true });
      const changes = (plan['units'] as Array<{ changes: Doc[] }>).flatMap((u) => u.changes);
      expect(changes.find((c) => c['kind'] === 'rehome-compute-node')).toMatchObject({ hypervisor_hostname: IRONIC_FAILOVER.nodeUuid, from_host: 'ironic-compute-0', to_host: 'ironic-compute-1' });
      expect(camelKeys(plan)).toEqual([]);
      const mv = await json(d, 'compute_node', 'move', '--node', IRONIC_FAILOVER.nodeUuid, '--to-host', 'ironic-compute-1', '--source-down-ok');
      validate('plan', mv, 'compute_node move');
    });

    it('db ironic_compute_node_move: changed (and moved) on success, an error document on refusal', async () => {
      const [dead] = IRONIC_FAILOVER.hosts;
      const refused = await json(d, 'db', 'ironic_compute_node_move', '--ironic-node-uuid', IRONIC_FAILOVER.nodeUuid, '--destination-host', 'nope');
      expect(refused.code).toBe(255);
      expect(validate('error', refused, 'db ironic_compute_node_move')).toMatchObject({ changed: false });
      // As in ironic-compute-node-move.test.ts: Zed rows have no service_id, and the duplicate blocks the destination.
      const cell = d.knex('cell1');
      const svc = (await cell('services').where('host', dead).first()) as { id: number };
      await cell('compute_nodes').update({ service_id: svc.id }).where('uuid', IRONIC_FAILOVER.nodeUuid);
      const u2 = (await cell('compute_nodes').where('uuid', IRONIC_FAILOVER.duplicateUuid).first()) as { id: number };
      await cell('compute_nodes').update({ deleted: u2.id, deleted_at: '2026-01-01 00:00:00' }).where('id', u2.id);
      const moved = await json(d, 'db', 'ironic_compute_node_move', '--ironic-node-uuid', IRONIC_FAILOVER.nodeUuid, '--destination-host', 'ironic-compute-1');
      expect(moved.code, moved.stdout).toBe(0);
      expect(validate('db-ironic_compute_node_move', moved, 'db ironic_compute_node_move')).toMatchObject({ changed: true, moved: true });
    });
  });

  describe('stale-provider: cleanup_providers applied', () => {
    let d: TestDeployment;
    beforeAll(async () => {
      d = await createTestDeployment('sqlite', 'stale-provider', 'jc');
      deployments.push(d);
    });

    it('dry run and apply', async () => {
      expect(validate('plan', await json(d, 'placement', 'cleanup_providers'), 'placement cleanup_providers')).toMatchObject({ would_change: true });
      const applied = await json(d, 'placement', 'cleanup_providers', '--apply');
      expect(validate('plan', applied, 'placement cleanup_providers')).toMatchObject({ changed: true });
      const healed = await json(d, 'placement', 'heal_allocations');
      expect(validate('placement-heal_allocations', healed, 'placement heal_allocations')).toMatchObject({ dry_run: false });
      const pa = await json(d, 'placement', 'audit', '--delete');
      expect(validate('placement-audit', pa, 'placement audit')).toMatchObject({ delete: true });
      expect(STALE_PROVIDER).toBeDefined();
    });
  });

  it("every command with --format json was covered, every schema is listed for the man page, and each command's spec names the schemas it printed", () => {
    const withJson = COMMANDS.filter((c) => c.options.some((o) => o.flags.startsWith('--format')) && c.path.join(' ') !== 'completion').map((c) => c.path.join(' '));
    expect([...covered].sort()).toEqual([...withJson].sort());
    const listed = jsonSchemaIndex(COMMANDS).map(([, file]) => file).join(' ');
    for (const name of validators.keys()) expect(listed).toContain(`schemas/${name}.schema.json`);
    for (const [command, schemas] of printed) {
      const claims = COMMANDS.find((c) => c.path.join(' ') === command)?.jsonSchemas.map((claim) => (typeof claim === 'string' ? claim : claim.schema));
      expect([command, [...schemas].sort()]).toEqual([command, [...new Set(claims)].sort()]);
    }
  });
});
