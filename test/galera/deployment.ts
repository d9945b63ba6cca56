// A fault deployment (orphan compute nodes with providers and allocations)
// built on a throw-away Galera cluster through node 1, with one nova.conf per
// node. The cell mappings hold templated URLs ({hostname}:{port}, as the
// issue's trial and kolla-ansible's per-node configs do), so a run through
// node k reaches every database through node k.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeRequired } from '../helpers/mysql.js';
import type { FaultDeployment } from '../faults/helpers.js';
import { galeraMissing, startGaleraCluster, type GaleraCluster } from '../../bench/galera-cluster.js';

export interface GaleraDeployment {
  readonly cluster: GaleraCluster;
  readonly f: FaultDeployment;
  /** --config-file of a nova.conf that reaches every database through node `node` (1-based). */
  args(node: number): string[];
  cleanup(): Promise<void>;
}

export async function createGaleraDeployment(orphans: number, progress: (line: string) => void = () => undefined): Promise<GaleraDeployment> {
  const cluster = await startGaleraCluster(progress);
  try {
    // test/helpers/mysql.ts reads the server from TEST_MYSQL_URL at each use.
    process.env['TEST_MYSQL_URL'] = `mysql://root@127.0.0.1:${cluster.nodes[0]!.port}`;
    const { createFaultDeployment } = await import('../faults/helpers.js');
    const f = await createFaultDeployment(orphans, 0, 'gal');
    const api = f.d.knex('api');
    const mappings: Array<{ id: number; database_connection: string }> = await api('cell_mappings').select('id', 'database_connection');
    for (const m of mappings) {
      const db = new URL(m.database_connection.replace(/^mysql\+pymysql:/, 'mysql:')).pathname;
      await api('cell_mappings').where('id', m.id).update({ database_connection: `mysql+pymysql://root@{hostname}:{port}${db}` });
    }
    const dbName = (name: 'api' | 'cell1' | 'placement') => new URL(f.d.url(name).replace(/^mysql\+pymysql:/, 'mysql:')).pathname;
    const confs = cluster.nodes.map((n) => {
      const path = join(f.d.dir, `nova-node${n.index}.conf`);
      const url = (name: 'api' | 'cell1' | 'placement') => `mysql+pymysql://root@127.0.0.1:${n.port}${dbName(name)}`;
      writeFileSync(
        path,
        [
          '[DEFAULT]',
          'transport_url = rabbit://guest:guest@127.0.0.1:5672/',
          '[api_database]',
          `connection = ${url('api')}`,
          '[database]',
          `connection = ${url('cell1')}`,
          '[placement_database]',
          `connection = ${url('placement')}`,
          '[nova_reconcile]',
          `journal_dir = ${join(f.d.dir, 'journal')}`,
          'lock_timeout = 120',
          'connect_timeout = 5',
          // The cases remove most of a cell's nodes on purpose: the circuit breaker is off.
          'max_apply_units = 0',
          'max_apply_fraction = 1',
          '',
        ].join('\n'),
      );
      return path;
    });
    return {
      cluster,
      f,
      args: (node) => ['--config-file', confs[node - 1]!],
      // The databases go with the throw-away cluster (a case may leave its
      // first node out of the primary component, where a DROP fails). The
      // deployment's folder (its nova.conf files, its journals) is removed
      // by its cleanup, whose DROPs then fail on the stopped server: left to
      // the file's end, that failure kept the folder in the temporary directory.
      cleanup: async () => {
        await cluster.stop();
        await f.d.cleanup().catch(() => undefined);
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/**
 * A describe block for the Galera tier: runs when galera-4, rsync and
 * mariadb-install-db are installed; fails with CI=true when they are not
 * (.ci/run installs them); elsewhere skipped with a loud notice.
 */
export function describeGalera(name: string, fn: () => void): void {
  describeRequired('Galera', galeraMissing(), name, fn);
}
