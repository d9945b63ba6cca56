// Scenarios on databases that the real Nova built: ScenarioDatabases for a
// RealDeployment, our built binary pointed at its nova.conf, and the rows the
// conformance tier compares (host_mappings, compute_nodes.mapped).
import type { Knex } from 'knex';
import { findScenario, type ScenarioDatabases } from '../../src/sandbox/scenarios.js';
import { runBin, type CliResult } from '../helpers/cli.js';
import { mysqlKnex } from '../helpers/mysql.js';
import type { RealDeployment, ToolResult } from './real-nova.js';

export { CELL0_UUID } from '../../src/db/deployment-databases.js';

export interface RealScenarioDatabases {
  readonly dbs: ScenarioDatabases;
  /** knex handles on all five databases, for assertions and setup. */
  readonly knex: { readonly api: Knex; readonly cell0: Knex; readonly cell1: Knex; readonly cell2: Knex; readonly placement: Knex };
  destroy(): Promise<void>;
}

/**
 * ScenarioDatabases over the five databases of a RealDeployment. cellIds and
 * cellUuids come from the cell_mappings rows that map_cell0 / create_cell
 * wrote (as the harness rewrote them for this clone).
 */
export async function realScenarioDatabases(d: RealDeployment): Promise<RealScenarioDatabases> {
  const knex = {
    api: mysqlKnex(d.db.api),
    cell0: mysqlKnex(d.db.cell0),
    cell1: mysqlKnex(d.db.cell1),
    cell2: mysqlKnex(d.db.cell2),
    placement: mysqlKnex(d.db.placement),
  };
  const destroy = async (): Promise<void> => {
    await Promise.all(Object.values(knex).map((k) => k.destroy()));
  };
  try {
    const rows = (await knex.api('cell_mappings').select('id', 'uuid', 'name').orderBy('id')) as { id: number; uuid: string; name: string }[];
    const byName = (name: 'cell0' | 'cell1' | 'cell2'): { id: number; uuid: string } => {
      const r = rows.find((x) => x.name === name);
      if (r === undefined) throw new Error(`the real deployment ${d.prefix} has no cell_mappings row named ${name}`);
      return { id: Number(r.id), uuid: r.uuid };
    };
    const [c0, c1, c2] = [byName('cell0'), byName('cell1'), byName('cell2')];
    if (c0.uuid !== d.cells.cell0 || c1.uuid !== d.cells.cell1 || c2.uuid !== d.cells.cell2) {
      throw new Error(`cell_mappings of ${d.prefix} disagree with RealDeployment.cells`);
    }
    const dbs: ScenarioDatabases = {
      api: knex.api,
      cells: { cell1: knex.cell1, cell2: knex.cell2 },
      placement: knex.placement,
      cellIds: { cell0: c0.id, cell1: c1.id, cell2: c2.id },
      cellUuids: { cell0: c0.uuid, cell1: c1.uuid, cell2: c2.uuid },
    };
    return { dbs, knex, destroy };
  } catch (err) {
    await destroy();
    throw err;
  }
}

export async function populateScenario(dbs: ScenarioDatabases, name: string): Promise<void> {
  const scenario = findScenario(name);
  if (scenario === undefined) throw new Error(`unknown scenario ${name}`);
  await scenario.populate(dbs);
}

/** Our built binary, `nova-reconcile --config-file <the deployment's nova.conf> ...args`. */
export async function runOurs(d: RealDeployment, args: readonly string[]): Promise<ToolResult> {
  const r: CliResult = await runBin(['--config-file', d.confPath, ...args]);
  return { stdout: r.stdout, stderr: r.stderr, code: r.code };
}

export interface NodeRow {
  readonly cell: 'cell1' | 'cell2';
  readonly id: number;
  readonly uuid: string;
  readonly host: string | null;
  readonly mapped: number | null;
}

export interface ComparedRows {
  /** [host, cell uuid], sorted by host (binary). */
  readonly mappings: ReadonlyArray<readonly [string, string]>;
  /** Live compute nodes of cell1 then cell2, by id. */
  readonly nodes: readonly NodeRow[];
}

export async function readComparedRows(k: RealScenarioDatabases['knex']): Promise<ComparedRows> {
  const m = (await k
    .api('host_mappings as hm')
    .join('cell_mappings as cm', 'cm.id', 'hm.cell_id')
    .select('hm.host', 'cm.uuid')
    .orderByRaw('BINARY hm.host')) as { host: string; uuid: string }[];
  const nodes: NodeRow[] = [];
  for (const cell of ['cell1', 'cell2'] as const) {
    const rows = (await k[cell]('compute_nodes').select('id', 'uuid', 'host', 'mapped').where('deleted', 0).orderBy('id')) as {
      id: number;
      uuid: string;
      host: string | null;
      mapped: number | null;
    }[];
    for (const r of rows) nodes.push({ cell, id: Number(r.id), uuid: r.uuid, host: r.host, mapped: r.mapped === null ? null : Number(r.mapped) });
  }
  return { mappings: m.map((r) => [r.host, r.uuid] as const), nodes };
}

/** How utf8mb3_general_ci compares ASCII host names: case-insensitive, trailing spaces ignored (PAD SPACE). */
export function collationKey(host: string): string {
  return host.toLowerCase().replace(/ +$/, '');
}
