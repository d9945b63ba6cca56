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
