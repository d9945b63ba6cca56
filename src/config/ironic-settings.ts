// nova.conf [ironic] as nova-compute reads it: keystoneauth's auth, session
// and adapter options (ks_loading.register_*_conf_options), and Nova's own
// api_max_retries, api_retry_interval, partition_key and peer_list
// (nova/conf/ironic.py). Only what reading the node list needs is kept.
import type { OptionLookup } from './option-lookup.js';
import { readInteger, readList } from './option-values.js';

export type IronicAuth =
  | { readonly type: 'none' }
  | {
      readonly type: 'password';
      readonly authUrl: string;
      readonly username: string | undefined;
      readonly userId: string | undefined;
      /** Only src/ironic/keystone.ts reads it; it is never printed. */
      readonly password: string;
      readonly userDomainName: string | undefined;
      readonly userDomainId: string | undefined;
      readonly projectName: string | undefined;
      readonly projectId: string | undefined;
      readonly projectDomainName: string | undefined;
      readonly projectDomainId: string | undefined;
    }
  | {
      readonly type: 'v3applicationcredential';
      readonly authUrl: string;
      readonly applicationCredentialId: string | undefined;
      readonly applicationCredentialName: string | undefined;
      /** Only src/ironic/keystone.ts reads it; it is never printed. */
      readonly applicationCredentialSecret: string;
      readonly username: string | undefined;
      readonly userDomainName: string | undefined;
    };

export interface IronicSettings {
  readonly auth: IronicAuth;
  /** [ironic] endpoint_override (or the deprecated api_endpoint); undefined: the Keystone catalog. */
  readonly endpointOverride: string | undefined;
  readonly regionName: string | undefined;
  /** keystoneauth's default order: internal, then public. */
  readonly validInterfaces: readonly string[];
  readonly serviceType: string;
  readonly cafile: string | undefined;
  readonly insecure: boolean;
  /** Seconds per HTTP request; undefined: keystoneauth's none (the tool still stops at 600 s). */
  readonly timeout: number | undefined;
  /** Nova's ironic client retries 409, 503 and refused connections this many times (default 60). */
  readonly apiMaxRetries: number;
  /** Seconds between those retries (default 2). */
  readonly apiRetryInterval: number;
  /** [ironic] conductor_group (partition_key before 28.0.0): the conductor group this nova-compute serves; undefined: every group. */
  readonly partitionKey: string | undefined;
  /** [ironic] peer_list: the nova-compute hosts of that partition. */
  readonly peerList: readonly string[] | undefined;
}

/**
 * The [ironic] section, or undefined when it does not say how to reach
 * Ironic (no auth_type and no endpoint_override): then only --ironic-nodes
 * gives ironic truth. Every problem is pushed to `problems`.
 */
export function readIronicSettings(lookup: OptionLookup, problems: string[]): IronicSettings | undefined {
  const g = 'ironic';
  const get = (key: string): string | undefined => {
    const v = lookup.find(g, key)?.value;
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  // The deprecated names (api_endpoint, auth_plugin, partition_key) are looked up with them (option-lookup.ts).
  const endpointOverride = get('endpoint_override');
  const authType = get('auth_type');
  if (authType === undefined && endpointOverride === undefined) return undefined;
  const auth = readAuth(authType ?? 'none', get, problems);
  if (endpointOverride !== undefined && !/^https?:\/\//i.test(endpointOverride)) problems.push(`[ironic] endpoint_override must be an http(s) URL`);
  const timeoutText = get('timeout');
  let timeout: number | undefined;
  if (timeoutText !== undefined) {
    const t = Number(timeoutText);
    if (!Number.isFinite(t) || t <= 0 || t > 3600) problems.push(`invalid value for [ironic] timeout: "${timeoutText.slice(0, 20)}" is not a number of seconds (0..3600)`);
    else timeout = t;
  }
  const insecureText = (get('insecure') ?? 'false').toLowerCase();
  if (!['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'].includes(insecureText)) problems.push(`invalid value for [ironic] insecure: expected true or false`);
  const partitionKey = get('conductor_group');
  const peerList = readList(lookup, g, 'peer_list');
  return Object.freeze({
    auth,
    endpointOverride: endpointOverride?.replace(/\/+$/, ''),
    regionName: get('region_name'),
    validInterfaces: Object.freeze((readList(lookup, g, 'valid_interfaces') ?? ['internal', 'public']).map((i) => i.replace(/URL$/, '').toLowerCase())),
    serviceType: get('service_type') ?? 'baremetal',
    cafile: get('cafile'),
    insecure: ['true', '1', 'yes', 'on'].includes(insecureText),
    timeout,
    apiMaxRetries: readInteger(lookup, { group: g, key: 'api_max_retries', default: 60, min: 0, max: 10_000 }, problems),
    apiRetryInterval: readInteger(lookup, { group: g, key: 'api_retry_interval', default: 2, min: 0, max: 3_600 }, problems),
    partitionKey,
    peerList: peerList === undefined || peerList.length === 0 ? undefined : peerList,
  });
}

function readAuth(type: string, get: (key: string) => string | undefined, problems: string[]): IronicAuth {
  const need = (key: string): string => {
    const v = get(key);
    if (v === undefined) problems.push(`[ironic] auth_type = ${type} needs ${key}`);
    return v ?? '';
  };
  switch (type) {
    case 'none':
    case 'noauth':
      if (get('endpoint_override') === undefined) problems.push('[ironic] auth_type = none needs endpoint_override');
      return { type: 'none' };
    case 'password':
    case 'v3password':
      return {
        type: 'password',
        authUrl: need('auth_url'),
        username: get('username') ?? get('user-name') ?? get('user_name'),
        userId: get('user_id'),
        password: need('password'),
        userDomainName: get('user_domain_name') ?? get('domain_name'),
        userDomainId: get('user_domain_id') ?? get('domain_id'),
        projectName: get('project_name') ?? get('tenant_name'),
        projectId: get('project_id') ?? get('tenant_id'),
        projectDomainName: get('project_domain_name') ?? get('domain_name'),
        projectDomainId: get('project_domain_id') ?? get('domain_id'),
      };
    case 'v3applicationcredential':
      if (get('application_credential_id') === undefined && get('application_credential_name') === undefined)
        problems.push('[ironic] auth_type = v3applicationcredential needs application_credential_id (or application_credential_name with username)');
      return {
        type: 'v3applicationcredential',
        authUrl: need('auth_url'),
        applicationCredentialId: get('application_credential_id'),
        applicationCredentialName: get('application_credential_name'),
        applicationCredentialSecret: need('application_credential_secret'),
        username: get('username'),
        userDomainName: get('user_domain_name'),
      };
    default:
      problems.push(`[ironic] auth_type = ${type.slice(0, 40)} is not supported (password, v3applicationcredential or none)`);
      return { type: 'none' };
  }
}
