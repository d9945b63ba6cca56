// A cell's allocations, held in columns rather than as records while the
// audit by cell judges the cell (operations/read/audit-by-cell.ts): a record
// per allocation is about 100 bytes, a row here about 40, and each
// consumer's records are made only when its turn comes (groups), so that
// what the checks do not keep is let go at once.
import type { AllocationRec } from './model.js';

export class AllocationColumns {
  private readonly ids: number[] = [];
  private readonly providerIds: number[] = [];
  private readonly consumers: string[] = [];
  private readonly classIds: number[] = [];
  private readonly useds: number[] = [];

  constructor(private readonly className: (resourceClassId: number) => string) {}

  get size(): number {
    return this.ids.length;
  }

  push(id: number, providerId: number, consumerUuid: string, resourceClassId: number, used: number): void {
    this.ids.push(id);
    this.providerIds.push(providerId);
    this.consumers.push(consumerUuid);
    this.classIds.push(resourceClassId);
    this.useds.push(used);
  }

  /** The consumers, each once. */
  consumerUuids(): Set<string> {
    return new Set(this.consumers);
  }

  /** Each allocation's provider and consumer, in the order they came. */
  forEachRow(onRow: (providerId: number, consumerUuid: string) => void): void {
    for (let j = 0; j < this.ids.length; j++) onRow(this.providerIds[j] as number, this.consumers[j] as string);
  }

  /** Each consumer (in code-unit order) with its allocations, made now, in id order. */
  *groups(): Generator<readonly [string, AllocationRec[]]> {
    const order = Array.from({ length: this.ids.length }, (_, j) => j);
    const { consumers, ids } = this;
    order.sort((x, y) => {
      const cx = consumers[x] as string;
      const cy = consumers[y] as string;
      return cx < cy ? -1 : cx > cy ? 1 : (ids[x] as number) - (ids[y] as number);
    });
    let run: AllocationRec[] = [];
    let current: string | undefined;
    for (const j of order) {
      const consumerUuid = consumers[j] as string;
      if (consumerUuid !== current) {
        if (current !== undefined) yield [current, run];
        current = consumerUuid;
        run = [];
      }
      const resourceClassId = this.classIds[j] as number;
      run.push({ id: ids[j] as number, providerId: this.providerIds[j] as number, consumerUuid, resourceClassId, resourceClass: this.className(resourceClassId), used: this.useds[j] as number });
    }
    if (current !== undefined) yield [current, run];
  }
}
