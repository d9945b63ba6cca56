// Placement's capacity rules for one (provider, resource class) when an
// allocation is written (placement/objects/allocation.py
// _check_capacity_exceeded):
//  - the provider must have inventory of the class;
//  - min_unit <= amount <= max_unit and amount % step_size == 0;
//  - used by others + amount <= (total - reserved) * allocation_ratio, as a float.
// Used by the rebalance planner and again, under lock, by the executor.
//
// The one exception: an in-use ironic node reports reserved = 1 on its only
// unit (total 1), so its capacity is 0 and Placement's API refuses even to put
// its own instance's allocation back (measured with Placement 8.0.0). Moving
// that single unit of the node's own single instance onto the node's own
// provider is allowed, and said so in the plan; nothing else may exceed capacity.
// Placement 14.0.0 (2025.2) accepts any write that does not worsen an
// overage (bug 2104040). Its alembic head is 10.0.0's, so which of the two
// rules the deployed Placement follows cannot be read: the stricter one stays,
// which refuses more than 14.0.0+ would and never less.

import type { InventoryRec } from './model.js';

export type InventoryLimits = Pick<InventoryRec, 'total' | 'reserved' | 'minUnit' | 'maxUnit' | 'stepSize' | 'allocationRatio'>;

export interface CapacityRequest {
  readonly resourceClass: string;
  readonly providerUuid: string;
  readonly amount: number;
  /** Sum of `used` of every other consumer on this provider and class. */
  readonly usedByOthers: number;
  /** The consumer is the only instance of the ironic node that owns this provider. */
  readonly ownIronicInstance: boolean;
}

export type CapacityVerdict =
  | { readonly ok: true; readonly exception: string | null }
  | { readonly ok: false; readonly reason: string };

export function capacityOf(inv: InventoryLimits): number {
  return (inv.total - inv.reserved) * inv.allocationRatio;
}

export function checkCapacity(inv: InventoryLimits | undefined, req: CapacityRequest): CapacityVerdict {
  const where = `${req.resourceClass} on resource provider ${req.providerUuid}`;
  if (inv === undefined) return { ok: false, reason: `no inventory of ${where}` };
  if (req.amount !== 0 && (req.amount < inv.minUnit || req.amount > inv.maxUnit || (inv.stepSize > 0 && req.amount % inv.stepSize !== 0)))
    return {
      ok: false,
      reason: `${req.amount} ${where} would violate inventory constraints (min_unit ${inv.minUnit}, max_unit ${inv.maxUnit}, step_size ${inv.stepSize})`,
    };
  const capacity = capacityOf(inv);
  if (req.usedByOthers + req.amount <= capacity) return { ok: true, exception: null };
  if (isInUseIronicException(inv, req))
    return {
      ok: true,
      exception:
        `${where} has total 1 and reserved ${inv.reserved} because the node is in use by this very instance; ` +
        "Placement's API before 14.0.0 (2025.2) refuses such a write (capacity 0), and later ones accept it only as no worse an overage; the direct write allows exactly this case",
    };
  return { ok: false, reason: `${req.amount} ${where} would exceed the capacity: ${req.usedByOthers} used by others, capacity ${capacity}` };
}

function isInUseIronicException(inv: InventoryLimits, req: CapacityRequest): boolean {
  return req.ownIronicInstance && inv.total === 1 && inv.reserved === 1 && req.amount === 1 && req.usedByOthers === 0;
}
