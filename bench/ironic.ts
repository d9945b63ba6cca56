// The Ironic API as the node list's source, timed (issue 16): the listing of
// N nodes alone, in-process, through the client the commands use
// (src/ironic/list-nodes.ts), and `audit` with `--ironic-source api` beside
// `audit --ironic-nodes FILE` on the same cloud of N ironic compute nodes.
//
// The Ironic API is a small local HTTP server (below) that pages as the real
// ironic-api does: nodes sorted by uuid, `limit` capped at max_limit (1,000),
// a `next` link carrying the last uuid as `marker`, only the `fields` asked
// for. It is a copy of the pagination of test/helpers/fake-ironic.ts, kept
// here because the build (tsconfig.build.json) compiles bench/ and not test/,
// and without that file's fault injection and Keystone, which a timing does
// not need (auth_type none with endpoint_override, as a standalone Ironic).
import { appendFile, copyFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { IronicSettings } from '../src/config/ironic-settings.js';
import { listIronicNodes } from '../src/ironic/list-nodes.js';
import { generateCloud } from '../src/sandbox/scale-cloud.js';
import { formatSeconds, markdownTable, median } from './report.js';
import { runWithStats } from './processes.js';
import { createScratchDeployment } from './scratch-deployment.js';
import type { BenchContext } from './processes.js';

const TIMEOUT_MS = 10 * 60_000;
/** ironic-api's [api] max_limit default: the page size the real Ironic uses. */
const IRONIC_MAX_LIMIT = 1000;
/** Nodes per nova-compute host of the generated cloud. */
const NODES_PER_HOST = 1000;
/** Share of the cloud's nodes that Ironic no longer lists: the audit has orphans to find, the same from both sources. */
const GONE_FRACTION = 0.01;

export type IronicBenchContext = BenchContext;

export interface IronicRow {
  readonly command: string;
  readonly runs: readonly number[];
  readonly inProcessMs: readonly number[];
  readonly roundTrips: number | undefined;
  readonly peakRssKb: number | undefined;
  readonly note: string;
}

export interface IronicSection {
  readonly nodes: number;
  readonly listed: number;
  readonly pages: number;
  readonly rows: readonly IronicRow[];
}

interface ServedNode {
  readonly uuid: string;
  readonly instance_uuid: string | null;
  readonly maintenance: boolean;
  readonly provision_state: string;
  readonly conductor_group: string;
}

/** An Ironic API answering GET / and GET /v1/nodes as ironic-api 21.4 does, without auth (noauth). */
async function startIronic(nodes: readonly ServedNode[]): Promise<{ url: string; pagesServed: () => number; close: () => Promise<void> }> {
  const sorted = [...nodes].sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  const index = new Map(sorted.map((n, i) => [n.uuid, i]));
  let pages = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    const send = (status: number, doc: unknown): void => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(doc));
    };
    if (url.pathname === '/') return send(200, { default_version: { id: 'v1', version: '1.81', min_version: '1.1', status: 'CURRENT' }, name: 'OpenStack Ironic API' });
    if (url.pathname !== '/v1/nodes') return send(404, { error_message: 'not found' });
    pages += 1;
    const limit = Math.min(Number(url.searchParams.get('limit') ?? IRONIC_MAX_LIMIT), IRONIC_MAX_LIMIT);
    const marker = url.searchParams.get('marker');
    const start = marker === null ? 0 : (index.get(marker) ?? -1) + 1;
    if (marker !== null && start === 0) return send(400, { error_message: `Marker ${marker} was not found` });
    const fields = (url.searchParams.get('fields') ?? 'uuid').split(',');
    const page = sorted.slice(start, start + limit).map((n) => Object.fromEntries(fields.map((f) => [f, (n as unknown as Record<string, unknown>)[f] ?? null])));
    const more = start + limit < sorted.length;
    const last = sorted[start + page.length - 1];
    send(200, { nodes: page, ...(more && last !== undefined ? { next: `${base}/v1/nodes?limit=${limit}&fields=${fields.join(',')}&marker=${last.uuid}` } : {}) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    pagesServed: () => pages,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function benchmarkIronic(ctx: IronicBenchContext, nodes: number): Promise<IronicSection> {
  const hosts = Math.max(1, Math.ceil(nodes / NODES_PER_HOST));
  const perHost = Math.ceil(nodes / hosts);
  const label = `${(hosts * perHost).toLocaleString('en-US')} ironic nodes`;
  ctx.progress(`${label}: creating the cloud`);
  const d = await createScratchDeployment(ctx.server, 1, { withPlacement: true });
  try {
    if (d.placement === undefined) throw new Error('internal: scratch deployment without placement');
    const started = Date.now();
    await generateCloud({ ...d.scaleDatabases, placement: d.placement }, { hostsPerCell: hosts, nodesPerHost: perHost });
    ctx.progress(`${label}: generated in ${formatSeconds((Date.now() - started) / 1000)} s`);
    const cell = d.cells[0];
    if (cell === undefined) throw new Error('internal: scratch deployment without a cell');
    const rows = (await cell.knex('compute_nodes').where({ deleted: 0, hypervisor_type: 'ironic' }).select('uuid')) as { uuid: string }[];
    // Every 1/GONE_FRACTION-th node was deleted in Ironic: an orphan both sources must name.
    const step = Math.round(1 / GONE_FRACTION);
    const served: ServedNode[] = rows
      .filter((_, i) => i % step !== step - 1)
      .map((r) => ({ uuid: r.uuid, instance_uuid: null, maintenance: false, provision_state: 'active', conductor_group: '' }));
    const gone = rows.length - served.length;
    const ironic = await startIronic(served);
    try {
      const result: IronicRow[] = [];
      // 1. The listing alone, in-process: what the API source adds before any database is read.
      const settings: IronicSettings = {
        auth: { type: 'none' },
        endpointOverride: ironic.url,
        regionName: undefined,
        validInterfaces: ['internal', 'public'],
        serviceType: 'baremetal',
        cafile: undefined,
        insecure: false,
        timeout: undefined,
        apiMaxRetries: 0,
        apiRetryInterval: 0,
        partitionKey: undefined,
        peerList: undefined,
      };
      const listRuns: number[] = [];
      let listed = 0;
      let pages = 0;
      for (let r = 0; r < ctx.runs; r += 1) {
        const t = process.hrtime.bigint();
        const listing = await listIronicNodes(settings);
        listRuns.push(Number(process.hrtime.bigint() - t) / 1e9);
        listed = listing.nodes.length;
        pages = listing.pages;
      }
      if (listed !== served.length) throw new Error(`the listing returned ${listed} nodes, the Ironic API serves ${served.length}`);
      result.push({ command: `Ironic listing (in-process, ${pages} pages of ${IRONIC_MAX_LIMIT})`, runs: listRuns, inProcessMs: listRuns.map((s) => s * 1000), roundTrips: undefined, peakRssKb: undefined, note: `${listed.toLocaleString('en-US')} nodes` });
      ctx.progress(`${label}: listing: ${listRuns.map(formatSeconds).join(' / ')} s`);

      // 2. audit with each source, on the same cloud and the same node list.
      const apiConf = join(d.confPath, '..', 'nova-ironic-api.conf');
      await copyFile(d.confPath, apiConf);
      await appendFile(apiConf, `\n[ironic]\nauth_type = none\nendpoint_override = ${ironic.url}\n`);
      const file = join(d.confPath, '..', 'ironic-nodes.json');
      // As `openstack baremetal node list -f json` prints it.
      await writeFile(file, JSON.stringify(served.map((n) => ({ UUID: n.uuid, 'Instance UUID': n.instance_uuid, Maintenance: n.maintenance, 'Provisioning State': n.provision_state, 'Power State': 'power on', Name: null }))));
      const variants = [
        { command: 'audit --ironic-source api', args: ['--config-file', apiConf, 'audit', '--ironic-source', 'api', '--format', 'json'] },
        { command: 'audit --ironic-nodes FILE', args: ['--config-file', d.confPath, 'audit', '--ironic-nodes', file, '--format', 'json'] },
      ];
      const outputs: string[] = [];
      const byVariant = variants.map(() => ({ runs: [] as number[], inProcessMs: [] as number[], roundTrips: 0, peakRssKb: 0 }));
      // Alternated run by run, so that a change in the machine's load hits both alike.
      for (let r = 0; r < ctx.runs; r += 1) {
        for (const [i, v] of variants.entries()) {
          const { run, stats } = await runWithStats([ctx.cli, '--stats', ...v.args], `${label}: ${v.command}`, 3, TIMEOUT_MS);
          const m = byVariant[i]!;
          m.runs.push(run.seconds);
          m.inProcessMs.push(stats.elapsedMs);
          m.roundTrips = stats.roundTrips;
          m.peakRssKb = Math.max(m.peakRssKb, stats.maxRssKb);
          if (r === 0) outputs.push(run.stdout);
        }
      }
      // Both sources must judge alike, or timing them side by side says nothing.
      // The suggestions differ by design: each repeats the source it was given (config file, --ironic-nodes).
      const findings = outputs.map((o) => JSON.stringify((JSON.parse(o) as { findings: { suggestion?: unknown }[] }).findings.map(({ suggestion: _, ...f }) => f)));
      if (findings[0] !== findings[1]) {
        const dump = join(d.confPath, '..', '..', `nrbench-ironic-findings-${process.pid}.json`);
        await writeFile(dump, JSON.stringify({ api: JSON.parse(outputs[0]!), file: JSON.parse(outputs[1]!) }, null, 1));
        throw new Error(`${label}: audit's findings differ between --ironic-source api and --ironic-nodes FILE (both in ${dump})`);
      }
      const orphans = (JSON.parse(outputs[0]!) as { findings: { kind: string }[] }).findings.filter((f) => f.kind === 'orphan-node-ironic-deleted').length;
      if (orphans !== gone) throw new Error(`${label}: audit named ${orphans} nodes deleted in Ironic, ${gone} were`);
      for (const [i, v] of variants.entries()) {
        const m = byVariant[i]!;
        result.push({ command: v.command, runs: m.runs, inProcessMs: m.inProcessMs, roundTrips: m.roundTrips, peakRssKb: m.peakRssKb, note: `exit 3; ${orphans} nodes deleted in Ironic found` });
        ctx.progress(`${label}: ${v.command}: ${m.runs.map(formatSeconds).join(' / ')} s`);
      }
      return { nodes: rows.length, listed, pages, rows: result };
    } finally {
      await ironic.close();
    }
  } finally {
    await d.drop();
  }
}

export function renderIronicTable(s: IronicSection): string {
  const mb = (kb: number | undefined): string => (kb === undefined ? '–' : (kb / 1024).toFixed(1));
  return markdownTable(
    ['size', 'command', 'seconds', 'in-process (ms)', 'round trips', 'peak RSS (MB)', 'note'],
    s.rows.map((r) => [
      `${s.nodes.toLocaleString('en-US')} ironic nodes`,
      r.command,
      formatSeconds(median(r.runs)),
      String(Math.round(median(r.inProcessMs))),
      r.roundTrips === undefined ? '–' : String(r.roundTrips),
      mb(r.peakRssKb),
      r.note,
    ]),
    [false, false, true, true, true, true, false],
  );
}

export function renderIronicSection(s: IronicSection, runs: number): string {
  return (
    `## The Ironic API as the node list's source\n\n` +
    `${s.nodes.toLocaleString('en-US')} ironic compute nodes on ${Math.max(1, Math.ceil(s.nodes / NODES_PER_HOST))} hosts (one cell); a local Ironic API ` +
    `(bench/ironic.ts: no auth, endpoint_override, pages of ${IRONIC_MAX_LIMIT} as ironic-api's max_limit) lists ${s.listed.toLocaleString('en-US')} of them, ` +
    `the others having been deleted in Ironic; the file holds the same ${s.listed.toLocaleString('en-US')} nodes. Median of ${runs} runs; the two audits ` +
    `alternate run by run, and their findings must be identical. "seconds" of an audit is the whole process; the listing is in-process.\n\n${renderIronicTable(s)}\n\n` +
    s.rows.map((r) => `- ${r.command}: ${r.runs.map(formatSeconds).join(' / ')} s`).join('\n')
  );
}
