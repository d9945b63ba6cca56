// sandbox create and the scenarios: the files and nova.conf, the rows each
// scenario writes (checked as Nova would have written them), the refusal
// rules for DIR, and every scenario populating on MariaDB as well.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CELL0_UUID } from '../../src/db/deployment-databases.js';
import { migrateSchema } from '../../src/db/migrate.js';
import { parseNaiveUtc } from '../../src/domain/liveness.js';
import { ReconcileError } from '../../src/errors.js';
import { SANDBOX_CELL_UUIDS, createSandbox, mapSandboxCells, type SandboxInfo } from '../../src/sandbox/create-sandbox.js';
import { ensureResourceClass, insertComputeNodes, insertResourceProviders, insertServices } from '../../src/sandbox/rows.js';
import { SCENARIOS, findScenario, type Scenario } from '../../src/sandbox/scenarios.js';
import { IRONIC_HA } from '../../src/sandbox/scenarios/ironic-ha.js';
import { LIBVIRT_HOSTS, LIBVIRT_SERVER, libvirtHypervisorHostname } from '../../src/sandbox/scenarios/libvirt.js';
import { createScratchDatabases, describeMysql, loadDump, readReferenceDump, type ScratchDatabases } from '../helpers/mysql.js';
import { sqliteKnex } from '../helpers/sqlite.js';

interface Handles {
  readonly api: Knex;
  readonly cell0: Knex;
  readonly cell1: Knex;
  readonly cell2: Knex;
  readonly placement: Knex;
}

const TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

async function rows<T = Record<string, unknown>>(q: Knex.QueryBuilder): Promise<T[]> {
  return (await q) as T[];
}

async function count(db: Knex, table: string): Promise<number> {
  const r = (await db(table).count({ n: '*' }).first()) as { n: number | string } | undefined;
  return Number(r?.n ?? 0);
}

/** Invariants every scenario must keep, present and future. */
async function checkNovaConventions(h: Handles): Promise<void> {
  for (const cell of [h.cell0, h.cell1, h.cell2]) {
    for (const table of ['services', 'compute_nodes', 'instances']) {
      const nulls = await rows<{ id: number }>(cell(table).select('id').whereNull('deleted'));
      expect(nulls, `${table}.deleted must never be NULL`).toEqual([]);
      for (const r of await rows<{ created_at: string | null; updated_at: string | null }>(cell(table).select('created_at', 'updated_at'))) {
        expect(r.created_at).toMatch(TIMESTAMP);
        if (r.updated_at !== null) expect(r.updated_at).toMatch(TIMESTAMP);
      }
    }
    const nodes = await rows<Record<string, unknown>>(cell('compute_nodes').select('*'));
    for (const n of nodes) {
      expect(n['mapped'], 'compute_nodes.mapped must never be NULL').not.toBeNull();
      for (const ratio of ['cpu_allocation_ratio', 'ram_allocation_ratio', 'disk_allocation_ratio']) {
        // NULL or 0.0 makes nova-manage rewrite the row on load (§1.3).
        expect(Number(n[ratio]), ratio).toBeGreaterThan(0);
      }
      expect(n['uuid']).toMatch(/^[0-9a-f-]{36}$/);
    }
  }
  expect(await count(h.cell0, 'services')).toBe(0);
  expect(await count(h.cell0, 'compute_nodes')).toBe(0);
  const providers = await rows<{ id: number; root_provider_id: number | null; parent_provider_id: number | null; generation: number | null }>(
    h.placement('resource_providers').select('id', 'root_provider_id', 'parent_provider_id', 'generation'),
  );
  for (const p of providers) {
    expect(p.generation).not.toBeNull();
    if (p.parent_provider_id === null) expect(Number(p.root_provider_id)).toBe(Number(p.id));
  }
  const orphanAllocations = await rows(
    h.placement('allocations as a').leftJoin('consumers as c', 'c.uuid', 'a.consumer_id').whereNull('c.id').select('a.id'),
  );
  expect(orphanAllocations).toEqual([]);
}

async function serviceHosts(cell: Knex): Promise<string[]> {
  return (await rows<{ host: string }>(cell('services').select('host').orderBy('host'))).map((r) => r.host);
}

const CHECKS: Record<string, (h: Handles, cellIds: { cell1: number }) => Promise<void>> = {
  async empty(h) {
    for (const cell of [h.cell1, h.cell2]) {
      expect(await count(cell, 'services')).toBe(0);
      expect(await count(cell, 'compute_nodes')).toBe(0);
    }
    expect(await count(h.placement, 'resource_providers')).toBe(0);
    expect(await count(h.api, 'host_mappings')).toBe(0);
  },

  async 'ironic-ha'(h) {
    expect(await serviceHosts(h.cell1)).toEqual([...IRONIC_HA.hosts]);
    expect(await count(h.cell2, 'services')).toBe(0);
    expect(await count(h.cell2, 'compute_nodes')).toBe(0);
    expect(await count(h.api, 'host_mappings')).toBe(0);
    const services = await rows<Record<string, unknown>>(h.cell1('services').select('*').orderBy('host'));
    for (const [i, s] of services.entries()) {
      expect(s).toMatchObject({ uuid: IRONIC_HA.serviceUuids[i], binary: 'nova-compute', topic: 'compute', deleted: 0, deleted_at: null, version: 64 });
      expect(Number(s['disabled'])).toBe(0);
      expect(Number(s['forced_down'])).toBe(0);
      expect(Number(s['report_count'])).toBeGreaterThan(0);
      // Heartbeating now: up by service_down_time (60 s).
      const seen = parseNaiveUtc(s['last_seen_up'] as string);
      expect(seen).toBeDefined();
      expect(Math.abs(Date.now() - (seen ?? 0))).toBeLessThan(60_000);
    }
    const nodes = await rows<Record<string, unknown>>(h.cell1('compute_nodes').select('*'));
    expect(nodes).toHaveLength(1);
    expect(nodes[0]).toMatchObject({
      uuid: IRONIC_HA.nodeUuid,
      hypervisor_hostname: IRONIC_HA.nodeUuid,
      host: 'ironic-compute-0',
      hypervisor_type: 'ironic',
      hypervisor_version: 1,
      cpu_info: '',
      vcpus: 0,
      memory_mb: 0,
      local_gb: 0,
      vcpus_used: 0,
      local_gb_used: 0,
      mapped: 0,
      deleted: 0,
      service_id: null,
    });
    const providers = await rows<Record<string, unknown>>(h.placement('resource_providers').select('*'));
    expect(providers).toHaveLength(1);
    expect(providers[0]).toMatchObject({ uuid: IRONIC_HA.nodeUuid, name: IRONIC_HA.nodeUuid, parent_provider_id: null });
    const inventories = await rows<Record<string, unknown>>(
      h.placement('inventories as i').join('resource_classes as rc', 'rc.id', 'i.resource_class_id').select('i.*', 'rc.name as rc_name'),
    );
    expect(inventories).toHaveLength(1);
    const inv = inventories[0] ?? {};
    expect(inv).toMatchObject({ rc_name: 'CUSTOM_BAREMETAL_GOLD', total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1 });
    expect(Number(inv['allocation_ratio'])).toBe(1);
    expect(Number(inv['resource_class_id'])).toBeGreaterThanOrEqual(10000);
    expect(Number(inv['resource_provider_id'])).toBe(Number(providers[0]?.['id']));
  },

  async libvirt(h, cellIds) {
    expect(await serviceHosts(h.cell1)).toEqual(['compute-1', 'compute-2', 'compute-3']);
    expect(await serviceHosts(h.cell2)).toEqual(['compute-4', 'compute-5']);
    expect(await count(h.api, 'host_mappings')).toBe(0);
    const providers = new Map(
      (await rows<{ id: number; uuid: string; name: string; generation: number }>(h.placement('resource_providers').select('*'))).map((p) => [p.uuid, p]),
    );
    expect(providers.size).toBe(5);
    for (const host of LIBVIRT_HOSTS) {
      const cell = host.cell === 'cell1' ? h.cell1 : h.cell2;
      const nodes = await rows<Record<string, unknown>>(cell('compute_nodes').select('*').where('host', host.host));
      expect(nodes).toHaveLength(1);
      expect(nodes[0]).toMatchObject({
        uuid: host.nodeUuid,
        hypervisor_hostname: libvirtHypervisorHostname(host.host),
        hypervisor_type: 'QEMU',
        vcpus: 16,
        memory_mb: 65536,
        local_gb: 500,
        mapped: 0,
        deleted: 0,
        host_ip: host.hostIp,
      });
      const provider = providers.get(host.nodeUuid);
      expect(provider?.name).toBe(libvirtHypervisorHostname(host.host));
      // inventory + traits, and one allocation write on the server's host.
      expect(Number(provider?.generation)).toBe(host.host === LIBVIRT_SERVER.host ? 3 : 2);
      const inventory = await rows<{ name: string; total: number; reserved: number }>(
        h.placement('inventories as i')
          .join('resource_classes as rc', 'rc.id', 'i.resource_class_id')
          .where('i.resource_provider_id', provider?.id ?? -1)
          .select('rc.name', 'i.total', 'i.reserved')
          .orderBy('rc.name'),
      );
      expect(inventory).toEqual([
        { name: 'DISK_GB', total: 500, reserved: 0 },
        { name: 'MEMORY_MB', total: 65536, reserved: 512 },
        { name: 'VCPU', total: 16, reserved: 0 },
      ]);
    }
    const instances = await rows<Record<string, unknown>>(h.cell1('instances').select('*'));
    expect(instances).toHaveLength(1);
    expect(instances[0]).toMatchObject({
      uuid: LIBVIRT_SERVER.uuid,
      host: 'compute-1',
      node: libvirtHypervisorHostname('compute-1'),
      vm_state: 'active',
      project_id: LIBVIRT_SERVER.projectId,
      user_id: LIBVIRT_SERVER.userId,
      deleted: 0,
    });
    expect(await count(h.cell2, 'instances')).toBe(0);
    const mappings = await rows<Record<string, unknown>>(h.api('instance_mappings').select('*'));
    expect(mappings).toHaveLength(1);
    expect(mappings[0]).toMatchObject({ instance_uuid: LIBVIRT_SERVER.uuid, cell_id: cellIds.cell1 });
    const allocations = await rows<{ name: string; used: number; rp: string }>(
      h.placement('allocations as a')
        .join('resource_classes as rc', 'rc.id', 'a.resource_class_id')
        .join('resource_providers as p', 'p.id', 'a.resource_provider_id')
        .where('a.consumer_id', LIBVIRT_SERVER.uuid)
        .select('rc.name', 'a.used', 'p.uuid as rp')
        .orderBy('rc.name'),
    );
    const compute1 = LIBVIRT_HOSTS[0]?.nodeUuid;
    expect(allocations).toEqual([
      { name: 'DISK_GB', used: 20, rp: compute1 },
      { name: 'MEMORY_MB', used: 4096, rp: compute1 },
      { name: 'VCPU', used: 2, rp: compute1 },
    ]);
    const consumer = await rows<Record<string, unknown>>(
      h.placement('consumers as c')
        .join('projects as p', 'p.id', 'c.project_id')
        .join('users as u', 'u.id', 'c.user_id')
        .select('c.generation', 'c.consumer_type_id', 'p.external_id as project', 'u.external_id as user')
        .where('c.uuid', LIBVIRT_SERVER.uuid),
    );
    expect(consumer).toEqual([{ generation: 1, consumer_type_id: null, project: LIBVIRT_SERVER.projectId, user: LIBVIRT_SERVER.userId }]);
  },
};

async function checkScenario(scenario: Scenario, h: Handles, cellIds: { cell1: number }): Promise<void> {
  await checkNovaConventions(h);
  const check = CHECKS[scenario.name];
  if (check !== undefined) await check(h, cellIds);
}

async function checkCellMappings(api: Knex, info: Pick<SandboxInfo, 'databases'>): Promise<void> {
  const cells = await rows<Record<string, unknown>>(api('cell_mappings').select('*').orderBy('id'));
  expect(cells).toMatchObject([
    { id: 1, uuid: CELL0_UUID, name: 'cell0', transport_url: 'none:///', database_connection: info.databases.cell0.url, disabled: 0, updated_at: null },
    {
      id: 2,
      uuid: SANDBOX_CELL_UUIDS.cell1,
      name: 'cell1',
      transport_url: 'rabbit://guest:guest@127.0.0.1:5672/cell1',
      database_connection: info.databases.cell1.url,
      disabled: 0,
    },
    {
      id: 3,
      uuid: SANDBOX_CELL_UUIDS.cell2,
      name: 'cell2',
      transport_url: 'rabbit://guest:guest@127.0.0.1:5672/cell2',
      database_connection: info.databases.cell2.url,
      disabled: 0,
    },
  ]);
}

let workdir: string;

beforeAll(() => {
  workdir = mkdtempSync(join(tmpdir(), 'nova-reconcile-sandbox-'));
});

afterAll(() => {
  rmSync(workdir, { recursive: true, force: true });
});

function openSandbox(info: SandboxInfo): Handles {
  return {
    api: sqliteKnex(info.databases.api.path),
    cell0: sqliteKnex(info.databases.cell0.path),
    cell1: sqliteKnex(info.databases.cell1.path),
    cell2: sqliteKnex(info.databases.cell2.path),
    placement: sqliteKnex(info.databases.placement.path),
  };
}

async function closeAll(h: Handles): Promise<void> {
  await Promise.all(Object.values(h).map((k: Knex) => k.destroy()));
}

describe('sandbox create (SQLite)', () => {
  for (const scenario of SCENARIOS) {
    it(`builds scenario ${scenario.name}`, async () => {
      const dir = join(workdir, `sbx-${scenario.name}`);
      const info = await createSandbox(dir, scenario.name);
      expect(info.dir).toBe(dir);
      for (const file of ['nova_api.sqlite', 'nova_cell0.sqlite', 'nova_cell1.sqlite', 'nova_cell2.sqlite', 'placement.sqlite', 'nova.conf']) {
        expect(existsSync(join(dir, file)), file).toBe(true);
      }
      expect(existsSync(join(dir, 'journal'))).toBe(true);
      expect(info.databases.cell1.url).toBe(`sqlite:////${dir.replace(/^\//, '')}/nova_cell1.sqlite`);

      const conf = readFileSync(info.configFile, 'utf8');
      expect(conf).toContain('[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n');
      expect(conf).toContain(`[api_database]\nconnection = ${info.databases.api.url}\n`);
      expect(conf).toContain(`[database]\nconnection = ${info.databases.cell1.url}\n`);
      expect(conf).toContain(`[placement_database]\nconnection = ${info.databases.placement.url}\n`);
      expect(conf).toContain(`[nova_reconcile]\njournal_dir = ${join(dir, 'journal')}\n`);

      const h = openSandbox(info);
      try {
        await checkCellMappings(h.api, info);
        await checkScenario(scenario, h, { cell1: 2 });
      } finally {
        await closeAll(h);
      }
    });
  }

  it('rejects an unknown scenario as a usage error, naming the choices', async () => {
    const err = await createSandbox(join(workdir, 'never'), 'nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReconcileError);
    expect((err as ReconcileError).kind).toBe('usage');
    expect((err as ReconcileError).message).toBe(`unknown scenario "nope"; choose one of: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    expect(existsSync(join(workdir, 'never'))).toBe(false);
  });

  it('refuses a non-empty directory, even with --force, and leaves it alone', async () => {
    const dir = join(workdir, 'busy');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    for (const force of [false, true]) {
      const err = await createSandbox(dir, 'empty', { force }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ReconcileError);
      expect((err as ReconcileError).kind).toBe('input');
      expect((err as ReconcileError).message).toContain('is not empty: it holds notes.txt');
    }
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
    expect(existsSync(join(dir, 'nova.conf'))).toBe(false);
  });

  it('replaces a previous sandbox only with --force', async () => {
    const dir = join(workdir, 'again');
    await createSandbox(dir, 'ironic-ha');
    const err = await createSandbox(dir, 'libvirt').catch((e: unknown) => e);
    expect((err as ReconcileError).kind).toBe('input');
    expect((err as ReconcileError).message).toContain('already holds a sandbox');

    writeFileSync(join(dir, 'journal', 'run-1.jsonl'), '{}\n');
    const info = await createSandbox(dir, 'libvirt', { force: true });
    expect(info.replaced).toBe(true);
    expect(existsSync(join(dir, 'journal', 'run-1.jsonl'))).toBe(false);
    const h = openSandbox(info);
    try {
      expect(await serviceHosts(h.cell1)).toEqual(['compute-1', 'compute-2', 'compute-3']);
      expect(await count(h.api, 'cell_mappings')).toBe(3);
    } finally {
      await closeAll(h);
    }
  });

  it('refuses a path that is a file, and one that cannot go into nova.conf', async () => {
    const file = join(workdir, 'plain-file');
    writeFileSync(file, '');
    await expect(createSandbox(file, 'empty')).rejects.toMatchObject({ kind: 'input' });
    await expect(createSandbox(join(workdir, 'a$b'), 'empty')).rejects.toMatchObject({ kind: 'input' });
  });
});

/** A database as `placement-manage db sync` leaves it: no standard resource classes (they come at API start). */
async function dropResourceClasses(placement: Knex): Promise<void> {
  await placement('resource_classes').delete();
}

async function checkBulkWriters(cell: Knex, placement: Knex): Promise<void> {
  const n = 1200;
  const hosts = Array.from({ length: n }, (_, i) => `bulk-${String(i).padStart(5, '0')}`);
  const uuid = (prefix: string, i: number): string => `${prefix}-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const serviceIds = await insertServices(
    cell,
    hosts.map((host, i) => ({ uuid: uuid('5e000000', i), host })),
  );
  const nodeIds = await insertComputeNodes(
    cell,
    hosts.map((host, i) => ({ uuid: uuid('c0000000', i), host, hypervisorHostname: host, hypervisorType: 'QEMU' as const })),
  );
  const providerIds = await insertResourceProviders(
    placement,
    hosts.map((host, i) => ({ uuid: uuid('c0000000', i), name: host })),
  );
  for (const ids of [serviceIds, nodeIds, providerIds]) {
    expect(ids).toHaveLength(n);
    expect(new Set(ids).size).toBe(n);
  }
  const byHost = new Map((await rows<{ id: number; host: string; mapped: number; deleted: number }>(cell('compute_nodes').select('id', 'host', 'mapped', 'deleted'))).map((r) => [r.host, r]));
  hosts.forEach((host, i) => {
    expect(Number(byHost.get(host)?.id)).toBe(nodeIds[i]);
    expect(byHost.get(host)).toMatchObject({ mapped: 0, deleted: 0 });
  });
  const roots = await rows<{ id: number; root_provider_id: number }>(placement('resource_providers').select('id', 'root_provider_id'));
  for (const r of roots) expect(Number(r.root_provider_id)).toBe(Number(r.id));
}

describe('row writers (SQLite)', () => {
  it('multi-row variants insert past one chunk and return ids in input order', async () => {
    const dir = join(workdir, 'bulk');
    mkdirSync(dir);
    const cell = sqliteKnex(join(dir, 'cell.sqlite'));
    const placement = sqliteKnex(join(dir, 'placement.sqlite'));
    try {
      await migrateSchema(cell, 'cell');
      await migrateSchema(placement, 'placement');
      await checkBulkWriters(cell, placement);
    } finally {
      await cell.destroy();
      await placement.destroy();
    }
  });

  it('creates missing resource classes as Placement numbers them', async () => {
    const placement = sqliteKnex(join(workdir, 'rc.sqlite'));
    try {
      await migrateSchema(placement, 'placement');
      await dropResourceClasses(placement);
      expect(await ensureResourceClass(placement, 'MEMORY_MB')).toBe(1);
      expect(await ensureResourceClass(placement, 'VCPU')).toBe(0);
      expect(await ensureResourceClass(placement, 'CUSTOM_A')).toBe(10000);
      expect(await ensureResourceClass(placement, 'CUSTOM_B')).toBe(10001);
      expect(await ensureResourceClass(placement, 'CUSTOM_A')).toBe(10000);
    } finally {
      await placement.destroy();
    }
  });
});

describeMysql('sandbox scenarios on MariaDB', () => {
  const NAMES = ['api', 'cell0', 'cell1', 'cell2', 'placement'] as const;

  async function withScratch(prefix: string, fn: (s: ScratchDatabases, h: Handles) => Promise<void>): Promise<void> {
    const scratch = await createScratchDatabases(prefix, NAMES);
    try {
      const h: Handles = {
        api: scratch.knex('api'),
        cell0: scratch.knex('cell0'),
        cell1: scratch.knex('cell1'),
        cell2: scratch.knex('cell2'),
        placement: scratch.knex('placement'),
      };
      await migrateSchema(h.api, 'api');
      for (const cell of [h.cell0, h.cell1, h.cell2]) await migrateSchema(cell, 'cell');
      await migrateSchema(h.placement, 'placement');
      await fn(scratch, h);
    } finally {
      await scratch.drop();
    }
  }

  for (const scenario of SCENARIOS) {
    it(`populates scenario ${scenario.name}`, async () => {
      await withScratch(`sbx_${scenario.name}`, async (scratch, h) => {
        const cells = await mapSandboxCells(h.api, { cell0: scratch.url('cell0'), cell1: scratch.url('cell1'), cell2: scratch.url('cell2') });
        await scenario.populate({ api: h.api, cells: { cell1: h.cell1, cell2: h.cell2 }, placement: h.placement, ...cells });
        await checkScenario(scenario, h, cells.cellIds);
      });
    });
  }

  // What the conformance tier does: the schemas exactly as nova-manage and
  // placement-manage create them (placement without resource classes).
  for (const scenario of SCENARIOS) {
    it(`populates scenario ${scenario.name} on the reference Zed schemas`, async () => {
      const scratch = await createScratchDatabases(`sbx_ref_${scenario.name}`, NAMES);
      try {
        const dumps = { api: 'nova_api', cell0: 'nova_cell', cell1: 'nova_cell', cell2: 'nova_cell', placement: 'placement' } as const;
        for (const name of NAMES) await loadDump(scratch.dbNames[name] ?? '', readReferenceDump(dumps[name]));
        const h: Handles = {
          api: scratch.knex('api'),
          cell0: scratch.knex('cell0'),
          cell1: scratch.knex('cell1'),
          cell2: scratch.knex('cell2'),
          placement: scratch.knex('placement'),
        };
        const cells = await mapSandboxCells(h.api, { cell0: scratch.url('cell0'), cell1: scratch.url('cell1'), cell2: scratch.url('cell2') });
        await scenario.populate({ api: h.api, cells: { cell1: h.cell1, cell2: h.cell2 }, placement: h.placement, ...cells });
        await checkScenario(scenario, h, cells.cellIds);
      } finally {
        await scratch.drop();
      }
    });
  }

  it('populates libvirt on a placement database without resource classes (placement-manage db sync)', async () => {
    await withScratch('sbx_norc', async (scratch, h) => {
      await dropResourceClasses(h.placement);
      const cells = await mapSandboxCells(h.api, { cell0: scratch.url('cell0'), cell1: scratch.url('cell1'), cell2: scratch.url('cell2') });
      const scenario = findScenario('libvirt');
      if (scenario === undefined) throw new Error('libvirt scenario missing');
      await scenario.populate({ api: h.api, cells: { cell1: h.cell1, cell2: h.cell2 }, placement: h.placement, ...cells });
      await checkScenario(scenario, h, cells.cellIds);
      const classes = await rows<{ id: number; name: string }>(h.placement('resource_classes').select('id', 'name').orderBy('id'));
      expect(classes.map((c) => [Number(c.id), c.name])).toEqual([
        [0, 'VCPU'],
        [1, 'MEMORY_MB'],
        [2, 'DISK_GB'],
      ]);
      expect(await ensureResourceClass(h.placement, 'CUSTOM_BAREMETAL_GOLD')).toBe(10000);
    });
  });

  it('multi-row variants insert past one chunk and return ids in input order', async () => {
    await withScratch('sbx_bulk', async (_scratch, h) => {
      await checkBulkWriters(h.cell1, h.placement);
    });
  });
});
