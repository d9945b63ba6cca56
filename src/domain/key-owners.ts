// Which cell holds a key (a folded host, a lower-cased node name, a node
// uuid, a consumer id), in 8 bytes per key, for the audit that judges one
// cell at a time (operations/read/audit-by-cell.ts): it may judge a cell
// alone only when no key of the cell is held by another cell too.
//
// A key is held as a 48-bit hash with its owner's index in 16 bits. Two keys
// with one hash count as one key: a key held by one cell can then look held
// by two ("shared"), and the caller reads the cloud whole, as before; a key
// no cell holds can look held by one, and the caller checks what it was
// given against the cell's rows exactly. A key held is never missed. At
// 300,000 keys a collision comes about once in 6,000 clouds; the answer is
// the same either way, only the memory differs.

/** The owner of a key no cell holds. */
export const NO_OWNER = -1;
/** The owner of a key two cells hold (or that shares its hash with another cell's). */
export const SHARED = -2;

/** The highest owner index a key can have. */
export const MAX_OWNER = 0xfffe;

/** A string's 48-bit hash, as a high 32-bit and a low 16-bit part (two multiplicative lanes, each finished by an avalanche). */
export function keyHash(key: string): { readonly high: number; readonly low: number } {
  let a = 0x811c9dc5 ^ key.length;
  let b = 0x2f6b7a3d;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return { high: avalanche(a ^ Math.imul(b, 0x27d4eb2d)) >>> 0, low: avalanche(b ^ a) & 0xffff };
}

function avalanche(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return x ^ (x >>> 16);
}

/** Entries per block of a builder: it grows a block at a time, never by copying what it holds. */
const BLOCK = 65536;

/** Keys and their owners as they come (any order, repeats allowed); build() sorts them once. */
export class KeyOwnersBuilder {
  private readonly blocks: BigUint64Array[] = [];
  private count = 0;

  add(key: string, owner: number): void {
    if (!Number.isInteger(owner) || owner < 0 || owner > MAX_OWNER) throw new RangeError(`internal: owner ${owner} out of range`);
    if (this.count % BLOCK === 0) this.blocks.push(new BigUint64Array(BLOCK));
    const { high, low } = keyHash(key);
    (this.blocks[this.blocks.length - 1] as BigUint64Array)[this.count % BLOCK] = (BigInt(high) << 32n) | (BigInt(low) << 16n) | BigInt(owner);
    this.count += 1;
  }

  build(): KeyOwners {
    const all = new BigUint64Array(this.count);
    this.blocks.forEach((block, b) => all.set(block.subarray(0, Math.min(BLOCK, this.count - b * BLOCK)), b * BLOCK));
    this.blocks.length = 0;
    return KeyOwners.fromSorted(all.sort());
  }
}

/** The owner of each key, looked up by binary search over two parallel arrays (8 bytes per distinct key). */
export class KeyOwners {
  private constructor(
    private readonly highs: Uint32Array,
    /** The hash's low 16 bits above the owner (as stored), SHARED's owner as 0xffff. */
    private readonly lows: Uint32Array,
    /** How many keys two or more owners hold. */
    readonly shared: number,
  ) {}

  static fromSorted(sorted: BigUint64Array): KeyOwners {
    const highs = new Uint32Array(sorted.length);
    const lows = new Uint32Array(sorted.length);
    let n = 0;
    let shared = 0;
    for (const entry of sorted) {
      const high = Number(entry >> 32n);
      const low = Number(entry & 0xffffffffn);
      const last = n - 1;
      if (n > 0 && highs[last] === high && (lows[last] as number) >>> 16 === low >>> 16) {
        // The same key again: the same owner is one entry; another owner makes it shared.
        if ((lows[last] as number) !== low && ((lows[last] as number) & 0xffff) !== 0xffff) {
          lows[last] = (low & 0xffff0000) | 0xffff;
          shared += 1;
        }
        continue;
      }
      highs[n] = high;
      lows[n] = low;
      n += 1;
    }
    return new KeyOwners(highs.slice(0, n), lows.slice(0, n), shared);
  }

  /** How many distinct keys are held. */
  get size(): number {
    return this.highs.length;
  }

  /** The owner's index, NO_OWNER, or SHARED. */
  ownerOf(key: string): number {
    const { high, low } = keyHash(key);
    let lo = 0;
    let hi = this.highs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const h = this.highs[mid] as number;
      const l = (this.lows[mid] as number) >>> 16;
      if (h < high || (h === high && l < low)) lo = mid + 1;
      else if (h > high || l > low) hi = mid - 1;
      else {
        const owner = (this.lows[mid] as number) & 0xffff;
        return owner === 0xffff ? SHARED : owner;
      }
    }
    return NO_OWNER;
  }
}
