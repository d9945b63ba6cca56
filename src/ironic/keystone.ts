// Keystone v3 as keystoneauth uses it for nova-compute's [ironic] section:
// get a token (password or application credential), then pick the Ironic
// endpoint from the token's catalog by service type, interface (in
// valid_interfaces order) and region. Nothing here prints a secret: errors
// name the Keystone URL's origin and the HTTP status only.
import type { IronicAuth, IronicSettings } from '../config/ironic-settings.js';
import { ReconcileError } from '../errors.js';
import { HttpFailure, origin, send, type HttpOptions } from './http.js';

export interface IronicAccess {
  /** The Ironic API root, without /v1 (printable: no credentials in it). */
  readonly endpoint: string;
  /** X-Auth-Token for Ironic; undefined with auth_type = none. */
  readonly token: string | undefined;
}

interface CatalogEntry {
  readonly type?: unknown;
  readonly endpoints?: unknown;
}

export async function resolveIronicAccess(settings: IronicSettings, http: HttpOptions): Promise<IronicAccess> {
  const auth = settings.auth;
  if (auth.type === 'none') return { endpoint: ironicRoot(settings.endpointOverride ?? ''), token: undefined };
  const { token, catalog } = await authenticate(auth, http);
  if (settings.endpointOverride !== undefined) return { endpoint: ironicRoot(settings.endpointOverride), token };
  return { endpoint: ironicRoot(pickEndpoint(catalog, settings, auth.authUrl)), token };
}

/** Ironic's root: "http://host:6385"; a catalog URL may end in /v1 (or a slash). */
function ironicRoot(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '');
}

function tokensUrl(authUrl: string): URL {
  const base = authUrl.replace(/\/+$/, '');
  try {
    return new URL(/\/v3$/.test(base) ? `${base}/auth/tokens` : `${base}/v3/auth/tokens`);
  } catch (err) {
    throw new ReconcileError('config', '[ironic] auth_url is not a URL', { cause: err });
  }
}

function identityOf(auth: Exclude<IronicAuth, { type: 'none' }>): object {
  if (auth.type === 'v3applicationcredential') {
    const user = auth.username === undefined ? undefined : { name: auth.username, ...(auth.userDomainName === undefined ? {} : { domain: { name: auth.userDomainName } }) };
    return {
      identity: {
        methods: ['application_credential'],
        application_credential: {
          ...(auth.applicationCredentialId === undefined ? { name: auth.applicationCredentialName } : { id: auth.applicationCredentialId }),
          secret: auth.applicationCredentialSecret,
          ...(auth.applicationCredentialId === undefined && user !== undefined ? { user } : {}),
        },
      },
    };
  }
  const domain = (name: string | undefined, id: string | undefined): object | undefined => (id !== undefined ? { id } : name !== undefined ? { name } : undefined);
  const userDomain = domain(auth.userDomainName, auth.userDomainId);
  const user = auth.userId !== undefined ? { id: auth.userId } : { name: auth.username, ...(userDomain === undefined ? {} : { domain: userDomain }) };
  const projectDomain = domain(auth.projectDomainName, auth.projectDomainId);
  const project = auth.projectId !== undefined ? { id: auth.projectId } : auth.projectName !== undefined ? { name: auth.projectName, ...(projectDomain === undefined ? {} : { domain: projectDomain }) } : undefined;
  return {
    identity: { methods: ['password'], password: { user: { ...user, password: auth.password } } },
    ...(project === undefined ? {} : { scope: { project } }),
  };
}

async function authenticate(auth: Exclude<IronicAuth, { type: 'none' }>, http: HttpOptions): Promise<{ token: string; catalog: unknown }> {
  const url = tokensUrl(auth.authUrl);
  const where = `Keystone at ${origin(url)}`;
  let res;
  try {
    res = await send('POST', url, { 'Content-Type': 'application/json', Accept: 'application/json' }, JSON.stringify({ auth: identityOf(auth) }), http);
  } catch (err) {
    const why = err instanceof HttpFailure ? err.message : 'request failed';
    throw new ReconcileError('connection', `cannot reach ${where} for [ironic]: ${why}`, { hint: 'check [ironic] auth_url and that Keystone is up; nothing was changed', cause: err });
  }
  if (res.status === 401)
    throw new ReconcileError('config', `${where} refused the [ironic] credentials (HTTP 401, auth_type ${auth.type}); nothing was changed`, {
      hint: 'check [ironic] username, password, project and domains (or the application credential) in nova.conf',
    });
  if (res.status !== 201 && res.status !== 200)
    throw new ReconcileError('connection', `${where} answered HTTP ${res.status} to the [ironic] token request; nothing was changed`, { hint: 'check Keystone and re-run' });
  const token = res.headers['x-subject-token'];
  let catalog: unknown;
  try {
    catalog = (JSON.parse(res.body) as { token?: { catalog?: unknown } }).token?.catalog;
  } catch {
    catalog = undefined;
  }
  if (typeof token !== 'string' || token === '') throw new ReconcileError('connection', `${where} gave no token (no X-Subject-Token header)`);
  return { token, catalog };
}

function pickEndpoint(catalog: unknown, settings: IronicSettings, authUrl: string): string {
  const services = Array.isArray(catalog) ? (catalog as CatalogEntry[]) : [];
  // os-service-types: "bare-metal" is an old alias of baremetal.
  const types = settings.serviceType === 'baremetal' ? ['baremetal', 'bare-metal'] : [settings.serviceType];
  const endpoints = services
    .filter((s) => typeof s.type === 'string' && types.includes(s.type))
    .flatMap((s) => (Array.isArray(s.endpoints) ? (s.endpoints as Record<string, unknown>[]) : []))
    .filter((e) => settings.regionName === undefined || e['region_id'] === settings.regionName || e['region'] === settings.regionName);
  for (const iface of settings.validInterfaces) {
    const found = endpoints.find((e) => e['interface'] === iface && typeof e['url'] === 'string');
    if (found !== undefined) return found['url'] as string;
  }
  const scope = `service type ${settings.serviceType}, interface ${settings.validInterfaces.join(' or ')}${settings.regionName === undefined ? '' : `, region ${settings.regionName}`}`;
  let at = 'Keystone';
  try {
    at = `Keystone at ${origin(new URL(authUrl))}`;
  } catch {
    // auth_url was checked by tokensUrl already.
  }
  throw new ReconcileError('config', `the catalog of ${at} has no Ironic endpoint (${scope}); nothing was changed`, {
    hint: 'check [ironic] region_name, valid_interfaces and the user\'s project, or set [ironic] endpoint_override',
  });
}
