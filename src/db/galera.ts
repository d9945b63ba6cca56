// Galera (MariaDB Galera Cluster, as kolla-ansible, openstack-ansible and
// TripleO deploy Nova's databases): what the tool must know about the node it
// talks to. A node whose wsrep_on is ON replicates by certification: no
// cross-node GET_LOCK (locks.ts takes a lease row instead), a COMMIT can fail
// certification with 1213 (retried like a deadlock), and a node outside the
// primary component answers 1047 to everything but SHOW and SET.
import type { Knex } from 'knex';
import { rowsOf } from './mysql-results.js';

export interface GaleraState {
  /** wsrep_on: the server replicates through a Galera provider. */
  readonly on: boolean;
  /** wsrep_ready: the node accepts queries (part of the primary component, synced). */
  readonly ready: boolean;
  /** wsrep_cluster_status: Primary, non-Primary or Disconnected. */
  readonly clusterStatus: string | undefined;
  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, ... */
  readonly localState: string | undefined;
}

const NOT_GALERA: GaleraState = Object.freeze({ on: false, ready: true, clusterStatus: undefined, localState: undefined });

/**
 * Ask the server. SHOW is answered even by a node that is not ready, so this
 * works where a SELECT would fail with 1047. A server without the wsrep
 * variables (Oracle MySQL) is not Galera.
 */
export async function readGaleraState(knex: Knex, connection?: unknown): Promise<GaleraState> {
  const run = (sql: string) => (connection === undefined ? knex.raw(sql) : knex.raw(sql).connection(connection));
  const vars = rowsOf(await run("SHOW VARIABLES WHERE Variable_name = 'wsrep_on'"));
  const on = vars.some((r) => String(r['Value']).toUpperCase() === 'ON');
  if (!on) return NOT_GALERA;
  const status = new Map(
    rowsOf(await run("SHOW STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_status', 'wsrep_local_state_comment')")).map((r) => [
      String(r['Variable_name']).toLowerCase(),
      String(r['Value']),
    ]),
  );
  return {
    on,
    ready: (status.get('wsrep_ready') ?? 'OFF').toUpperCase() === 'ON',
    clusterStatus: status.get('wsrep_cluster_status'),
    localState: status.get('wsrep_local_state_comment'),
  };
}

/** One line on a node that is not ready, for the "cannot use the ... database" message. */
export function describeNotReady(state: GaleraState): string {
  return `WSREP has not yet prepared node for application use (wsrep_ready=OFF, wsrep_cluster_status=${state.clusterStatus ?? 'unknown'}, state ${state.localState ?? 'unknown'})`;
}

export const NOT_READY_HINT =
  'connect through a node of the primary component (or the cluster address, e.g. the HAProxy VIP), or wait until this node has rejoined and synced';

