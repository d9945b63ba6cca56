// The floor: the bare SQL that has the same effect as a first discovery run,
// sent in-process over connections opened beforehand. No process start, no
// config, no cell lookup, no per-host checks: what the database itself needs.
// nova-reconcile cannot beat it; the target is to stay within a small factor.
import { createConnection, type Connection } from 'mysql2/promise';
import type { ScratchDeployment, Server } from './scratch-deployment.js';

export type DiscoveryPath = 'node' | 'service';

export interface FloorSql {
  /** Statements for one cell, in order. */
  readonly statements: readonly string[];
}

/** The statements for one cell; the API and cell databases share the server, so one connection reaches both. */
export function floorStatements(path: DiscoveryPath, apiDb: string, cellDb: string, cellId: number): FloorSql {
  const api = `\`${apiDb}\``;
  const cell = `\`${cellDb}\``;
  if (path === 'node') {
    return {
      statements: [
        `INSERT INTO ${api}.host_mappings (created_at, cell_id, host) ` +
          `SELECT DISTINCT UTC_TIMESTAMP(), ${cellId}, host FROM ${cell}.compute_nodes ` +
          `WHERE deleted = 0 AND mapped < 1 AND host IS NOT NULL`,
        `UPDATE ${cell}.compute_nodes SET mapped = 1, updated_at = UTC_TIMESTAMP() WHERE deleted = 0 AND mapped < 1 AND host IS NOT NULL`,
      ],
    };
  }
  return {
    statements: [
      `INSERT INTO ${api}.host_mappings (created_at, cell_id, host) ` +
        `SELECT DISTINCT UTC_TIMESTAMP(), ${cellId}, host FROM ${cell}.services ` +
        `WHERE deleted = 0 AND \`binary\` = 'nova-compute' AND host IS NOT NULL`,
    ],
  };
}

export interface FloorRunner {
  /** Seconds for one run, all cells in parallel (as nova-reconcile runs them). */
  run(path: DiscoveryPath): Promise<number>;
  close(): Promise<void>;
}

export async function openFloorRunner(server: Server, deployment: ScratchDeployment): Promise<FloorRunner> {
  const connections: Connection[] = [];
  try {
    for (let i = 0; i < deployment.cells.length; i += 1) {
      const options: Parameters<typeof createConnection>[0] = { host: server.host, port: server.port, user: server.user, timezone: 'Z' };
      if (server.password !== undefined) options.password = server.password;
      const conn = await createConnection(options);
      connections.push(conn);
      await conn.query("SET SESSION sql_mode = 'TRADITIONAL', time_zone = '+00:00'");
    }
  } catch (err) {
    await Promise.all(connections.map((c) => c.end().catch(() => undefined)));
    throw err;
  }
  return {
    run: async (path) => {
      const started = process.hrtime.bigint();
      await Promise.all(
        deployment.cells.map(async (cell, i) => {
          const conn = connections[i];
          if (conn === undefined) throw new Error('internal: floor connection missing');
          for (const sql of floorStatements(path, deployment.apiDatabase, cell.database, cell.id).statements) await conn.query(sql);
        }),
      );
      return Number(process.hrtime.bigint() - started) / 1e9;
    },
    close: async () => {
      await Promise.all(connections.map((c) => c.end().catch(() => undefined)));
    },
  };
}
