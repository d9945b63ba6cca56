// A set of uuids held in 16 bytes each, for the few indexes a walk that
// judges one cell at a time must keep across every cell (the live compute
// nodes' uuids, say): a Set of 300,000 uuid strings takes about 30 MB, this
// about 8 MB at its fullest. Exact: a uuid is held as its 32 hex digits only
// when it is written canonically (lower-case, 8-4-4-4-12); any other string
// (upper-case, braces, not a uuid at all) is kept as it is in a plain Set, so
// membership is exact string equality either way.
const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class UuidSet {
  /** Open addressing: 4 words per slot, a slot is empty while its `used` byte is 0. */
  private words = new Uint32Array(4 * 1024);
  private used = new Uint8Array(1024);
  private count = 0;
  private readonly other = new Set<string>();

  get size(): number {
    return this.count + this.other.size;
  }

  add(uuid: string): this {
    const key = canonicalWords(uuid);
    if (key === undefined) {
      this.other.add(uuid);
      return this;
    }
    if ((this.count + 1) * 4 > this.used.length * 3) this.grow();
    const slot = this.find(key);
    if (this.used[slot] === 0) {
      this.used[slot] = 1;
      this.words.set(key, slot * 4);
      this.count += 1;
    }
    return this;
  }

  has(uuid: string): boolean {
    const key = canonicalWords(uuid);
    if (key === undefined) return this.other.has(uuid);
    return this.used[this.find(key)] === 1;
  }

  /** The slot that holds `key`, or the empty slot where it would go. */
  private find(key: Uint32Array): number {
    const mask = this.used.length - 1;
    // The words of a random (v4) uuid are random already; folding them spreads the others.
    let slot = ((key[0] as number) ^ Math.imul(key[3] as number, 0x9e3779b1)) & mask;
    for (;;) {
      if (this.used[slot] === 0) return slot;
      const at = slot * 4;
      if (this.words[at] === key[0] && this.words[at + 1] === key[1] && this.words[at + 2] === key[2] && this.words[at + 3] === key[3]) return slot;
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const words = this.words;
    const used = this.used;
    this.words = new Uint32Array(words.length * 2);
    this.used = new Uint8Array(used.length * 2);
    this.count = 0;
    for (let slot = 0; slot < used.length; slot += 1) {
      if (used[slot] === 0) continue;
      const key = words.subarray(slot * 4, slot * 4 + 4);
      const to = this.find(key);
      this.used[to] = 1;
      this.words.set(key, to * 4);
      this.count += 1;
    }
  }
}

/** The four 32-bit words of a canonical uuid, or undefined for any other string. */
function canonicalWords(uuid: string): Uint32Array | undefined {
  if (uuid.length !== 36 || !CANONICAL.test(uuid)) return undefined;
  const hex = uuid.replaceAll('-', '');
  const out = new Uint32Array(4);
  for (let i = 0; i < 4; i += 1) out[i] = parseInt(hex.slice(i * 8, i * 8 + 8), 16);
  return out;
}
