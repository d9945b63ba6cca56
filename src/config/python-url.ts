// A reimplementation of the parts of CPython 3.11's urllib.parse that Nova
// applies to URLs we must reproduce byte for byte: urlsplit/urlparse, their
// username/password/hostname/port properties, and urlunparse. Nova uses them
// in CellMapping._format_url (cell URL templates) and mask_passwd_in_url
// (list_cells), and their quirks are part of nova-manage's output: the netloc
// is everything up to the first '/', '?' or '#'; userinfo ends at the *last*
// '@'; and urlunsplit drops an empty netloc, so `none:///` comes back as
// `none:/`.
//
// Python raises ValueError for some inputs (unbalanced IPv6 brackets, a
// non-numeric port); here that is a PythonValueError, so callers can mirror
// Nova's `except Exception` fallbacks.

import { net } from '../builtins.js';

export class PythonValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PythonValueError';
  }
}

export interface SplitUrl {
  readonly scheme: string;
  readonly netloc: string;
  readonly path: string;
  readonly query: string;
  readonly fragment: string;
}

export interface ParsedUrl extends SplitUrl {
  readonly params: string;
}

const SCHEME_CHARS = /^[A-Za-z0-9+\-.]*$/;

// Schemes for which urlparse splits ';params' off the last path segment.
const USES_PARAMS = new Set(['', 'ftp', 'hdl', 'prospero', 'http', 'imap', 'https', 'shttp', 'rtsp', 'rtspu', 'sip', 'sips', 'mms', 'sftp', 'tel']);

// Schemes for which urlunsplit writes '//' even when the netloc is empty.
const USES_NETLOC = new Set([
  '', 'ftp', 'http', 'gopher', 'nntp', 'telnet', 'imap', 'wais', 'file', 'mms', 'https', 'shttp', 'snews',
  'prospero', 'rtsp', 'rtspu', 'rsync', 'svn', 'svn+ssh', 'sftp', 'nfs', 'git', 'git+ssh', 'ws', 'wss',
]);

/** urllib.parse.urlsplit (3.11 with the CVE-2023-24329 fix, as Debian 12 ships it). */
export function splitUrl(input: string): SplitUrl {
  // WHATWG: leading C0 controls and spaces are stripped, and tab/CR/LF are
  // removed everywhere (bpo-43882, CVE-2023-24329).
  let url = input.replace(/^[\u0000-\u0020]+/, '').replace(/[\t\r\n]/g, '');
  let scheme = '';
  let netloc = '';
  let query = '';
  let fragment = '';

  const colon = url.indexOf(':');
  const first = url.charCodeAt(0);
  const startsWithAsciiLetter = (first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a);
  if (colon > 0 && startsWithAsciiLetter && SCHEME_CHARS.test(url.slice(0, colon))) {
    scheme = url.slice(0, colon).toLowerCase();
    url = url.slice(colon + 1);
  }

  if (url.startsWith('//')) {
    let end = url.length;
    for (const delim of ['/', '?', '#']) {
      const at = url.indexOf(delim, 2);
      if (at >= 0) end = Math.min(end, at);
    }
    netloc = url.slice(2, end);
    url = url.slice(end);
    if (netloc.includes('[') !== netloc.includes(']')) throw new PythonValueError('Invalid IPv6 URL');
    if (netloc.includes('[')) checkBracketedHost(netloc.slice(netloc.indexOf('[') + 1).split(']')[0] ?? '');
  }
  const hash = url.indexOf('#');
  if (hash >= 0) {
    fragment = url.slice(hash + 1);
    url = url.slice(0, hash);
  }
  const question = url.indexOf('?');
  if (question >= 0) {
    query = url.slice(question + 1);
    url = url.slice(0, question);
  }
  checkNetlocNormalization(netloc);
  return { scheme, netloc, path: url, query, fragment };
}

/** urllib.parse.urlparse: urlsplit plus ';params' for the schemes that use them. */
export function parseUrl(input: string): ParsedUrl {
  const split = splitUrl(input);
  let path = split.path;
  let params = '';
  if (USES_PARAMS.has(split.scheme) && path.includes(';')) {
    const slash = path.lastIndexOf('/');
    const semicolon = slash >= 0 ? path.indexOf(';', slash) : path.indexOf(';');
    if (semicolon >= 0) {
      params = path.slice(semicolon + 1);
      path = path.slice(0, semicolon);
    }
  }
  return { ...split, path, params };
}

/** urllib.parse.urlunsplit. */
export function unsplitUrl(parts: SplitUrl): string {
  let url = parts.path;
  // An empty netloc is dropped unless the scheme is one that "uses" a netloc:
  // this is why Nova prints cell0's `none:///` as `none:/`.
  if (parts.netloc !== '' || (parts.scheme !== '' && USES_NETLOC.has(parts.scheme) && !url.startsWith('//'))) {
    if (url !== '' && !url.startsWith('/')) url = '/' + url;
    url = '//' + parts.netloc + url;
  }
  if (parts.scheme !== '') url = parts.scheme + ':' + url;
  if (parts.query !== '') url += '?' + parts.query;
  if (parts.fragment !== '') url += '#' + parts.fragment;
  return url;
}

/** urllib.parse.urlunparse. */
export function unparseUrl(parts: ParsedUrl): string {
  const path = parts.params !== '' ? `${parts.path};${parts.params}` : parts.path;
  return unsplitUrl({ scheme: parts.scheme, netloc: parts.netloc, path, query: parts.query, fragment: parts.fragment });
}

/** SplitResult.username / .password: userinfo is everything before the last '@'. */
export function netlocUserinfo(netloc: string): { readonly username: string | null; readonly password: string | null } {
  const at = netloc.lastIndexOf('@');
  if (at < 0) return { username: null, password: null };
  const userinfo = netloc.slice(0, at);
  const colon = userinfo.indexOf(':');
  if (colon < 0) return { username: userinfo, password: null };
  return { username: userinfo.slice(0, colon), password: userinfo.slice(colon + 1) };
}

/** SplitResult._hostinfo: the raw hostname and port strings after the last '@'. */
function netlocHostinfo(netloc: string): { readonly hostname: string; readonly port: string | null } {
  const hostinfo = netloc.slice(netloc.lastIndexOf('@') + 1);
  const open = hostinfo.indexOf('[');
  let hostname: string;
  let port: string;
  if (open >= 0) {
    const bracketed = hostinfo.slice(open + 1);
    const close = bracketed.indexOf(']');
    hostname = close >= 0 ? bracketed.slice(0, close) : bracketed;
    const after = close >= 0 ? bracketed.slice(close + 1) : '';
    const colon = after.indexOf(':');
    port = colon >= 0 ? after.slice(colon + 1) : '';
  } else {
    const colon = hostinfo.indexOf(':');
    hostname = colon >= 0 ? hostinfo.slice(0, colon) : hostinfo;
    port = colon >= 0 ? hostinfo.slice(colon + 1) : '';
  }
  return { hostname, port: port === '' ? null : port };
}

/** SplitResult.hostname: lower-cased, except an IPv6 zone id after '%'. */
export function netlocHostname(netloc: string): string | null {
  const { hostname } = netlocHostinfo(netloc);
  if (hostname === '') return null;
  const percent = hostname.indexOf('%');
  if (percent < 0) return hostname.toLowerCase();
  return hostname.slice(0, percent).toLowerCase() + hostname.slice(percent);
}

/** SplitResult.port: Python int() of the port text, 0..65535, else ValueError. */
export function netlocPort(netloc: string): number | null {
  const { port } = netlocHostinfo(netloc);
  if (port === null) return null;
  // 3.11.7 accepts ASCII digits only (int() alone would also take "+12", " 12", "1_2").
  if (!/^[0-9]+$/.test(port)) throw new PythonValueError(`Port could not be cast to integer value as '${port}'`);
  const value = Number.parseInt(port, 10);
  if (value < 0 || value > 65535) throw new PythonValueError('Port out of range 0-65535');
  return value;
}

/**
 * Python's int(text, 10) for ASCII input: surrounding whitespace, an optional
 * sign, and single underscores between digits are allowed. Undefined when
 * Python would raise ValueError.
 */
export function parsePythonInt(text: string): number | undefined {
  const match = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(text);
  if (match === null) return undefined;
  const value = Number.parseInt((match[2] ?? '').replaceAll('_', ''), 10);
  return match[1] === '-' ? -value : value;
}

// urlsplit (3.11.4+) accepts only an IPv6 address or an IPvFuture literal in brackets.
function checkBracketedHost(host: string): void {
  if (host.startsWith('v')) {
    if (!/^v[a-fA-F0-9]+\..+$/s.test(host)) throw new PythonValueError('IPvFuture address is invalid');
    return;
  }
  if (net().isIPv4(host)) throw new PythonValueError('An IPv4 address cannot be in brackets');
  if (!net().isIPv6(host)) throw new PythonValueError(`'${host}' does not appear to be an IPv4 or IPv6 address`);
}

// urlsplit rejects a non-ASCII netloc whose NFKC form introduces URL
// delimiters (CVE-2019-9636), e.g. a full-width '＠'.
function checkNetlocNormalization(netloc: string): void {
  if (netloc === '' || /^[\u0000-\u007f]*$/.test(netloc)) return;
  const stripped = netloc.replace(/[@:#?]/g, '');
  const normalized = stripped.normalize('NFKC');
  if (normalized === stripped) return;
  for (const c of '/?#@:') {
    if (normalized.includes(c)) {
      throw new PythonValueError(`netloc '${netloc}' contains invalid characters under NFKC normalization`);
    }
  }
}
