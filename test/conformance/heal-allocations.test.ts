// placement heal_allocations against the real nova-manage 26.2.2, whose
// Placement client runs on an in-process Placement 8.0.0 over the same
// placement database (nova-on-placement.ts). On two identical deployments
// that the real Nova built (every provider at reserved 0, so the API path
// succeeds), the tier compares stdout and exit code byte for byte, for the
// dry run, the run and the re-run, and the placement rows after the run:
// allocations (provider, consumer, class, amount), consumers (uuid,
// generation, project, user) and provider generations. Allocation ids and
// timestamps differ by design.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addIronicNode, addServer, type Flavor } from '../../src/sandbox/builders.js';
import { scenarioClock } from '../../src/sandbox/clock.js';
import { insertInstance, insertInstanceExtra, insertInstanceMapping } from '../../src/sandbox/rows.js';
import { LIBVIRT_SERVER, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { runNovaManageOnPlacement } from './nova-on-placement.js';
import { createRealDeployment, realNovaAvailable, realNovaSkipNotice, type RealDeployment } from './real-nova.js';
import { populateScenario, realScenarioDatabases, runOurs, type RealScenarioDatabases } from './real-scenario.js';

const available = realNovaAvailable();
const required = process.env['CI'] === 'true';
if (!available && !required) console.warn(`\n*** ${realNovaSkipNotice}\n`);

const P = 'c0ffee00000000000000000000000000';
const U = 'c0ffee00000000000000000000000001';
const NEW_P = 'c0ffee00000000000000000000000002';
const LOST = 'aaaa0000-0000-4000-8000-000000000001';
const NEW_PROJECT = 'aaaa0000-0000-4000-8000-000000000002';
const WRONG_OWNER = 'aaaa0000-0000-4000-8000-000000000003';
const OVERRIDE = 'aaaa0000-0000-4000-8000-000000000004';
const BAREMETAL = 'aaaa0000-0000-4000-8000-000000000005';
const BUSY = 'aaaa0000-0000-4000-8000-000000000006';
const IN_CELL2 = 'aaaa0000-0000-4000-8000-000000000007';
const IRONIC_NODE = '1e0f0000-0000-4000-8000-000000000001';

/** Placement as a lost allocation leaves it: the consumer and its rows gone (a cascade delete, bug 1841481). */
async function loseAllocations(p: Knex, consumer: string): Promise<void> {
  await p('allocations').delete().where('consumer_id', consumer);
  await p('consumers').delete().where('uuid', consumer);
}

/**
 * The libvirt scenario plus: a server whose allocations were lost; one of a
 * project placement has never seen; one whose consumer has another project
 * and user; one whose flavor overrides MEMORY_MB and has swap and ephemeral
 * disk; an ironic server (resources:VCPU/MEMORY_MB/DISK_GB=0, one
 * CUSTOM_BAREMETAL) on a node at reserved 0; a server in a task state (left
 * alone); a lost server in cell2.
 */
async function buildState(r: RealScenarioDatabases): Promise<void> {
  await populateScenario(r.dbs, 'libvirt');
  const p = r.knex.placement;
  const clock = scenarioClock();
  const rows = (await p('resource_providers').select('id', 'name')) as Array<{ id: number; name: string }>;
  const rp = (host: string): number => {
    const row = rows.find((x) => x.name === libvirtHypervisorHostname(host));
    if (row === undefined) throw new Error(`no provider for ${host}`);
    return Number(row.id);
  };
  const server = (uuid: string, host: string, flavor: Flavor, cell: 'cell1' | 'cell2', age: number, projectId = P) =>
    addServer(r.knex[cell], r.knex.api, p, {
      uuid,
      displayName: `s-${uuid.slice(-2)}`,
      host,
      node: libvirtHypervisorHostname(host),
      providerId: rp(host),
      flavor,
      projectId,
      userId: U,
      clock,
      cellId: r.dbs.cellIds[cell],
      age,
    });
  const small: Flavor = { id: 1, vcpus: 1, memoryMb: 512, rootGb: 1 };
  await server(LOST, 'compute-2', small, 'cell1', 5000);
  await server(NEW_PROJECT, 'compute-2', small, 'cell1', 4000, NEW_P);
  await server(WRONG_OWNER, 'compute-3', small, 'cell1', 3000);
  await server(OVERRIDE, 'compute-3', { id: 4, vcpus: 2, memoryMb: 2048, rootGb: 10, extraSpecs: { 'resources:MEMORY_MB': '1024' } }, 'cell1', 2000);
  await server(IN_CELL2, 'compute-4', small, 'cell2', 1000);
  for (const c of [LOST, NEW_PROJECT, OVERRIDE, IN_CELL2]) await loseAllocations(p, c);
  // The consumer as written before the instance changed hands (another project and user).
  const other = (await p('projects').insert({ external_id: 'old-project', created_at: clock.ago(9000) })) as number[];
  const otherUser = (await p('users').insert({ external_id: 'old-user', created_at: clock.ago(9000) })) as number[];
  await p('consumers').update({ project_id: other[0], user_id: otherUser[0] }).where('uuid', WRONG_OWNER);

  // An ironic node with its instance and no allocation; the node kept reserved 0 here so the API path succeeds.
  await addIronicNode(r.knex.cell1, p, { nodeUuid: IRONIC_NODE, host: 'ironic-1', resourceClass: 'CUSTOM_BAREMETAL', clock });
  const baremetal: Flavor = {
    id: 7,
    vcpus: 32,
    memoryMb: 262144,
    rootGb: 900,
    extraSpecs: { 'resources:CUSTOM_BAREMETAL': '1', 'resources:VCPU': '0', 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0' },
  };
  const createdAt = clock.ago(6000);
  await insertInstance(r.knex.cell1, { uuid: BAREMETAL, host: 'ironic-1', node: IRONIC_NODE, vmState: 'active', projectId: P, userId: U, vcpus: 32, memoryMb: 262144, rootGb: 900, flavorId: 7, createdAt });
  await insertInstanceExtra(r.knex.cell1, { instanceUuid: BAREMETAL, flavor: baremetal, createdAt });
  await insertInstanceMapping(r.knex.api, { instanceUuid: BAREMETAL, cellId: r.dbs.cellIds.cell1, projectId: P, userId: U, createdAt });
  // Resizing: nova leaves an instance in a task state alone.
  await server(BUSY, 'compute-5', small, 'cell1', 7000);
  await loseAllocations(p, BUSY);
  await r.knex.cell1('instances').update({ task_state: 'resize_prep' }).where('uuid', BUSY);
}

interface PlacementRows {
  readonly allocations: string[];
  readonly consumers: string[];
  readonly providers: string[];
  readonly projects: string[];
}

async function placementRows(p: Knex): Promise<PlacementRows> {
  const allocations = (await p('allocations as a')
    .join('resource_providers as rp', 'rp.id', 'a.resource_provider_id')
    .join('resource_classes as rc', 'rc.id', 'a.resource_class_id')
    .select('rp.uuid', 'a.consumer_id', 'rc.name', 'a.used')) as Array<{ uuid: string; consumer_id: string; name: string; used: number }>;
  const consumers = (await p('consumers as c')
    .join('projects as pr', 'pr.id', 'c.project_id')
    .join('users as u', 'u.id', 'c.user_id')
    .select('c.uuid', 'c.generation', 'pr.external_id as project', 'u.external_id as user')) as Array<{ uuid: string; generation: number; project: string; user: string }>;
  const providers = (await p('resource_providers').select('uuid', 'generation')) as Array<{ uuid: string; generation: number }>;
  const projects = (await p('projects').select('external_id')) as Array<{ external_id: string }>;
  return {
    allocations: allocations.map((a) => `${a.uuid} ${a.consumer_id} ${a.name} ${a.used}`).sort(),
    consumers: consumers.map((c) => `${c.uuid} ${c.generation} ${c.project} ${c.user}`).sort(),
    providers: providers.map((x) => `${x.uuid} ${x.generation}`).sort(),
    projects: projects.map((x) => x.external_id).sort(),
  };
}

interface Deployed {
  readonly d: RealDeployment;
  readonly r: RealScenarioDatabases;
}

async function deploy(prefix: string): Promise<Deployed> {
  const d = await createRealDeployment(prefix);
  const r = await realScenarioDatabases(d);
  await buildState(r);
  return { d, r };
}

const HEAL = ['placement', 'heal_allocations'];

/** Each real deployment has its own cell uuids: nova's lines name them, so they are mapped onto ours before comparing. */
function asOurs(stdout: string, nova: Deployed, ours: Deployed): string {
  let out = stdout;
  for (const cell of ['cell0', 'cell1', 'cell2'] as const) out = out.replaceAll(nova.d.cells[cell], ours.d.cells[cell]);
  return out;
}

describe('placement heal_allocations: the real nova-manage (on an in-process Placement) vs nova-reconcile', () => {
  it.runIf(!available && required)('real Nova is installed (required when CI=true)', () => {
    throw new Error(realNovaSkipNotice);
  });

  describe.skipIf(!available)('on databases the real Nova built', () => {
    let novaSide: Deployed;
    let oursSide: Deployed;
    beforeAll(async () => {
      [novaSide, oursSide] = await Promise.all([deploy('ha_nova'), deploy('ha_ours')]);
    });
    afterAll(async () => {
      for (const x of [novaSide, oursSide]) {
        if (x === undefined) continue;
        await x.r.destroy();
        await x.d.drop();
      }
    });

    it.each([
      ['--dry-run --verbose --skip-port-allocations'],
      ['--dry-run --skip-port-allocations'],
      ['--dry-run --verbose --skip-port-allocations --max-count 2'],
      ['--dry-run --verbose --skip-port-allocations --instance ' + LOST],
      ['--dry-run --verbose --skip-port-allocations --instance ' + WRONG_OWNER + ' --force'],
      ['--dry-run --verbose --skip-port-allocations --cell f0000000-0000-4000-8000-00000000000f'],
      ['--skip-port-allocations --cell f0000000-0000-4000-8000-00000000000f --instance ' + LOST],
      ['--skip-port-allocations --force'],
      ['--skip-port-allocations --max-count 0'],
      ['--skip-port-allocations --max-count x'],
      ['--skip-port-allocations --instance f0000000-0000-4000-8000-00000000000f'],
    ])('%s: same stdout and exit code, nothing written', async (argLine) => {
      const args = argLine.split(' ').filter((a) => a !== '');
      const before = await placementRows(oursSide.r.knex.placement);
      const nova = await runNovaManageOnPlacement(novaSide.d, [...HEAL, ...args]);
      const ours = await runOurs(oursSide.d, [...HEAL, ...args]);
      expect({ code: ours.code, stdout: ours.stdout }).toEqual({ code: nova.code, stdout: asOurs(nova.stdout, novaSide, oursSide) });
      expect(await placementRows(oursSide.r.knex.placement)).toEqual(before);
      expect(await placementRows(novaSide.r.knex.placement)).toEqual(before);
    });

    it('the run: same stdout, exit code and placement rows; the re-run is clean; undo restores ours exactly', async () => {
      const before = await placementRows(oursSide.r.knex.placement);
      expect(await placementRows(novaSide.r.knex.placement)).toEqual(before);

      const nova = await runNovaManageOnPlacement(novaSide.d, [...HEAL, '--verbose', '--skip-port-allocations']);
      const ours = await runOurs(oursSide.d, [...HEAL, '--verbose', '--skip-port-allocations']);
      expect(nova.code).toBe(0);
      expect({ code: ours.code, stdout: ours.stdout }).toEqual({ code: nova.code, stdout: asOurs(nova.stdout, novaSide, oursSide) });
      expect(ours.stderr).toMatch(/^journal: \S+\.jsonl\n$/);
      const after = await placementRows(oursSide.r.knex.placement);
      expect(after).toEqual(await placementRows(novaSide.r.knex.placement));
      // Hand-checked: the instances healed, the override, the ironic zeros left out, the new project, the busy one left alone.
      expect(after.allocations).toContain(`${IRONIC_NODE} ${BAREMETAL} CUSTOM_BAREMETAL 1`);
      expect(after.allocations.filter((a) => a.includes(BAREMETAL))).toHaveLength(1);
      expect(after.allocations.filter((a) => a.includes(OVERRIDE) && a.includes('MEMORY_MB 1024'))).toHaveLength(1);
      expect(after.allocations.some((a) => a.includes(BUSY))).toBe(false);
      expect(after.consumers).toContain(`${WRONG_OWNER} 2 ${P} ${U}`);
      expect(after.consumers).toContain(`${NEW_PROJECT} 1 ${NEW_P} ${U}`);
      expect(after.consumers).toContain(`${LIBVIRT_SERVER.uuid} 1 ${LIBVIRT_SERVER.projectId} ${LIBVIRT_SERVER.userId}`);

      const novaAgain = await runNovaManageOnPlacement(novaSide.d, [...HEAL, '--verbose', '--skip-port-allocations']);
      const oursAgain = await runOurs(oursSide.d, [...HEAL, '--verbose', '--skip-port-allocations']);
      expect(oursAgain.code).toBe(4);
      expect({ code: oursAgain.code, stdout: oursAgain.stdout }).toEqual({ code: novaAgain.code, stdout: asOurs(novaAgain.stdout, novaSide, oursSide) });

      const journal = /^journal: (\S+)$/m.exec(ours.stderr)?.[1] ?? '';
      const undo = await runOurs(oursSide.d, ['undo', journal, '--apply']);
      expect(undo.code).toBe(4);
      // Projects and users stay, as Placement never deletes them.
      expect(await placementRows(oursSide.r.knex.placement)).toEqual({ ...before, projects: after.projects });
    });
  });
});
