// One copy of each repeated string of a snapshot read. The driver makes a
// new string for every column of every row, so a consumer's uuid is held
// five times (its instance, its consumer row, each of its allocations), a
// host four times (service, node, instances, mapping), and a state such as
// 'active' or 'nova-compute' once per row. Read through one pool, equal
// strings become one string in memory.
//
// Only columns whose values repeat across rows or tables go through the pool:
// a column of unique values (a service's uuid, a row's created_at) would only
// grow the pool. The pool lives as long as one snapshot read.

const NO_STRINGS: readonly string[] = Object.freeze([]);

export class StringPool {
  private readonly strings = new Map<string, string>();
  private readonly lists = new Map<string, readonly string[]>();

  /** The pool's copy of `value` (the first equal string it was given). */
  get(value: string): string {
    const held = this.strings.get(value);
    if (held !== undefined) return held;
    this.strings.set(value, value);
    return value;
  }

  /** get(), passing NULL through. */
  nullable(value: string | null): string | null {
    return value === null ? null : this.get(value);
  }

  /**
   * The pool's copy of a list of strings, frozen: rows with equal lists (the
   * providers of a cloud carry a handful of distinct trait sets) share one
   * array (a list built by push has room for 16 entries).
   */
  list(values: readonly string[]): readonly string[] {
    if (values.length === 0) return NO_STRINGS;
    const key = values.join('\u0000');
    const held = this.lists.get(key);
    if (held !== undefined) return held;
    const copy = Object.freeze(values.map((v) => this.get(v)));
    this.lists.set(key, copy);
    return copy;
  }

  /** How many distinct strings the pool holds (tests). */
  get size(): number {
    return this.strings.size;
  }
}
