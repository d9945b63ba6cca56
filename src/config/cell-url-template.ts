// Cell URL templating, exactly as nova/objects/cell_mapping.py
// (CellMapping._format_url, format_db_url, format_mq_url; Rocky 18.0.0,
// commit 50658ee) renders cell_mappings.database_connection and
// transport_url each time a row is loaded.
//
// The variables come from urllib.parse.urlparse of the *local* process's
// [database]/connection or [DEFAULT]/transport_url, with Python's quirks:
// values are not percent-decoded, hostname is lower-cased, a missing
// username/password/port is the literal "None", and any failure (an unknown
// {var}, a bad port in the local URL, a stray '}') falls back to the raw,
// unrendered template.

import { formatPython, type PythonValue } from './python-format.js';
import { netlocHostname, netlocPort, netlocUserinfo, parseUrl, PythonValueError } from './python-url.js';

/** CellMapping.format_db_url: renders a cell's database_connection against the local [database]/connection. */
export function formatCellDbUrl(template: string | null, localDatabaseConnection: string | undefined): string | null {
  return formatCellUrl(template, localDatabaseConnection);
}

/** CellMapping.format_mq_url: renders a cell's transport_url against the local [DEFAULT]/transport_url. */
export function formatCellMqUrl(template: string | null, localTransportUrl: string | undefined): string | null {
  return formatCellUrl(template, localTransportUrl);
}

function formatCellUrl(template: string | null, local: string | undefined): string | null {
  if (template === null) return null;
  // Nova logs an error when the template has '{' and the local option is
  // unset, and uses the raw value; without '{' the raw value is the answer.
  if (local === undefined) return template;
  try {
    return formatPython(template, templateVariables(local));
  } catch {
    // `except Exception: LOG.exception(...); return url` in Nova.
    return template;
  }
}

/** The substitution dict _format_url builds from the local URL. */
export function templateVariables(local: string): ReadonlyMap<string, PythonValue> {
  const url = parseUrl(local);
  const { username, password } = netlocUserinfo(url.netloc);
  const vars = new Map<string, PythonValue>([
    ['username', username],
    ['password', password],
    ['hostname', netlocHostname(url.netloc)],
    // Evaluated eagerly, like the dict literal in Nova: a bad port in the local
    // URL makes every template fall back to raw, even one without {port}.
    ['port', netlocPort(url.netloc)],
    ['scheme', url.scheme],
    ['query', url.query],
    ['fragment', url.fragment],
    ['path', url.path.replace(/^\/+/, '')],
  ]);
  // oslo.messaging's multi-host form user:pass@host:port,user2:pass2@host2:port2
  // adds indexed variables; these come from Nova's own _parse_netloc, which
  // keeps case and returns strings ('' for a missing username, None for a
  // missing password or port).
  if (url.netloc.includes(',')) {
    url.netloc.split(',').forEach((netloc, i) => {
      const parts = parseNetlocEntry(netloc);
      for (const [key, value] of Object.entries(parts)) vars.set(`${key}${i + 1}`, value);
    });
  }
  return vars;
}

interface NetlocEntry {
  readonly username: string;
  readonly password: string | null;
  readonly hostname: string;
  readonly port: string | null;
}

// nova/objects/cell_mapping.py:_parse_netloc. userinfo ends at the *first*
// '@' here (urlparse uses the last). For a bracketed IPv6 host the port is
// everything after ']', so Zed renders {port1} as ":5672" (master switched to
// netutils.parse_host_port).
function parseNetlocEntry(netloc: string): NetlocEntry {
  const at = netloc.indexOf('@');
  const userpass = at >= 0 ? netloc.slice(0, at) : '';
  const hostport = at >= 0 ? netloc.slice(at + 1) : netloc;

  let hostname: string;
  let port: string | null = null;
  if (hostport.startsWith('[')) {
    const end = hostport.indexOf(']');
    if (end < 0) throw new PythonValueError('Invalid IPv6 URL');
    hostname = hostport.slice(1, end);
    port = hostport.slice(end + 1);
  } else if (hostport.includes(':')) {
    const colon = hostport.indexOf(':');
    hostname = hostport.slice(0, colon);
    port = hostport.slice(colon + 1);
  } else {
    hostname = hostport;
  }

  const colon = userpass.indexOf(':');
  if (colon < 0) return { username: userpass, password: null, hostname, port };
  return { username: userpass.slice(0, colon), password: userpass.slice(colon + 1), hostname, port };
}
