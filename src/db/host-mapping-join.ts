// discover_hosts' two questions about hosts without a mapping, asked of the
// cell's server in one statement that joins the cell's table with the API
// database's host_mappings, instead of reading both tables whole on every
// run, including the no-op ones.
//
// The join is used only where it means what the two reads mean:
//  - both databases are MySQL and on one server. That is proved, not guessed
//    from URLs: the API connection takes a user lock under a random name and
//    the cell connection must see it held by that very connection
//    (IS_USED_LOCK answers with the holder's connection id, and user locks
//    are server-wide). Two servers behind one address, two Galera nodes, a
//    proxy that splits reads: each fails the proof, so a stale copy of the
//    API database on the cell's server is never read in its place.
//  - the two host columns have one collation, so the join's "same host" is
//    the one nova's lookup by a host string makes (HostMapping.get_by_host
//    compares under host_mappings.host's collation);
//  - the cell's database user can see host_mappings there.
// Otherwise the caller reads both lists as before; `reason` says why, for
// the --debug log.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Database } from './connect.js';
import { describeDriverError } from './driver-errors.js';
import { quoteIdentifier, rowsOf } from './mysql-results.js';
import type { NodeRef } from './cell/compute-nodes.js';

export type HostMappingJoin =
  | { readonly joined: true; /** The API database's host_mappings, as the cell's connection names it. */ readonly table: string }
  | { readonly joined: false; readonly reason: string };

type CellTable = 'compute_nodes' | 'services';

/**
 * The proof that a cell database shares the API database's server, for one
 * run over several cells: the API connection takes its user lock once, at
 * the first cell, and holds it (and that connection) until close(); each
 * cell then costs one statement (IS_USED_LOCK and the two collations), not
 * three (GET_LOCK, IS_USED_LOCK and RELEASE_LOCK). close() must be
 * called once the run is done with it.
 */
export interface SameServerProbe {
  /** Whether `cellTable` of the cell database can be joined with the API database's host_mappings on the cell's connection; see the file's comment. */
  join(cell: Database, cellTable: CellTable): Promise<HostMappingJoin>;
  close(): Promise<void>;
}

type HeldLock = { readonly conn: unknown; readonly id: unknown; readonly schema: string } | { readonly conn: unknown; readonly reason: string };

export function sameServerProbe(api: Database): SameServerProbe {
  const lockName = `nova-reconcile:same-server:${randomBytes(16).toString('hex')}`;
  let held: Promise<HeldLock> | undefined;
  const take = async (): Promise<HeldLock> => {
    let conn: unknown;
    try {
      conn = await api.knex.client.acquireConnection();
      const mine = rowsOf(await api.knex.raw('SELECT GET_LOCK(?, 0) AS got, CONNECTION_ID() AS id, DATABASE() AS db', [lockName]).connection(conn))[0];
      if (Number(mine?.got) !== 1) return { conn, reason: 'the API connection could not take a user lock' };
      if (typeof mine?.db !== 'string') return { conn, reason: 'the API connection has no current database' };
      return { conn, id: mine.id, schema: mine.db };
    } catch (err) {
      return { conn, reason: `the same-server check failed: ${describeDriverError(err)}` };
    }
  };
  return {
    async join(cell, cellTable) {
      if (api.dialect !== 'mysql' || cell.dialect !== 'mysql') return { joined: false, reason: 'the API and cell databases are not both MySQL' };
      const lock = await (held ??= take());
      if ('reason' in lock) return { joined: false, reason: lock.reason };
      try {
        const seen = rowsOf(
          await cell.knex.raw(
            'SELECT IS_USED_LOCK(?) AS holder, ' +
              "(SELECT COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'host') AS here, " +
              "(SELECT COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'host_mappings' AND COLUMN_NAME = 'host') AS there",
            [lockName, cellTable, lock.schema],
          ),
        )[0];
        if (seen?.holder === null || seen?.holder === undefined || String(seen.holder) !== String(lock.id)) {
          return { joined: false, reason: 'the cell database is not on the API database\'s server (the API connection\'s lock is not seen from the cell\'s)' };
        }
        if (typeof seen.there !== 'string') return { joined: false, reason: `the cell database's user cannot see ${lock.schema}.host_mappings` };
        if (seen.here !== seen.there) return { joined: false, reason: `${cellTable}.host is ${String(seen.here)} and host_mappings.host is ${seen.there}` };
        return { joined: true, table: `${quoteIdentifier(lock.schema)}.${quoteIdentifier('host_mappings')}` };
      } catch (err) {
        return { joined: false, reason: `the same-server check failed: ${describeDriverError(err)}` };
      }
    },
    async close() {
      if (held === undefined) return;
      const { conn } = await held;
      if (conn === undefined) return;
      await api.knex
        .raw('SELECT RELEASE_LOCK(?)', [lockName])
        .connection(conn)
        .catch(() => undefined);
      await api.knex.client.releaseConnection(conn);
    },
  };
}

/**
 * Bug 2085135 in one statement: live nodes flagged mapped = 1 whose host has
 * no mapping at all, by id. `table` from SameServerProbe.join. host_mappings.host
 * is unique, so the LEFT JOIN adds no rows; it measured about half the time
 * of NOT EXISTS on MariaDB 10.11.
 */
export async function listMappedNodesWithoutMapping(cell: Knex, table: string): Promise<NodeRef[]> {
  const rows = rowsOf(
    await cell.raw(
      `SELECT cn.id AS id, cn.uuid AS uuid, cn.host AS host FROM compute_nodes cn LEFT JOIN ${table} hm ON hm.host = cn.host ` +
        'WHERE cn.deleted = 0 AND cn.mapped >= 1 AND cn.host IS NOT NULL AND hm.id IS NULL ORDER BY cn.id',
    ),
  );
  return rows.map((r) => ({ id: Number(r.id), uuid: r.uuid === null ? null : String(r.uuid), host: String(r.host) }));
}

export interface ServiceNotMappedHere {
  readonly id: number;
  readonly host: string;
  /** The cell its host is mapped to, or null when it has no mapping. */
  readonly mappedTo: number | null;
}

/**
 * --by-service's candidates that can matter, in one statement: the live
 * nova-compute services (disabled ones included, as
 * listComputeServiceHosts) whose host has no mapping or one to another cell,
 * by id. Those mapped to this cell are silent in nova's walk and left out.
 * A LEFT JOIN on host_mappings' unique host key: on MariaDB 10.11 at 30,000
 * services it takes 0.04 s, where NOT EXISTS (... AND cell_id = ?) was
 * materialized and took 0.43 s. Sorted here, not by ORDER BY: the server
 * sorted every service before the join (0.06 s).
 */
export async function listServicesNotMappedHere(cell: Knex, table: string, cellId: number): Promise<ServiceNotMappedHere[]> {
  const rows = rowsOf(
    await cell.raw(
      `SELECT s.id AS id, s.host AS host, hm.cell_id AS cell_id FROM services s LEFT JOIN ${table} hm ON hm.host = s.host ` +
        "WHERE s.deleted = 0 AND s.`binary` = 'nova-compute' AND s.host IS NOT NULL AND NOT (hm.cell_id <=> ?)",
      [cellId],
    ),
  );
  return rows.map((r) => ({ id: Number(r.id), host: String(r.host), mappedTo: r.cell_id === null ? null : Number(r.cell_id) })).sort((a, b) => a.id - b.id);
}
