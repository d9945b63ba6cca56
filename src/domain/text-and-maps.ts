// Two small helpers every planner and renderer needs, in one place.

/** POSIX shell quoting, only when needed, so a printed command can be pasted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Strings in code-unit order (uuids and names sorted as the findings list them). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Append `value` to the list of `key`, creating the list on first use. */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/**
 * `items` grouped by `keyOf` (undefined leaves an item out), each group in
 * the order of `items` and allocated at its exact size. pushTo's lists grow
 * to 17 slots at their second element: in the snapshot's indexes of 100,000
 * providers, three allocations and three inventories each, that was a third
 * of the index's memory in empty slots.
 */
export function groupBy<K, V>(items: readonly V[], keyOf: (item: V) => K | undefined): Map<K, V[]> {
  // Pass 1: each item's group, by number, and each group's size.
  const groupOf = new Map<K, number>();
  const sizes: number[] = [];
  const itemGroup = new Int32Array(items.length);
  items.forEach((item, i) => {
    const k = keyOf(item);
    if (k === undefined) {
      itemGroup[i] = -1;
      return;
    }
    let g = groupOf.get(k);
    if (g === undefined) {
      g = sizes.length;
      groupOf.set(k, g);
      sizes.push(0);
    }
    itemGroup[i] = g;
    sizes[g] = (sizes[g] as number) + 1;
  });
  // Pass 2: each group filled in place, in item order.
  const lists = sizes.map((n) => new Array<V>(n));
  const filled = new Int32Array(sizes.length);
  items.forEach((item, i) => {
    const g = itemGroup[i] as number;
    if (g < 0) return;
    (lists[g] as V[])[filled[g] as number] = item;
    filled[g] = (filled[g] as number) + 1;
  });
  // groupOf holds the keys in first-seen order: the same map, now to the groups.
  const groups = new Map<K, V[]>();
  for (const [k, g] of groupOf) groups.set(k, lists[g] as V[]);
  return groups;
}

/**
 * groupBy's groups, with a group of one item held as the item itself: most
 * groups of a snapshot's indexes (the live nodes of a name, the instances of
 * a node) hold one item, and a list each would be memory for nothing.
 * get() and the iterators hand such a
 * group out as a new one-item array. An item that is itself an array is
 * always held in a list, so the two cannot be confused.
 */
export class Groups<K, V> implements ReadonlyMap<K, readonly V[]> {
  private readonly held = new Map<K, V | V[]>();

  constructor(items: readonly V[], keyOf: (item: V) => K | undefined) {
    for (const [k, list] of groupBy(items, keyOf)) {
      const only = list[0];
      this.held.set(k, list.length === 1 && !Array.isArray(only) ? (only as V) : list);
    }
  }

  get size(): number {
    return this.held.size;
  }

  get(key: K): readonly V[] | undefined {
    const g = this.held.get(key);
    return g === undefined ? undefined : Groups.list(g);
  }

  has(key: K): boolean {
    return this.held.has(key);
  }

  keys(): MapIterator<K> {
    return this.held.keys();
  }

  *values(): MapIterator<readonly V[]> {
    for (const g of this.held.values()) yield Groups.list(g);
  }

  *entries(): MapIterator<[K, readonly V[]]> {
    for (const [k, g] of this.held) yield [k, Groups.list(g)];
  }

  [Symbol.iterator](): MapIterator<[K, readonly V[]]> {
    return this.entries();
  }

  forEach(fn: (value: readonly V[], key: K, map: ReadonlyMap<K, readonly V[]>) => void): void {
    for (const [k, g] of this.held) fn(Groups.list(g), k, this);
  }

  private static list<V>(g: V | V[]): readonly V[] {
    return Array.isArray(g) ? g : [g];
  }
}
