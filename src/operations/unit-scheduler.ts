// Applies a plan's units side by side where that cannot change the outcome.
// Units start strictly in plan order, at most `limit` at a time; a unit
// waits for every earlier unit whose footprint shares a key with its own
// (Unit.footprint), so overlapping units still run, and commit, in plan
// order. A unit without a footprint waits for everything before it and runs
// alone. The apply schedules its batches (apply-batches.ts) this way, each
// with the union of its units' footprints: running them side by side only
// overlaps their round trips and fsyncs.

export interface Scheduled {
  readonly footprint?: readonly string[];
}

/**
 * Runs `fn` over `units` (see above). After the first failure no unit
 * starts; the ones in flight finish, then one failure is thrown: the one
 * `pick` chooses among all of them (units in flight can fail together, and
 * the first to fail need not be the one to report), the first by default.
 */
export async function runUnits<U extends Scheduled>(
  units: readonly U[],
  limit: number,
  fn: (unit: U, index: number) => Promise<void>,
  pick: (errors: readonly unknown[]) => unknown = (errors) => errors[0],
  /** Checked before each unit starts (an interrupt): true starts no more units; those in flight finish. */
  stop: () => boolean = () => false,
): Promise<void> {
  const inFlight = new Map<number, { readonly keys: ReadonlySet<string> | undefined; readonly done: Promise<void> }>();
  const errors: unknown[] = [];
  let failure: { readonly error: unknown } | undefined;
  for (const [index, unit] of units.entries()) {
    const keys = unit.footprint === undefined ? undefined : new Set(unit.footprint);
    for (;;) {
      if (failure !== undefined || stop()) break;
      const running = [...inFlight.values()];
      const blockers = running.filter((r) => keys === undefined || r.keys === undefined || [...keys].some((k) => r.keys?.has(k) === true));
      if (blockers.length === 0 && running.length < Math.max(1, limit)) break;
      await Promise.race((blockers.length > 0 ? blockers : running).map((r) => r.done));
    }
    if (failure !== undefined || stop()) break;
    const done = fn(unit, index)
      .catch((error: unknown) => {
        errors.push(error);
        failure ??= { error };
      })
      .finally(() => inFlight.delete(index));
    inFlight.set(index, { keys, done });
  }
  await Promise.all([...inFlight.values()].map((r) => r.done));
  if (failure !== undefined) throw pick(errors);
}
