// A tiny HTTP server that answers as Keystone v3 and the Ironic API answer
// the requests nova-reconcile makes, for the error paths a real Ironic does
// not produce on demand (401, 5xx, a hang, a connection cut mid-listing).
// The conformance tier checks the same client against the real ironic-api.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeNode {
  readonly uuid: string;
  readonly instance_uuid?: string | null;
  readonly maintenance?: boolean;
  readonly provision_state?: string;
  readonly conductor_group?: string;
  /** Ironic's shard (API 1.82); served only when maxVersion offers it. */
  readonly shard?: string | null;
}

export type Fault =
  | { readonly kind: 'none' }
  | { readonly kind: 'status'; readonly status: number; readonly onPage?: number; readonly times?: number }
  | { readonly kind: 'hang'; readonly onPage?: number }
  | { readonly kind: 'cut'; readonly onPage: number };

export interface FakeIronic {
  readonly url: string;
  readonly requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: string }>;
  nodes: FakeNode[];
  fault: Fault;
  /** Ironic's max_limit: the page size it really uses. */
  pageSize: number;
  /** The highest microversion offered: 1.81 as Ironic before shards; 1.82 offers shard (2023.2). */
  maxVersion: string;
  /** Keystone: the password and application credential it accepts, and the catalog it returns. */
  readonly keystone: { password: string; appCredId: string; appCredSecret: string; token: string; catalogHasIronic: boolean };
  close(): Promise<void>;
}

export async function startFakeIronic(): Promise<FakeIronic> {
  let served = 0;
  const state: Omit<FakeIronic, 'url' | 'close'> = {
    requests: [],
    nodes: [],
    fault: { kind: 'none' },
    pageSize: 1000,
    maxVersion: '1.81',
    keystone: { password: 'Pw-s3cret-not-for-output', appCredId: 'appcred-1', appCredSecret: 'AppCred-s3cret-not-for-output', token: 'gAAAA-token-not-for-output', catalogHasIronic: true },
  };
  const hung: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      state.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', base);
      if (req.method === 'POST' && url.pathname === '/identity/v3/auth/tokens') return keystone(body, res);
      if (url.pathname === '/baremetal/' || url.pathname === '/baremetal') {
        return json(res, 200, { default_version: { id: 'v1', version: state.maxVersion, min_version: '1.1', status: 'CURRENT' }, name: 'OpenStack Ironic API' });
      }
      if (url.pathname === '/baremetal/v1/nodes') {
        served += 1;
        const page = served;
        const f = state.fault;
        if (f.kind === 'status' && (f.onPage === undefined || f.onPage === page) && (f.times === undefined || page <= f.times)) return json(res, f.status, { error_message: 'fault' });
        if (f.kind === 'hang' && (f.onPage === undefined || f.onPage === page)) return void hung.push(res);
        if (f.kind === 'cut' && f.onPage === page) {
          // Headers and half a body, then the connection goes away.
          res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100000' });
          res.write('{"nodes": [');
          return void setTimeout(() => res.socket?.destroy(), 20);
        }
        return nodesPage(url, req, res);
      }
      json(res, 404, { error_message: 'not found' });
    });
  });
  const keystone = (body: string, res: ServerResponse): void => {
    const auth = (JSON.parse(body) as { auth: { identity: { methods: string[]; password?: { user: { password: string } }; application_credential?: { id: string; secret: string } } } }).auth;
    const ok =
      (auth.identity.methods[0] === 'password' && auth.identity.password?.user.password === state.keystone.password) ||
      (auth.identity.methods[0] === 'application_credential' && auth.identity.application_credential?.id === state.keystone.appCredId && auth.identity.application_credential.secret === state.keystone.appCredSecret);
    if (!ok) return json(res, 401, { error: { code: 401, message: 'The request you have made requires authentication.', title: 'Unauthorized' } });
    const catalog = [
      { type: 'identity', name: 'keystone', endpoints: [{ interface: 'public', region_id: 'RegionOne', region: 'RegionOne', url: `${base}/identity/v3` }] },
      ...(state.keystone.catalogHasIronic
        ? [
            {
              type: 'baremetal',
              name: 'ironic',
              endpoints: [
                { interface: 'public', region_id: 'RegionOne', region: 'RegionOne', url: 'http://192.0.2.1:6385' },
                { interface: 'internal', region_id: 'RegionOne', region: 'RegionOne', url: `${base}/baremetal` },
                { interface: 'internal', region_id: 'RegionTwo', region: 'RegionTwo', url: 'http://192.0.2.2:6385' },
              ],
            },
          ]
        : []),
    ];
    res.writeHead(201, { 'Content-Type': 'application/json', 'X-Subject-Token': state.keystone.token });
    res.end(JSON.stringify({ token: { methods: auth.identity.methods, catalog } }));
  };
  const nodesPage = (url: URL, req: IncomingMessage, res: ServerResponse): void => {
    if (state.keystone.catalogHasIronic && req.headers['x-auth-token'] !== undefined && req.headers['x-auth-token'] !== state.keystone.token) return json(res, 401, {});
    const limit = Math.min(Number(url.searchParams.get('limit') ?? '1000'), state.pageSize);
    const marker = url.searchParams.get('marker');
    // ?shard=X filters as Ironic does (API 1.82), so a client that narrowed its listing to one shard would miss the others' nodes.
    const shard = url.searchParams.get('shard');
    const sorted = [...state.nodes].filter((n) => shard === null || n.shard === shard).sort((a, b) => (a.uuid < b.uuid ? -1 : 1));
    const start = marker === null ? 0 : sorted.findIndex((n) => n.uuid === marker) + 1;
    const fields = (url.searchParams.get('fields') ?? '').split(',');
    const page = sorted.slice(start, start + limit).map((n) => Object.fromEntries(fields.map((f) => [f, f === 'conductor_group' ? (n.conductor_group ?? '') : f === 'maintenance' ? (n.maintenance ?? false) : f === 'provision_state' ? (n.provision_state ?? 'active') : ((n as unknown as Record<string, unknown>)[f] ?? null)])));
    const last = page[page.length - 1] as { uuid?: string } | undefined;
    const more = start + limit < sorted.length;
    json(res, 200, { nodes: page, ...(more && last?.uuid !== undefined ? { next: `${base}/baremetal/v1/nodes?limit=${limit}&fields=${fields.join(',')}&marker=${last.uuid}` } : {}) });
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake = Object.assign(state, {
    url: base,
    close: async () => {
      for (const r of hung) r.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  }) as FakeIronic;
  // `served` counts pages of one run; the tests reset it through this hook.
  Object.defineProperty(fake, 'resetPages', { value: () => (served = 0) });
  return fake;
}

export function resetPages(fake: FakeIronic): void {
  (fake as unknown as { resetPages: () => void }).resetPages();
}

function json(res: ServerResponse, status: number, doc: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(doc));
}
