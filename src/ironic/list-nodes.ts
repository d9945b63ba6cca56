// The node list as nova-compute reads it (nova/virt/ironic/driver.py
// _get_node_list): GET /v1/nodes in pages of `limit`, following `next`,
// asking only for the fields the tool uses, at a microversion that has
// conductor_group (1.46) and, when the API offers it (1.82), shard. A
// listing that stops part-way is an error, never a shorter list: a node the
// tool did not see would be called gone.
import type { IronicSettings } from '../config/ironic-settings.js';
import { isUuid } from '../domain/ironic-nodes.js';
import type { IronicNodeRec } from '../domain/model.js';
import { ReconcileError } from '../errors.js';
import { HttpFailure, origin, send, type HttpOptions, type HttpResponse } from './http.js';
import { resolveIronicAccess } from './keystone.js';

/** conductor_group arrived in 1.46 (Stein), shard in 1.82 (2023.2). */
const CONDUCTOR_GROUP_VERSION: Version = [1, 46];
const SHARD_VERSION: Version = [1, 82];
const PAGE_SIZE = 1000;
/** Without [ironic] timeout keystoneauth waits for ever; a cron run should not. */
export const DEFAULT_IRONIC_TIMEOUT_SECONDS = 60;

type Version = readonly [number, number];

export interface IronicListing {
  readonly nodes: readonly IronicNodeRec[];
  /** The Ironic API root the nodes came from (no credentials). */
  readonly endpoint: string;
  readonly microversion: string;
  readonly pages: number;
}

export interface ListOptions {
  readonly progress?: (line: string) => void;
  /** Waits between retries; tests shorten it. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly pageSize?: number;
}

export async function listIronicNodes(settings: IronicSettings, options: ListOptions = {}): Promise<IronicListing> {
  const http: HttpOptions = { cafile: settings.cafile, insecure: settings.insecure, timeoutMs: (settings.timeout ?? DEFAULT_IRONIC_TIMEOUT_SECONDS) * 1000 };
  const access = await resolveIronicAccess(settings, http);
  const root = parseRoot(access.endpoint);
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const headers: Record<string, string> = { Accept: 'application/json', ...(access.token === undefined ? {} : { 'X-Auth-Token': access.token }) };
  const nodes: IronicNodeRec[] = [];
  const call = async (url: URL, version?: string): Promise<HttpResponse> => {
    try {
      return await withRetries(settings, sleep, () => send('GET', url, version === undefined ? headers : { ...headers, 'X-OpenStack-Ironic-API-Version': version }, undefined, http));
    } catch (err) {
      if (err instanceof HttpFailure) throw incomplete(url, err.message, nodes.length, err);
      throw err;
    }
  };

  const maximum = await maximumVersion(await call(new URL(`${root}/`)), root);
  if (compare(maximum, CONDUCTOR_GROUP_VERSION) < 0)
    throw new ReconcileError('connection', `the Ironic API at ${origin(new URL(root))} offers microversions up to ${show(maximum)}; conductor_group needs 1.46`, { hint: 'upgrade Ironic, or give --ironic-nodes FILE' });
  const withShard = compare(maximum, SHARD_VERSION) >= 0;
  const version = show(withShard ? SHARD_VERSION : CONDUCTOR_GROUP_VERSION);
  const fields = ['uuid', 'instance_uuid', 'maintenance', 'provision_state', 'conductor_group', ...(withShard ? ['shard'] : [])].join(',');
  const limit = options.pageSize ?? PAGE_SIZE;

  const seen = new Set<string>();
  let marker: string | undefined;
  let pages = 0;
  for (;;) {
    const url = new URL(`${root}/v1/nodes`);
    url.searchParams.set('fields', fields);
    url.searchParams.set('limit', String(limit));
    if (marker !== undefined) url.searchParams.set('marker', marker);
    const res = await call(url, version);
    if (res.status === 401) throw new ReconcileError('config', `the Ironic API at ${origin(url)} refused the token (HTTP 401); nothing was changed`, { hint: 'check the [ironic] credentials and their project' });
    if (res.status !== 200) throw incomplete(url, `HTTP ${res.status}`, nodes.length);
    const page = parsePage(res.body, url, nodes.length);
    pages += 1;
    for (const n of page.nodes) if (!seen.has(n.uuid)) (seen.add(n.uuid), nodes.push(n));
    options.progress?.(`read ${nodes.length} ironic node(s) from ${origin(url)} (${pages} page(s))…`);
    if (page.next === undefined) break;
    const nextMarker = new URL(page.next, url).searchParams.get('marker');
    // Ironic's `next` carries the last uuid as marker; one that does not move on would loop for ever.
    if (nextMarker === null || nextMarker === marker) throw incomplete(url, 'its `next` link has no new marker', nodes.length);
    marker = nextMarker;
  }
  return { nodes, endpoint: root, microversion: version, pages };
}

function parseRoot(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    return url.toString().replace(/\/+$/, '');
  } catch (err) {
    throw new ReconcileError('config', 'the Ironic endpoint is not an http(s) URL', { hint: 'check [ironic] endpoint_override or the catalog', cause: err });
  }
}

/**
 * Nova's ironic client (nova/virt/ironic/client_wrapper.py) retries a 409
 * (node locked), a 503 and a refused connection api_max_retries times,
 * api_retry_interval seconds apart. A timeout is not retried.
 */
async function withRetries(settings: IronicSettings, sleep: (ms: number) => Promise<void>, attempt: () => Promise<HttpResponse>): Promise<HttpResponse> {
  for (let tried = 0; ; tried++) {
    try {
      const res = await attempt();
      if ((res.status !== 409 && res.status !== 503) || tried >= settings.apiMaxRetries) return res;
    } catch (err) {
      if (!(err instanceof HttpFailure)) throw err;
      if ((err.kind !== 'refused' && err.kind !== 'reset') || tried >= settings.apiMaxRetries) throw err;
    }
    await sleep(settings.apiRetryInterval * 1000);
  }
}

function incomplete(url: URL, why: string, read: number | undefined, cause?: unknown): ReconcileError {
  const sofar = read === undefined || read === 0 ? '' : ` after ${read} node(s)`;
  return new ReconcileError('connection', `cannot list the ironic nodes from the Ironic API at ${origin(url)}: ${why}${sofar}; without the complete list no node is judged, and nothing was changed`, {
    hint: 'check that ironic-api is up ([ironic] api_max_retries and api_retry_interval set how long to retry), or give --ironic-source file --ironic-nodes FILE',
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The root document's default (or v1) version, e.g. {"default_version": {"version": "1.81"}}. */
async function maximumVersion(res: HttpResponse, root: string): Promise<Version> {
  const header = res.headers['x-openstack-ironic-api-maximum-version'];
  const fromHeader = typeof header === 'string' ? parseVersion(header) : undefined;
  if (fromHeader !== undefined) return fromHeader;
  if (res.status !== 200) throw incomplete(new URL(root), `HTTP ${res.status} on its root`, undefined);
  try {
    const doc = JSON.parse(res.body) as { default_version?: { version?: unknown }; versions?: Array<{ version?: unknown }> };
    const text = doc.default_version?.version ?? doc.versions?.[0]?.version;
    const v = typeof text === 'string' ? parseVersion(text) : undefined;
    if (v !== undefined) return v;
  } catch {
    // fall through
  }
  throw incomplete(new URL(root), 'its root document names no API version (is this Ironic?)', undefined);
}

function parseVersion(text: string): Version | undefined {
  const m = /^\s*(\d+)\.(\d+)\s*$/.exec(text);
  return m === null ? undefined : [Number(m[1]), Number(m[2])];
}

function compare(a: Version, b: Version): number {
  return a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1];
}

function show(v: Version): string {
  return `${v[0]}.${v[1]}`;
}

function parsePage(body: string, url: URL, read: number): { nodes: IronicNodeRec[]; next: string | undefined } {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw incomplete(url, 'a page is not JSON', read);
  }
  const list = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>)['nodes'] : undefined;
  if (!Array.isArray(list)) throw incomplete(url, 'a page has no "nodes" list', read);
  const next = (doc as Record<string, unknown>)['next'];
  const nodes = list.map((entry: unknown) => {
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const uuid = e['uuid'];
    if (typeof uuid !== 'string' || !isUuid(uuid)) throw incomplete(url, 'a node without a valid uuid', read);
    const instance = e['instance_uuid'];
    return {
      uuid: uuid.toLowerCase(),
      instanceUuid: typeof instance === 'string' && isUuid(instance) ? instance.toLowerCase() : null,
      maintenance: typeof e['maintenance'] === 'boolean' ? e['maintenance'] : null,
      provisionState: typeof e['provision_state'] === 'string' ? e['provision_state'] : null,
      // Ironic's default group is "" (never null from 1.46 on).
      conductorGroup: typeof e['conductor_group'] === 'string' ? e['conductor_group'] : null,
      ...(typeof e['shard'] === 'string' || e['shard'] === null ? { shard: e['shard'] as string | null } : {}),
    };
  });
  return { nodes, next: typeof next === 'string' && next !== '' ? next : undefined };
}
