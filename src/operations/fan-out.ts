// Run one task per cell with bounded concurrency while keeping results in the
// cells' order. After a failure no new task starts (Nova stops at the first
// failing cell); tasks already running finish and are reported.

export type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

export async function fanOutInOrder<I, T>(items: readonly I[], limit: number, task: (item: I, index: number) => Promise<T>): Promise<Array<Settled<T> | undefined>> {
  const results: Array<Settled<T> | undefined> = new Array<Settled<T> | undefined>(items.length).fill(undefined);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      const item = items[index] as I;
      try {
        results[index] = { ok: true, value: await task(item, index) };
      } catch (error) {
        results[index] = { ok: false, error };
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
