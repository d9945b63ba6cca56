// Placement's capacity rules, and the single in-use ironic exception.
import { describe, expect, it } from 'vitest';
import { capacityOf, checkCapacity, type CapacityRequest, type InventoryLimits } from '../../src/domain/capacity.js';

const inv = (over: Partial<InventoryLimits> = {}): InventoryLimits => ({ total: 8, reserved: 2, minUnit: 1, maxUnit: 8, stepSize: 1, allocationRatio: 2.0, ...over });
const req = (over: Partial<CapacityRequest> = {}): CapacityRequest => ({ resourceClass: 'VCPU', providerUuid: 'rp', amount: 4, usedByOthers: 8, ownIronicInstance: false, ...over });
const ironic = inv({ total: 1, reserved: 1, maxUnit: 1, allocationRatio: 1.0 });

describe('checkCapacity', () => {
  it('computes (total - reserved) * allocation_ratio as Placement does (measured: 8, 2, 2.0 → 12)', () => {
    expect(capacityOf(inv())).toBe(12);
    expect(checkCapacity(inv(), req())).toEqual({ ok: true, exception: null });
    expect(checkCapacity(inv(), req({ amount: 5 }))).toMatchObject({ ok: false, reason: expect.stringContaining('would exceed the capacity') as unknown });
  });

  it.each([
    ['below min_unit', { minUnit: 2 }, 1],
    ['above max_unit', { maxUnit: 3 }, 4],
    ['not a multiple of step_size', { stepSize: 3 }, 4],
  ])('refuses an amount %s', (_name, limits, amount) => {
    expect(checkCapacity(inv(limits), req({ amount, usedByOthers: 0 }))).toMatchObject({ ok: false, reason: expect.stringContaining('inventory constraints') as unknown });
  });

  it('refuses a class the provider has no inventory of', () => {
    expect(checkCapacity(undefined, req())).toEqual({ ok: false, reason: 'no inventory of VCPU on resource provider rp' });
  });

  it("allows exactly the in-use ironic node's own single instance, and says so", () => {
    const v = checkCapacity(ironic, req({ resourceClass: 'CUSTOM_BAREMETAL', amount: 1, usedByOthers: 0, ownIronicInstance: true }));
    expect(v.ok).toBe(true);
    expect(v.ok && v.exception).toMatch(/reserved 1 because the node is in use by this very instance/);
  });

  it.each([
    ['another consumer', { ownIronicInstance: false }],
    ['someone else already on it', { usedByOthers: 1 }],
  ])('refuses the ironic over-capacity write for %s', (_name, over) => {
    expect(checkCapacity(ironic, req({ resourceClass: 'CUSTOM_BAREMETAL', amount: 1, usedByOthers: 0, ownIronicInstance: true, ...over })).ok).toBe(false);
  });

  it('refuses when the node is not total 1 / reserved 1', () => {
    expect(checkCapacity(inv({ total: 2, reserved: 2, maxUnit: 2, allocationRatio: 1 }), req({ amount: 1, usedByOthers: 0, ownIronicInstance: true })).ok).toBe(false);
  });
});
