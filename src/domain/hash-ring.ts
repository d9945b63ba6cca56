// Nova's ironic hash ring, bit for bit: tooz's
// HashRing(members, partitions=32) with md5, and a node's owner found by the
// md5 of its uuid. A member m gets 32 ring points: one md5 object is seeded
// with m and updated with m 32 more times, and the digest after each update
// is a point, i.e. md5(m·m), md5(m·m·m), ... up to 33 repetitions of m.
// Lookup bisects right into the sorted points and wraps to the first one.
// Nova lower-cases host names before building the ring.
//
// domain/ does no I/O and imports no node:* module, so md5 is implemented
// here (RFC 1321); it is checked against tooz's own vectors in
// test/unit/hash-ring.test.ts.

/** nova.virt.ironic.driver._HASH_RING_PARTITIONS */
export const HASH_RING_PARTITIONS = 32;

export interface HashRing {
  /** The distinct members, as given (already lower-cased by buildHashRing). */
  readonly members: readonly string[];
  /** Sorted ring points as 32-digit lower-case hex (same order as the 128-bit integers). */
  readonly points: readonly string[];
  readonly owners: readonly string[];
}

/** Build the ring of `hosts`, lower-cased as Nova does; duplicates collapse into one member. */
export function buildHashRing(hosts: Iterable<string>, partitions = HASH_RING_PARTITIONS): HashRing {
  const members = [...new Set([...hosts].map((h) => h.toLowerCase()))].sort();
  const ring = new Map<string, string>();
  for (const member of members) {
    const key = utf8(member);
    const hash = new Md5();
    hash.update(key);
    for (let r = 0; r < partitions; r++) {
      hash.update(key);
      // A collision overwrites, as tooz's dict assignment does (never seen in practice).
      ring.set(hash.hexDigest(), member);
    }
  }
  const points = [...ring.keys()].sort();
  return { members, points, owners: points.map((p) => ring.get(p) as string) };
}

/** The member that owns `nodeUuid`, or undefined for an empty ring. */
export function ringOwner(ring: HashRing, nodeUuid: string): string | undefined {
  if (ring.points.length === 0) return undefined;
  const h = md5Hex(utf8(nodeUuid));
  // bisect.bisect (right): the first point strictly greater than h.
  let lo = 0;
  let hi = ring.points.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (h < (ring.points[mid] as string)) hi = mid;
    else lo = mid + 1;
  }
  return ring.owners[lo < ring.points.length ? lo : 0];
}

export function md5Hex(data: Uint8Array): string {
  const h = new Md5();
  h.update(data);
  return h.hexDigest();
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

// ---------------------------------------------------------------------------
// md5, incremental (hexDigest does not finish the stream, like hashlib's).

const S = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21];
const K = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) >>> 0);

class Md5 {
  private state = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
  private buffer = new Uint8Array(64);
  private buffered = 0;
  private length = 0;

  update(data: Uint8Array): void {
    this.length += data.length;
    let i = 0;
    while (i < data.length) {
      const take = Math.min(64 - this.buffered, data.length - i);
      this.buffer.set(data.subarray(i, i + take), this.buffered);
      this.buffered += take;
      i += take;
      if (this.buffered === 64) {
        this.state = compress(this.state, this.buffer);
        this.buffered = 0;
      }
    }
  }

  hexDigest(): string {
    // Pad a copy, so the stream can go on (hashlib's hexdigest() does the same).
    const bits = this.length * 8;
    const padLength = this.buffered < 56 ? 64 : 128;
    const tail = new Uint8Array(padLength);
    tail.set(this.buffer.subarray(0, this.buffered));
    tail[this.buffered] = 0x80;
    const view = new DataView(tail.buffer);
    view.setUint32(padLength - 8, bits >>> 0, true);
    view.setUint32(padLength - 4, Math.floor(bits / 2 ** 32) >>> 0, true);
    let state = this.state;
    for (let off = 0; off < padLength; off += 64) state = compress(state, tail.subarray(off, off + 64));
    let hex = '';
    for (const word of state) for (let b = 0; b < 4; b++) hex += ((word >>> (8 * b)) & 0xff).toString(16).padStart(2, '0');
    return hex;
  }
}

function compress(state: readonly number[], block: Uint8Array): number[] {
  const m = new Array<number>(16);
  for (let i = 0; i < 16; i++) m[i] = (block[i * 4] as number) | ((block[i * 4 + 1] as number) << 8) | ((block[i * 4 + 2] as number) << 16) | ((block[i * 4 + 3] as number) << 24);
  let [a, b, c, d] = state as [number, number, number, number];
  for (let i = 0; i < 64; i++) {
    let f: number;
    let g: number;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) % 16;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) % 16;
    }
    const sum = (a + f + (K[i] as number) + (m[g] as number)) | 0;
    const s = S[i] as number;
    a = d;
    d = c;
    c = b;
    b = (b + ((sum << s) | (sum >>> (32 - s)))) | 0;
  }
  return [((state[0] as number) + a) | 0, ((state[1] as number) + b) | 0, ((state[2] as number) + c) | 0, ((state[3] as number) + d) | 0].map((x) => x >>> 0);
}
