// A full garbage collection between two cells of a walk that judges one cell
// at a time: the cell just judged is garbage, and V8 would otherwise collect
// it only once the heap has grown by another cell's worth, so the peak would
// hold two cells instead of one. `gc` is not exposed to scripts unless
// --expose-gc is given; the flag set at run time exposes it to a new context
// only. An engine that refuses either leaves the walk as it was (the memory
// bound is then looser, nothing else changes).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collector: (() => void) | undefined | null = null;

export function collectGarbage(): void {
  if (collector === null) {
    try {
      setFlagsFromString('--expose-gc');
      const gc: unknown = runInNewContext('gc');
      collector = typeof gc === 'function' ? (gc as () => void) : undefined;
    } catch {
      collector = undefined;
    }
  }
  collector?.();
}
