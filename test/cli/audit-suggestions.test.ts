// Issue 13 item 8: the audit's suggestions lead to a fix and agree with the
// commands they name, and every suggested command keeps the user's
// --config-file and --config-dir. Through the built binary on SQLite and
// MariaDB, on states written as Nova writes them (sandbox builders).
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { createTestDeployment, describeEachDialect, type TestDeployment } from '../helpers/test-deployment.js';
import { addIronicNode } from '../../src/sandbox/builders.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { insertAllocations } from '../../src/sandbox/rows.js';
import { IRONIC_HA } from '../../src/sandbox/scenarios/ironic-ha.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER } from '../../src/sandbox/scenarios/libvirt.js';

const N = IRONIC_HA.nodeUuid;
const GONE = IRONIC_HA.hosts[0] as string;
const OWNER = IRONIC_HA.hosts[1] as string;
/** A second ironic node, on ironic-compute-1, so that the ring (services with ironic nodes, §6) has a live member. */
const N1 = 'b3c4d5e6-1234-4f56-8a9b-0c1d2e3f4a5b';

interface Finding {
  kind: string;
  suggestion: string;
  objects: Record<string, unknown>;
}

async function dump(k: Knex, tables: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows: Array<Record<string, unknown>> = await k(t).select('*');
    out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([c, v]) => [c, v === null ? null : String(v)])))).sort();
  }
  return out;
}

async function snapshotAll(d: TestDeployment): Promise<unknown> {
  return {
    api: await dump(d.knex('api'), ['host_mappings']),
    cell1: await dump(d.knex('cell1'), ['compute_nodes', 'instances', 'services']),
    placement: await dump(d.knex('placement'), ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_provider_traits']),
  };
}

async function audit(args: readonly string[]): Promise<{ code: number; findings: Finding[] }> {
  const r = await runBin([...args, 'audit', '--format', 'json']);
  expect([0, 3], r.stdout + r.stderr).toContain(r.code);
  return { code: r.code, findings: (JSON.parse(r.stdout) as { findings: Finding[] }).findings };
}

describeEachDialect('audit suggestions (issue 13 item 8)', (dialect) => {
  let d: TestDeployment;
  afterEach(async () => {
    await d.cleanup();
  });

  describe('an ironic node of a deleted service, its host unmapped', () => {
    /** The user's configuration: a file whose path needs quoting, and a --config-dir after it. */
    let config: string[];
    let prefix: string;
    beforeEach(async () => {
      d = await createTestDeployment(dialect, 'ironic-ha', 'as');
      const dir = join(d.dir, 'my conf');
      mkdirSync(join(dir, 'nova.conf.d'), { recursive: true });
      copyFileSync(d.confPath, join(dir, 'nova.conf'));
      config = ['--config-file', join(dir, 'nova.conf'), '--config-dir', join(dir, 'nova.conf.d')];
      prefix = `nova-reconcile --config-file '${join(dir, 'nova.conf')}' --config-dir '${join(dir, 'nova.conf.d')}'`;
      await addIronicNode(d.knex('cell1'), d.knex('placement'), { nodeUuid: N1, host: OWNER, resourceClass: IRONIC_HA.resourceClass, clock: scenarioClock() });
      expect((await runBin([...config, 'cell_v2', 'discover_hosts', '--by-service'])).code).toBe(0);
      // What the API's service delete did before it also deleted the nodes:
      // the service row soft-deleted, its host mapping removed; the compute
      // node stays live.
      const cell = d.knex('cell1');
      await cell('services').update({ deleted: cell.raw('id'), deleted_at: '2026-06-01 00:00:00' }).where('host', GONE);
      await d.knex('api')('host_mappings').where('host', GONE).del();
    });

    it('is the rebalance\'s (re-home, as Nova\'s ring owner adopts it), never cleanup_orphans or discover_hosts; the rebalance fixes it', async () => {
      const before = await snapshotAll(d);
      const { code, findings } = await audit(config);
      expect(code).toBe(3);
      expect(findings.map((f) => [f.kind, f.suggestion]).sort()).toEqual([
        ['node-of-dead-service', `${prefix} compute_node rebalance`],
        ['unmapped-node', `${prefix} compute_node rebalance`],
      ]);
      // cleanup_orphans agrees: not its node.
      const orphans = await runBin([...config, 'compute_node', 'cleanup_orphans', '--apply']);
      expect(orphans.code, orphans.stdout + orphans.stderr).toBe(0);
      expect(await snapshotAll(d)).toEqual(before);

      const journal = join(d.dir, 're-home.jsonl');
      const applied = await runBin([...config, 'compute_node', 'rebalance', '--apply', '--journal', journal]);
      expect(applied.code, applied.stdout + applied.stderr).toBe(4);
      expect(applied.stdout).toContain(`re-home compute node`);
      const cn = (await d.knex('cell1')('compute_nodes').where('uuid', N).first()) as { host: string; service_id: number; deleted: number };
      const owner = (await d.knex('cell1')('services').where('host', OWNER).first()) as { id: number };
      expect([cn.host, Number(cn.service_id), Number(cn.deleted)]).toEqual([OWNER, Number(owner.id), 0]);
      const after = (await snapshotAll(d)) as { placement: unknown };
      expect(after.placement).toEqual((before as { placement: unknown }).placement);
      expect((await runBin([...config, 'compute_node', 'rebalance', '--apply'])).code).toBe(0);
      expect((await audit(config)).findings).toEqual([]);

      const undo = await runBin([...config, 'undo', journal, '--apply', '--journal', join(d.dir, 'undo.jsonl')]);
      expect(undo.code, undo.stdout + undo.stderr).toBe(4);
      expect(await snapshotAll(d)).toEqual(before);
    });

    it("an error's hint keeps the configuration too", async () => {
      const r = await runBin([...config, 'compute_node', 'rebalance', '--cell', 'c0ffee00-0000-4000-8000-000000000000']);
      expect(r.code).toBe(127);
      expect(r.stderr).toContain(`run \`${prefix} cell_v2 list_cells\` to see the cells`);
    });
  });

  it('the provider of a soft-deleted ironic node that comes back (bug 1839560) is not offered cleanup_providers', async () => {
    d = await createTestDeployment(dialect, 'ironic-ha', 'ar');
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts', '--by-service'])).code).toBe(0);
    // Zed's orphan delete while the node was in maintenance: the row is soft-deleted (host-guarded), the provider stays.
    const cell = d.knex('cell1');
    await cell('compute_nodes').update({ deleted: cell.raw('id'), deleted_at: '2026-06-01 00:00:00' }).where('uuid', N);
    const { findings } = await audit(d.args);
    const stale = findings.find((f) => f.kind === 'provider-without-node');
    expect(stale?.objects['provider_uuid']).toBe(N);
    expect(stale?.suggestion).not.toContain('cleanup_providers');
    expect(stale?.suggestion).toContain(`nova-reconcile --config-file ${d.confPath} compute_node restore --uuid ${N}`);
    for (const f of findings) expect(f.suggestion).not.toContain('cleanup_providers');
  });

  it("an allocation on another live node's provider points at placement audit --delete, which fixes it", async () => {
    d = await createTestDeployment(dialect, 'libvirt', 'aa');
    expect((await runBin([...d.args, 'cell_v2', 'discover_hosts'])).code).toBe(0);
    const p = d.knex('placement');
    const host2 = LIBVIRT_HOSTS.find((h) => h.host === 'compute-2');
    const rp2 = (await p('resource_providers').where('uuid', host2?.nodeUuid).first()) as { id: number; generation: number };
    // An evacuation's leftover, as Placement writes allocations: the provider's and the consumer's generations + 1.
    await insertAllocations(p, [
      { providerId: rp2.id, consumerUuid: LIBVIRT_SERVER.uuid, resourceClass: 'VCPU', used: 2 },
      { providerId: rp2.id, consumerUuid: LIBVIRT_SERVER.uuid, resourceClass: 'MEMORY_MB', used: 4096 },
    ]);
    await p('resource_providers').update({ generation: rp2.generation + 1 }).where('id', rp2.id);
    await p('consumers').increment('generation', 1).where('uuid', LIBVIRT_SERVER.uuid);
    const { findings } = await audit(d.args);
    expect(findings.map((f) => f.kind)).toEqual(['allocation-on-other-node']);
    const suggestion = findings[0]?.suggestion ?? '';
    expect(suggestion).toBe(`nova-reconcile --config-file ${d.confPath} placement audit --resource_provider ${host2?.nodeUuid ?? ''} --delete`);
    expect(suggestion).not.toContain('heal_allocations');

    // Run the suggestion as printed.
    const ran = await runBin(suggestion.split(' ').slice(1));
    expect(ran.code, ran.stdout + ran.stderr).toBe(4);
    const left: Array<{ resource_provider_id: number }> = await p('allocations').select('resource_provider_id').where('consumer_id', LIBVIRT_SERVER.uuid);
    expect(left.length).toBe(3);
    expect(left.every((a) => Number(a.resource_provider_id) !== Number(rp2.id))).toBe(true);
    expect((await audit(d.args)).findings).toEqual([]);
  });
});
