// The Nova releases the conformance tier runs, each with its own real code:
// Zed 26.x from this machine's Debian 12 packages (/usr/bin/python3), and
// the newer Novas of Debian 13 (31.0.0, 2025.1) and Debian sid (the newest
// packaged) inside the chroots scripts/install-newer-nova.sh builds. A
// deployment of a release is built by that release's own nova-manage and
// placement-manage; its states are written by its own object layer, resource
// tracker, ironic driver, report client and scheduler claim (nova_rt.py).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { filterNovaStderr, type ToolResult } from './real-nova.js';

export interface Release {
  /** 'zed', '2025.1', '2026.2' */
  readonly name: string;
  /** The Debian suite its packages come from. */
  readonly suite: 'bookworm' | 'trixie' | 'sid';
  /** Its chroot; undefined: this machine. */
  readonly chroot: string | undefined;
  /** The Nova major release the packages are (26, 31, 34). */
  readonly novaMajor: number;
}

const CHROOT_ROOT = process.env['NRC_CHROOT_ROOT'] ?? '/var/lib/nova-reconcile/chroots';
const REPO = new URL('../../', import.meta.url).pathname;
const IN_CHROOT = join(REPO, 'scripts', 'in-chroot.sh');
const NOVA_RT = [readFileSync(new URL('./placement_in_process.py', import.meta.url), 'utf8'), readFileSync(new URL('./nova_rt.py', import.meta.url), 'utf8')].join('\n');

export const RELEASES: readonly Release[] = [
  { name: 'zed', suite: 'bookworm', chroot: undefined, novaMajor: 26 },
  { name: '2025.1', suite: 'trixie', chroot: join(CHROOT_ROOT, 'trixie'), novaMajor: 31 },
  { name: '2026.2', suite: 'sid', chroot: join(CHROOT_ROOT, 'sid'), novaMajor: 34 },
];

/** Whether a release's code is installed here (its chroot built, or Debian 12's packages on this machine). */
export function releaseAvailable(r: Release): boolean {
  if (r.chroot === undefined) return existsSync('/usr/lib/python3/dist-packages/nova/cmd/manage.py');
  return existsSync(join(r.chroot, '.nrc-ready'));
}

/**
 * The releases to run. In CI every one must be there (.ci/run builds them;
 * sid's may be missing only when its chroot could not be built, which .ci/run
 * says loudly and which NRC_SID_UNAVAILABLE=1 records).
 */
export function releasesToRun(): Release[] {
  return RELEASES.filter((r) => {
    if (releaseAvailable(r)) return true;
    if (process.env['CI'] === 'true' && !(r.suite === 'sid' && process.env['NRC_SID_UNAVAILABLE'] === '1'))
      throw new Error(`the conformance tier needs Nova ${r.name} (${r.suite}), which is not installed: run scripts/install-newer-nova.sh ${r.suite}`);
    process.stderr.write(`conformance: Nova ${r.name} (${r.suite}) is not installed here; its cases are skipped (scripts/install-newer-nova.sh ${r.suite})\n`);
    return false;
  });
}

/** A scratch folder the release's processes can read: inside its chroot's /tmp for a chroot. */
function scratchDir(r: Release): { host: string; inside: string } {
  if (r.chroot === undefined) {
    const d = mkdtempSync(join(tmpdir(), 'nrc-rel-'));
    return { host: d, inside: d };
  }
  const host = mkdtempSync(join(r.chroot, 'tmp', 'nrc-rel-'));
  return { host, inside: `/tmp/${basename(host)}` };
}

/** Runs python3 with the release's packages: on this machine, or in its chroot. */
export function runReleasePython(r: Release, args: readonly string[], timeoutMs = 180_000): Promise<ToolResult> {
  const argv = r.chroot === undefined ? ['/usr/bin/python3', ...args] : ['bash', IN_CHROOT, r.chroot, '/usr/bin/python3', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), { env: { ...process.env, COLUMNS: '80', LANG: 'C.UTF-8' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: filterReleaseStderr(Buffer.concat(err).toString('utf8')), code: code ?? 255 });
    });
  });
}

// What newer Novas print on stderr at every start, whatever the command:
// eventlet's deprecation (sid) and its green-lock notice. Everything else is kept.
const START_NOISE = [
  /^\/usr\/lib\/python3\/dist-packages\/nova\/monkey_patch\.py:\d+: EventletDeprecationWarning: $/,
  /^Eventlet is deprecated\. It is currently being maintained in bugfix mode, and$/,
  /^we strongly recommend against using it for new projects\.$/,
  /^$/,
  /^If you are already using Eventlet, we recommend migrating to a different$/,
  /^framework\.  For more detail see$/,
  /^https:\/\/eventlet\.readthedocs\.io\/en\/latest\/asyncio\/migration\.html$/,
  /^  import eventlet  # noqa$/,
  /^\d+ RLock\(s\) were not greened, to fix this error make sure you run eventlet\.monkey_patch\(\) before importing any other modules\.$/,
  /^Eventlet based concurrency mode is deprecated and will be removed in a future release, not earlier than [0-9.]+\. Please migrate to native threading mode\. See the concurrency guide for details: \S+$/,
];

/** Drops the start-up notices of the newer Novas (and Zed's eventlet/urllib3 line); keeps the rest byte for byte. */
export function filterReleaseStderr(stderr: string): string {
  const zed = filterNovaStderr(stderr);
  if (!zed.includes('ventlet')) return zed;
  const lines = zed.split(/(?<=\n)/);
  // The notices come first, as one block; a blank line belongs to them only there.
  let i = 0;
  while (i < lines.length && START_NOISE.some((re) => re.test((lines[i] as string).replace(/\n$/, '')))) i++;
  return lines.slice(i).join('');
}

const NOVA_MANAGE = 'import sys; sys.argv[0] = "nova-manage"; from nova.cmd.manage import main; sys.exit(main())';
const PLACEMENT_MANAGE = 'import sys; sys.argv[0] = "placement-manage"; from placement.cmd.manage import main; sys.exit(main())';

export interface ReleaseDeployment {
  readonly release: Release;
  readonly db: { readonly api: string; readonly cell0: string; readonly cell1: string; readonly placement: string };
  /** nova.conf as seen by this machine (nova-reconcile reads it). */
  readonly confPath: string;
  /** nova.conf as the release's processes see it. */
  readonly confInside: string;
  readonly cell1Uuid: string;
  nova(args: readonly string[]): Promise<ToolResult>;
  placement(args: readonly string[]): Promise<ToolResult>;
  /** nova_rt.py with a request; its JSON answer. */
  rt(request: Record<string, unknown>): Promise<RtAnswer>;
  query<T extends RowDataPacket>(db: keyof ReleaseDeployment['db'], sql: string, params?: ReadonlyArray<string | number | null>): Promise<T[]>;
  drop(): Promise<void>;
}

export interface RtAnswer {
  readonly ok: boolean;
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
  readonly info: readonly string[];
  readonly [key: string]: unknown;
}

function sqlalchemyUrl(db: string): string {
  return `mysql+pymysql://root@127.0.0.1:3306/${db}?charset=utf8`;
}

async function connect(): Promise<Connection> {
  return createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '', multipleStatements: true, dateStrings: true });
}

/** A deployment built by the release's own nova-manage and placement-manage: API, cell0, cell1 and placement. */
export async function createReleaseDeployment(r: Release, prefix: string): Promise<ReleaseDeployment> {
  const rand = randomBytes(3).toString('hex');
  const tag = `${prefix}_${r.novaMajor}_${rand}`;
  const db = { api: `nrc_${tag}_api`, cell0: `nrc_${tag}_cell0`, cell1: `nrc_${tag}_cell1`, placement: `nrc_${tag}_placement` };
  const c = await connect();
  try {
    for (const name of Object.values(db)) await c.query(`CREATE DATABASE \`${name}\``);
  } finally {
    await c.end();
  }
  const dir = scratchDir(r);
  const conf = [
    '[DEFAULT]',
    `log_file = ${dir.inside}/nova.log`,
    `transport_url = rabbit://guest:guest@127.0.0.1:5672/${db.cell1}`,
    '[api_database]',
    `connection = ${sqlalchemyUrl(db.api)}`,
    '[database]',
    `connection = ${sqlalchemyUrl(db.cell1)}`,
    '[placement_database]',
    `connection = ${sqlalchemyUrl(db.placement)}`,
    '[oslo_concurrency]',
    `lock_path = ${dir.inside}/locks`,
    // nova-reconcile runs on this machine, not in the chroot: its journals go
    // to the folder as this machine sees it (Nova ignores the group).
    '[nova_reconcile]',
    `journal_dir = ${dir.host}/journal`,
    '',
  ].join('\n');
  const confPath = join(dir.host, 'nova.conf');
  writeFileSync(confPath, conf);
  const confInside = `${dir.inside}/nova.conf`;
  const nova = (args: readonly string[]): Promise<ToolResult> => runReleasePython(r, ['-c', NOVA_MANAGE, '--config-file', confInside, ...args]);
  const placement = (args: readonly string[]): Promise<ToolResult> => runReleasePython(r, ['-c', PLACEMENT_MANAGE, '--config-file', confInside, ...args]);
  const must = async (what: string, p: Promise<ToolResult>): Promise<ToolResult> => {
    const res = await p;
    if (res.code !== 0) throw new Error(`Nova ${r.name}: ${what} exited ${res.code}\n${res.stdout}\n${res.stderr}`);
    return res;
  };
  const drop = async (): Promise<void> => {
    const k = await connect();
    try {
      for (const name of Object.values(db)) await k.query(`DROP DATABASE IF EXISTS \`${name}\``);
    } finally {
      await k.end();
    }
    rmSync(dir.host, { recursive: true, force: true });
    // In a chroot's deployment, log_file names the folder as the chroot sees
    // it: nova-reconcile, on this machine, made that path here for its log.
    if (dir.inside !== dir.host) rmSync(dir.inside, { recursive: true, force: true });
  };
  try {
    const apiChain = (async () => {
      await must('api_db sync', nova(['api_db', 'sync']));
      await must('cell_v2 map_cell0', nova(['cell_v2', 'map_cell0', '--database_connection', sqlalchemyUrl(db.cell0)]));
      await must('cell_v2 create_cell', nova(['cell_v2', 'create_cell', '--name', 'cell1', '--database_connection', sqlalchemyUrl(db.cell1), '--transport-url', `rabbit://guest:guest@127.0.0.1:5672/${db.cell1}`]));
      // Also syncs cell0, now mapped.
      await must('db sync', nova(['db', 'sync']));
    })();
    await Promise.all([apiChain, must('placement-manage db sync', placement(['db', 'sync']))]);
  } catch (e) {
    await drop().catch(() => undefined);
    throw e;
  }
  const query = async <T extends RowDataPacket>(which: keyof typeof db, sql: string, params: ReadonlyArray<string | number | null> = []): Promise<T[]> => {
    const k = await connect();
    try {
      await k.query(`USE \`${db[which]}\``);
      const [rows] = await k.query<T[]>(sql, [...params]);
      return rows;
    } finally {
      await k.end();
    }
  };
  const [cell1] = await query<RowDataPacket & { uuid: string }>('api', "SELECT uuid FROM cell_mappings WHERE name = 'cell1'");
  if (cell1 === undefined) throw new Error(`Nova ${r.name}: create_cell made no cell1 mapping`);
  const rt = async (request: Record<string, unknown>): Promise<RtAnswer> => {
    const res = await runReleasePython(r, ['-c', NOVA_RT, confInside, JSON.stringify(request)]);
    const last = res.stdout.trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(last) as RtAnswer;
    } catch {
      throw new Error(`Nova ${r.name}: nova_rt.py ${String(request['op'])} printed no answer (exit ${res.code})\nstdout:\n${res.stdout}\nstderr:\n${res.stderr}`);
    }
  };
  return { release: r, db, confPath, confInside, cell1Uuid: cell1.uuid, nova, placement, rt, query, drop };
}
