// The lookups of a partial read: they answer for what the read holds in full
// and throw for anything else, so a planner that asks beyond its command's
// read fails (exit 255, internal) instead of planning on a partial view.
import { ReconcileError } from '../errors.js';

/**
 * A lookup of a scoped placement or instance read (PlacementSnapshot.scope,
 * Snapshot.instanceScope): it answers for the keys the read holds in full
 * and throws for any other, and cannot be walked. A planner that asks beyond
 * the scope its command read for is a bug; it fails the command (exit 255,
 * internal) instead of planning on a partial view, e.g. taking a consumer's
 * allocations elsewhere for none.
 */
export class ScopedMap<K, V> implements ReadonlyMap<K, V> {
  /** `known`: every key the map has, read or not (has() answers from it for any key; get() still checks). */
  constructor(
    private readonly held: ReadonlyMap<K, V>,
    private readonly allowed: (key: K) => boolean,
    private readonly what: string,
    private readonly read: ScopedRead = 'placement',
    private readonly known?: ReadonlySet<K>,
  ) {}

  get(key: K): V | undefined {
    return this.held.get(this.check(key));
  }

  has(key: K): boolean {
    return this.known === undefined ? this.held.has(this.check(key)) : this.known.has(key);
  }

  get size(): number {
    return this.refuseWalk();
  }

  forEach(): void {
    this.refuseWalk();
  }

  entries(): MapIterator<[K, V]> {
    return this.refuseWalk();
  }

  keys(): MapIterator<K> {
    return this.refuseWalk();
  }

  values(): MapIterator<V> {
    return this.refuseWalk();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.refuseWalk();
  }

  private check(key: K): K {
    if (!this.allowed(key)) throw outOfScope(`${this.what} ${String(key)}`, this.read);
    return key;
  }

  private refuseWalk(): never {
    throw new ReconcileError('internal', `the plan walked every entry of a lookup (${this.what} ...), which this command's ${this.read} read does not hold (a planner bug: nothing was changed)`);
  }
}

export type ScopedRead = 'placement' | 'instance' | 'node';

/** A set of a scoped read (Snapshot.nodeScope) that answers nothing: asking it is a planner bug. */
export class ScopedSet<T> implements ReadonlySet<T> {
  constructor(
    private readonly held: ReadonlySet<T>,
    private readonly what: string,
  ) {}

  has(key: T): boolean {
    throw outOfScope(`${this.what} ${String(key)}`, 'node');
  }

  get size(): number {
    return this.refuseWalk();
  }

  forEach(): void {
    this.refuseWalk();
  }

  entries(): SetIterator<[T, T]> {
    return this.refuseWalk();
  }

  keys(): SetIterator<T> {
    return this.refuseWalk();
  }

  values(): SetIterator<T> {
    return this.refuseWalk();
  }

  [Symbol.iterator](): SetIterator<T> {
    return this.refuseWalk();
  }

  private refuseWalk(): never {
    throw new ReconcileError('internal', `the plan walked ${this.what} (${this.held.size} read), which this command's node read does not hold (a planner bug: nothing was changed)`);
  }
}

export function outOfScope(what: string, read: ScopedRead): ReconcileError {
  return new ReconcileError('internal', `the plan asked for ${what}, which this command's ${read} read left out (a planner bug: nothing was changed)`);
}

