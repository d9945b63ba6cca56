// urllib.parse.unquote and parse_qsl as SQLAlchemy 1.4 applies them to a
// database URL: invalid %-escapes stay as they are (no exception, unlike
// decodeURIComponent), and the bytes are decoded as UTF-8 with replacement.

const decoder = new TextDecoder('utf-8', { fatal: false });

/** urllib.parse.unquote(text) (encoding utf-8, errors 'replace'). */
export function unquotePython(text: string): string {
  if (!text.includes('%')) return text;
  // Python decodes each maximal run of ASCII characters as one byte string,
  // so a multi-byte UTF-8 sequence split by a literal non-ASCII char does not join.
  return text.replace(/[\u0000-\u007f]+/g, (run) => decoder.decode(unquoteToBytes(run)));
}

function unquoteToBytes(run: string): Uint8Array {
  const bytes: number[] = [];
  for (let i = 0; i < run.length; i++) {
    const hex = run.slice(i + 1, i + 3);
    if (run[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(run.charCodeAt(i));
    }
  }
  return Uint8Array.from(bytes);
}

/**
 * urllib.parse.parse_qsl(query) with its defaults: '&' separates pairs (3.10+),
 * '+' is a space, a pair without '=' or with an empty value is dropped.
 */
export function parseQueryPairs(query: string): readonly (readonly [string, string])[] {
  const pairs: [string, string][] = [];
  for (const piece of query.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    if (eq < 0) continue;
    const value = piece.slice(eq + 1);
    if (value === '') continue;
    pairs.push([unquotePython(piece.slice(0, eq).replaceAll('+', ' ')), unquotePython(value.replaceAll('+', ' '))]);
  }
  return pairs;
}
