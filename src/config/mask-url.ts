// Two kinds of password masking, on purpose:
//
// - maskNovaUrl reproduces nova-manage's mask_passwd_in_url (list_cells without
//   --verbose) quirk for quirk, because automation parses that table.
// - redactUrl is ours: it is applied to everything nova-reconcile prints
//   (errors, progress, JSON, journals) and errs on the side of hiding too much.

import { parseUrl, unparseUrl } from './python-url.js';

const MASK = '****';

// The password as SQLAlchemy's URL regex reads it: user `[^:/]*`, then ':', then up to the first '@'.
const SQLALCHEMY_PASSWORD = /^[\w+]+:\/\/[^:/]*:([^@]*)@/;

/**
 * nova/cmd/manage.py:mask_passwd_in_url: urlparse, replace the greedy regex
 * `:.*@` in the netloc with `:****@`, urlunparse. Quirks kept (nova-facts §2.3):
 * `rabbit://a:b@h1:5672,c:d@h2:5672/v` → `rabbit://a:****@h2:5672/v` (the
 * greedy match eats the first host) and `none:///` → `none:/` (urlunparse drops
 * an empty netloc).
 */
export function maskNovaUrl(url: string | null): string | null {
  if (url === null) return null;
  let parsed;
  try {
    parsed = parseUrl(url);
  } catch {
    // urlparse raises ValueError (e.g. "Invalid IPv6 URL") and nova-manage
    // dies with a traceback. We print our own safe masking instead.
    return redactUrl(url);
  }
  // Python's '.' does not match '\n' only; JavaScript's also skips \r, \u2028, \u2029.
  const netloc = parsed.netloc.replace(/:[^\n]*@/g, `:${MASK}@`);
  const masked = unparseUrl({ ...parsed, netloc });
  // Nova's mask works on urlparse's netloc, which ends at the first '/', '?'
  // or '#'; SQLAlchemy lets an unencoded '/' into a password, so
  // `mysql://u:p/x@h/db` would be printed unmasked. That one case gets our own
  // masking: a secret never leaks, even where nova-manage leaks it.
  const leftover = SQLALCHEMY_PASSWORD.exec(masked)?.[1];
  return leftover === undefined || leftover === MASK ? masked : redactUrl(masked);
}

// scheme:// as RFC 3986 spells a scheme.
const SCHEME_START = /[A-Za-z][A-Za-z0-9+.-]*:\/\//g;
// One host[:port] of a multi-host netloc, followed by the ',' that starts the next entry.
const HOST_THEN_COMMA = /^(?:\[[^\]\s]*\]|[A-Za-z0-9._~%-]+)(?::\d*)?,/;
// password=..., passwd=... in a query string or key=value text.
const PASSWORD_ARG = /([?&;\s]|^)(password|passwd)=[^&\s]*/gi;

/**
 * Masks the password of every `scheme://user:password@host` in `text`
 * (multi-host netlocs included) and every `password=` argument. Never throws.
 *
 * Conservative by design: SQLAlchemy accepts unencoded '/', '?' and '#' in a
 * password and urlparse takes the last '@', so the password is taken to run
 * from the first ':' of the userinfo to the last '@' of the URL's token
 * (preferring one before the query). When in doubt, more is hidden.
 */
export function redactUrl(text: string): string {
  try {
    return redactPasswordArgs(redactAuthorities(text));
  } catch {
    return '[redacted]';
  }
}

function redactAuthorities(text: string): string {
  // Most text holds no URL at all (a log line per mapped host): SCHEME_START
  // cannot match without '://', and the scan below is the costly part.
  if (!text.includes('://')) return text;
  const starts: { readonly at: number; readonly bodyAt: number }[] = [];
  for (const m of text.matchAll(SCHEME_START)) {
    const at = m.index;
    starts.push({ at, bodyAt: at + m[0].length });
  }
  if (starts.length === 0) return text;

  let out = text.slice(0, starts[0]?.at ?? 0);
  starts.forEach((start, i) => {
    const next = starts[i + 1]?.at ?? text.length;
    const segment = text.slice(start.bodyAt, next);
    out += text.slice(start.at, start.bodyAt) + redactAuthority(segment);
  });
  return out;
}

/** `body` is the text after `scheme://`, up to the next URL in the text. */
function redactAuthority(body: string): string {
  // A URL token ends at whitespace; a password with spaces is not recognised as such.
  const tokenEnd = body.search(/\s/);
  const token = tokenEnd < 0 ? body : body.slice(0, tokenEnd);
  const rest = tokenEnd < 0 ? '' : body.slice(tokenEnd);

  const lastAt = userinfoEnd(token);
  if (lastAt < 0) return body;
  return maskUserinfos(token.slice(0, lastAt)) + token.slice(lastAt) + rest;
}

/** Index of the '@' that ends the (last) userinfo, or -1. */
function userinfoEnd(token: string): number {
  const question = token.indexOf('?');
  if (question >= 0) {
    const beforeQuery = token.lastIndexOf('@', question);
    if (beforeQuery >= 0) return beforeQuery;
  }
  return token.lastIndexOf('@');
}

/**
 * `region` is everything before the final '@': `u1:p1@h1:5672,u2:p2` for a
 * multi-host netloc. An entry boundary is an '@' followed by host[:port] and
 * ','; between boundaries, everything after the first ':' is a password.
 */
function maskUserinfos(region: string): string {
  let out = '';
  let pos = 0;
  for (;;) {
    const boundary = findBoundary(region, pos);
    const userinfo = region.slice(pos, boundary === undefined ? region.length : boundary.at);
    out += maskOneUserinfo(userinfo);
    if (boundary === undefined) return out;
    out += region.slice(boundary.at, boundary.end);
    pos = boundary.end;
  }
}

function findBoundary(region: string, from: number): { readonly at: number; readonly end: number } | undefined {
  for (let at = region.indexOf('@', from); at >= 0; at = region.indexOf('@', at + 1)) {
    const host = HOST_THEN_COMMA.exec(region.slice(at + 1));
    if (host !== null) return { at, end: at + 1 + host[0].length };
  }
  return undefined;
}

function maskOneUserinfo(userinfo: string): string {
  const colon = userinfo.indexOf(':');
  return colon < 0 ? userinfo : `${userinfo.slice(0, colon)}:${MASK}`;
}

function redactPasswordArgs(text: string): string {
  return text.replace(PASSWORD_ARG, (_match: string, lead: string, key: string) => `${lead}${key}=${MASK}`);
}
