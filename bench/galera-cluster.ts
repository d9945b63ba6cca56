// Throw-away 3-node MariaDB Galera clusters on 127.0.0.1, for the Galera test
// tier (test/galera/) and the benchmark's Galera section (bench/galera.ts).
// Each node: its own data directory under one temporary folder, its own
// mysqld, gcomm, IST and SST ports. Node 1 bootstraps (--wsrep-new-cluster)
// from a fresh mariadb-install-db; nodes 2 and 3 start empty and receive the
// state by rsync SST (wsrep_sst_rsync). As root the nodes run as `mysql`:
// the rsync daemon of the SST script drops root to `nobody` and could not
// write a root-owned data directory.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { freePorts, privateTmpdir } from './servers.js';

export const GALERA_LIBRARY = process.env['GALERA_LIBRARY'] ?? '/usr/lib/galera/libgalera_smm.so';

export interface GaleraNode {
  readonly index: number;
  readonly port: number;
  readonly dir: string;
  pid: number;
  exited: boolean;
  child: ChildProcess | undefined;
}

export interface GaleraCluster {
  readonly root: string;
  readonly nodes: readonly GaleraNode[];
  /** mysql://root@127.0.0.1:<port of node i> (1-based) */
  url(index: number): string;
  kill(index: number): Promise<void>;
  /** Cut a node off the others (gmcast.isolate): it goes non-Primary. */
  isolate(index: number): Promise<void>;
  /**
   * Wait until node `index` is in a primary component of `size` nodes and
   * ready: after a SIGKILL the survivors stall until they evict the dead
   * node (evs.suspect_timeout); returns the seconds waited.
   */
  waitForSize(index: number, size: number): Promise<number>;
  stop(): Promise<void>;
}

/** Why the tier cannot run here, or undefined when it can. */
export function galeraMissing(): string | undefined {
  if (!existsSync(GALERA_LIBRARY)) return `${GALERA_LIBRARY} not found (apt-get install galera-4)`;
  if (spawnSync('sh', ['-c', 'command -v rsync && command -v wsrep_sst_rsync && command -v mariadb-install-db'], { stdio: 'ignore' }).status !== 0)
    return 'rsync, wsrep_sst_rsync or mariadb-install-db not found (apt-get install rsync mariadb-server)';
  if (process.getuid?.() === 0 && spawnSync('id', ['mysql'], { stdio: 'ignore' }).status !== 0) return 'no `mysql` user to run the nodes as';
  return undefined;
}

const READY_TIMEOUT_MS = 240_000;

/** Clusters started and not yet stopped, for a process 'exit' handler (killAllGaleraSync). */
const liveClusters = new Set<GaleraCluster>();

/** SIGKILL every node of every cluster still running and remove its folder: no mariadbd outlives the process. */
export function killAllGaleraSync(): void {
  for (const c of liveClusters) {
    for (const n of c.nodes) {
      if (n.exited || n.pid <= 0) continue;
      try {
        process.kill(n.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(c.root, { recursive: true, force: true });
  }
  liveClusters.clear();
}

export interface GaleraStartOptions {
  /** innodb_buffer_pool_size of each node (default 64 MB: the test tier's clouds are small). */
  readonly bufferPoolMb?: number;
}

export async function startGaleraCluster(progress: (line: string) => void = () => undefined, options: GaleraStartOptions = {}): Promise<GaleraCluster> {
  const root = mkdtempSync(join(tmpdir(), 'nrgalera-'));
  chmodSync(root, 0o755);
  const asRoot = process.getuid?.() === 0;
  const runAs = asRoot ? 'mysql' : userInfo().username;
  const owner = asRoot ? mysqlIds() : undefined;
  const ports = await freePorts(12);
  const nodes: GaleraNode[] = [0, 1, 2].map((i) => ({ index: i + 1, port: ports[i] as number, dir: join(root, `n${i + 1}`), pid: -1, exited: false, child: undefined }));
  const gcomm = (i: number) => ports[3 + i] as number;
  const ist = (i: number) => ports[6 + i] as number;
  const sst = (i: number) => ports[9 + i] as number;
  for (const n of nodes) {
    mkdirSync(join(n.dir, 'data'), { recursive: true });
    if (owner !== undefined) {
      chownSync(n.dir, owner.uid, owner.gid);
      chownSync(join(n.dir, 'data'), owner.uid, owner.gid);
    }
  }
  // Each node's own tmpdir (privateTmpdir in servers.ts: a mariadbd deletes
  // every `#sql*` file in its tmpdir as it starts, the other servers' live
  // temporary tables included).
  const tmpdirOf = (n: GaleraNode): string => privateTmpdir(n.dir, owner);
  const cluster: GaleraCluster = {
    root,
    nodes,
    url: (i) => `mysql+pymysql://root@127.0.0.1:${nodes[i - 1]?.port}`,
    kill: async (i) => {
      const n = nodes[i - 1];
      if (n === undefined || n.exited) return;
      try {
        process.kill(n.pid, 'SIGKILL');
      } catch {
        // gone
      }
      while (!n.exited) await sleep(50);
    },
    isolate: async (i) => {
      const n = nodes[i - 1];
      if (n === undefined) return;
      const conn = await createConnection({ host: '127.0.0.1', port: n.port, user: 'root' });
      try {
        await conn.query("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'");
      } finally {
        await conn.end();
      }
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const status = await galeraStatus(n.port).catch(() => undefined);
        if (status !== undefined && status.get('wsrep_cluster_status') !== 'Primary') return;
        await sleep(200);
      }
      throw new Error(`node ${i} did not leave the primary component`);
    },
    waitForSize: async (i, size) => {
      const n = nodes[i - 1];
      if (n === undefined) throw new Error(`no node ${i}`);
      const t0 = Date.now();
      while (Date.now() - t0 < 60_000) {
        const status = await galeraStatus(n.port).catch(() => undefined);
        if (status?.get('wsrep_cluster_size') === String(size) && status.get('wsrep_cluster_status') === 'Primary' && status.get('wsrep_ready') === 'ON') return (Date.now() - t0) / 1000;
        await sleep(200);
      }
      throw new Error(`node ${i} is not in a ready primary component of ${size} nodes after 60 s`);
    },
    stop: async () => {
      for (const n of nodes) {
        if (!n.exited && n.pid > 0) {
          try {
            process.kill(n.pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }
      for (const n of nodes) while (n.child !== undefined && !n.exited) await sleep(50);
      rmSync(root, { recursive: true, force: true });
      liveClusters.delete(cluster);
    },
  };
  liveClusters.add(cluster);
  try {
    const install = spawnSync(
      'mariadb-install-db',
      ['--no-defaults', `--datadir=${join(nodes[0]!.dir, 'data')}`, tmpdirOf(nodes[0]!), `--user=${runAs}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--skip-name-resolve', '--innodb-log-file-size=8M'],
      { encoding: 'utf8' },
    );
    if (install.status !== 0) throw new Error(`mariadb-install-db failed: ${install.stderr}`);
    const address = `gcomm://${[0, 1, 2].map((i) => `127.0.0.1:${gcomm(i)}`).join(',')}`;
    const launch = (n: GaleraNode, extra: string[]) => {
      const i = n.index - 1;
      const args = [
        '--no-defaults',
        `--datadir=${join(n.dir, 'data')}`,
        tmpdirOf(n),
        `--user=${runAs}`,
        `--port=${n.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${join(n.dir, 'mysqld.sock')}`,
        `--pid-file=${join(n.dir, 'mysqld.pid')}`,
        `--log-error=${join(n.dir, 'error.log')}`,
        '--skip-log-bin',
        '--skip-name-resolve',
        `--innodb-buffer-pool-size=${options.bufferPoolMb ?? 64}M`,
        '--innodb-log-file-size=8M',
        '--character-set-server=utf8mb4',
        '--collation-server=utf8mb4_general_ci',
        '--max-connections=200',
        '--wsrep-on=ON',
        `--wsrep-provider=${GALERA_LIBRARY}`,
        '--binlog-format=ROW',
        '--default-storage-engine=InnoDB',
        '--innodb-autoinc-lock-mode=2',
        '--wsrep-cluster-name=nova-reconcile-scratch',
        `--wsrep-cluster-address=${address}`,
        `--wsrep-node-address=127.0.0.1:${gcomm(i)}`,
        `--wsrep-node-name=node${n.index}`,
        `--wsrep-provider-options=base_port=${gcomm(i)};gmcast.listen_addr=tcp://127.0.0.1:${gcomm(i)};ist.recv_addr=127.0.0.1:${ist(i)};gcache.size=64M`,
        '--wsrep-sst-method=rsync',
        `--wsrep-sst-receive-address=127.0.0.1:${sst(i)}`,
        ...extra,
      ];
      const out = openSync(join(n.dir, 'stdout.log'), 'a');
      const child = spawn('/usr/sbin/mariadbd', args, { stdio: ['ignore', out, out], detached: true });
      closeSync(out);
      n.child = child;
      n.pid = child.pid ?? -1;
      n.exited = false;
      child.on('exit', () => {
        n.exited = true;
      });
    };
    const t0 = Date.now();
    launch(nodes[0]!, ['--wsrep-new-cluster']);
    await waitSynced(nodes[0]!);
    progress(`galera node 1 bootstrapped on 127.0.0.1:${nodes[0]!.port} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    launch(nodes[1]!, []);
    launch(nodes[2]!, []);
    await Promise.all([waitSynced(nodes[1]!), waitSynced(nodes[2]!)]);
    progress(`galera cluster of 3 synced on ports ${nodes.map((n) => n.port).join(', ')} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    return cluster;
  } catch (err) {
    const logs = nodes.map((n) => `node ${n.index}:\n${tail(join(n.dir, 'error.log'))}`).join('\n');
    await cluster.stop();
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`);
  }
}

export async function galeraStatus(port: number): Promise<Map<string, string>> {
  const conn = await createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 2000 });
  try {
    const [rows] = await conn.query("SHOW STATUS LIKE 'wsrep%'");
    return new Map((rows as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name.toLowerCase(), r.Value]));
  } finally {
    await conn.end();
  }
}

async function waitSynced(n: GaleraNode): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (n.exited) throw new Error(`galera node ${n.index} exited during start-up`);
    const status = await galeraStatus(n.port).catch(() => undefined);
    if (status?.get('wsrep_ready') === 'ON' && status.get('wsrep_local_state_comment') === 'Synced') return;
    await sleep(250);
  }
  throw new Error(`galera node ${n.index} did not sync within ${READY_TIMEOUT_MS / 1000} s`);
}

function mysqlIds(): { uid: number; gid: number } {
  const uid = Number(spawnSync('id', ['-u', 'mysql'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'mysql'], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-12).join('\n');
  } catch {
    return '(no log)';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
