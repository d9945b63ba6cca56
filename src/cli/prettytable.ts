// prettytable 3.6's default style, byte for byte, as nova-manage prints it:
// `+---+` rules, one space of padding, every cell centred. Uneven padding
// follows prettytable's _justify: odd-length text gets the extra space on the
// right, even-length text on the left. An empty table prints the header
// between two rules and one more rule.

export function renderPrettyTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(textWidth(h), ...rows.map((r) => textWidth(r[i] ?? ''))));
  const rule = '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+';
  const line = (cells: readonly string[]): string =>
    '|' + widths.map((w, i) => ' ' + centre(cells[i] ?? '', w) + ' ').join('|') + '|';
  const out = [rule, line(headers), rule, ...rows.map(line), rule];
  return out.join('\n');
}

function centre(text: string, width: number): string {
  const len = textWidth(text);
  const excess = width - len;
  if (excess <= 0) return text;
  const half = Math.floor(excess / 2);
  if (excess % 2 === 0) return ' '.repeat(half) + text + ' '.repeat(half);
  return len % 2 === 1 ? ' '.repeat(half) + text + ' '.repeat(half + 1) : ' '.repeat(half + 1) + text + ' '.repeat(half);
}

/** Display width in code points; wide East Asian characters count 2 as in prettytable. */
export function textWidth(text: string): number {
  let w = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp === 0 || (cp >= 0x300 && cp <= 0x36f)) continue; // combining marks take no column
    w += isWide(cp) ? 2 : 1;
  }
  return w;
}

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}
